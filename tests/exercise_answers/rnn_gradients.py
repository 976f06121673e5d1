"""Answers for the graded exercises of the rnn_gradients chapter, used by tests/test_exercises.py.

WRONG: plausible wrong answers per question; every test case must reject at least one.
DELEGATING: answers that hand the work to the implementation the question asks for; the
hidden tests must fail them (questions with nothing to delegate to are left out).
"""

WRONG = {
    "rnn_forward": [
        # the reverse direction reads forwards too (with its own weights)
        """
def rnn_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    T = x.shape[1]
    halves, last = [], []
    for d, order in enumerate((range(T), range(T))):
        h, states = h0[d], [None] * T
        for t in order:
            h = torch.tanh(x[:, t] @ W_ih[d].T + b_ih[d] + h @ W_hh[d].T + b_hh[d])
            states[t] = h
        halves.append(torch.stack(states, dim=1))
        last.append(h)
    return torch.cat(halves, dim=-1), torch.stack(last)
""",
        # the reverse direction's last state taken at step T, as for the forward one
        """
def rnn_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    T = x.shape[1]
    halves, last = [], []
    for d, order in enumerate((range(T), reversed(range(T)))):
        h, states = h0[d], [None] * T
        for t in order:
            h = torch.tanh(x[:, t] @ W_ih[d].T + b_ih[d] + h @ W_hh[d].T + b_hh[d])
            states[t] = h
        halves.append(torch.stack(states, dim=1))
        last.append(h)
    return torch.cat(halves, dim=-1), torch.stack([halves[0][:, -1], halves[1][:, -1]])
""",
        # the two directions side by side the other way round
        """
def rnn_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    T = x.shape[1]
    halves, last = [], []
    for d, order in enumerate((range(T), reversed(range(T)))):
        h, states = h0[d], [None] * T
        for t in order:
            h = torch.tanh(x[:, t] @ W_ih[d].T + b_ih[d] + h @ W_hh[d].T + b_hh[d])
            states[t] = h
        halves.append(torch.stack(states, dim=1))
        last.append(h)
    return torch.cat(halves[::-1], dim=-1), torch.stack(last)
""",
        # both directions with the forward weights
        """
def rnn_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    T = x.shape[1]
    halves, last = [], []
    for d, order in enumerate((range(T), reversed(range(T)))):
        h, states = h0[d], [None] * T
        for t in order:
            h = torch.tanh(x[:, t] @ W_ih[0].T + b_ih[0] + h @ W_hh[0].T + b_hh[0])
            states[t] = h
        halves.append(torch.stack(states, dim=1))
        last.append(h)
    return torch.cat(halves, dim=-1), torch.stack(last)
""",
        # both directions from the forward initial state
        """
def rnn_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    T = x.shape[1]
    halves, last = [], []
    for d, order in enumerate((range(T), reversed(range(T)))):
        h, states = h0[0], [None] * T
        for t in order:
            h = torch.tanh(x[:, t] @ W_ih[d].T + b_ih[d] + h @ W_hh[d].T + b_hh[d])
            states[t] = h
        halves.append(torch.stack(states, dim=1))
        last.append(h)
    return torch.cat(halves, dim=-1), torch.stack(last)
""",
        # forgot the nonlinearity
        """
def rnn_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    T = x.shape[1]
    halves, last = [], []
    for d, order in enumerate((range(T), reversed(range(T)))):
        h, states = h0[d], [None] * T
        for t in order:
            h = x[:, t] @ W_ih[d].T + b_ih[d] + h @ W_hh[d].T + b_hh[d]
            states[t] = h
        halves.append(torch.stack(states, dim=1))
        last.append(h)
    return torch.cat(halves, dim=-1), torch.stack(last)
""",
        # W_hh not transposed
        """
def rnn_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    T = x.shape[1]
    halves, last = [], []
    for d, order in enumerate((range(T), reversed(range(T)))):
        h, states = h0[d], [None] * T
        for t in order:
            h = torch.tanh(x[:, t] @ W_ih[d].T + b_ih[d] + h @ W_hh[d] + b_hh[d])
            states[t] = h
        halves.append(torch.stack(states, dim=1))
        last.append(h)
    return torch.cat(halves, dim=-1), torch.stack(last)
""",
        # the directions stacked on a new axis: (N, T, 2, E_h)
        """
def rnn_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    T = x.shape[1]
    halves, last = [], []
    for d, order in enumerate((range(T), reversed(range(T)))):
        h, states = h0[d], [None] * T
        for t in order:
            h = torch.tanh(x[:, t] @ W_ih[d].T + b_ih[d] + h @ W_hh[d].T + b_hh[d])
            states[t] = h
        halves.append(torch.stack(states, dim=1))
        last.append(h)
    return torch.stack(halves, dim=2), torch.stack(last)
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
        # rescales the caller's tensors in place
        """
def clip_by_global_norm(grads, max_norm):
    total = torch.sqrt(sum(g.square().sum() for g in grads))
    if total > max_norm:
        for g in grads:
            g.mul_(max_norm / total)
    return list(grads)
""",
        # divides by the norm first: 0 / 0 = NaN for an all-zero gradient
        """
def clip_by_global_norm(grads, max_norm):
    total = torch.sqrt(sum(g.square().sum() for g in grads))
    return [g / total * torch.clamp(total, max=max_norm) for g in grads]
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
        # divides by the eigenvalue of largest modulus itself, not by its modulus
        """
def scale_to_spectral_radius(W, rho):
    eigenvalues = torch.linalg.eigvals(W)
    return W * (rho / eigenvalues[eigenvalues.abs().argmax()]).real
""",
        # rescales W in place instead of returning a copy
        """
def scale_to_spectral_radius(W, rho):
    return W.mul_(rho / torch.linalg.eigvals(W).abs().max())
""",
        # eigenvalues in W's own dtype, not in float64 as the question asks: a float32 W that is
        # nilpotent in exact arithmetic gets exact zeros and raises where the question rescales
        """
def scale_to_spectral_radius(W, rho):
    radius = torch.linalg.eigvals(W).abs().max().item()
    if radius == 0:
        raise ValueError("W is nilpotent")
    return W * (rho / radius)
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
        # the answer of the first two checks hard-coded
        """
def steps_below(rate, threshold):
    return 4
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
        # the count of the first check hard-coded
        """
def rnn_multiply_adds(N, T, E_in, E_h):
    return 270
""",
    ],
    "rnn_backward": [
        # no gradient carried through time: each step sees only its own dout
        """
def rnn_backward(x, h0, W_ih, W_hh, b, dout):
    states = [h0]
    for t in range(x.shape[1]):
        states.append(torch.tanh(x[:, t] @ W_ih.T + states[-1] @ W_hh.T + b))
    dW_ih, dW_hh, db = torch.zeros_like(W_ih), torch.zeros_like(W_hh), torch.zeros_like(b)
    dh0 = torch.zeros_like(h0)
    for t in reversed(range(x.shape[1])):
        da = dout[:, t] * (1 - states[t + 1] ** 2)
        dW_ih += da.T @ x[:, t]
        dW_hh += da.T @ states[t]
        db += da.sum(dim=0)
        if t == 0:
            dh0 = da @ W_hh
    return dW_ih, dW_hh, db, dh0
""",
        # tanh'(a) taken as 1 - h instead of 1 - h**2
        """
def rnn_backward(x, h0, W_ih, W_hh, b, dout):
    states = [h0]
    for t in range(x.shape[1]):
        states.append(torch.tanh(x[:, t] @ W_ih.T + states[-1] @ W_hh.T + b))
    dW_ih, dW_hh, db = torch.zeros_like(W_ih), torch.zeros_like(W_hh), torch.zeros_like(b)
    carried = torch.zeros_like(h0)
    for t in reversed(range(x.shape[1])):
        da = (dout[:, t] + carried) * (1 - states[t + 1])
        dW_ih += da.T @ x[:, t]
        dW_hh += da.T @ states[t]
        db += da.sum(dim=0)
        carried = da @ W_hh
    return dW_ih, dW_hh, db, carried
""",
        # the gradient carried back through W_hh^T (a column-vector habit): da @ W_hh.T
        """
def rnn_backward(x, h0, W_ih, W_hh, b, dout):
    states = [h0]
    for t in range(x.shape[1]):
        states.append(torch.tanh(x[:, t] @ W_ih.T + states[-1] @ W_hh.T + b))
    dW_ih, dW_hh, db = torch.zeros_like(W_ih), torch.zeros_like(W_hh), torch.zeros_like(b)
    carried = torch.zeros_like(h0)
    for t in reversed(range(x.shape[1])):
        da = (dout[:, t] + carried) * (1 - states[t + 1] ** 2)
        dW_ih += da.T @ x[:, t]
        dW_hh += da.T @ states[t]
        db += da.sum(dim=0)
        carried = da @ W_hh.T
    return dW_ih, dW_hh, db, carried
""",
        # dW_hh from the new state h_t instead of the previous one h_{t-1}
        """
def rnn_backward(x, h0, W_ih, W_hh, b, dout):
    states = [h0]
    for t in range(x.shape[1]):
        states.append(torch.tanh(x[:, t] @ W_ih.T + states[-1] @ W_hh.T + b))
    dW_ih, dW_hh, db = torch.zeros_like(W_ih), torch.zeros_like(W_hh), torch.zeros_like(b)
    carried = torch.zeros_like(h0)
    for t in reversed(range(x.shape[1])):
        da = (dout[:, t] + carried) * (1 - states[t + 1] ** 2)
        dW_ih += da.T @ x[:, t]
        dW_hh += da.T @ states[t + 1]
        db += da.sum(dim=0)
        carried = da @ W_hh
    return dW_ih, dW_hh, db, carried
""",
        # the last step's gradient only (as if the loss read h_T alone)
        """
def rnn_backward(x, h0, W_ih, W_hh, b, dout):
    states = [h0]
    for t in range(x.shape[1]):
        states.append(torch.tanh(x[:, t] @ W_ih.T + states[-1] @ W_hh.T + b))
    dW_ih, dW_hh, db = torch.zeros_like(W_ih), torch.zeros_like(W_hh), torch.zeros_like(b)
    carried = dout[:, -1]
    for t in reversed(range(x.shape[1])):
        da = carried * (1 - states[t + 1] ** 2)
        dW_ih += da.T @ x[:, t]
        dW_hh += da.T @ states[t]
        db += da.sum(dim=0)
        carried = da @ W_hh
    return dW_ih, dW_hh, db, carried
""",
    ],
}

