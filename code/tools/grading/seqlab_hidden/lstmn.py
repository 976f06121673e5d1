"""The hidden tests' own cases of the chapter lstmn (only in the autograder zip)."""

import torch

from seqlab.exercises import check_choice
from seqlab.exercises.harness import Draw
from seqlab.exercises.questions import lstmn as public


def entry0_letter(value, args, where):
    """The letter itself: each step restarts from the zero state, so h_t reads x_t alone."""
    if check_choice(value, "abcd", "entry0_case") != "b":
        raise AssertionError("entry0_case is not the right letter")


HIDDEN = {
    "intra_attention": {
        "hidden_edges": {
            "large weights (saturated tanh, sharp weights)": lambda: public.intra_edge(2, 6, 3, 4, 5, 10.0),
        },
    },
    "tape_summary": {
        "hidden_edges": {
            "t = 1, weights that do not sum to 1": lambda: (
                torch.tensor([[2.0], [-1.0]]),
                torch.arange(6.0).reshape(2, 1, 3),
            ),
        },
    },
    "score_count": {"hidden_edges": {"T = 100": lambda: (100,)}},
    "entry0_case": {"judge": entry0_letter},
    "intra_read_backward": {
        "hidden_edges": {
            "large weights (saturated tanh, sharp weights)": lambda: public.read_draw(Draw(62), scale=4.0),
        },
    },
}
