"""The graded questions of the chapter block (chapters/block.ipynb)."""

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from seqlab.exercises.harness import Question, _tensors


def _seeded(*shape, seed, dtype=torch.float32):
    return torch.randn(*shape, dtype=dtype, generator=torch.Generator().manual_seed(seed))


def _float_tensor(x) -> bool:
    """a float32 or float64 tensor"""
    return isinstance(x, torch.Tensor) and x.dtype in (torch.float32, torch.float64)


class _Results(TorchFunctionMode):
    """Every torch function and tensor method called inside, with what it returned."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.calls.append((getattr(func, "__name__", str(func)), out))
        return out


# ---------------------------------------------------------------------------------------------
# Question 1: grouped-query attention without copies


def grouped_oracle(q, k, v):
    """PyTorch's fused kernel, which maps query head h to key/value head h // (H / G) itself."""
    L, S = q.shape[2], k.shape[2]
    allowed = torch.ones(L, S, dtype=torch.bool).tril(S - L)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=allowed, enable_gqa=True)


def grouped_draw(d):
    N, L, D = d.sizes(3)  # distinct; each is 1 in one draw
    G = d.integer(1, 3)
    H = G * d.integer(1, 3)
    S = L + d.integer(0, 3)
    return d.randn(N, H, L, D), d.randn(N, G, S, D), d.randn(N, G, S, D)


def grouped_case(N, H, G, L, S, D, seed, dtype=torch.float32):
    """q (N, H, L, D), k and v (N, G, S, D), seeded."""
    return (_seeded(N, H, L, D, seed=seed, dtype=dtype), _seeded(N, G, S, D, seed=seed + 1, dtype=dtype),
            _seeded(N, G, S, D, seed=seed + 2, dtype=dtype))  # fmt: skip


def no_head_copies(sizes):
    """An ``extra`` check: at a decoding step (L = 1) with one key/value head, no tensor the answer
    computes (a view included) holds N·H·S·D numbers, as many as H / G copies of the keys."""
    N, H, S, D = sizes

    def check(answer, public):
        q, k, v = grouped_case(N, H, 1, 1, S, D, seed=40)
        inputs = {t.untyped_storage().data_ptr() for t in (q, k, v)}
        with _Results() as seen:
            answer(q, k, v)
        made = [t.numel() for _, out in seen.calls for t in _tensors(out)
                if t.untyped_storage().data_ptr() not in inputs]  # fmt: skip
        limit = N * H * S * D
        if max(made, default=0) >= limit:
            raise AssertionError(
                f"grouped_attention made a tensor of {max(made):,} numbers at one decoding step (N = {N}, "
                f"H = {H} query heads over G = 1, L = 1, S = {S}, D = {D}): H / G copies of the keys hold "
                f"N·H·S·D = {limit:,}; let each group of query heads attend over its key/value head "
                "by broadcasting, without copying heads"
            )

    return check


GROUPED_ATTENTION = Question(
    "grouped_attention",
    oracle=grouped_oracle,
    draw=grouped_draw,
    edges={
        "H = 4 query heads over G = 2, four cached keys": lambda: grouped_case(2, 4, 2, 3, 7, 5, seed=1),
        "one decoding step: L = 1 after five cached keys": lambda: grouped_case(
            1, 6, 3, 1, 6, 4, seed=4, dtype=torch.float64
        ),
        "multi-query: G = 1": lambda: grouped_case(3, 4, 1, 4, 4, 2, seed=7),
        "two queries after 4,100 cached keys": lambda: grouped_case(1, 2, 1, 2, 4102, 3, seed=13),
    },
    grad=(0, 1, 2),
    new_tensors=True,
    forbidden=(
        "torch.nn.functional.scaled_dot_product_attention",
        "seqlab.gqa.GroupedQueryAttention",
        "torch.repeat_interleave",
        "torch.Tensor.repeat_interleave",
        "torch.Tensor.repeat",
        "torch.tile",
        "torch.Tensor.tile",
        "torch.Tensor.expand",
        "torch.Tensor.expand_as",
        "torch.broadcast_to",
    ),
    extra=no_head_copies((1, 8, 64, 16)),
    # "q (N, H, L, D), k and v (N, G, S, D), float32 or float64, one dtype, G divides H, S >= L"
    bounds={
        "q": _float_tensor,
        "k dtype is q's": (1, 1, lambda q, k, v: int(k.dtype == q.dtype == v.dtype)),
        "H % G": (0, 0, lambda q, k, v: q.shape[1] % k.shape[1]),
        "L - S": (None, 0, lambda q, k, v: q.shape[2] - k.shape[2]),
    },
)

