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
    "masked_softmax_backward": [
        # the sum over the row forgotten: only the diagonal of the Jacobian
        """
def masked_softmax_backward(scores, mask, grad_alpha):
    top = scores.masked_fill(~mask, float("-inf")).amax(dim=-1, keepdim=True)
    e = torch.exp(scores - top).masked_fill(~mask, 0.0)
    alpha = e / e.sum(dim=-1, keepdim=True)
    return alpha * grad_alpha
""",
        # the sign of the sum term flipped
        """
def masked_softmax_backward(scores, mask, grad_alpha):
    top = scores.masked_fill(~mask, float("-inf")).amax(dim=-1, keepdim=True)
    e = torch.exp(scores - top).masked_fill(~mask, 0.0)
    alpha = e / e.sum(dim=-1, keepdim=True)
    return alpha * (grad_alpha + (alpha * grad_alpha).sum(dim=-1, keepdim=True))
""",
        # no maximum subtracted: exp overflows for scores of 1e4
        """
def masked_softmax_backward(scores, mask, grad_alpha):
    e = torch.exp(scores) * mask
    alpha = e / e.sum(dim=-1, keepdim=True)
    return alpha * (grad_alpha - (alpha * grad_alpha).sum(dim=-1, keepdim=True))
""",
    ],
}

DELEGATING = {
    "masked_softmax_backward": """
def masked_softmax_backward(scores, mask, grad_alpha):
    with torch.enable_grad():
        e = scores.detach().clone().requires_grad_(True)
        alpha = e.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        return torch.autograd.grad(alpha, e, grad_alpha)[0]
""",
    "additive_attention": """
def additive_attention(s, h, W, U, b, v, mask):
    from seqlab.attention import AttentionScore

    score = AttentionScore("additive", W.shape[1], U.shape[1], W.shape[0])
    weights = {"W.weight": W, "U.weight": U, "U.bias": b, "v.weight": v.unsqueeze(0)}
    scores = torch.func.functional_call(score, weights, (s, h), {"impl": "fast"})  # no loop
    alpha = scores.masked_fill(~mask.unsqueeze(1), float("-inf")).softmax(dim=-1)
    return alpha @ h, alpha
""",
    "additive_scores": """
def additive_scores(s, h, W, U, v):
    from seqlab.attention import AttentionScore

    score = AttentionScore("additive", W.shape[1], U.shape[1], W.shape[0])
    weights = {"W.weight": W, "U.weight": U, "U.bias": torch.zeros_like(v), "v.weight": v.unsqueeze(0)}
    return torch.func.functional_call(score, weights, (s.unsqueeze(1), h))[:, 0]
""",
    "context_vector": """
import seqlab.attention as A
def context_vector(scores, h, mask):
    return (A.masked_softmax(scores, mask).unsqueeze(-1) * h).sum(dim=1)
""",
}

