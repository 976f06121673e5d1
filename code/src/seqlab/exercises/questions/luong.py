"""The graded questions of the chapter luong (chapters/luong.ipynb)."""

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from seqlab.attention import masked_softmax
from seqlab.exercises import count_torch_calls
from seqlab.exercises.harness import Draw, Question
from seqlab.exercises.questions.bahdanau import AUTOGRAD, without_autograd
from seqlab.masks import gaussian_window, local_window


def general_oracle(s, h, W):
    """s_n^T W h_nj, one (n, j) at a time."""
    N, S = h.shape[:2]
    return torch.stack([torch.stack([s[n] @ W @ h[n, j] for j in range(S)]) for n in range(N)])


def general_draw(d):
    N, S, E_s, E_h = d.sizes(4)  # distinct; each is 1 in one of the first draws
    return d.randn(N, E_s), d.randn(N, S, E_h), d.randn(E_s, E_h)


def general_no_loops(answer, public):
    """A loop over the batch or the positions makes more torch calls on a bigger batch."""
    g = torch.Generator().manual_seed(0 if public else 1)
    s, h, W = (
        torch.randn(2, 3, generator=g),
        torch.randn(2, 4, 5, generator=g),
        torch.randn(3, 5, generator=g),
    )
    s_big, h_big = torch.randn(5, 3, generator=g), torch.randn(5, 9, 5, generator=g)
    small = count_torch_calls(lambda: answer(s, h, W))
    big = count_torch_calls(lambda: answer(s_big, h_big, W))
    if small != big:
        raise AssertionError(
            f"general_scores: {small} torch calls for N = 2, S = 4 but {big} for N = 5, S = 9: "
            "write it without loops"
        )


GENERAL = Question(
    "general_scores",
    oracle=general_oracle,
    draw=general_draw,
    edges={"N = 1, S = 1": lambda: (torch.ones(1, 2), torch.ones(1, 1, 3), torch.ones(2, 3))},
    grad=(0, 1, 2),
    forbidden=(
        "seqlab.attention.AttentionScore",
        "torch.nn.functional.bilinear",
        "torch.bilinear",
        "torch.nn.Bilinear",
    ),
    extra=general_no_loops,
)


def local_p_oracle(scores, center, D):
    """The page's local-p (Seq2Seq._attend) for one decoder step."""
    S, p = scores.shape[1], center.unsqueeze(1)  # p: (N, L) with L = 1
    inside = local_window(p, S, D)[:, 0]  # (N, S)
    return masked_softmax(scores, inside) * gaussian_window(p, S, D)[:, 0]


def local_p_draw(d):
    N, S = d.sizes(2, high=9)  # distinct; each is 1 in one of the first draws
    return d.randn(N, S, scale=3.0), S * d.rand(N), d.integer(1, 4)


def on_a_position():
    """Centres on whole positions: the window's ends lie at distance exactly D, and row 1's
    window is cut by the start of the source."""
    return torch.randn(2, 7, generator=torch.Generator().manual_seed(5)), torch.tensor([3.0, 0.0]), 2


def very_low_scores(dtype=torch.float32):
    """Scores from -1e30 to -4e30 (exact in float32): below any finite fill of moderate size."""
    scores = -1e30 * torch.tensor([[1.0, 3.0, 1.5, 2.0, 4.0, 1.0], [2.0, 2.0, 1.0, 3.5, 1.0, 2.5]])
    return scores.to(dtype), torch.tensor([2.5, 4.2], dtype=dtype), 2


def finite(scores) -> bool:
    """finite numbers"""
    return bool(torch.isfinite(scores).all())


# Question 2's conventions, which Question 5 takes over: "0 <= p_t <= S", "D is an int >= 1",
# "the scores are any finite numbers"
LOCAL_P_BOUNDS = {
    "scores": finite,
    "center": (0.0, None),
    "center - S": (None, 0.0, lambda scores, center, *_: center - scores.shape[1]),
    "D": (1, None),
}

FORBIDDEN_LOCAL = (
    "seqlab.masks.local_window",
    "seqlab.masks.gaussian_window",
    "seqlab.attention.masked_softmax",
)
LOCAL_P = Question(
    "local_p_weights",
    oracle=local_p_oracle,
    draw=local_p_draw,
    edges={
        "centres on positions (window ends at distance D, one cut by the start)": on_a_position,
        "scores down to -1e30": very_low_scores,
    },
    grad=(0, 1),
    forbidden=FORBIDDEN_LOCAL,
    bounds=LOCAL_P_BOUNDS,
)


def local_m_oracle(t, D, S):
    """The positions the package's window admits at p_t = t."""
    inside = local_window(torch.tensor([[float(t)]]), S, D)[0, 0]  # (S,) bool
    return inside.nonzero().flatten().tolist()


def local_m_draw(d):
    S, D = d.integer(1, 12), d.integer(0, 4)
    return d.integer(0, S + D + 2), D, S


LOCAL_M = Question(
    "local_m_positions",
    oracle=local_m_oracle,
    draw=local_m_draw,
    arg_names=("t", "D", "S"),
    edges={
        "t = 0": lambda: (0, 2, 8),
        "t near the end": lambda: (9, 3, 11),
        "t past the end of the source": lambda: (12, 1, 5),
    },
    forbidden=("seqlab.masks.local_window",),
    bounds={"t": (0, None), "D": (0, None), "S": (1, None)},
)


