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
        # masked after the softmax, then renormalised: 0 / 0 = NaN when the padding takes it all
        """
def context_vector(scores, h, mask):
    alpha = scores.softmax(dim=-1) * mask
    alpha = alpha / alpha.sum(dim=-1, keepdim=True)
    return (alpha.unsqueeze(-1) * h).sum(dim=1)
""",
        # masks the caller's scores in place
        """
def context_vector(scores, h, mask):
    scores[~mask] = float("-inf")
    return (scores.softmax(dim=-1).unsqueeze(-1) * h).sum(dim=1)
""",
        # padding set to a score of 0 instead of -inf: it still gets weight
        """
def context_vector(scores, h, mask):
    alpha = scores.masked_fill(~mask, 0.0).softmax(dim=-1)
    return (alpha.unsqueeze(-1) * h).sum(dim=1)
""",
        # the first row's mask used for the whole batch
        """
def context_vector(scores, h, mask):
    alpha = scores.masked_fill(~mask[0], float("-inf")).softmax(dim=-1)
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
        # W taken as E_s x E_h (as in the general score) instead of A x E_s
        """
def additive_parameters(E_s, E_h, A):
    return E_s * E_h + A * E_h + A + A
""",
        # 2A(E_h + 1): W counted with U's shape
        """
def additive_parameters(E_s, E_h, A):
    return 2 * A * (E_h + 1)
""",
        # the count at E_s = E_h = A = 64 hard-coded
        """
def additive_parameters(E_s, E_h, A):
    return 8320
""",
    ],
    "max_weight": [
        # the ratio of two weights, e^{2||v||_1}, instead of the weight
        """
def max_weight(v, S):
    return math.exp(2 * v.abs().sum().item())
""",
        # e^{1.5}, the ratio for the old check's v, hard-coded
        """
def max_weight(v, S):
    return math.exp(1.5)
""",
        # one score at its top, the others at 0 instead of at their bottom
        """
def max_weight(v, S):
    top = math.exp(v.abs().sum().item())
    return top / (top + S - 1)
""",
        # the Euclidean norm instead of the sum of absolute values
        """
def max_weight(v, S):
    top = math.exp(2 * v.norm().item())
    return top / (top + S - 1)
""",
        # S others instead of S - 1 (the top position counted twice)
        """
def max_weight(v, S):
    top = math.exp(2 * v.abs().sum().item())
    return top / (top + S)
""",
        # right formula, but e^{2||v||_1} overflows: inf / inf = NaN for large v
        """
def max_weight(v, S):
    top = torch.exp(2 * v.abs().sum().double()).item()
    return top / (top + S - 1)
""",
        # signs not taken into account
        """
def max_weight(v, S):
    top = math.exp(2 * abs(v.sum().item()))
    return top / (top + S - 1)
""",
    ],
    "additive_attention": [
        # the padding mask not broadcast over the steps: (N, S) lines up with (L, S)
        """
def additive_attention(s, h, W, U, b, v, mask):
    hidden = torch.tanh((s @ W.T).unsqueeze(2) + (h @ U.T + b).unsqueeze(1))
    alpha = (hidden @ v).masked_fill(~mask, float("-inf")).softmax(dim=-1)
    return alpha @ h, alpha
""",
        # padding zeroed after the softmax and renormalised: a huge padded score takes it all
        """
def additive_attention(s, h, W, U, b, v, mask):
    hidden = torch.tanh((s @ W.T).unsqueeze(2) + (h @ U.T + b).unsqueeze(1))
    alpha = (hidden @ v).softmax(dim=-1) * mask.unsqueeze(1)
    alpha = alpha / alpha.sum(dim=-1, keepdim=True)
    return alpha @ h, alpha
""",
        # the softmax over the decoder steps instead of the source positions
        """
def additive_attention(s, h, W, U, b, v, mask):
    hidden = torch.tanh((s @ W.T).unsqueeze(2) + (h @ U.T + b).unsqueeze(1))
    scores = (hidden @ v).masked_fill(~mask.unsqueeze(1), float("-inf"))
    alpha = scores.softmax(dim=1).nan_to_num(0.0)
    return alpha @ h, alpha
""",
        # b added twice, to W s and to U h
        """
def additive_attention(s, h, W, U, b, v, mask):
    hidden = torch.tanh((s @ W.T + b).unsqueeze(2) + (h @ U.T + b).unsqueeze(1))
    alpha = (hidden @ v).masked_fill(~mask.unsqueeze(1), float("-inf")).softmax(dim=-1)
    return alpha @ h, alpha
""",
        # right values, but a loop over the decoder steps
        """
def additive_attention(s, h, W, U, b, v, mask):
    keys = h @ U.T + b
    alphas = []
    for i in range(s.shape[1]):
        e = torch.tanh((s[:, i] @ W.T).unsqueeze(1) + keys) @ v
        alphas.append(e.masked_fill(~mask, float("-inf")).softmax(dim=-1))
    alpha = torch.stack(alphas, dim=1)
    return alpha @ h, alpha
""",
        # padding zeroed after the softmax, without renormalising
        """
def additive_attention(s, h, W, U, b, v, mask):
    hidden = torch.tanh((s @ W.T).unsqueeze(2) + (h @ U.T + b).unsqueeze(1))
    alpha = (hidden @ v).softmax(dim=-1) * mask.unsqueeze(1)
    return alpha @ h, alpha
""",
    ],
}

DELEGATING = {
    "additive_attention": """
def additive_attention(s, h, W, U, b, v, mask):
    from seqlab.attention import AttentionScore

    score = AttentionScore("additive", W.shape[1], U.shape[1], W.shape[0]).to(s.dtype)
    with torch.no_grad():
        score.W.weight.copy_(W)
        score.U.weight.copy_(U)
        score.U.bias.copy_(b)
        score.v.weight.copy_(v.unsqueeze(0))
    scores = score(s, h, impl="fast")  # all keys at once: no loop for the public test to see
    alpha = scores.masked_fill(~mask.unsqueeze(1), float("-inf")).softmax(dim=-1)
    return alpha @ h, alpha
""",
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