DELEGATING = {
    "rnn_backward": """
def rnn_backward(x, h0, W_ih, W_hh, b, dout):
    leaves = [t.detach().clone().requires_grad_(True) for t in (W_ih, W_hh, b, h0)]
    h, loss = leaves[3], 0
    for t in range(x.shape[1]):
        h = torch.tanh(x[:, t] @ leaves[0].T + h @ leaves[1].T + leaves[2])
        loss = loss + (h * dout[:, t]).sum()
    return tuple(torch.autograd.grad(loss, leaves))
""",
    "rnn_forward": """
def rnn_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    import seqlab.rnn

    out, last = [], []
    for d in range(2):
        net = seqlab.rnn.RNN(W_ih.shape[2], W_ih.shape[1]).to(x.dtype)
        weights = {"cell.weight_ih": W_ih[d], "cell.weight_hh": W_hh[d], "cell.bias_ih": b_ih[d],
                   "cell.bias_hh": b_hh[d]}
        xs = x if d == 0 else x.flip(1)
        o, h = torch.func.functional_call(net, weights, (xs, h0[d]))
        out.append(o if d == 0 else o.flip(1))
        last.append(h)
    return torch.cat(out, dim=-1), torch.stack(last)
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

# Plausible wrong answers of the kinds that got past the earlier tests (inputs changed in place,
# broken gradients, delegation, .squeeze() at size 1, finite fills, the named edge cases, types,
# float64 from float32), written before the tests were strengthened: every one must fail a test
# case, and a public one unless it only delegates (tests/test_exercises.py).
WRONG_NEW = {
    "rnn_forward": [
        # updates the caller's h0 in place
        """
def rnn_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    T = x.shape[1]
    halves = []
    for d, order in enumerate((range(T), reversed(range(T)))):
        states = [None] * T
        for t in order:
            h0[d] = torch.tanh(x[:, t] @ W_ih[d].T + b_ih[d] + h0[d] @ W_hh[d].T + b_hh[d])
            states[t] = h0[d].clone()
        halves.append(torch.stack(states, dim=1))
    return torch.cat(halves, dim=-1), h0.clone()
""",
        # the states computed under no_grad: no gradient reaches the weights
        """
def rnn_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    T = x.shape[1]
    halves, last = [], []
    with torch.no_grad():
        for d, order in enumerate((range(T), reversed(range(T)))):
            h, states = h0[d], [None] * T
            for t in order:
                h = torch.tanh(x[:, t] @ W_ih[d].T + b_ih[d] + h @ W_hh[d].T + b_hh[d])
                states[t] = h
            halves.append(torch.stack(states, dim=1))
            last.append(h)
    return torch.cat(halves, dim=-1), torch.stack(last)
""",
        # delegates to PyTorch's own RNN kernel
        """
def rnn_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    weights = (W_ih[0], W_hh[0], b_ih[0], b_hh[0], W_ih[1], W_hh[1], b_ih[1], b_hh[1])
    return torch.rnn_tanh(x, h0, weights, True, 1, 0.0, False, True, True)
""",
        # .squeeze() of the time slice: breaks when N = 1 (and E_in = 1)
        """
def rnn_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    T = x.shape[1]
    halves, last = [], []
    for d, order in enumerate((range(T), reversed(range(T)))):
        h, states = h0[d], [None] * T
        for t in order:
            h = torch.tanh(x[:, t].squeeze() @ W_ih[d].T + b_ih[d] + h @ W_hh[d].T + b_hh[d])
            states[t] = h
        halves.append(torch.stack(states, dim=1))
        last.append(h)
    return torch.cat(halves, dim=-1), torch.stack(last)
""",
        # the states preallocated and written in place: a float32 buffer whatever the input dtype
        """
def rnn_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    N, T, _ = x.shape
    E_h = W_hh.shape[1]
    out, h_n = torch.zeros(N, T, 2 * E_h), torch.zeros(2, N, E_h)
    for d, order in enumerate((range(T), reversed(range(T)))):
        h = h0[d]
        for t in order:
            h = torch.tanh(x[:, t] @ W_ih[d].T + b_ih[d] + h @ W_hh[d].T + b_hh[d])
            out[:, t, d * E_h : (d + 1) * E_h] = h
        h_n[d] = h
    return out, h_n
""",
        # the reverse direction run on the flipped input, its output not flipped back
        """
def rnn_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    halves, last = [], []
    for d, xs in enumerate((x, x.flip(1))):
        h, states = h0[d], []
        for t in range(xs.shape[1]):
            h = torch.tanh(xs[:, t] @ W_ih[d].T + b_ih[d] + h @ W_hh[d].T + b_hh[d])
            states.append(h)
        halves.append(torch.stack(states, dim=1))
        last.append(h)
    return torch.cat(halves, dim=-1), torch.stack(last)
""",
    ],
    "grad_norms": [
        # a float64 result whatever the states' dtype
        """
def grad_norms(hs, loss):
    grads = torch.autograd.grad(loss, hs, allow_unused=True)
    return torch.tensor([0.0 if g is None else float(g.norm()) for g in grads], dtype=torch.float64)
""",
        # retain_graph forgotten is fine; but the loss's graph freed by a first backward() call
        """
def grad_norms(hs, loss):
    for h in hs:
        h.retain_grad()
    loss.backward()
    return torch.stack([torch.zeros((), dtype=h.dtype) if h.grad is None else h.grad.norm() for h in hs])
""",
        # a Python list of floats instead of a tensor
        """
def grad_norms(hs, loss):
    grads = torch.autograd.grad(loss, hs, allow_unused=True)
    return [0.0 if g is None else g.norm().item() for g in grads]
""",
    ],
    "clip_by_global_norm": [
        # returns the caller's tensors themselves below the threshold (no copy)
        """
def clip_by_global_norm(grads, max_norm):
    total = torch.sqrt(sum(g.square().sum() for g in grads))
    if total <= max_norm:
        return list(grads)
    return [g * (max_norm / total) for g in grads]
""",
        # the epsilon of torch.nn.utils.clip_grad_norm_ (1e-6) in the denominator
        """
def clip_by_global_norm(grads, max_norm):
    total = torch.sqrt(sum(g.square().sum() for g in grads))
    scale = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    return [g * scale for g in grads]
""",
        # max_norm = 0: 0 / 0 for an all-zero gradient
        """
def clip_by_global_norm(grads, max_norm):
    total = torch.sqrt(sum(g.square().sum() for g in grads))
    if total < max_norm:
        return [g.clone() for g in grads]
    return [g * (max_norm / total) for g in grads]
""",
        # an epsilon in the denominator: clipped norms a little below max_norm
        """
def clip_by_global_norm(grads, max_norm):
    total = torch.sqrt(sum(g.square().sum() for g in grads))
    if total <= max_norm:
        return [g.clone() for g in grads]
    return [g * (max_norm / (total + 1e-3)) for g in grads]
""",
    ],
    "scale_to_spectral_radius": [
        # a nilpotent W (all eigenvalues 0): divides by zero and returns inf / NaN
        """
def scale_to_spectral_radius(W, rho):
    return W * (rho / torch.linalg.eigvals(W).abs().max())
""",
        # the radius of the float32 eigenvalues of a float64 W (and a float32 result)
        """
def scale_to_spectral_radius(W, rho):
    radius = torch.linalg.eigvals(W.float()).abs().max()
    if radius == 0:
        raise ValueError("W is nilpotent")
    return (W.float() * (rho / radius))
""",
        # delegates to the package's own function
        """
def scale_to_spectral_radius(W, rho):
    import seqlab.rnn
    if torch.linalg.eigvals(W).abs().max() == 0:
        raise ValueError("W is nilpotent")
    return seqlab.rnn.set_spectral_radius(W.clone(), rho)
""",
    ],
    "steps_below": [
        # floor(log) + 1: one too many at an exact power that the float logarithm rounds down
        """
def steps_below(rate, threshold):
    return math.floor(math.log(threshold) / math.log(rate)) + 1
""",
        # a float
        """
def steps_below(rate, threshold):
    steps = 0.0
    while rate**steps >= threshold:
        steps += 1
    return steps
""",
        # a tensor count
        """
def steps_below(rate, threshold):
    steps = torch.tensor(0)
    while rate**steps >= threshold:
        steps += 1
    return steps
""",
    ],
    "rnn_multiply_adds": [
        # true division: a float
        """
def rnn_multiply_adds(N, T, E_in, E_h):
    return N * T * E_h * (E_in + E_h) / 1
""",
        # a tensor
        """
def rnn_multiply_adds(N, T, E_in, E_h):
    return torch.tensor(N * T * E_h * (E_in + E_h))
""",
        # squares: E_h^2 taken for the input product too
        """
def rnn_multiply_adds(N, T, E_in, E_h):
    return N * T * 2 * E_h * E_h
""",
    ],
    "rnn_backward": [
        # the gradients returned as float64 whatever the inputs' dtype
        """
def rnn_backward(x, h0, W_ih, W_hh, b, dout):
    x, h0, W_ih, W_hh, b, dout = (t.double() for t in (x, h0, W_ih, W_hh, b, dout))
    T = x.shape[1]
    states = [h0]
    for t in range(T):
        states.append(torch.tanh(x[:, t] @ W_ih.T + states[-1] @ W_hh.T + b))
    dW_ih, dW_hh, db = torch.zeros_like(W_ih), torch.zeros_like(W_hh), torch.zeros_like(b)
    carried = torch.zeros_like(h0)
    for t in reversed(range(T)):
        da = (dout[:, t] + carried) * (1 - states[t + 1] ** 2)
        dW_ih += da.T @ x[:, t]
        dW_hh += da.T @ states[t]
        db += da.sum(dim=0)
        carried = da @ W_hh
    return dW_ih, dW_hh, db, carried
""",
        # accumulates into the caller's dout in place
        """
def rnn_backward(x, h0, W_ih, W_hh, b, dout):
    T = x.shape[1]
    states = [h0]
    for t in range(T):
        states.append(torch.tanh(x[:, t] @ W_ih.T + states[-1] @ W_hh.T + b))
    dW_ih, dW_hh, db = torch.zeros_like(W_ih), torch.zeros_like(W_hh), torch.zeros_like(b)
    carried = torch.zeros_like(h0)
    for t in reversed(range(T)):
        dout[:, t] += carried
        da = dout[:, t] * (1 - states[t + 1] ** 2)
        dW_ih += da.T @ x[:, t]
        dW_hh += da.T @ states[t]
        db += da.sum(dim=0)
        carried = da @ W_hh
    return dW_ih, dW_hh, db, carried
""",
        # .squeeze() of the time slice: breaks at N = 1
        """
def rnn_backward(x, h0, W_ih, W_hh, b, dout):
    T = x.shape[1]
    states = [h0]
    for t in range(T):
        states.append(torch.tanh(x[:, t] @ W_ih.T + states[-1] @ W_hh.T + b))
    dW_ih, dW_hh, db = torch.zeros_like(W_ih), torch.zeros_like(W_hh), torch.zeros_like(b)
    carried = torch.zeros_like(h0)
    for t in reversed(range(T)):
        da = (dout[:, t].squeeze() + carried) * (1 - states[t + 1] ** 2)
        dW_ih += da.T @ x[:, t]
        dW_hh += da.T @ states[t]
        db += da.sum(dim=0)
        carried = da @ W_hh
    return dW_ih, dW_hh, db, carried
""",
    ],
}

# Kinds of wrong answer that once earned full marks (issue 47): each is rejected now, by the public
# test where the question's text lets it name the case, else by the hidden test (WRONG_HIDDEN).
WRONG_NEW["grad_norms"] += [
    # the gradients by backward(inputs=...): right norms, but .grad written into the states
    """
def grad_norms(hs, loss):
    loss.backward(inputs=hs, retain_graph=True)
    return torch.stack([torch.zeros((), dtype=h.dtype) if h.grad is None else h.grad.norm() for h in hs])
""",
]
WRONG_NEW["clip_by_global_norm"] += [
    # the sum of squares in the gradients' dtype: float32 gradients near 1e20 overflow to inf
    """
def clip_by_global_norm(grads, max_norm):
    total = torch.sqrt(sum(g.square().sum() for g in grads))
    if total <= max_norm:
        return [g.clone() for g in grads]
    return [g * (max_norm / total) for g in grads]
""",
]
WRONG_HIDDEN = {
    "clip_by_global_norm": [
        # the squares summed in float64: right in float32, overflows for float64 gradients near 1e200
        """
def clip_by_global_norm(grads, max_norm):
    total = math.sqrt(sum(g.double().square().sum().item() for g in grads))
    if total <= max_norm:
        return [g.clone() for g in grads]
    return [g * (max_norm / total) for g in grads]
""",
    ],
    "steps_below": [
        # a logarithm with a fudge term: right on the public cases, off at some powers of a rate
        """
def steps_below(rate, threshold):
    return math.floor(math.log(threshold) / math.log(rate) + 1e-9) + 1
""",
    ],
}
