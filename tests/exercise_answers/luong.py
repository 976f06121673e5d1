"""Answers for the graded exercises of the luong chapter, used by tests/test_exercises.py.

WRONG: plausible wrong answers per question; every test case must reject at least one.
DELEGATING: answers that hand the work to the implementation the question asks for; the
hidden tests must fail them (questions with nothing to delegate to are left out).
"""

WRONG = {
    "general_scores": [
        # W transposed (s^T W^T h): the shapes agree only when W is square
        """
def general_scores(s, h, W):
    return ((s @ W.T).unsqueeze(1) * h).sum(-1)
""",
        # the dot score, W forgotten
        """
def general_scores(s, h, W):
    return (s.unsqueeze(1) * h[..., : s.shape[1]]).sum(-1)
""",
    ],
    "local_p_weights": [
        # sigma = D instead of D / 2
        """
def local_p_weights(scores, center, D):
    distance = torch.arange(scores.shape[1]).float() - center.unsqueeze(1)
    alpha = scores.masked_fill(distance.abs() > D, float("-inf")).softmax(dim=-1)
    return alpha * torch.exp(-(distance**2) / (2 * D**2))
""",
        # the softmax taken over every position, then cut to the window
        """
def local_p_weights(scores, center, D):
    distance = torch.arange(scores.shape[1]).float() - center.unsqueeze(1)
    alpha = scores.softmax(dim=-1) * (distance.abs() <= D)
    return alpha * torch.exp(-(distance**2) / (2 * (D / 2) ** 2))
""",
        # the Gaussian without the window: positions far away keep a tiny weight
        """
def local_p_weights(scores, center, D):
    distance = torch.arange(scores.shape[1]).float() - center.unsqueeze(1)
    return scores.softmax(dim=-1) * torch.exp(-(distance**2) / (2 * (D / 2) ** 2))
""",
    ],
    "local_m_positions": [
        # counted from 1
        """
def local_m_positions(t, D, S):
    return [j + 1 for j in range(S) if abs(j - t) <= D]
""",
        # not clipped to the source
        """
def local_m_positions(t, D, S):
    return list(range(t - D, t + D + 1))
""",
        # a window of 2D positions (off by one)
        """
def local_m_positions(t, D, S):
    return [j for j in range(S) if -D <= j - t < D]
""",
    ],
    "general_multiply_adds": [
        # W_a applied to every key
        """
def general_multiply_adds(S, E):
    return S * E * E + S * E
""",
        # the cost of dot
        """
def general_multiply_adds(S, E):
    return S * E
""",
    ],
}

DELEGATING = {
    "general_scores": """
def general_scores(s, h, W):
    from seqlab.attention import AttentionScore
    score = AttentionScore("general", W.shape[0], W.shape[1])
    with torch.no_grad():
        score.W.weight.copy_(W)
    return score(s.unsqueeze(1), h)[:, 0]
""",
    "local_p_weights": """
from seqlab.masks import gaussian_window, local_window
def local_p_weights(scores, center, D):
    inside = local_window(center.unsqueeze(1), scores.shape[1], D)[:, 0]
    alpha = scores.masked_fill(~inside, float("-inf")).softmax(dim=-1)
    return alpha * gaussian_window(center.unsqueeze(1), scores.shape[1], D)[:, 0]
""",
}
