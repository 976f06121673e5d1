"""The hidden tests' own cases of the chapter bahdanau (only in the autograder zip)."""

import math

import torch

from seqlab.exercises.harness import Draw
from seqlab.exercises.questions import bahdanau as public


def weight_formula(v, S):
    """One score at the top, ||v||_1, the S - 1 others at the bottom, -||v||_1 (no overflow)."""
    return 1.0 / (1.0 + (S - 1) * math.exp(-2.0 * v.double().abs().sum().item()))


def weight_draw(d):
    A, S = d.sizes(2, high=12)
    return d.randn(A, scale=(0.05, 0.5, 3.0, 200.0)[d.index % 4]), S


WEIGHT_HIDDEN_EDGES = {
    "v = 0, S = 7": lambda: (torch.zeros(2, dtype=torch.float64), 7),
    "one entry": lambda: (torch.tensor([-2.0]), 40),
    "entries in the thousands": lambda: (torch.tensor([1e3, 2e3]), 2),
    "a small v": lambda: (torch.tensor([1e-3, -2e-3, 5e-4]), 3),
}


def backward_at_the_bound(dtype=torch.float32):
    """Scores at the bound the text states, 1e5, on real positions and on padding."""
    return (
        torch.tensor([[1e5, -1e5, 99990.0, 0.0], [-1e5, -99999.0, 1e5, -1e5]], dtype=dtype),
        torch.tensor([[True, True, True, False], [True, True, False, True]]),
        torch.tensor([[1.0, -2.0, 0.5, 4.0], [3.0, -1.0, 2.0, 0.25]], dtype=dtype),
    )


HIDDEN = {
    "context_vector": {
        "hidden_edges": {
            "a single real position in each row": lambda: (
                torch.tensor([[3.0, -1.0], [0.5, 7.0], [1.0, 1.0]], dtype=torch.float64),
                torch.arange(12, dtype=torch.float64).reshape(3, 2, 2),
                torch.tensor([[False, True], [True, False], [True, False]]),
            ),
            "padding scored 1e30": lambda: (
                torch.tensor([[1e30, -3.0, -4.0], [2.0, 1e30, 1e30]]),
                torch.ones(2, 3, 4),
                torch.tensor([[False, True, True], [True, False, False]]),
            ),
        }
    },
    "additive_parameters": {
        "hidden_edges": {"all sizes 1": lambda: (1, 1, 1), "the paper's sizes": lambda: (1000, 2000, 1000)},
        "extra": public.builds_no_layer([(1, 1, 1), (3, 4, 5), (7, 2, 9)]),
    },
    "max_weight": {
        "oracle": weight_formula,
        "draw": weight_draw,
        "draws": (0, 30),
        "edges": {name: (lambda m=m: m()[0]) for name, m in public.WEIGHT_EDGES.items()},
        "hidden_edges": WEIGHT_HIDDEN_EDGES,
        "extra": public.returns_floats(
            [*(lambda m=m: m()[0] for m in public.WEIGHT_EDGES.values()), *WEIGHT_HIDDEN_EDGES.values()]
        ),
    },
    "masked_softmax_backward": {
        "hidden_edges": {
            "a source of one position, two rows": lambda: (
                torch.tensor([[0.3], [-2.0]]),
                torch.ones(2, 1, dtype=torch.bool),
                torch.tensor([[1.5], [-1.0]]),
            ),
            "the same gradient everywhere": lambda: (
                torch.tensor([[0.1, 0.7, -0.4]], dtype=torch.float64),
                torch.tensor([[False, True, True]]),
                torch.full((1, 3), 2.5, dtype=torch.float64),
            ),
            "scores of 1e5, float32": backward_at_the_bound,
            "scores of 1e5, float64": lambda: backward_at_the_bound(torch.float64),
        },
        "extra": public.without_autograd(
            "masked_softmax_backward",
            public.backward_oracle,
            [(f"random draw {i}", lambda i=i: public.backward_draw(Draw(i))) for i in (2, 5, 8)],
        ),
    },
}
