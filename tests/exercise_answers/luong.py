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
        # right values, but a double loop over the batch and the positions
        """
def general_scores(s, h, W):
    out = torch.zeros(h.shape[0], h.shape[1])
    for n in range(h.shape[0]):
        for j in range(h.shape[1]):
            out[n, j] = s[n] @ W @ h[n, j]
    return out
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
        # the centre not broadcast over the positions: (S,) - (N,) works only for N = 1
        """
def local_p_weights(scores, center, D):
    distance = torch.arange(scores.shape[1]).float() - center
    alpha = scores.masked_fill(distance.abs() > D, float("-inf")).softmax(dim=-1)
    return alpha * torch.exp(-(distance**2) / (2 * (D / 2) ** 2))
""",
        # p_t rounded to the nearest position
        """
def local_p_weights(scores, center, D):
    distance = torch.arange(scores.shape[1]).float() - center.round().unsqueeze(1)
    alpha = scores.masked_fill(distance.abs() > D, float("-inf")).softmax(dim=-1)
    return alpha * torch.exp(-(distance**2) / (2 * (D / 2) ** 2))
""",
        # the window taken from floor(p_t): [floor(p_t) - D, floor(p_t) + D]
        """
def local_p_weights(scores, center, D):
    positions = torch.arange(scores.shape[1]).float()
    distance = positions - center.unsqueeze(1)
    inside = (positions - center.floor().unsqueeze(1)).abs() <= D
    alpha = scores.masked_fill(~inside, float("-inf")).softmax(dim=-1)
    return alpha * torch.exp(-(distance**2) / (2 * (D / 2) ** 2))
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
        # an exclusive end: range(t - D, t + D) clipped
        """
def local_m_positions(t, D, S):
    return list(range(max(0, t - D), min(S, t + D)))
""",
        # no clipping at the start: negative positions at t < D
        """
def local_m_positions(t, D, S):
    return list(range(t - D, min(S, t + D + 1)))
""",
        # half-width D // 2
        """
def local_m_positions(t, D, S):
    return [j for j in range(S) if abs(j - t) <= D // 2]
""",
        # the example's answer hard-coded
        """
def local_m_positions(t, D, S):
    return [3, 4, 5, 6, 7]
""",
    ],
    "general_multiply_adds": [
        # W_a applied to every key
        """
def general_multiply_adds(S, E_s, E_h):
    return S * E_s * E_h + S * E_h
""",
        # the cost of dot, W_a forgotten
        """
def general_multiply_adds(S, E_s, E_h):
    return S * E_h
""",
        # the two widths swapped in the dot products: S E_s
        """
def general_multiply_adds(S, E_s, E_h):
    return E_s * E_h + S * E_s
""",
        # SE + E: the product s_t^T W_a counted as one width
        """
def general_multiply_adds(S, E_s, E_h):
    return S * E_h + E_h
""",
        # the answer at S = E_s = E_h = 1 hard-coded
        """
def general_multiply_adds(S, E_s, E_h):
    return 2
""",
    ],
    "local_p_backward": [
        # the Gaussian's derivative without the softmax's weight: gauss_j (j - p_t) / sigma^2 alone
        """
def local_p_backward(scores, center, D, grad_a):
    distance = torch.arange(scores.shape[1], dtype=scores.dtype) - center.unsqueeze(1)
    alpha = scores.masked_fill(distance.abs() > D, float("-inf")).softmax(dim=-1)
    gauss = torch.exp(-(distance**2) / (2 * (D / 2) ** 2))
    g = grad_a * gauss
    grad_scores = alpha * (g - (alpha * g).sum(dim=-1, keepdim=True))
    inside = distance.abs() <= D
    return grad_scores, (grad_a * gauss * distance * inside).sum(dim=-1) / (D / 2) ** 2
""",
        # the Gaussian applied after the softmax's backward instead of before it
        """
def local_p_backward(scores, center, D, grad_a):
    distance = torch.arange(scores.shape[1], dtype=scores.dtype) - center.unsqueeze(1)
    alpha = scores.masked_fill(distance.abs() > D, float("-inf")).softmax(dim=-1)
    gauss = torch.exp(-(distance**2) / (2 * (D / 2) ** 2))
    grad_scores = alpha * (grad_a - (alpha * grad_a).sum(dim=-1, keepdim=True)) * gauss
    return grad_scores, (grad_a * alpha * gauss * distance).sum(dim=-1) / (D / 2) ** 2
""",
    ],
}

