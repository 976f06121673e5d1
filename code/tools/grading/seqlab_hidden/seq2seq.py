"""The hidden tests' own cases of the chapter seq2seq (only in the autograder zip)."""

import torch

from seqlab.exercises.questions import seq2seq as public

HIDDEN = {
    "beam_step": {
        "hidden_edges": {
            "ties, B = 1": lambda: (*public.uniform(1, 5), 3),
            "ties between two parents' tokens": lambda: (
                torch.tensor([-1.0, -1.0, -4.0], dtype=torch.float64),
                torch.tensor([[-0.5, -1.5], [-0.5, -1.5], [-0.1, -3.0]], dtype=torch.float64),
                4,
            ),
        },
    },
    "normalised_score": {
        "hidden_edges": {"log P = 0": lambda: (0.0, 4, 1.0), "alpha = 1": lambda: (-1.5, 9, 1.0)},
    },
    "brevity_penalty": {
        "hidden_edges": {"c = r = 1": lambda: (1, 1), "c much shorter": lambda: (3, 12)},
    },
    "beam_candidates": {
        "hidden_edges": {"k = 1 (greedy)": lambda: (1, 7, 10), "a long search": lambda: (10, 20, 50)},
    },
    "beam_picks": {
        "hidden_edges": {
            "the page's table": public.read_only(
                {"a": (5, -1.5), "b": (15, -3.0), "c": (12, -3.6), "d": (16, -4.0)}
            ),
            "three outputs": public.read_only({"x": (3, -0.9), "y": (8, -1.6), "z": (30, -6.3)}),
        },
    },
    "sentence_bleu": {
        "hidden_edges": {
            "the page's paraphrase": public.pair("on the mat sat the cat", "the cat sat on the mat"),
            "identical": public.pair("a b c d e f g", "a b c d e f g"),
            "longer than the reference": public.pair("x y z a b c d", "a b c d"),
            "one token": public.pair("a", "a"),
        },
    },
    "beam_search_batch": {
        "hidden_edges": {
            "ties, k = 3": lambda: (public.ToyModel(4, 3, 0, 4, flat=True), 2, 3, 4, 4, 3),
            "k > V": lambda: (public.ToyModel(2, 1, 5, 5), 3, 4, 5, 2, 1),
        },
    },
}
