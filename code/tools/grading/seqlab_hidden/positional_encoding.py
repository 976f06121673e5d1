"""The hidden tests' own cases of the chapter positional_encoding (only in the autograder zip)."""

from seqlab.exercises.questions import positional_encoding as public

HIDDEN = {
    "sinusoidal_table": {"hidden_edges": {"T = 50, E = 16": lambda: (50, 16)}},
    "offset_distance_sq": {"hidden_edges": {"k = 1000, E = 64": lambda: (1000, 64)}},
    "pe_norm": {
        "hidden_edges": {"E = 512": lambda: (512,)},
        "extra": public.norms_are_floats((2, 32, 512, 1250)),
    },
    "farthest_k": {"judge": None, "draw": lambda d: ((), 3)},
    "relative_scores": {"hidden_edges": {"K beyond L and S": lambda: public.relative_edge(2, 4, 3, 5, 10)}},
}