class MatmulCount(TorchFunctionMode):
    """Counts the multiply-adds of the matrix products it sees: (m, k) @ (k, n) costs m k n."""

    def __init__(self):
        super().__init__()
        self.macs = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func in (torch.matmul, torch.Tensor.matmul, torch.Tensor.__matmul__):
            (m, k), n = args[0].shape, args[1].shape[-1]
            self.macs += m * k * n
        return func(*args, **(kwargs or {}))


def general_macs_oracle(S, E_s, E_h):
    """The multiply-adds of s^T W_a, then of its products with the S keys (one example), on
    tensors of the meta device (shapes only, nothing allocated)."""
    s, W_a, h = (torch.zeros(*shape, device="meta") for shape in ((1, E_s), (E_s, E_h), (S, E_h)))
    with MatmulCount() as counter:
        _ = (s @ W_a) @ h.T
    return counter.macs


# every kernel a matrix product reaches, whatever the function called (einsum, tensordot, linear,
# a tensor on the meta device: each ends in one of these)
PRODUCTS = {"mm", "bmm", "addmm", "baddbmm", "addbmm", "mv", "addmv", "dot", "vdot", "matmul", "_int_mm"}


def multiplies_no_matrices(sizes):
    """An ``extra``: "multiply no matrices to count them": no matrix product runs while the
    answer does, by any function (the names are forbidden too, so that the check names them)."""

    class Products(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.seen = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func.overloadpacket.__name__ in PRODUCTS:
                self.seen.append(func.overloadpacket.__name__)
            return func(*args, **(kwargs or {}))

    def extra(answer, public):
        for args in sizes:
            with Products() as products:
                answer(*args)
            if products.seen:
                raise AssertionError(
                    f"general_multiply_adds multiplied matrices (torch's {products.seen[0]}) to count: "
                    "write the count as a formula in S, E_s and E_h"
                )

    return extra


def macs_draw(d):
    """Distinct sizes, each 1 in one early draw, scaled so that every count is 10^4 or more: the
    page prints integers that change from run to run (its timings in ms), which a smaller count
    would match by chance (tools.checks.answer_on_page looks for the tests' values on the page).
    The count is also the size of the tensors an answer that builds them makes: at most 1.2e7."""
    S, E_s, E_h = d.sizes(3, high=40)
    scale = 2500 if E_h == 1 else 60  # E_h = 1: the count is S + E_s
    return tuple(1 if x == 1 else scale * x + d.integer(0, scale - 1) for x in (S, E_s, E_h))


MACS = Question(
    "general_multiply_adds",
    oracle=general_macs_oracle,
    draw=macs_draw,
    arg_names=("S", "E_s", "E_h"),
    edges={"E_s = E_h": lambda: (3, 5, 5)},
    forbidden=(
        "torch.utils.flop_counter.FlopCounterMode",
        "torch.utils.flop_counter.mm_flop",
        "torch.utils.flop_counter.bmm_flop",
        "torch.utils.flop_counter.addmm_flop",
        "torch.utils.flop_counter.baddbmm_flop",
        "torch.matmul",
        "torch.mm",
        "torch.Tensor.matmul",
        "torch.Tensor.__matmul__",
    ),
    extra=multiplies_no_matrices([(3, 5, 5), (7, 2, 4)]),
    bounds={"S": (1, None), "E_s": (1, None), "E_h": (1, None)},
)


def local_p_backward_oracle(scores, center, D, grad_a):
    """Autograd through the local-p oracle of Question 2."""
    leaves = [scores.detach().clone().requires_grad_(True), center.detach().clone().requires_grad_(True)]
    S, p = scores.shape[1], leaves[1].unsqueeze(1)  # p: (N, L) with L = 1
    with torch.enable_grad():  # the page's local-p (Seq2Seq._attend), as in Question 2
        inside = local_window(p, S, D)[:, 0]
        a = masked_softmax(leaves[0], inside) * gaussian_window(p, S, D)[:, 0]
        return torch.autograd.grad(a, leaves, grad_a)


def local_p_backward_draw(d):
    N, S = d.sizes(2, high=9)  # distinct; each is 1 in one of the first draws
    return d.randn(N, S, scale=3.0), S * d.rand(N), d.integer(1, 4), d.randn(N, S)


def backward_edge(scores, center, D, dtype=torch.float32):
    g = torch.Generator().manual_seed(6)
    grad_a = torch.randn(scores.shape, generator=g, dtype=torch.float64).to(dtype)
    return scores.to(dtype), center.to(dtype), D, grad_a


LOCAL_P_BACKWARD_EDGES = {
    "centres on positions (window ends at distance D, one cut by the start)": lambda: backward_edge(
        torch.linspace(-2.0, 2.5, 14).reshape(2, 7), torch.tensor([3.0, 0.0]), 2
    ),
    "a one-position source": lambda: backward_edge(torch.tensor([[0.3]]), torch.tensor([0.6]), 1),
}
LOCAL_P_BACKWARD = Question(
    "local_p_backward",
    oracle=local_p_backward_oracle,
    draw=local_p_backward_draw,
    edges=LOCAL_P_BACKWARD_EDGES,
    forbidden=AUTOGRAD,
    extra=without_autograd(
        "local_p_backward",
        local_p_backward_oracle,
        [("random draw 2", lambda: local_p_backward_draw(Draw(2))), *LOCAL_P_BACKWARD_EDGES.items()],
    ),
    bounds=LOCAL_P_BOUNDS,
)

QUESTIONS = (GENERAL, LOCAL_P, LOCAL_M, MACS, LOCAL_P_BACKWARD)
