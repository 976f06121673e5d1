"""The hidden tests' own cases of the chapter luong (only in the autograder zip)."""

import torch

from seqlab.exercises.harness import Draw
from seqlab.exercises.questions import luong as public


def general_square_w():
    """E_s = E_h: a transposed W has the right shape."""
    g = torch.Generator().manual_seed(11)
    return torch.randn(3, 4, generator=g), torch.randn(3, 5, 4, generator=g), torch.randn(4, 4, generator=g)


HIDDEN = {
    "general_scores": {"hidden_edges": {"a square W": general_square_w}},
    "local_p_weights": {
        "hidden_edges": {
            "a centre at p_t = S, D = 1": lambda: (torch.tensor([[0.5, -1.0, 2.0]]), torch.tensor([3.0]), 1),
            "D wider than the source": lambda: (
                torch.tensor([[0.5, -1.0], [1.0, 0.0]]),
                torch.tensor([0.7, 1.9]),
                5,
            ),
            "scores down to -1e30, float64": lambda: public.very_low_scores(torch.float64),
        }
    },
    "local_m_positions": {
        "hidden_edges": {
            "a source of one position": lambda: (0, 3, 1),
            "D = 0 past the end": lambda: (4, 0, 4),
            "t = S - 1 + D": lambda: (7, 2, 6),
            "t = S + D": lambda: (8, 2, 6),
        }
    },
    "general_multiply_adds": {
        "hidden_edges": {"S = 200, E_s = 512, E_h = 256": lambda: (200, 512, 256)},
        "extra": public.multiplies_no_matrices([(1, 1, 1), (3, 5, 5), (9, 4, 6)]),
    },
    "local_p_backward": {
        "hidden_edges": {
            "scores of -1e30 to -4e30": lambda: public.backward_edge(
                -1e30 * torch.tensor([[1.0, 3.0, 1.5, 2.0, 4.0, 1.0], [2.0, 2.0, 1.0, 3.5, 1.0, 2.5]]),
                torch.tensor([2.5, 4.2]),
                2,
            ),
            "D wider than the source, float64": lambda: public.backward_edge(
                torch.tensor([[0.5, -1.0, 2.0], [1.0, 0.0, -3.0]]), torch.tensor([0.7, 2.9]), 5, torch.float64
            ),
        },
        "extra": public.without_autograd(
            "local_p_backward",
            public.local_p_backward_oracle,
            [(f"random draw {i}", lambda i=i: public.local_p_backward_draw(Draw(i))) for i in (3, 6, 9)],
        ),
    },
}