# Plausible wrong answers written before the tests were strengthened, to measure them
# (tests/test_exercises.py: each must fail a test case, and a public one unless it only delegates).
WRONG_NEW = {
    "additive_scores": [
        # .squeeze() after the product with v: breaks at N = 1 or S = 1
        """
def additive_scores(s, h, W, U, v):
    return (torch.tanh((s @ W.T).unsqueeze(1) + h @ U.T) @ v.unsqueeze(-1)).squeeze()
""",
        # computed under torch.no_grad(): no gradient reaches s, h, W, U or v
        """
def additive_scores(s, h, W, U, v):
    with torch.no_grad():
        return torch.tanh((s @ W.T).unsqueeze(1) + h @ U.T) @ v
""",
        # float64 scores from float32 inputs
        """
def additive_scores(s, h, W, U, v):
    return torch.tanh((s @ W.T).unsqueeze(1) + h @ U.T).double() @ v.double()
""",
        # the caller's s reshaped in place
        """
def additive_scores(s, h, W, U, v):
    s.unsqueeze_(1)
    return torch.tanh(s @ W.T + h @ U.T) @ v
""",
    ],
    "context_vector": [
        # a finite fill: padding gets weight when the real scores are as low as the fill
        """
def context_vector(scores, h, mask):
    alpha = scores.masked_fill(~mask, -1e4).softmax(dim=-1)
    return (alpha.unsqueeze(-1) * h).sum(dim=1)
""",
        # the caller's h weighted in place
        """
def context_vector(scores, h, mask):
    alpha = scores.masked_fill(~mask, float("-inf")).softmax(dim=-1)
    return h.mul_(alpha.unsqueeze(-1)).sum(dim=1)
""",
        # .squeeze() of a batched product: breaks at N = 1 or E_h = 1
        """
def context_vector(scores, h, mask):
    alpha = scores.masked_fill(~mask, float("-inf")).softmax(dim=-1)
    return (alpha.unsqueeze(1) @ h).squeeze()
""",
        # a finite fill of -1e9
        """
def context_vector(scores, h, mask):
    alpha = torch.where(mask, scores, torch.full_like(scores, -1e9)).softmax(dim=-1)
    return (alpha.unsqueeze(-1) * h).sum(dim=1)
""",
    ],
    "additive_parameters": [
        # the count of the package's module (delegation)
        """
def additive_parameters(E_s, E_h, A):
    from seqlab.attention import AttentionScore

    return sum(p.numel() for p in AttentionScore("additive", E_s, E_h, A).parameters())
""",
        # the count of three nn.Linear layers (delegation)
        """
def additive_parameters(E_s, E_h, A):
    layers = (torch.nn.Linear(E_s, A, bias=False), torch.nn.Linear(E_h, A), torch.nn.Linear(A, 1, bias=False))
    return sum(p.numel() for layer in layers for p in layer.parameters())
""",
        # a 0-d tensor
        """
def additive_parameters(E_s, E_h, A):
    return torch.tensor(A) * (E_s + E_h + 2)
""",
    ],
    "max_weight": [
        # computed in float32
        """
def max_weight(v, S):
    return float(1 / (1 + (S - 1) * torch.exp(-2 * v.float().abs().sum())))
""",
        # the caller's v made positive in place
        """
def max_weight(v, S):
    return 1.0 / (1.0 + (S - 1) * math.exp(-2 * v.abs_().sum().item()))
""",
        # |sum v| instead of sum |v|
        """
def max_weight(v, S):
    return 1.0 / (1.0 + (S - 1) * math.exp(-2 * abs(v.sum().item())))
""",
    ],
    "additive_attention": [
        # W s computed for every (step, position) pair, not once per step
        """
def additive_attention(s, h, W, U, b, v, mask):
    N, L, S = s.shape[0], s.shape[1], h.shape[1]
    pairs = s.unsqueeze(2).expand(N, L, S, s.shape[-1])  # (N, L, S, E_s)
    hidden = torch.tanh(pairs @ W.T + (h @ U.T + b).unsqueeze(1))
    alpha = (hidden @ v).masked_fill(~mask.unsqueeze(1), float("-inf")).softmax(dim=-1)
    return alpha @ h, alpha
""",
        # a finite fill of -1e9
        """
def additive_attention(s, h, W, U, b, v, mask):
    hidden = torch.tanh((s @ W.T).unsqueeze(2) + (h @ U.T + b).unsqueeze(1))
    alpha = (hidden @ v).masked_fill(~mask.unsqueeze(1), -1e9).softmax(dim=-1)
    return alpha @ h, alpha
""",
        # .squeeze() of the scores: breaks at N, L or S = 1
        """
def additive_attention(s, h, W, U, b, v, mask):
    hidden = torch.tanh((s @ W.T).unsqueeze(2) + (h @ U.T + b).unsqueeze(1))
    scores = (hidden @ v.unsqueeze(-1)).squeeze()
    alpha = scores.masked_fill(~mask.unsqueeze(1), float("-inf")).softmax(dim=-1)
    return alpha @ h, alpha
""",
        # the scores detached: no gradient reaches W, U, b or v
        """
def additive_attention(s, h, W, U, b, v, mask):
    hidden = torch.tanh((s @ W.T).unsqueeze(2) + (h @ U.T + b).unsqueeze(1))
    alpha = (hidden @ v).detach().masked_fill(~mask.unsqueeze(1), float("-inf")).softmax(dim=-1)
    return alpha @ h, alpha
""",
        # float64 results from float32 inputs
        """
def additive_attention(s, h, W, U, b, v, mask):
    hidden = torch.tanh((s @ W.T).unsqueeze(2) + (h @ U.T + b).unsqueeze(1)).double()
    alpha = (hidden @ v.double()).masked_fill(~mask.unsqueeze(1), float("-inf")).softmax(dim=-1)
    return alpha @ h.double(), alpha
""",
    ],
    "masked_softmax_backward": [
        # the caller's grad_alpha multiplied in place
        """
def masked_softmax_backward(scores, mask, grad_alpha):
    top = scores.masked_fill(~mask, float("-inf")).amax(dim=-1, keepdim=True)
    e = torch.exp(scores - top).masked_fill(~mask, 0.0)
    alpha = e / e.sum(dim=-1, keepdim=True)
    weighted = (alpha * grad_alpha).sum(dim=-1, keepdim=True)
    return grad_alpha.sub_(weighted).mul_(alpha)
""",
        # the maximum taken over the padding too: real weights underflow to 0 / 0
        """
def masked_softmax_backward(scores, mask, grad_alpha):
    e = torch.exp(scores - scores.amax(dim=-1, keepdim=True)).masked_fill(~mask, 0.0)
    alpha = e / e.sum(dim=-1, keepdim=True)
    return alpha * (grad_alpha - (alpha * grad_alpha).sum(dim=-1, keepdim=True))
""",
        # a finite fill of -1e4 instead of masking
        """
def masked_softmax_backward(scores, mask, grad_alpha):
    filled = scores.masked_fill(~mask, -1e4)
    e = torch.exp(filled - filled.amax(dim=-1, keepdim=True))
    alpha = e / e.sum(dim=-1, keepdim=True)
    return alpha * (grad_alpha - (alpha * grad_alpha).sum(dim=-1, keepdim=True))
""",
        # .squeeze() of the row sums: (N,) against (N, S)
        """
def masked_softmax_backward(scores, mask, grad_alpha):
    top = scores.masked_fill(~mask, float("-inf")).amax(dim=-1, keepdim=True)
    e = torch.exp(scores - top).masked_fill(~mask, 0.0)
    alpha = e / e.sum(dim=-1, keepdim=True)
    return alpha * (grad_alpha - (alpha * grad_alpha).sum(dim=-1, keepdim=True).squeeze())
""",
        # autograd through a softmax (forbidden delegation)
        """
def masked_softmax_backward(scores, mask, grad_alpha):
    with torch.enable_grad():
        e = scores.detach().clone().requires_grad_(True)
        alpha = e.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        return torch.autograd.grad(alpha, e, grad_alpha)[0]
""",
        # float64 from float32 inputs
        """
def masked_softmax_backward(scores, mask, grad_alpha):
    scores, grad_alpha = scores.double(), grad_alpha.double()
    top = scores.masked_fill(~mask, float("-inf")).amax(dim=-1, keepdim=True)
    e = torch.exp(scores - top).masked_fill(~mask, 0.0)
    alpha = e / e.sum(dim=-1, keepdim=True)
    return alpha * (grad_alpha - (alpha * grad_alpha).sum(dim=-1, keepdim=True))
""",
    ],
}

