"""The graded questions of the chapter rnn_gradients (chapters/rnn_gradients.ipynb)."""

import torch
from torch import nn

from seqlab.exercises.harness import Question
from seqlab.rnn import set_spectral_radius
from seqlab.train import clip_grad_norm


def rnn_forward_oracle(x, h0, W_ih, W_hh, b_ih, b_hh):
    """nn.RNN(batch_first=True, bidirectional=True) with the given weights: index 0 of each
    stacked weight is the forward direction, index 1 the reverse one."""
    net = nn.RNN(W_ih.shape[2], W_ih.shape[1], batch_first=True, bidirectional=True, dtype=x.dtype)
    weights = {}
    for d, suffix in enumerate(("", "_reverse")):
        weights.update({f"weight_ih_l0{suffix}": W_ih[d], f"weight_hh_l0{suffix}": W_hh[d],
                        f"bias_ih_l0{suffix}": b_ih[d], f"bias_hh_l0{suffix}": b_hh[d]})  # fmt: skip
    return torch.func.functional_call(net, weights, (x, h0))


def rnn_forward_draw(d):
    N, T, E_in, E_h = d.sizes(4)  # distinct, so no transpose can hide; each is 1 in one draw
    return (d.randn(N, T, E_in), d.randn(2, N, E_h), d.randn(2, E_h, E_in, scale=0.5),
            d.randn(2, E_h, E_h, scale=0.5), d.randn(2, E_h), d.randn(2, E_h))  # fmt: skip


RNN_FORWARD = Question(
    "rnn_forward",
    oracle=rnn_forward_oracle,
    draw=rnn_forward_draw,
    grad=(0, 1, 2, 3, 4, 5),
    # each draw runs two RNNs and their backward passes: 15 hidden ones keep grading fast
    draws=(5, 15),
    forbidden=(
        "torch.nn.RNN",
        "torch.nn.RNNCell",
        "torch.rnn_tanh",
        "torch.rnn_tanh_cell",
        "seqlab.rnn.RNN",
        "seqlab.rnn.RNNCell",
    ),  # fmt: skip
)


def grad_norms_draw(d):
    """A linear RNN h_t = a h_{t-1} + x_t and a loss (h_k * u).sum(): for t <= k the gradient
    at h_t is u a^(k - t), of norm ||u|| |a|^(k - t); the states after h_k get none."""
    N, T, E_h = d.sizes(3)
    a, k = d.uniform(-0.9, 0.9), d.integer(1, T)
    x, u = d.randn(N, T, E_h).requires_grad_(True), d.randn(N, E_h)
    h, hs = torch.zeros(N, E_h, dtype=d.dtype), []
    for t in range(T):
        h = a * h + x[:, t]
        hs.append(h)
    steps = torch.arange(T, dtype=torch.float64)
    norms = u.double().norm() * abs(a) ** (k - 1 - steps).clamp(min=0)
    norms[k:] = 0.0
    return (hs, (hs[k - 1] * u).sum()), norms.to(d.dtype)


def grad_norms_unread():
    """A loss that reads none of the states (float64): every norm is zero."""
    x = torch.ones(2, 3, 4, dtype=torch.float64, requires_grad=True)
    return ([3 * x[:, t] for t in range(3)], x.square().sum()), torch.zeros(3, dtype=torch.float64)


GRAD_NORMS = Question(
    "grad_norms",
    oracle=None,
    draw=grad_norms_draw,
    arg_names=("hs", "loss"),
    edges={"a loss that reads no state": grad_norms_unread},
    forbidden=("seqlab.rnn.hidden_state_grads",),
    grad_untouched=True,  # "the probe must not accumulate anything into a .grad"
)


def clip_oracle(grads, max_norm):
    """The package's clip_grad_norm, on parameters holding copies of the gradients."""
    params = [torch.zeros_like(g, requires_grad=True) for g in grads]
    for p, g in zip(params, grads):
        p.grad = g.clone()
    clip_grad_norm(params, max_norm)
    return [p.grad for p in params]


def norm_held(grads) -> bool:
    """finite gradients whose global norm their dtype holds"""
    if not all(torch.isfinite(g).all() for g in grads):
        return False
    peak = max((g.abs().max().item() for g in grads if g.numel()), default=0.0)
    if peak == 0.0:
        return True
    total = peak * sum((g.double() / peak).square().sum().item() for g in grads) ** 0.5
    return all(total <= torch.finfo(g.dtype).max for g in grads)


def clip_draw(d):
    shapes = [tuple(d.sizes(d.integer(1, 2))) for _ in range(d.integer(1, 3))]
    scale = 10.0 if d.index % 4 < 2 else 0.05  # above the threshold, or below it
    return [d.randn(*s, scale=scale) for s in shapes], d.uniform(0.5, 2.0)


