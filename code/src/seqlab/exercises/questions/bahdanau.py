"""The graded questions of the chapter bahdanau (chapters/bahdanau.ipynb)."""

import torch
from torch.overrides import TorchFunctionMode

from seqlab.attention import AttentionScore, masked_softmax
from seqlab.exercises import count_torch_calls
from seqlab.exercises.harness import Draw, Question, _compare

# autograd in either mode, however it is reached: what a question that asks for a gradient
# derived by hand forbids (reverse mode written another way is caught by without_autograd)
AUTOGRAD = (
    "torch.autograd.grad",
    "torch.autograd.backward",
    "torch.Tensor.backward",
    "torch.autograd.functional.vjp",
    "torch.autograd.functional.jvp",
    "torch.autograd.functional.jacobian",
    "torch.autograd.functional.hessian",
    "torch.autograd.functional.vhp",
    "torch.autograd.functional.hvp",
    "torch.autograd.forward_ad.make_dual",
    "torch.autograd.forward_ad.unpack_dual",
    "torch.func.vjp",
    "torch.func.jvp",
    "torch.func.grad",
    "torch.func.grad_and_value",
    "torch.func.jacrev",
    "torch.func.jacfwd",
    "torch.func.hessian",
    "torch.func.linearize",
)


def has_a_real_position(mask) -> bool:
    """a mask with at least one True in every row"""
    return bool(mask.any(dim=-1).all())


def without_autograd(name, oracle, cases):
    """An ``extra``: the answer, run on ``cases`` (functions returning arguments) with autograd off
    (``torch.inference_mode``, and no tensor saved for a backward pass), must give the oracle's
    values: a gradient derived by hand needs no graph, while autograd reached by any name (a
    ``grad_fn`` called, the engine itself) fails there or returns nothing."""

    def refuse(tensor):
        raise RuntimeError("a tensor saved for a backward pass")

    def extra(answer, public):
        for label, make in cases:
            want = oracle(*make())
            try:
                with torch.inference_mode(), torch.autograd.graph.saved_tensors_hooks(refuse, lambda t: t):
                    got = answer(*make())
            except Exception as error:  # any failure there is autograd's
                raise AssertionError(
                    f"{name} [{label}] fails with autograd turned off ({type(error).__name__}): "
                    "it uses autograd; compute the gradient from your derivation"
                ) from None
            try:
                _compare(got, want, f"the result of {name} [{label}]", 1.0)
            except AssertionError:
                raise AssertionError(
                    f"{name} [{label}] gives another result with autograd turned off: it uses "
                    "autograd; compute the gradient from your derivation"
                ) from None

    return extra


def scores_oracle(s, h, W, U, v):
    """The package's additive score (shown on the page), with these weights and no bias."""
    module = AttentionScore("additive", W.shape[1], U.shape[1], W.shape[0])
    weights = {"W.weight": W, "U.weight": U, "U.bias": torch.zeros_like(v), "v.weight": v.unsqueeze(0)}
    return torch.func.functional_call(module, weights, (s.unsqueeze(1), h))[:, 0]


def scores_draw(d):
    N, S, E_s, E_h, A = d.sizes(5)  # distinct; each is 1 in one of the first draws
    return d.randn(N, E_s), d.randn(N, S, E_h), d.randn(A, E_s), d.randn(A, E_h), d.randn(A, scale=2.0)


SCORES = Question(
    "additive_scores",
    oracle=scores_oracle,
    draw=scores_draw,
    arg_names=("s", "h", "W", "U", "v"),
    edges={
        "N = S = 1": lambda: (
            torch.tensor([[0.5, -1.0]]),
            torch.tensor([[[1.0, 0.0, 2.0]]]),
            torch.tensor([[1.0, 2.0], [0.0, -1.0], [0.5, 0.5], [2.0, 0.0]]),
            torch.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 1.0, 1.0]]),
            torch.tensor([1.0, -2.0, 0.5, 3.0]),
        )
    },
    grad=(0, 1, 2, 3, 4),
    forbidden=("seqlab.attention.AttentionScore",),
)


def context_oracle(scores, h, mask):
    """The package's masked softmax (shown on the page), then the weighted sum of h."""
    return (masked_softmax(scores, mask).unsqueeze(-1) * h).sum(dim=1)