# ---------------------------------------------------------------------------------------------
# Question 2: a Llama's parameters

# (V, E, H, G, layers, F): the count, worked out by hand (the formula is the hidden test's oracle)
LLAMA_KNOWN = [
    ((50, 16, 4, 2, 2, 24), 4720),
    ((10, 8, 2, 1, 1, 5), 416),
    ((32000, 4096, 32, 8, 32, 14336), 7_110_660_096),  # Llama-3-8B's shape, with a tied output
]
LLAMA_SIZES = ("V", "E", "H", "G", "layers", "F")
# "positive ints (1 included); G divides H, H divides E, E / H even"
LLAMA_BOUNDS = {
    **{name: (1, None) for name in LLAMA_SIZES},
    "H % G": (0, 0, lambda V, E, H, G, layers, F: H % G),
    "E % H": (0, 0, lambda V, E, H, G, layers, F: E % H),
    "(E / H) % 2": (0, 0, lambda V, E, H, G, layers, F: (E // H) % 2),
}

LLAMA_PARAMETERS = Question(
    "llama_parameters",
    oracle=None,
    draw=lambda d: LLAMA_KNOWN[d.index % len(LLAMA_KNOWN)],
    arg_names=LLAMA_SIZES,
    draws=(len(LLAMA_KNOWN), len(LLAMA_KNOWN)),
    bounds=LLAMA_BOUNDS,
)

# ---------------------------------------------------------------------------------------------
# Question 3: how many sequences fit, some blocks with a sliding window

BATCH_ARGS = ("memory", "T", "layers", "local", "W", "E", "H", "G", "bytes_per_number")
GiB = 2**30
# (memory, T, layers, local, W, E, H, G, bytes_per_number): the batch, worked out by hand
BATCH_KNOWN = [
    # Mistral-7B's shape: every block a window of 4,096; 32,768 tokens each, 80 GiB, bfloat16
    ((80 * GiB, 32768, 32, 32, 4096, 4096, 32, 8, 2), 160),
    # three blocks in four with a window of 1,024, the fourth global; 8,192 tokens, 10 GiB
    ((10 * GiB, 8192, 32, 24, 1024, 4096, 32, 8, 2), 29),
    # texts shorter than the window: it cuts nothing; room for 3.05 sequences
    ((100_000, 64, 2, 1, 100, 64, 4, 2, 4), 3),
    # no window at all (local = 0): a 70B-sized model with GQA, 80 GiB, bfloat16
    ((80 * GiB, 4096, 80, 0, 4096, 8192, 64, 8, 2), 64),
]
# "memory >= 0, local between 0 and layers, the others positive; G divides H, H divides E"
BATCH_BOUNDS = {
    "memory": (0, None),
    "local": (0, None),
    **{name: (1, None) for name in ("T", "layers", "W", "E", "H", "G", "bytes_per_number")},
    "local - layers": (None, 0, lambda memory, T, layers, local, *_: local - layers),
    "H % G": (0, 0, lambda *args: args[6] % args[7]),
    "E % H": (0, 0, lambda *args: args[5] % args[6]),
}

MAX_BATCH = Question(
    "max_batch",
    oracle=None,
    draw=lambda d: BATCH_KNOWN[d.index % len(BATCH_KNOWN)],
    arg_names=BATCH_ARGS,
    draws=(len(BATCH_KNOWN), len(BATCH_KNOWN)),
    edges={
        "not even one sequence fits": lambda: ((1000, 64, 2, 1, 16, 64, 4, 2, 4), 0),
        # 2**25 sequences of 512 MiB need 16 PiB: one byte less, and the quotient is no float's
        "one byte short of 2**25 sequences of 512 MiB": lambda: (
            (2**54 - 1, 32768, 32, 32, 4096, 4096, 32, 8, 2),
            2**25 - 1,
        ),
    },
    bounds=BATCH_BOUNDS,
)

# ---------------------------------------------------------------------------------------------
# Question 4: RoPE as complex multiplication


def rope_rotation(x, positions, base):
    """The page's equation: pair (j, j + D/2) turned by p * base^(-2j / D), float64 angles."""
    D = x.shape[-1]
    omega = base ** (-torch.arange(0, D, 2, dtype=torch.float64) / D)
    theta = positions.to(torch.float64)[:, None] * omega  # (T, D/2)
    c, s = theta.cos().to(x.dtype), theta.sin().to(x.dtype)
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([x1 * c - x2 * s, x1 * s + x2 * c], dim=-1)


def rope_draw(d):
    N, H, T = d.sizes(3)  # distinct; each is 1 in one draw
    D = 2 * d.integer(1, 4)
    positions = torch.randint(0, 200, (T,), generator=d.generator)
    return d.randn(N, H, T, D), positions, (10000.0, 500000.0, 100.0)[d.index % 3]


def rotates_by_complex_products(sizes):
    """An ``extra`` check: the answer multiplies complex numbers, the N·H·T·D/2 pairs of x by
    their turns (the text asks for the rotation by complex arithmetic, not by cos and sin)."""
    N, H, T, D = sizes

    def check(answer, public):
        x = _seeded(N, H, T, D, seed=50, dtype=torch.float64)
        with _Results() as seen:
            answer(x, torch.arange(T), 10000.0)
        products = [name for name, out in seen.calls for t in _tensors(out)
                    if t.is_complex() and t.numel() == N * H * T * D // 2
                    and ("mul" in name or "einsum" in name)]  # fmt: skip
        if not products:
            raise AssertionError(
                f"rope_complex(x ({N}, {H}, {T}, {D}) float64, positions 0..{T - 1}): no product of "
                "complex tensors turns the pairs of x; the question asks for the rotation as a "
                "multiplication of the complex numbers z_j by e^(i p w_j)"
            )

    return check


def _base_above_one(base) -> bool:
    """a float greater than 1"""
    return isinstance(base, float) and base > 1


def _even_features(x) -> bool:
    """a float32 or float64 tensor (N, H, T, D), D even"""
    return _float_tensor(x) and x.dim() == 4 and x.shape[-1] % 2 == 0


def _positions(positions) -> bool:
    """an int64 tensor (T,)"""
    return isinstance(positions, torch.Tensor) and positions.dtype == torch.int64 and positions.dim() == 1


ROPE_COMPLEX = Question(
    "rope_complex",
    oracle=rope_rotation,
    draw=rope_draw,
    edges={
        "position 0 turns nothing": lambda: (torch.arange(8.0).view(1, 1, 1, 8), torch.tensor([0]), 10000.0),
        "D = 2, one pair, positions 1 and 2": lambda: (
            torch.tensor([[[[1.0, 0.0], [0.0, 1.0]]]], dtype=torch.float64),
            torch.tensor([1, 2]),
            10000.0,
        ),
        "positions out of order, D = 6": lambda: (
            _seeded(2, 3, 4, 6, seed=1),
            torch.tensor([5, 0, 3, 3]),
            10000.0,
        ),
        # float32 angles are off by about 1e-2 radians at a million positions
        "far positions, x in float32": lambda: (
            _seeded(1, 2, 3, 8, seed=3),
            torch.tensor([4095, 1_000_003, 2_500_001]),
            10000.0,
        ),
    },
    grad=(0,),
    new_tensors=True,
    forbidden=(
        "seqlab.rope.rope_angles",
        "seqlab.rope.apply_rope",
        "seqlab.rope.rotate_half",
        "torch.cos",
        "torch.sin",
        "torch.cos_",
        "torch.sin_",
        "torch.Tensor.cos",
        "torch.Tensor.sin",
        "torch.Tensor.cos_",
        "torch.Tensor.sin_",
        "math.cos",
        "math.sin",
        "numpy.cos",
        "numpy.sin",
    ),
    extra=rotates_by_complex_products((2, 3, 4, 6)),
    bounds={"x": _even_features, "positions": _positions, "base": _base_above_one},
)

QUESTIONS = (GROUPED_ATTENTION, LLAMA_PARAMETERS, MAX_BATCH, ROPE_COMPLEX)
