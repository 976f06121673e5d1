"""The graded questions of the chapter positional_encoding (chapters/positional_encoding.ipynb)."""

import math

import torch

from seqlab.exercises import check_integer
from seqlab.exercises.harness import Draw, Question
from seqlab.positional import sinusoidal_encoding  # the package's table, shown on the page

TABLES = (
    "seqlab.positional.sinusoidal_encoding",
    "seqlab.positional.SinusoidalPositionalEncoding",
    "seqlab.positional._table",
)
COSINES = ("torch.cos", "torch.Tensor.cos", "math.cos", "numpy.cos")
SINES = ("torch.sin", "torch.Tensor.sin", "math.sin", "numpy.sin")
POSITION_MAX = 20000  # the largest position the text of rotate_pairs promises


def rotate_measured(x, positions):
    """Each position's row of x times M_p, the block-diagonal matrix of the page's rotations
    R(p w_i), built in float64 one position at a time."""
    E = x.shape[-1]
    omega = [10000.0 ** (-2 * i / E) for i in range(E // 2)]
    rows = []
    for t, p in enumerate(positions.tolist()):
        blocks = [torch.tensor([[math.cos(p * w), math.sin(p * w)], [-math.sin(p * w), math.cos(p * w)]],
                               dtype=torch.float64) for w in omega]  # fmt: skip
        rows.append(x[:, t].double() @ torch.block_diag(*blocks).T)  # (N, E)
    return torch.stack(rows, dim=1).to(x.dtype)


def rotate_draw(d):
    N, T, half = d.sizes(3)  # distinct; each is 1 in one early draw
    positions = torch.tensor([d.integer(0, POSITION_MAX) for _ in range(T)], dtype=torch.int64)
    return d.randn(N, T, 2 * half), positions


def rotate_edge(N, E, positions, dtype=torch.float32):
    d = Draw(100)  # the same tensors at every call
    return d.randn(N, len(positions), E, dtype=dtype), torch.tensor(positions, dtype=torch.int64)


ROTATE = Question(
    "rotate_pairs",
    oracle=rotate_measured,
    draw=rotate_draw,
    arg_names=("x", "positions"),
    edges={
        "E = 2, T = 1": lambda: rotate_edge(1, 2, [7]),
        "positions out of order and repeated": lambda: rotate_edge(2, 6, [3, 0, 3, 1]),
        "positions 20000 and 19999 (float32)": lambda: rotate_edge(2, 8, [POSITION_MAX, POSITION_MAX - 1]),
    },
    grad=(0,),
    new_tensors=True,
    forbidden=(*TABLES, "torch.block_diag"),
    bounds={"positions": (0, POSITION_MAX)},
)


def mean_distance_measured(T, E):
    """The mean over all T^2 pairs of positions of the squared distances on the float64 table."""
    table = sinusoidal_encoding(T, E, dtype=torch.float64)
    distances = torch.cdist(table, table, compute_mode="donot_use_mm_for_euclid_dist")  # (T, T)
    return float((distances**2).mean())


MEAN_DISTANCE = Question(
    "mean_distance_sq",
    oracle=mean_distance_measured,
    draw=lambda d: (d.integer(1, 300), 2 * d.integer(1, 32)),
    arg_names=("T", "E"),
    edges={"T = 1": lambda: (1, 8), "E = 2": lambda: (50, 2)},
    forbidden=(*TABLES, *COSINES),
    tolerance=10.0,
    bounds={"T": (1, 3000), "E": (2, 1024)},
)


def speed_measured(E):
    """The norm of d PE(p) / dp at p = 2.5, by forward-mode autograd through the definition, in float64."""
    omega = 10000.0 ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)

    def row(p):  # PE(p), (E,): the pairs (sin, cos) interleaved
        return torch.stack([torch.sin(p * omega), torch.cos(p * omega)], dim=-1).flatten()

    p = torch.tensor(2.5, dtype=torch.float64)  # one input: forward mode is one pass
    velocity = torch.autograd.functional.jacobian(row, p, vectorize=True, strategy="forward-mode")
    return velocity.norm().item()


def speeds_are_floats(sizes):
    def extra(answer, public):
        for E in sizes:  # E = 2: the speed is 1, a whole number
            if type(answer(E)) is not float:
                raise AssertionError(f"pe_speed({E}) is a {type(answer(E)).__name__}; return a Python float")

    return extra


SPEED = Question(
    "pe_speed",
    oracle=speed_measured,
    draw=lambda d: (2 * d.integer(1, 300),),
    arg_names=("E",),
    edges={"E = 2": lambda: (2,), "E = 8": lambda: (8,)},
    forbidden=(*TABLES, *SINES, *COSINES),
    tolerance=10.0,
    extra=speeds_are_floats((2, 8)),
    bounds={"E": (2, None)},
)


def farthest_format(value, args, where):
    check_integer(value, "farthest_k", 1, 10)  # format only: the hidden test grades the value


# a value, not a function: the harness calls a function of no arguments that returns it
FARTHEST = Question(
    "farthest_k", oracle=None, judge=farthest_format, draw=lambda d: (), arg_names=(), draws=(1, 1)
)


def relative_oracle(q, k, bias, K):
    """The formula of the question, one (i, j) at a time, in float64."""
    L, S = q.shape[1], k.shape[1]
    plain = q.double() @ k.double().transpose(-2, -1) / math.sqrt(q.shape[-1])
    rows = [torch.stack([bias[K + max(-K, min(K, j - i))].double() for j in range(S)]) for i in range(L)]
    return (plain + torch.stack(rows)).to(q.dtype)


def relative_draw(d):
    N, L, S, D = d.sizes(4)  # distinct; each is 1 in one draw
    K = d.integer(0, 8)
    return d.randn(N, L, D), d.randn(N, S, D), d.randn(2 * K + 1), K


def relative_edge(N, L, S, D, K, bias_dtype=torch.float32):
    d = Draw(100)  # the same tensors at every call
    return (d.randn(N, L, D, dtype=torch.float32), d.randn(N, S, D, dtype=torch.float32),
            d.randn(2 * K + 1, dtype=bias_dtype), K)  # fmt: skip


RELATIVE = Question(
    "relative_scores",
    oracle=relative_oracle,
    draw=relative_draw,
    edges={
        "K = 0": lambda: relative_edge(2, 3, 5, 4, 0),
        "float32 queries, a float64 bias": lambda: relative_edge(1, 4, 6, 3, 2, torch.float64),
    },
    grad=(0, 1, 2),
    bounds={"K": (0, None)},
)

QUESTIONS = (ROTATE, MEAN_DISTANCE, SPEED, FARTHEST, RELATIVE)