DELEGATING = {
    "general_multiply_adds": """
def general_multiply_adds(S, E_s, E_h):
    from torch.overrides import TorchFunctionMode

    class Count(TorchFunctionMode):
        macs = 0

        def __torch_function__(self, func, types, args=(), kwargs=None):
            if func in (torch.matmul, torch.Tensor.matmul, torch.Tensor.__matmul__):
                Count.macs += args[0].shape[0] * args[0].shape[1] * args[1].shape[1]
            return func(*args, **(kwargs or {}))

    with Count():
        _ = (torch.zeros(1, E_s) @ torch.zeros(E_s, E_h)) @ torch.zeros(E_h, S)
    return Count.macs
""",
    "local_m_positions": """
def local_m_positions(t, D, S):
    from seqlab.masks import local_window
    return local_window(torch.tensor([[float(t)]]), S, D)[0, 0].nonzero().flatten().tolist()
""",
    "local_p_backward": """
def local_p_backward(scores, center, D, grad_a):
    scores = scores.detach().requires_grad_(True)
    center = center.detach().requires_grad_(True)
    with torch.enable_grad():
        distance = torch.arange(scores.shape[1], dtype=scores.dtype) - center.unsqueeze(1)
        alpha = scores.masked_fill(distance.abs() > D, float("-inf")).softmax(dim=-1)
        a = alpha * torch.exp(-(distance**2) / (2 * (D / 2) ** 2))
        (a * grad_a).sum().backward()
    return scores.grad, center.grad
""",
    "general_scores": """
def general_scores(s, h, W):
    S = h.shape[1]  # PyTorch's bilinear form x1^T W x2, one (n, j) pair per row
    return torch.nn.functional.bilinear(s.unsqueeze(1).expand(-1, S, -1), h, W[None]).squeeze(-1)
""",
    "local_p_weights": """
from seqlab.masks import gaussian_window, local_window
def local_p_weights(scores, center, D):
    inside = local_window(center.unsqueeze(1), scores.shape[1], D)[:, 0]
    alpha = scores.masked_fill(~inside, float("-inf")).softmax(dim=-1)
    return alpha * gaussian_window(center.unsqueeze(1), scores.shape[1], D)[:, 0]
""",
}

