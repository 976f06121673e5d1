"""The hidden tests' own cases of the chapter rnn_gradients (only in the autograder zip)."""

import math

import torch

from seqlab.exercises.questions import rnn_gradients as public
from seqlab.rnn import RNN, hidden_state_grads


def grad_norms_tanh():
    """A tanh RNN of the package whose loss reads every state."""
    _ = torch.manual_seed(2)
    net = RNN(3, 5).double()
    x, target = torch.randn(2, 8, 3, dtype=torch.float64), torch.randn(2, 5, dtype=torch.float64)
    loss_of = lambda out: (out[:, 3] - target).square().sum() + out.sum()  # noqa: E731
    expected = hidden_state_grads(net, x, loss_of).transpose(0, 1).flatten(1).norm(dim=1)
    hs = net.unroll(x, torch.zeros(2, 5, dtype=torch.float64))
    return (hs, loss_of(torch.stack(hs, dim=1))), expected


def steps_reference(rate, threshold):
    return next(n for n in range(10**7) if rate**n < threshold)


def steps_draw(d):
    if d.index < public.STEPS.draws[0]:
        return public.STEPS.draw(d)[0]  # the public draws first
    rate = d.uniform(0.05, 0.995)
    if d.index % 3 == 0:  # a threshold that is a power of the rate in floating point
        return rate, rate ** d.integer(1, 30)
    return rate, d.uniform(1e-6, 0.95)


def steps_at_every_power(answer, public_test):
    """A logarithm formula with a fudge term is off at some power of some rate: every power
    rate ** k (k = 1..40) of 24 rates, and the floats just above and below it."""
    for i in range(24):
        rate = 0.04 + 0.95 * i / 23
        for k in range(1, 41):
            power = rate**k
            if not 0 < power < 1:
                continue
            for threshold in (power, math.nextafter(power, 0.0), math.nextafter(power, 1.0)):
                want, got = steps_reference(rate, threshold), answer(rate, threshold)
                if isinstance(got, bool) or not isinstance(got, int) or got != want:
                    where = "at" if threshold == power else "next to"
                    raise AssertionError(f"steps_below is wrong for a threshold {where} a power of the rate")


def rnn_backward_last_only():
    """A loss on the last state and one other entry only."""
    _ = torch.manual_seed(1)
    x, h0 = torch.randn(3, 7, 2, dtype=torch.float64), torch.randn(3, 4, dtype=torch.float64)
    W_ih, W_hh = torch.randn(4, 2, dtype=torch.float64), 0.9 * torch.randn(4, 4, dtype=torch.float64)
    dout = torch.zeros(3, 7, 4, dtype=torch.float64)
    dout[:, -1] = torch.randn(3, 4, dtype=torch.float64)
    dout[1, 2] = 1.0
    return x, h0, W_ih, W_hh, torch.randn(4, dtype=torch.float64), dout


def rnn_forward_edge(N, T, E_in, E_h, seed):
    """float64 inputs of the given sizes, larger than the draws' (saturated states)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(N, T, E_in, generator=g, dtype=torch.float64)
    return (x, torch.randn(2, N, E_h, generator=g, dtype=torch.float64),
            torch.randn(2, E_h, E_in, generator=g, dtype=torch.float64),
            torch.randn(2, E_h, E_h, generator=g, dtype=torch.float64),
            torch.randn(2, E_h, generator=g, dtype=torch.float64),
            torch.randn(2, E_h, generator=g, dtype=torch.float64))  # fmt: skip


HIDDEN = {
    "rnn_forward": {
        "hidden_edges": {
            "T = 1: both directions read the same step": lambda: rnn_forward_edge(3, 1, 2, 4, 5),
            "a long sequence": lambda: rnn_forward_edge(2, 25, 3, 5, 6),
        },
    },
    "grad_norms": {"hidden_edges": {"tanh RNN": grad_norms_tanh}},
    "clip_by_global_norm": {
        "hidden_edges": {
            "global norm exactly max_norm": lambda: ([torch.tensor([3.0]), torch.tensor([[4.0]])], 5.0),
            "float64 gradients near 1e200": lambda: (
                [torch.tensor([3e200, 0.0], dtype=torch.float64), torch.tensor([4e200], dtype=torch.float64)],
                2.0,
            ),
        },
    },
    "scale_to_spectral_radius": {
        "hidden_edges": {
            "eigenvalues -3 and 1": lambda: (
                torch.tensor([[-3.0, 0.0], [1.0, 1.0]], dtype=torch.float64),
                0.75,
            ),
            "nilpotent 3 x 3": lambda: (
                torch.tensor([[0.0, 1.0, 5.0], [0.0, 0.0, -2.0], [0.0, 0.0, 0.0]]),
                0.5,
            ),
        },
    },
    "steps_below": {
        "oracle": steps_reference,
        "draw": steps_draw,
        "edges": {
            "an exact power": lambda: (0.5, 0.125),
            "0.1 ** 3": lambda: (0.1, 0.001),
            "0.03 ** 3": lambda: (0.03, 0.03**3),
        },
        "hidden_edges": {
            "0.25 ** 2": lambda: (0.25, 0.0625),
            "0.9, 1e-3": lambda: (0.9, 1e-3),
            "0.03 ** 12": lambda: (0.03, 0.03**12),
            "0.07 ** 5": lambda: (0.07, 0.07**5),
        },
        "extra": steps_at_every_power,
    },
    "rnn_multiply_adds": {
        "oracle": lambda N, T, E_in, E_h: N * T * (E_h * E_in + E_h * E_h),
        "draw": lambda d: tuple(d.sizes(4, high=9)),
        "draws": (30, 30),
        "edges": {"long sequence": lambda: (1, 100, 8, 32), "wide": lambda: (16, 50, 64, 64)},
    },
    "rnn_backward": {"hidden_edges": {"last state only": rnn_backward_last_only}},
}