def some_mask(d, N, S):
    """Random, with at least one real position per row."""
    mask = d.rand(N, S) < 0.6
    mask[torch.arange(N), torch.randint(0, S, (N,), generator=d.generator)] = True
    return mask


def context_draw(d):
    N, S, E_h = d.sizes(3)
    scale = (1.0, 30.0, 1e4)[d.index % 3]
    return d.randn(N, S, scale=scale), d.randn(N, S, E_h), some_mask(d, N, S)


# "up to 10^30 in magnitude on real positions as on padded ones": 10^30 as float32 rounds it
SCORE_MAX = float(torch.tensor(1e30, dtype=torch.float32))  # 1.00000002e30

CONTEXT = Question(
    "context_vector",
    oracle=context_oracle,
    draw=context_draw,
    arg_names=("scores", "h", "mask"),
    edges={
        "a large score on padding": lambda: (
            torch.tensor([[0.0, 0.0, 200.0], [1.0, 2.0, 0.5]]),
            torch.tensor([[[1.0, 0.0], [0.0, 1.0], [9.0, 9.0]], [[2.0, 0.0], [0.0, 2.0], [4.0, 4.0]]]),
            torch.tensor([[True, True, False], [True, False, True]]),
        ),
        "real scores of -1e30": lambda: (
            torch.tensor([[-1e30, -5e29, 5.0, -1e30]]),
            torch.tensor([[[1.0], [2.0], [3.0], [4.0]]]),
            torch.tensor([[True, True, False, True]]),
        ),
    },
    grad=(0, 1),
    forbidden=(
        "seqlab.attention.masked_softmax",
        "seqlab.attention._masked_softmax",
        "seqlab.attention.scaled_dot_product_attention",
        "torch.nn.functional.scaled_dot_product_attention",
    ),
    bounds={"scores": (-SCORE_MAX, SCORE_MAX), "mask": has_a_real_position},
)


def parameters_counted(E_s, E_h, A):
    """The number of parameters of the package's additive score module."""
    return sum(p.numel() for p in AttentionScore("additive", E_s, E_h, A).parameters())


def builds_no_layer(sizes):
    """An ``extra``: counting from the shapes builds no module (nn.Linear and AttentionScore are
    forbidden by name; any other layer that holds the same weights, nn.Conv1d, nn.Bilinear, an
    nn.Module of one's own, is refused here: a parameter registered in a module while the answer
    runs)."""

    def extra(answer, public):
        built = []

        def hook(module, name, parameter):
            built.append(type(module).__name__)

        handle = torch.nn.modules.module.register_module_parameter_registration_hook(hook)
        try:
            for args in sizes:
                answer(*args)
        finally:
            handle.remove()
        if built:
            raise AssertionError(
                f"additive_parameters built a layer ({built[0]}): work out the shapes of W, U, b "
                "and v and count from them, as the question asks"
            )

    return extra


PARAMETERS = Question(
    "additive_parameters",
    oracle=parameters_counted,
    draw=lambda d: tuple(d.sizes(3, high=40)),
    arg_names=("E_s", "E_h", "A"),
    edges={"E_s = E_h": lambda: (6, 6, 5)},
    forbidden=("seqlab.attention.AttentionScore", "torch.nn.Linear"),
    extra=builds_no_layer([(3, 4, 5), (6, 6, 5)]),
    bounds={"E_s": (1, None), "E_h": (1, None), "A": (1, None)},
)


def returns_floats(cases):
    """An ``extra``: max_weight returns a Python float on ``cases`` (an int 1 is no float)."""

    def extra(answer, public):
        for make in cases:
            got = answer(*make())
            if isinstance(got, bool) or not isinstance(got, float):
                raise AssertionError(f"max_weight should return a Python float, got {type(got).__name__}")

    return extra


