"""Answers for the graded exercises of the seq2seq chapter, used by tests/test_exercises.py.

WRONG: plausible wrong answers per question; every test case must reject at least one.
DELEGATING: answers that hand the work to the implementation the question asks for; the
hidden tests must fail them (questions with nothing to delegate to are left out).
"""

WRONG = {
    "beam_step": [
        # the k best tokens of each hypothesis, not the k best extensions overall
        """
def beam_step(scores, log_probs, k):
    best, token = log_probs.topk(1, dim=1)
    total = scores + best[:, 0]
    order = total.argsort(descending=True)[:k]
    return order, token[order, 0], total[order]
""",
        # the scores so far ignored
        """
def beam_step(scores, log_probs, k):
    best, index = log_probs.flatten().topk(k)
    return index // log_probs.shape[1], index % log_probs.shape[1], best
""",
    ],
    "normalised_score": [
        # multiplied instead of divided
        """
def normalised_score(log_prob, length, alpha):
    return log_prob * length**alpha
""",
        # alpha ignored: always the mean per token
        """
def normalised_score(log_prob, length, alpha):
    return log_prob / length
""",
    ],
    "brevity_penalty": [
        # the ratio upside down
        """
def brevity_penalty(c, r):
    return 1.0 if c > r else math.exp(1 - c / r)
""",
        # long outputs penalised too
        """
def brevity_penalty(c, r):
    return math.exp(1 - r / c)
""",
    ],
}

DELEGATING = {}
