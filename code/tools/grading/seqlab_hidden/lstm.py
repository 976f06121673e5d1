"""The hidden tests' own cases of the chapter lstm (only in the autograder zip)."""

import functools
import math

import torch

from seqlab.exercises.questions import lstm as public


def half_life_reference(b_f):
    forget = 1 / (1 + math.exp(-b_f))
    return next(n for n in range(1, 10**7) if forget**n < 0.5)


def half_life_on_a_grid(answer, public_test):
    """f and its powers in Python floats, as the question says: a float32 gate is off by a step at
    some b_f; every b_f = 0, 0.01, ..., 8 is checked."""
    for i in range(801):
        b_f = i / 100
        got = answer(b_f)
        if isinstance(got, bool) or not isinstance(got, int) or got != half_life_reference(b_f):
            raise AssertionError("half_life_steps is wrong for some b_f in [0, 8] (is f a Python float?)")


def peephole_edge(p_scale, c_scale, seed):
    """A float64 step whose peepholes and old cell are scaled: 0 is nn.LSTMCell itself; large
    values saturate the gates, where the new cell's peephole decides the output gate."""
    from seqlab.exercises.harness import Draw

    x, h, c, W_ih, W_hh, b_ih, b_hh, p = public.lstm_cell_draw(Draw(seed))
    return x, h, c_scale * c, W_ih, W_hh, b_ih, b_hh, p_scale * p


HIDDEN = {
    "lstm_cell_step": {
        "hidden_edges": {
            "p = 0 (nn.LSTMCell)": lambda: peephole_edge(0.0, 1.0, 41),
            "large cells and peepholes": lambda: peephole_edge(3.0, 4.0, 43),
        },
    },
    "memory_bias": {"judge": functools.partial(public.memory_judge, steps=1000, scale=5.0)},
    "lstm_parameter_count": {"hidden_edges": {"wide": lambda: (64, 128)}},
    "cell_path_gradient": {
        "hidden_edges": {
            "30 steps": lambda: (
                0.8
                + 0.2 * torch.rand(30, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(4)),
            )
        }
    },
    "half_life_steps": {
        "oracle": half_life_reference,
        "draw": lambda d: (d.uniform(0.0, 8.0),),
        "draws": (30, 30),
        "edges": {
            "b_f = 0": lambda: (0.0,),
            "1": lambda: (1.0,),
            "5": lambda: (5.0,),
            "6.65": lambda: (6.65,),
        },
        "extra": half_life_on_a_grid,
    },
}
