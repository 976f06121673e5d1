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
    "masked_attention": [
        # -inf then softmax: NaN in a fully masked row
        """
def masked_attention(scores, values, mask):
    weights = scores.masked_fill(~mask, float("-inf")).softmax(dim=-1)
    return (weights.unsqueeze(-1) * values).sum(dim=1), weights
""",
        # exp without subtracting the maximum: exp(1e4) overflows
        """
def masked_attention(scores, values, mask):
    exps = torch.exp(scores) * mask
    total = exps.sum(dim=-1, keepdim=True)
    weights = exps / torch.where(total > 0, total, torch.ones_like(total))
    return (weights.unsqueeze(-1) * values).sum(dim=1), weights
""",
        # masked with a finite -1e9 fill: an empty row gets uniform weights, not 0
        """
def masked_attention(scores, values, mask):
    weights = scores.masked_fill(~mask, -1e9).softmax(dim=-1)
    return (weights.unsqueeze(-1) * values).sum(dim=1), weights
""",
        # masked after the softmax, renormalised: a +1e4 on padding takes all the mass first
        """
def masked_attention(scores, values, mask):
    weights = scores.softmax(dim=-1) * mask
    total = weights.sum(dim=-1, keepdim=True)
    weights = weights / torch.where(total > 0, total, torch.ones_like(total))
    return (weights.unsqueeze(-1) * values).sum(dim=1), weights
""",
        # masks the caller's scores in place
        """
def masked_attention(scores, values, mask):
    has_any = mask.any(dim=-1, keepdim=True)
    scores.data[~mask] = float("-inf")
    top = torch.where(has_any, scores.amax(dim=-1, keepdim=True), torch.zeros_like(scores[:, :1]))
    exps = torch.exp(scores - top.detach())
    total = exps.sum(dim=-1, keepdim=True)
    weights = exps / torch.where(has_any, total, torch.ones_like(total))
    return (weights.unsqueeze(-1) * values).sum(dim=1), weights
""",
    ],
}

DELEGATING = {
    "masked_attention": """
def masked_attention(scores, values, mask):
    import seqlab.attention as A

    weights = A.masked_softmax(scores, mask)
    weights = torch.where(mask.any(dim=-1, keepdim=True), weights, torch.zeros_like(weights))
    return (weights.unsqueeze(-1) * values).sum(dim=1), weights
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
