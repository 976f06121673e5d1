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


def table_draw(d):
    return d.integer(1, 60), 2 * d.integer(1, 8)


TABLE = Question(
    "sinusoidal_table",
    oracle=sinusoidal_encoding,
    draw=table_draw,
    arg_names=("T", "E"),
    edges={"E = 2": lambda: (7, 2), "T = 1": lambda: (1, 6), "T = 20000, E = 14": lambda: (20000, 14)},
    forbidden=TABLES,
    bounds={"T": (1, 20000), "E": (2, None)},
)


def offset_measured(k, E):
    """The squared distance between rows k and 0 of the package's float64 table."""
    table = sinusoidal_encoding(k + 1, E, dtype=torch.float64)
    return float(((table[k] - table[0]) ** 2).sum())


OFFSET = Question(
    "offset_distance_sq",
    oracle=offset_measured,
    draw=lambda d: (d.integer(1, 300), 2 * d.integer(1, 16)),
    arg_names=("k", "E"),
    edges={"k = 0": lambda: (0, 8), "E = 2": lambda: (5, 2)},
    forbidden=(*TABLES, "torch.cos", "torch.Tensor.cos", "math.cos", "numpy.cos"),
    tolerance=10.0,
    bounds={"k": (0, None), "E": (2, None)},
)


def norm_measured(E):
    """The norm of row 4 of the package's float64 table."""
    return sinusoidal_encoding(5, E, dtype=torch.float64)[4].norm().item()


def norms_are_floats(sizes):
    def extra(answer, public):
        for E in sizes:  # whole-number norms (E = 2 n^2: norm n)
            if type(answer(E)) is not float:
                raise AssertionError(f"pe_norm({E}) is a {type(answer(E)).__name__}; return a Python float")

    return extra


NORM = Question(
    "pe_norm",
    oracle=norm_measured,
    draw=lambda d: (2 * d.integer(1, 300),),
    arg_names=("E",),
    edges={"E = 2": lambda: (2,), "E = 8": lambda: (8,)},
    forbidden=(
        "seqlab.positional.sinusoidal_encoding",
        "seqlab.positional._table",
        "torch.sin",
        "torch.cos",
        "torch.Tensor.sin",
        "torch.Tensor.cos",
        "math.sin",
        "math.cos",
        "numpy.sin",
        "numpy.cos",
    ),  # fmt: skip
    extra=norms_are_floats((2, 8, 18)),
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

QUESTIONS = (TABLE, OFFSET, NORM, FARTHEST, RELATIVE)