# Plausible wrong answers written to measure the tests before they were strengthened (make
# mutation --wrong-new): the kinds students get past weak tests. The hidden tests reject every
# one, and the public ones every one that does not just delegate to a forbidden function.
WRONG_NEW = {
    "general_scores": [
        # changes the caller's encoder states in place
        """
def general_scores(s, h, W):
    h *= (s @ W).unsqueeze(1)
    return h.sum(-1)
""",
        # .squeeze() of the (N, S, 1) product: breaks at N = 1 or S = 1
        """
def general_scores(s, h, W):
    return (h @ (s @ W).unsqueeze(-1)).squeeze()
""",
        # in float64 for precision: a float64 result from float32 inputs
        """
def general_scores(s, h, W):
    return torch.einsum("na,ab,nsb->ns", s.double(), W.double(), h.double())
""",
        # s W computed under no_grad "because it is only a query": no gradient reaches s and W
        """
def general_scores(s, h, W):
    with torch.no_grad():
        q = s @ W
    return (q.unsqueeze(1) * h).sum(-1)
""",
        # PyTorch's bilinear layer does the whole score: delegation
        """
def general_scores(s, h, W):
    S = h.shape[1]
    x1 = s.unsqueeze(1).expand(-1, S, -1)
    return torch.nn.functional.bilinear(x1, h, W.unsqueeze(0)).squeeze(-1)
""",
    ],
    "local_p_weights": [
        # writes -inf into the caller's scores
        """
def local_p_weights(scores, center, D):
    positions = torch.arange(scores.shape[1], dtype=scores.dtype)
    distance = positions - center.unsqueeze(1)
    scores.masked_fill_(distance.abs() > D, float("-inf"))
    return scores.softmax(dim=-1) * torch.exp(-(distance**2) / (2 * (D / 2) ** 2))
""",
        # a finite fill instead of masking: wrong once the scores in the window are far below it
        """
def local_p_weights(scores, center, D):
    positions = torch.arange(scores.shape[1], dtype=scores.dtype)
    distance = positions - center.unsqueeze(1)
    alpha = scores.masked_fill(distance.abs() > D, -1e4).softmax(dim=-1)
    return alpha * (distance.abs() <= D) * torch.exp(-(distance**2) / (2 * (D / 2) ** 2))
""",
        # sigma = D // 2: an int, right for even D only (0 for D = 1)
        """
def local_p_weights(scores, center, D):
    positions = torch.arange(scores.shape[1], dtype=scores.dtype)
    distance = positions - center.unsqueeze(1)
    alpha = scores.masked_fill(distance.abs() > D, float("-inf")).softmax(dim=-1)
    return alpha * torch.exp(-(distance**2) / (2 * (D // 2) ** 2))
""",
        # the centre detached "since the window is not differentiable": no gradient reaches p_t
        """
def local_p_weights(scores, center, D):
    positions = torch.arange(scores.shape[1], dtype=scores.dtype)
    distance = positions - center.detach().unsqueeze(1)
    alpha = scores.masked_fill(distance.abs() > D, float("-inf")).softmax(dim=-1)
    return alpha * torch.exp(-(distance**2) / (2 * (D / 2) ** 2))
""",
        # center.squeeze() to be safe: a 0-d tensor at N = 1
        """
def local_p_weights(scores, center, D):
    positions = torch.arange(scores.shape[1], dtype=scores.dtype)
    distance = positions - center.squeeze()[:, None]
    alpha = scores.masked_fill(distance.abs() > D, float("-inf")).softmax(dim=-1)
    return alpha * torch.exp(-(distance**2) / (2 * (D / 2) ** 2))
""",
        # positions in float32: float32 distances for float64 inputs
        """
def local_p_weights(scores, center, D):
    positions = torch.arange(scores.shape[1], dtype=torch.float32)
    distance = (positions - center.float().unsqueeze(1)).to(scores.dtype)
    alpha = scores.masked_fill(distance.abs() > D, float("-inf")).softmax(dim=-1)
    return alpha * torch.exp(-(distance**2) / (2 * (D / 2) ** 2))
""",
    ],
    "local_m_positions": [
        # a window past the end of the source clamped to its last position
        """
def local_m_positions(t, D, S):
    return [j for j in range(S) if abs(j - t) <= D] or [S - 1]
""",
        # D = 0 handled apart, without the check that t lies in the source
        """
def local_m_positions(t, D, S):
    if D == 0:
        return [t]
    return list(range(max(0, t - D), min(S, t + D + 1)))
""",
        # the window clipped at the end before it is shifted: D positions after t even at the end
        """
def local_m_positions(t, D, S):
    t = min(t, S - 1)
    return list(range(max(0, t - D), min(S, t + D + 1)))
""",
    ],
    "general_multiply_adds": [
        # a float: E_h (E_s + S) from a float formula
        """
def general_multiply_adds(S, E_s, E_h):
    return E_h * (E_s + S) * 1.0
""",
        # the context sum_j alpha_j h_j counted in too: S E_h more
        """
def general_multiply_adds(S, E_s, E_h):
    return E_s * E_h + 2 * S * E_h
""",
        # numpy's integer: not a Python int
        """
def general_multiply_adds(S, E_s, E_h):
    import numpy as np
    return np.int64(E_s * E_h + S * E_h)
""",
    ],
}

_LOCAL_P_BACKWARD = """
def local_p_backward(scores, center, D, grad_a):
    j = torch.arange(scores.shape[1], dtype=scores.dtype)
    distance = j - center.unsqueeze(1)
    alpha = ALPHA
    variance = (D / 2) ** 2
    gauss = torch.exp(-(distance**2) / (2 * variance))
    g_alpha = G_ALPHA
    grad_scores = GRAD_SCORES
    grad_center = GRAD_CENTER
    return grad_scores, grad_center
"""
_RIGHT = {
    "ALPHA": 'scores.masked_fill(distance.abs() > D, float("-inf")).softmax(dim=-1)',
    "G_ALPHA": "grad_a * gauss",
    "GRAD_SCORES": "alpha * (g_alpha - (alpha * g_alpha).sum(dim=-1, keepdim=True))",
    "GRAD_CENTER": "(grad_a * alpha * gauss * distance).sum(dim=-1) / variance",
}


def _backward(**changes):
    """The stretch question's answer with one piece changed."""
    source = _LOCAL_P_BACKWARD
    # the longest placeholder first: ALPHA is also part of G_ALPHA
    for key, value in sorted({**_RIGHT, **changes}.items(), key=lambda item: -len(item[0])):
        source = source.replace(key, value)
    return source