CLIP = Question(
    "clip_by_global_norm",
    oracle=clip_oracle,
    draw=clip_draw,
    edges={
        "all-zero gradient": lambda: ([torch.zeros(2), torch.zeros(1, 3)], 1.0),
        "max_norm = 0": lambda: ([torch.ones(2, 1), -torch.ones(3)], 0.0),
        "all-zero gradient, max_norm = 0": lambda: ([torch.zeros(3, dtype=torch.float64)], 0.0),
        # a global norm float32 holds, 5e20, whose squares it does not (1e41 > 3.4e38)
        "float32 gradients near 1e20": lambda: ([torch.tensor([3e20]), torch.tensor([[4e20, 0.0]])], 1.0),
    },
    forbidden=("seqlab.train.clip_grad_norm", "torch.nn.utils.clip_grad_norm_"),
    new_tensors=True,
    bounds={"max_norm": (0.0, None), "grads": norm_held},
)


def spectral_draw(d):
    (E,) = d.sizes(1)
    return d.randn(E, E), d.uniform(0.2, 2.0)


SPECTRAL = Question(
    "scale_to_spectral_radius",
    oracle=set_spectral_radius,  # the package's function, shown on the page
    draw=spectral_draw,
    arg_names=("W", "rho"),
    edges={
        "nilpotent W": lambda: (torch.tensor([[0.0, 2.0], [0.0, 0.0]]), 1.0),
        "nilpotent in exact arithmetic, radius 1.9e-16 in float64": lambda: (
            torch.tensor([[1.0, 1.0], [-1.0, -1.0]]),
            1.0,
        ),
        "eigenvalues +-2i": lambda: (torch.tensor([[0.0, 1.0], [-4.0, 0.0]], dtype=torch.float64), 1.0),
    },
    forbidden=("seqlab.rnn.set_spectral_radius", "seqlab.rnn.spectral_radius"),
    new_tensors=True,
    bounds={"rho": (0.0, None)},
)

# (rate, threshold): the answer
STEPS_KNOWN = {(0.5, 0.1): 4, (0.8, 0.01): 21, (0.3, 0.5): 1, (0.99, 0.9): 11, (0.75, 0.05): 11}
STEPS = Question(
    "steps_below",
    oracle=None,
    draw=lambda d: list(STEPS_KNOWN.items())[d.index % len(STEPS_KNOWN)],
    arg_names=("rate", "threshold"),
    edges={
        "an exact power, 0.5 ** 3 == 0.125": lambda: ((0.5, 0.125), 4),
        "0.1 ** 3 above 0.001 in floating point": lambda: ((0.1, 0.001), 4),
        "a power computed in floating point, 0.03 ** 3": lambda: ((0.03, 0.03**3), 4),
    },
    bounds={"rate": (0.0, 1.0), "threshold": (0.0, 1.0)},  # both strictly inside
)

# the public test knows two answers, not the formula (the hidden test's oracle)
MULTIPLY_ADDS = Question(
    "rnn_multiply_adds",
    oracle=None,
    draw=lambda d: [((2, 3, 4, 5), 270), ((3, 7, 2, 6), 1008)][d.index % 2],
    arg_names=("N", "T", "E_in", "E_h"),
    draws=(2, 2),
    bounds={"N": (1, None), "T": (1, None), "E_in": (1, None), "E_h": (1, None)},
)


def rnn_backward_oracle(x, h0, W_ih, W_hh, b, dout):
    """The same gradients by autograd."""
    leaves = [t.detach().clone().requires_grad_(True) for t in (W_ih, W_hh, b, h0)]
    w_ih, w_hh, bias, h = leaves
    loss = 0
    for t in range(x.shape[1]):
        h = torch.tanh(x[:, t] @ w_ih.T + h @ w_hh.T + bias)
        loss = loss + (h * dout[:, t]).sum()  # dL/dh_t, directly, is dout[:, t]
    return torch.autograd.grad(loss, leaves)


def rnn_backward_draw(d):
    N, T, E_in, E_h = d.sizes(4)
    return (d.randn(N, T, E_in), d.randn(N, E_h), d.randn(E_h, E_in, scale=0.5),
            d.randn(E_h, E_h, scale=0.5), d.randn(E_h, scale=0.1), d.randn(N, T, E_h))  # fmt: skip


RNN_BACKWARD = Question(
    "rnn_backward",
    oracle=rnn_backward_oracle,
    draw=rnn_backward_draw,
    forbidden=("torch.autograd.grad", "torch.autograd.backward", "torch.Tensor.backward"),
)

QUESTIONS = (RNN_FORWARD, GRAD_NORMS, CLIP, SPECTRAL, STEPS, MULTIPLY_ADDS, RNN_BACKWARD)