# the cases the question settles, and one more value (the hidden tests check many): each case
# carries its answer; the comparison is to nine significant digits (a Python float's rel 1e-9)
WEIGHT_EDGES = {
    "S = 1": lambda: ((torch.tensor([0.5, -0.25]), 1), 1.0),
    "v = 0": lambda: ((torch.zeros(3), 4), 0.25),
    "v = (0.5, -0.25), S = 3": lambda: ((torch.tensor([0.5, -0.25]), 3), 0.6914384540362276),
    "entries in the hundreds": lambda: ((torch.tensor([400.0, 400.0]), 5), 1.0),
}
WEIGHT = Question(
    "max_weight",
    oracle=None,
    draw=lambda d: None,
    arg_names=("v", "S"),
    edges=WEIGHT_EDGES,
    draws=(0, 0),
    extra=returns_floats([lambda m=m: m()[0] for m in WEIGHT_EDGES.values()]),
    bounds={"S": (1, None)},
)


def attention_oracle(s, h, W, U, b, v, mask):
    """The package's additive score (shown on the page), one key at a time, and its masked
    softmax, with these weights."""
    module = AttentionScore("additive", W.shape[1], U.shape[1], W.shape[0])
    weights = {"W.weight": W, "U.weight": U, "U.bias": b, "v.weight": v.unsqueeze(0)}
    scores = torch.func.functional_call(module, weights, (s, h), {"impl": "scratch"})
    alpha = masked_softmax(scores, mask.unsqueeze(1))
    return alpha @ h, alpha


def attention_draw(d):
    N, L, S, E_s, E_h, A = d.sizes(6)
    mask = some_mask(d, N, S)
    v = d.randn(A, scale=(1.0, 50.0, 3000.0)[d.index % 3])
    return (d.randn(N, L, E_s), d.randn(N, S, E_h), d.randn(A, E_s), d.randn(A, E_h),
            d.randn(A), v, mask)  # fmt: skip


def rows_multiplied(answer, args):
    """How many rows of numbers W and U each meet in a product while the answer runs."""
    W, U = args[2], args[3]
    met = {"W": 0, "U": 0}
    products = (torch.matmul, torch.Tensor.matmul, torch.Tensor.__matmul__, torch.einsum,
                torch.nn.functional.linear, torch.mm, torch.bmm)  # fmt: skip

    class Counter(TorchFunctionMode):
        def __torch_function__(self, func, types, a=(), kwargs=None):
            tensors = [t for t in a if isinstance(t, torch.Tensor)]
            if func in products:
                for name, weight in (("W", W), ("U", U)):
                    same = [t for t in tensors if t.data_ptr() == weight.data_ptr()]
                    others = [t for t in tensors if t.data_ptr() != weight.data_ptr()]
                    if same and others:
                        met[name] += max(o.numel() // weight.shape[1] for o in others)
            return func(*a, **(kwargs or {}))

    with Counter():
        answer(*args)
    return met


def sized(N, L, S):
    g = torch.Generator().manual_seed(0)
    return (torch.randn(N, L, 4, generator=g), torch.randn(N, S, 3, generator=g),
            torch.randn(5, 4, generator=g), torch.randn(5, 3, generator=g), torch.randn(5, generator=g),
            torch.randn(5, generator=g), torch.ones(N, S, dtype=torch.bool))  # fmt: skip


def once_per_state_and_no_loops(answer, public):
    """W s once per decoder state and U h once per encoder state on every case of the test, and
    the same number of torch calls for a bigger batch, more steps and positions (no loops)."""
    for label, make in ATTENTION.cases(public):
        args = make()
        s, h = args[0], args[1]
        met = rows_multiplied(answer, args)
        if met["W"] > s.shape[0] * s.shape[1] or met["U"] > h.shape[0] * h.shape[1]:
            raise AssertionError(
                f"additive_attention [{label}]: for (N, L, S) = {tuple(s.shape[:2]) + (h.shape[1],)}, "
                f"W met {met['W']} rows and U {met['U']}: compute W s once per decoder state and "
                "U h once per encoder state"
            )
    small_args, big_args = sized(2, 3, 4), sized(3, 5, 6)
    calls = [count_torch_calls(lambda: answer(*small_args)), count_torch_calls(lambda: answer(*big_args))]
    if calls[0] != calls[1]:
        raise AssertionError(
            f"additive_attention: {calls[0]} torch calls for (N, L, S) = (2, 3, 4) but {calls[1]} "
            "for (3, 5, 6): no loops"
        )


V_MAX = 1e10  # "v may have entries as large as 10^10"

ATTENTION = Question(
    "additive_attention",
    oracle=attention_oracle,
    draw=attention_draw,
    arg_names=("s", "h", "W", "U", "b", "v", "mask"),
    edges={
        "padded states that score highest": lambda: (
            torch.ones(2, 3, 2),
            torch.tensor([[[0.0, 1.0], [1.0, 0.0], [9.0, 9.0]], [[1.0, 1.0], [2.0, -1.0], [0.5, 0.0]]]),
            torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]),
            torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]),
            torch.zeros(3),
            torch.tensor([1000.0, 1000.0, 1000.0]),
            torch.tensor([[True, True, False], [True, True, True]]),
        ),
        "v with entries of 1e10": lambda: (
            torch.ones(1, 2, 2, dtype=torch.float64),
            torch.tensor([[[-1.0, 1.0], [-1.0, 0.5], [1.0, -1.0]]], dtype=torch.float64),
            torch.zeros(2, 2, dtype=torch.float64),
            10 * torch.eye(2, dtype=torch.float64),
            torch.zeros(2, dtype=torch.float64),
            torch.tensor([V_MAX, -V_MAX], dtype=torch.float64),
            torch.tensor([[True, True, False]]),
        ),
    },
    grad=(0, 1, 2, 3, 4, 5),
    forbidden=("seqlab.attention.AttentionScore",),
    extra=once_per_state_and_no_loops,
    bounds={"v": (-V_MAX, V_MAX), "mask": has_a_real_position},
)


