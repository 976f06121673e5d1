"""The hidden tests' own cases of the chapter positional_encoding (only in the autograder zip)."""

import torch

from seqlab.exercises.questions import positional_encoding as public


def rotate_consecutive():
    """Positions 0 .. 49 of three sequences, float64, E = 16."""
    x, _ = public.rotate_edge(3, 16, [0] * 50, dtype=torch.float64)
    return x, torch.arange(50)


HIDDEN = {
    "rotate_pairs": {
        "hidden_edges": {
            "positions 0 .. 49, float64": rotate_consecutive,
            "position 20000 alone, float64, E = 2": lambda: public.rotate_edge(1, 2, [20000], torch.float64),
        }
    },
    "mean_distance_sq": {
        "hidden_edges": {"T = 3000, E = 64": lambda: (3000, 64), "T = 2, E = 1024": lambda: (2, 1024)}
    },
    "pe_speed": {
        "hidden_edges": {"E = 512": lambda: (512,), "E = 20000": lambda: (20000,)},
        "extra": public.speeds_are_floats((2, 4, 512)),
    },
    "farthest_k": {"judge": None, "draw": lambda d: ((), 3)},
    "relative_scores": {"hidden_edges": {"K beyond L and S": lambda: public.relative_edge(2, 4, 3, 5, 10)}},
}