# The kinds of wrong answer that still earned full marks before issue 47 (a forbidden
# implementation reached another way), as this chapter's questions allow them: each fails a
# public test case, which names what is wrong.
WRONG_NEW["additive_parameters"] += [
    # the layers built from a class not on the banned list: nn.Conv1d holds W, U, b and v too
    """
def additive_parameters(E_s, E_h, A):
    layers = (torch.nn.Conv1d(E_s, A, 1, bias=False), torch.nn.Conv1d(E_h, A, 1),
              torch.nn.Conv1d(A, 1, 1, bias=False))
    return sum(p.numel() for layer in layers for p in layer.parameters())
""",
    # a module of one's own holding the four parameters
    """
def additive_parameters(E_s, E_h, A):
    class Score(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.W = torch.nn.Parameter(torch.empty(A, E_s))
            self.U = torch.nn.Parameter(torch.empty(A, E_h))
            self.b = torch.nn.Parameter(torch.empty(A))
            self.v = torch.nn.Parameter(torch.empty(A))

    return sum(p.numel() for p in Score().parameters())
""",
]
WRONG_NEW["max_weight"] += [
    # the int 1 where S = 1 settles it: the question asks for a Python float
    """
def max_weight(v, S):
    if S == 1:
        return 1
    return 1.0 / (1.0 + (S - 1) * math.exp(-2 * v.double().abs().sum().item()))
""",
]
_BACKWARD_RIGHT_FORMULA = """
    return alpha * (grad_alpha - (alpha * grad_alpha).sum(dim=-1, keepdim=True))
"""
WRONG_NEW["masked_softmax_backward"] += [
    # the forbidden softmax written another way: the exp of log_softmax
    """
def masked_softmax_backward(scores, mask, grad_alpha):
    alpha = scores.masked_fill(~mask, float("-inf")).log_softmax(dim=-1).exp()
"""
    + _BACKWARD_RIGHT_FORMULA,
    # autograd reached without its names: the engine that torch.autograd.grad calls, called directly
    """
def masked_softmax_backward(scores, mask, grad_alpha):
    with torch.enable_grad():
        e = scores.detach().clone().requires_grad_(True)
        filled = e.masked_fill(~mask, float("-inf"))
        w = torch.exp(filled - filled.amax(dim=-1, keepdim=True))
        alpha = w / w.sum(dim=-1, keepdim=True)
        engine = torch.autograd.Variable._execution_engine
        return engine.run_backward((alpha,), (grad_alpha,), False, False, (e,), False)[0]
""",
    # forward-mode autograd: the Jacobian column by column, then g^T J
    """
def masked_softmax_backward(scores, mask, grad_alpha):
    def alpha_of(e):
        top = e.masked_fill(~mask, float("-inf")).amax(dim=-1, keepdim=True)
        w = torch.exp(e - top).masked_fill(~mask, 0.0)
        return w / w.sum(dim=-1, keepdim=True)

    jacobian = torch.func.jacfwd(alpha_of)(scores)  # (N, S, N, S)
    return torch.einsum("nj,njmk->mk", grad_alpha, jacobian)
""",
]
