"""The hidden tests' own cases of the chapter transformer (only in the autograder zip)."""

import torch

from seqlab.exercises.questions import transformer as public
from seqlab.exercises.questions._shared import fresh_each_call


def macs_formula(t, E, cache):
    n = t + 1
    return 3 * E * E + 2 * n * E if cache else 3 * n * E * E + 2 * n * n * E


def macs_draw(d):
    if d.index < public.MACS.draws[0]:
        return public.MACS.draw(d)[0]  # the public cases first
    return d.integer(0, 40), d.integer(1, 600), d.index % 2 == 0


def mqa_numbers_draw(d):
    if d.index < public.MQA_NUMBERS.draws[0]:
        return public.MQA_NUMBERS.draw(d)[0]  # the public cases first
    H = d.integer(1, 16)
    return d.integer(1, 24), d.integer(1, 4096), H * d.integer(1, 128), H


HIDDEN = {
    "decoder_mask": {
        "hidden_edges": {
            "one sequence of length L": lambda: (torch.tensor([6]), 6),
            # past the size of any mask a student would cache
            "L = 1500": lambda: (torch.tensor([1500, 700, 1]), 1500),
        },
        "extra": fresh_each_call("decoder_mask", (torch.tensor([2, 3]), 3), (torch.tensor([1500]), 1500)),
    },
    "transformer_lr": {
        "hidden_edges": {
            "the step before the peak": lambda: (99, 64, 100),
            "the step after the peak": lambda: (101, 64, 100),
        }
    },
    "smoothed_loss": {
        "hidden_edges": {
            "eps = 0": lambda: (
                torch.linspace(-3.0, 1.0, 10).reshape(5, 2),
                torch.tensor([1, 0, 1, 1, 0]),
                0.0,
            ),
            # log(softmax) with a floor (clamp_min(1e-30), + 1e-12) is finite here, and wrong
            "logits of 1e4 in float64": lambda: (
                torch.tensor([[-1e4, 1e4, 3e3, 0.0]], dtype=torch.float64),
                torch.tensor([0]),
                0.3,
            ),
        },
    },
    "encoder_layer_parameters": {"hidden_edges": {"the paper's base layer": lambda: (512, 2048, 8)}},
    "decoding_step_macs": {
        "oracle": macs_formula,
        "draw": macs_draw,
        "draws": (0, 48),
    },
    "mqa_cache_numbers": {
        "oracle": lambda layers, T, E, H: 2 * layers * T * (E // H),
        "draw": mqa_numbers_draw,
        "draws": (0, 45),
    },
}
