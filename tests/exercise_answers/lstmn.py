"""Answers for the graded exercises of the lstmn chapter, used by tests/test_exercises.py.

WRONG: plausible wrong answers per question; every test case must reject at least one.
DELEGATING: answers that hand the work to the implementation the question asks for; the
hidden tests must fail them (questions with nothing to delegate to are left out).
"""

WRONG = {
    "intra_attention": [
        # softmax over the batch instead of over the tape
        """
def intra_attention(tape_h, x_t, h_prev_summary, W_h, W_x, W_s, v):
    query = x_t @ W_x.T + h_prev_summary @ W_s.T
    return (torch.tanh(tape_h @ W_h.T + query.unsqueeze(1)) @ v).softmax(dim=0)
""",
        # the previous summary left out of the score
        """
def intra_attention(tape_h, x_t, h_prev_summary, W_h, W_x, W_s, v):
    return (torch.tanh(tape_h @ W_h.T + (x_t @ W_x.T).unsqueeze(1)) @ v).softmax(dim=-1)
""",
    ],
    "tape_summary": [
        # the plain mean of the tape, ignoring the weights
        """
def tape_summary(weights, tape):
    return tape.mean(dim=1)
""",
        # summed over the feature axis instead of the tape
        """
def tape_summary(weights, tape):
    return (weights.unsqueeze(-1) * tape).sum(dim=2)
""",
    ],
    "score_count": [
        # the paper's tapes, entries 1..t-1, without the initial state
        """
def score_count(T):
    return T * (T - 1) // 2
""",
        # every step scores every position of the sequence
        """
def score_count(T):
    return T * T
""",
    ],
    "lstm_case": [
        # off by one: entry t is the one the step is about to write
        """
lstm_case = "d"
""",
        # not a letter
        """
lstm_case = "last"
""",
    ],
}

DELEGATING = {}
