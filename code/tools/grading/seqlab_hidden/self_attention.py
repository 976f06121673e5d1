"""The hidden tests' own cases of the chapter self_attention (only in the autograder zip)."""

import torch

from seqlab.exercises.harness import Draw
from seqlab.exercises.questions import self_attention as public
from seqlab.exercises.questions._shared import fresh_each_call


def left_padded_full():
    """No padding at all in one sequence, one real token in the other."""
    q, k, v, _ = public.left_padded_draw(Draw(40))
    N, T = q.shape[:2]
    return q, k, v, torch.tensor([T] + [1] * (N - 1))


HIDDEN = {
    "left_padded_attention": {
        "hidden_edges": {
            "scores to 1e5 in float64": lambda: public.left_padded_large_scores(torch.float64),
            "T = 1, lengths 0 and 1": lambda: (
                torch.ones(2, 1, 3),
                torch.full((2, 1, 3), -2.0),
                torch.arange(4.0).reshape(2, 1, 2),
                torch.tensor([0, 1]),
            ),
            "a sequence without padding": left_padded_full,
            # past the size of any causal mask a student would cache
            "T = 700": lambda: (*(Draw(42).randn(1, 700, n) for n in (2, 2, 3)), torch.tensor([650])),
        }
    },
    "to_heads": {"hidden_edges": {"H = E": lambda: (Draw(41).randn(2, 3, 5), 5)}},
    "causal": {
        # past the size of any mask a student would cache
        "hidden_edges": {"T = 3000": lambda: (3000,)},
        "extra": fresh_each_call("causal", (3,), (3000,)),
    },
    "mha_parameters": {
        "hidden_edges": {
            "a base-sized layer over wider keys and values": lambda: (512, 8, 768, 1024, True),
            "one head, keys of width 1, no biases": lambda: (9, 1, 1, 20, False),
        }
    },
    "max_path_length": {
        "hidden_edges": {
            "one row of 40 patches": lambda: (1, 40, 4),
            "a window wider than the grid": lambda: (2, 3, 5),
            "r = 1 on 16 x 11": lambda: (16, 11, 1),
            "r = 0 on one patch": lambda: (1, 1, 0),
        }
    },
    "wrong_entry": {"judge": None, "draw": lambda d: ((), "b")},
    "chunked_attention": {
        "hidden_edges": {
            "scores to 2e4, chunk = 3 of S = 5": lambda: public.chunked_large_scores(3),
            "scores to 2e4, chunk = S": lambda: public.chunked_large_scores(5),
            "scores to 2e4 in float64, chunk = 4": lambda: public.chunked_large_scores(4, torch.float64),
        },
        "extra": public.never_all_scores(30),
    },
}
