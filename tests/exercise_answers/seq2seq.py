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
    "beam_candidates": [
        # k hypotheses extended at every step, the first included
        """
def beam_candidates(k, T, V):
    return k * T * V
""",
        # exhaustive search instead of beam search
        """
def beam_candidates(k, T, V):
    return V**T
""",
        # one candidate per hypothesis and step, the vocabulary forgotten
        """
def beam_candidates(k, T, V):
    return 1 + (T - 1) * k
""",
    ],
    "beam_picks": [
        # length normalisation ignored
        """
def beam_picks():
    return "a", "a"
""",
        # the longest output taken for the best with alpha = 1
        """
def beam_picks():
    return "a", "d"
""",
        # the two swapped
        """
def beam_picks():
    return "b", "a"
""",
        # a score instead of a letter
        """
def beam_picks():
    return -1.5, -0.2
""",
    ],
}

DELEGATING = {}