def backward_oracle(scores, mask, grad_alpha):
    """Autograd's gradient through the package's masked softmax (shown on the page)."""
    leaf = scores.detach().clone().requires_grad_(True)
    with torch.enable_grad():
        alpha = masked_softmax(leaf, mask)
    return torch.autograd.grad(alpha, leaf, grad_alpha)[0]


def backward_draw(d):
    N, S = d.sizes(2)
    mask = some_mask(d, N, S)
    scale = (1.0, 20.0, 1e4)[d.index % 3]  # 1e4 * randn: up to 3e4 over the hidden draws
    return d.randn(N, S, scale=scale), mask, d.randn(N, S, scale=3.0)


BACKWARD_SCORE_MAX = 1e5  # "finite and may be large (up to 10^5 in magnitude, on padding too)"
BACKWARD_EDGES = {
    "one real position per row": lambda: (
        torch.tensor([[0.5, 2.0, -1.0], [3.0, 3.0, 3.0]]),
        torch.tensor([[False, True, False], [True, False, False]]),
        torch.tensor([[1.0, -2.0, 4.0], [0.5, 7.0, -3.0]]),
    ),
    "scores of 1e4 on padding": lambda: (
        torch.tensor([[1e4, 0.0, 1.0, -1e4], [2.0, 1e4, -3.0, 0.0]]),
        torch.tensor([[False, True, True, False], [True, False, True, True]]),
        torch.tensor([[5.0, 1.0, -1.0, 2.0], [0.25, -4.0, 1.0, 3.0]]),
    ),
}

BACKWARD = Question(
    "masked_softmax_backward",
    oracle=backward_oracle,
    draw=backward_draw,
    arg_names=("scores", "mask", "grad_alpha"),
    edges=BACKWARD_EDGES,
    forbidden=(
        *AUTOGRAD,
        "torch.softmax",
        "torch.Tensor.softmax",
        "torch.nn.functional.softmax",
        "torch.special.softmax",
        "torch.log_softmax",
        "torch.Tensor.log_softmax",
        "torch.nn.functional.log_softmax",
        "torch.special.log_softmax",
        "seqlab.attention.masked_softmax",
        "seqlab.attention._masked_softmax",
    ),
    extra=without_autograd(
        "masked_softmax_backward",
        backward_oracle,
        [("random draw 1", lambda: backward_draw(Draw(1))), *BACKWARD_EDGES.items()],
    ),
    bounds={"scores": (-BACKWARD_SCORE_MAX, BACKWARD_SCORE_MAX), "mask": has_a_real_position},
)

QUESTIONS = (SCORES, CONTEXT, PARAMETERS, WEIGHT, ATTENTION, BACKWARD)
