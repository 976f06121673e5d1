"""Answers for the graded exercises of the rnn_gradients chapter, used by tests/test_exercises.py.

WRONG: plausible wrong answers per question; every test case must reject at least one.
DELEGATING: answers that hand the work to the implementation the question asks for; the
hidden tests must fail them (questions with nothing to delegate to are left out).
"""

WRONG = {
    "rnn_forward": [
        # forgot the nonlinearity
        """
def rnn_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    h, states = h0, []
    for t in range(x.shape[1]):
        h = x[:, t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh
        states.append(h)
    return torch.stack(states, dim=1), h
""",
        # stacked time-major: (T, N, E_h)
        """
def rnn_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    h, states = h0, []
    for t in range(x.shape[1]):
        h = torch.tanh(x[:, t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states, dim=0), h
""",
        # W_hh not transposed
        """
def rnn_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    h, states = h0, []
    for t in range(x.shape[1]):
        h = torch.tanh(x[:, t] @ W_ih.T + b_ih + h @ W_hh + b_hh)
        states.append(h)
    return torch.stack(states, dim=1), h
""",
    ],
    "grad_norms": [
        # no allow_unused: fails on a state the loss does not depend on
        """
def grad_norms(hs, loss):
    grads = torch.autograd.grad(loss, hs)
    return torch.stack([g.norm() for g in grads])
""",
        # norms of the states, not of the gradients
        """
def grad_norms(hs, loss):
    return torch.stack([h.norm() for h in hs])
""",
        # mean of per-example norms instead of the norm of the whole gradient
        """
def grad_norms(hs, loss):
    grads = torch.autograd.grad(loss, hs, allow_unused=True)
    return torch.stack([g.norm(dim=-1).mean() for g in grads])
""",
    ],
    "clip_by_global_norm": [
        # clips each tensor on its own
        """
def clip_by_global_norm(grads, max_norm):
    return [g * min(1.0, max_norm / float(g.norm())) if g.norm() > 0 else g.clone() for g in grads]
""",
        # always rescales to max_norm, even small (or zero) gradients
        """
def clip_by_global_norm(grads, max_norm):
    total = torch.sqrt(sum(g.square().sum() for g in grads))
    return [g * (max_norm / total) for g in grads]
""",
    ],
    "scale_to_spectral_radius": [
        # the spectral norm (largest singular value) instead of the spectral radius
        """
def scale_to_spectral_radius(W, rho):
    return W * (rho / torch.linalg.matrix_norm(W, 2))
""",
        # the largest real part instead of the largest absolute value
        """
def scale_to_spectral_radius(W, rho):
    return W * (rho / torch.linalg.eigvals(W).real.max())
""",
    ],
    "steps_below": [
        # ceil of the logarithm: one step short when the threshold is an exact power of the rate
        """
import math


def steps_below(rate, threshold):
    return math.ceil(math.log(threshold) / math.log(rate))
""",
        # floor without the + 1: the last step still above the threshold
        """
import math


def steps_below(rate, threshold):
    return int(math.log(threshold) / math.log(rate))
""",
        # rounded instead of the first step strictly below
        """
import math


def steps_below(rate, threshold):
    return round(math.log(threshold) / math.log(rate))
""",
        # a linear decay by (1 - rate) per step instead of a geometric one
        """
import math


def steps_below(rate, threshold):
    return math.ceil((1 - threshold) / (1 - rate))
""",
    ],
    "rnn_multiply_adds": [
        # the T^2 misconception: every step revisits all earlier ones
        """
def rnn_multiply_adds(N, T, E_in, E_h):
    return N * T * T * E_h * (E_in + E_h)
""",
        # the batch forgotten
        """
def rnn_multiply_adds(N, T, E_in, E_h):
    return T * E_h * (E_in + E_h)
""",
        # the recurrent product only
        """
def rnn_multiply_adds(N, T, E_in, E_h):
    return N * T * E_h * E_h
""",
    ],
}

DELEGATING = {
    "rnn_forward": """
def rnn_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    import seqlab.rnn
    net = seqlab.rnn.RNN(W_ih.shape[1], W_ih.shape[0]).to(x.dtype)
    with torch.no_grad():
        net.cell.weight_ih.copy_(W_ih)
        net.cell.weight_hh.copy_(W_hh)
        net.cell.bias_ih.copy_(b_ih)
        net.cell.bias_hh.copy_(b_hh)
    return net(x, h0)
""",
    "clip_by_global_norm": """
def clip_by_global_norm(grads, max_norm):
    from seqlab.train import clip_grad_norm
    params = [torch.nn.Parameter(g.clone()) for g in grads]
    for p, g in zip(params, grads):
        p.grad = g.clone()
    clip_grad_norm(params, max_norm)
    return [p.grad for p in params]
""",
    "scale_to_spectral_radius": """
from seqlab.rnn import set_spectral_radius
def scale_to_spectral_radius(W, rho):
    return set_spectral_radius(W, rho)
""",
}
