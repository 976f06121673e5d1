"""The hidden tests' own cases of the chapter block (only in the autograder zip)."""

import torch

from seqlab.decoder import Decoder, DecoderConfig
from seqlab.exercises.questions import block as public
from seqlab.utils import count_parameters


def counted(V, E, H, G, layers, F):
    """The package's model of that shape, its parameters counted."""
    config = DecoderConfig(V, d_model=E, n_heads=H, n_kv_heads=G, n_layers=layers, ffn_hidden=F,
                           norm="rms", ffn="swiglu", positions="rope", bias=False)  # fmt: skip
    return count_parameters(Decoder(config))


def llama_draw(d):
    G = d.integer(1, 3)
    H = G * d.integer(1, 3)
    E = 2 * H * d.integer(1, 4)
    return d.integer(1, 60), E, H, G, d.integer(1, 3), d.integer(1, 40)


def fits(memory, T, layers, local, W, E, H, G, bytes_per_number):
    """The largest n whose caches fit: each block's cached tokens counted one block at a time, then
    the bytes of n + 1 sequences compared with the budget (by doubling, then bisection)."""
    cached = sum(min(T, W) if block < local else T for block in range(layers))
    one = 2 * G * (E // H) * bytes_per_number * cached
    low, high = 0, 1
    while high * one <= memory:
        low, high = high, 2 * high
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if middle * one <= memory else (low, middle)
    return low


def batch_draw(d):
    G = d.integer(1, 4)
    H = G * d.integer(1, 4)
    E = H * d.integer(1, 8)
    layers = d.integer(1, 6)
    return (d.integer(0, 400_000), d.integer(1, 64), layers, d.integer(0, layers), d.integer(1, 80), E, H, G,
            (1, 2, 4)[d.index % 3])  # fmt: skip


HIDDEN = {
    "grouped_attention": {
        "hidden_edges": {
            "multi-head: G = H, no cache": lambda: public.grouped_case(
                2, 3, 3, 5, 5, 4, seed=10, dtype=torch.float64
            ),
            "eight query heads over two, 3,000 cached keys": lambda: public.grouped_case(
                1, 8, 2, 3, 3003, 2, seed=20
            ),
        },
        "extra": public.no_head_copies((2, 6, 40, 12)),
    },
    "llama_parameters": {
        "oracle": counted,
        "draw": llama_draw,
        "draws": (25, 25),
        "edges": {"every size 1 but an even head width": lambda: (1, 2, 1, 1, 1, 1)},
    },
    "max_batch": {
        "oracle": fits,
        "draw": batch_draw,
        "draws": (30, 30),
        "edges": {
            "not even one sequence fits": lambda: (1000, 64, 2, 1, 16, 64, 4, 2, 4),
            "exactly three fit": lambda: (3 * 2 * 2 * 16 * 4 * (64 + 32), 64, 2, 1, 32, 64, 4, 2, 4),
            "a window of exactly T": lambda: (10**6, 100, 3, 2, 100, 48, 6, 6, 2),
            "a window of one token in every block": lambda: (10**5, 500, 4, 4, 1, 32, 4, 1, 2),
            "multi-head, G = H, no window": lambda: (10**6, 100, 3, 0, 50, 48, 6, 6, 2),
            # 15 * 2**28 bytes a sequence (a 70B-sized model, 12,288 tokens): beyond 2**53, no float
            "one byte short of 2**22 sequences of 3.75 GiB": lambda: (
                15 * 2**50 - 1,
                12288,
                80,
                0,
                1,
                8192,
                64,
                8,
                2,
            ),
        },
    },
    "rope_complex": {
        "hidden_edges": {
            "far positions in float64": lambda: (
                public._seeded(1, 2, 3, 4, seed=2, dtype=torch.float64),
                torch.tensor([1000, 4095, 70000]),
                10000.0,
            ),
        },
        "extra": public.rotates_by_complex_products((1, 4, 3, 8)),
    },
}
