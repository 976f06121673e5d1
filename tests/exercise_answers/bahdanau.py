"""Answers for the graded exercises of the bahdanau chapter, used by tests/test_exercises.py.

WRONG: plausible wrong answers per question; every test case must reject at least one.
DELEGATING: answers that hand the work to the implementation the question asks for; the
hidden tests must fail them (questions with nothing to delegate to are left out).
"""

WRONG = {
    "additive_scores": [
        # the tanh forgotten
        """
def additive_scores(s, h, W, U, v):
    return ((s @ W.T).unsqueeze(1) + h @ U.T) @ v
""",
        # tanh applied after the projection by v
        """
def additive_scores(s, h, W, U, v):
    return torch.tanh(((s @ W.T).unsqueeze(1) + h @ U.T) @ v)
""",
    ],
    "context_vector": [
        # the mask ignored
        """
def context_vector(scores, h, mask):
    return (scores.softmax(dim=-1).unsqueeze(-1) * h).sum(dim=1)
""",
        # padding zeroed after the softmax, without renormalising
        """
def context_vector(scores, h, mask):
    alpha = scores.softmax(dim=-1) * mask
    return (alpha.unsqueeze(-1) * h).sum(dim=1)
""",
    ],
    "additive_parameters": [
        # the bias b of U forgotten
        """
def additive_parameters(E_s, E_h, A):
    return A * E_s + A * E_h + A
""",
        # v forgotten, or counted as a matrix
        """
def additive_parameters(E_s, E_h, A):
    return A * E_s + A * E_h + A * A + A
""",
    ],
    "max_weight_ratio": [
        # one score's bound, not the gap between two
        """
def max_weight_ratio(v):
    return torch.exp(v.abs().sum()).item()
""",
        # the Euclidean norm instead of the sum of absolute values
        """
def max_weight_ratio(v):
    return torch.exp(2 * v.norm()).item()
""",
        # signs not taken into account
        """
def max_weight_ratio(v):
    return torch.exp(2 * v.sum()).item()
""",
    ],
}

DELEGATING = {
    "additive_scores": """
def additive_scores(s, h, W, U, v):
    from seqlab.attention import AttentionScore
    score = AttentionScore("additive", W.shape[1], U.shape[1], W.shape[0])
    with torch.no_grad():
        score.W.weight.copy_(W)
        score.U.weight.copy_(U)
        score.U.bias.zero_()
        score.v.weight.copy_(v.unsqueeze(0))
    return score(s.unsqueeze(1), h)[:, 0]
""",
    "context_vector": """
import seqlab.attention as A
def context_vector(scores, h, mask):
    return (A.masked_softmax(scores, mask).unsqueeze(-1) * h).sum(dim=1)
""",
}