WRONG_NEW["local_p_backward"] = [
    # the softmax's backward over every position: the window forgotten in alpha
    _backward(ALPHA="scores.softmax(dim=-1) * (distance.abs() <= D)"),
    # the softmax's Jacobian taken as diagonal: the - sum_k alpha_k g_k term missing
    _backward(GRAD_SCORES="alpha * g_alpha"),
    # d gauss / d p_t with the sign of d gauss / d j
    _backward(GRAD_CENTER="-(grad_a * alpha * gauss * distance).sum(dim=-1) / variance"),
    # divided by sigma instead of sigma^2
    _backward(GRAD_CENTER="(grad_a * alpha * gauss * distance).sum(dim=-1) / (D / 2)"),
    # the Gaussian forgotten on the way to the scores: g used as dL/d alpha
    _backward(G_ALPHA="grad_a"),
    # the Gaussian's factor applied to the caller's grad_a in place
    _backward(G_ALPHA="grad_a.mul_(gauss)"),
    # autograd through the forward pass: what the question forbids
    """
def local_p_backward(scores, center, D, grad_a):
    scores = scores.detach().requires_grad_(True)
    center = center.detach().requires_grad_(True)
    with torch.enable_grad():
        distance = torch.arange(scores.shape[1], dtype=scores.dtype) - center.unsqueeze(1)
        alpha = scores.masked_fill(distance.abs() > D, float("-inf")).softmax(dim=-1)
        a = alpha * torch.exp(-(distance**2) / (2 * (D / 2) ** 2))
        return torch.autograd.grad(a, (scores, center), grad_a)
""",
]

# The kinds of wrong answer that still earned full marks before issue 47 (a forbidden
# implementation reached another way), as this chapter's questions allow them: each fails a
# public test case, which names what is wrong.
WRONG_NEW["general_multiply_adds"] += [
    # the matrix products counted through einsum, which no forbidden name covers
    """
def general_multiply_adds(S, E_s, E_h):
    from torch.overrides import TorchFunctionMode

    class Count(TorchFunctionMode):
        macs = 0

        def __torch_function__(self, func, types, args=(), kwargs=None):
            if func is torch.einsum:
                a, b = args[1].shape, args[2].shape
                Count.macs += a[0] * a[1] * b[1]
            return func(*args, **(kwargs or {}))

    with Count():
        q = torch.einsum("ij,jk->ik", torch.zeros(1, E_s), torch.zeros(E_s, E_h))
        _ = torch.einsum("ij,jk->ik", q, torch.zeros(E_h, S))
    return Count.macs
""",
    # PyTorch's FLOP counter's formula for a matrix product, from the shapes: 2 FLOPs a multiply-add
    """
def general_multiply_adds(S, E_s, E_h):
    from torch.utils.flop_counter import mm_flop

    return (mm_flop([1, E_s], [E_s, E_h]) + mm_flop([1, E_h], [E_h, S])) // 2
""",
]
WRONG_NEW["local_p_backward"] += [
    # autograd reached without its names: the engine that torch.autograd.grad calls, called directly
    """
def local_p_backward(scores, center, D, grad_a):
    with torch.enable_grad():
        s = scores.detach().clone().requires_grad_(True)
        p = center.detach().clone().requires_grad_(True)
        distance = torch.arange(scores.shape[1], dtype=scores.dtype) - p.unsqueeze(1)
        alpha = s.masked_fill(distance.abs() > D, float("-inf")).softmax(dim=-1)
        a = alpha * torch.exp(-(distance**2) / (2 * (D / 2) ** 2))
        engine = torch.autograd.Variable._execution_engine
        return engine.run_backward((a,), (grad_a,), False, False, (s, p), False)
""",
    # forward-mode autograd: the Jacobians by torch.func.jacfwd, then g^T J
    """
def local_p_backward(scores, center, D, grad_a):
    def weights(s, p):
        distance = torch.arange(s.shape[1], dtype=s.dtype) - p.unsqueeze(1)
        alpha = s.masked_fill(distance.abs() > D, float("-inf")).softmax(dim=-1)
        return alpha * torch.exp(-(distance**2) / (2 * (D / 2) ** 2))

    j_s, j_p = torch.func.jacfwd(weights, argnums=(0, 1))(scores, center)
    return torch.einsum("nj,njmk->mk", grad_a, j_s), torch.einsum("nj,njm->m", grad_a, j_p)
""",
]
