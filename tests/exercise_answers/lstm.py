"""Answers for the graded exercises of the lstm chapter, used by tests/test_exercises.py.

WRONG: plausible wrong answers per question; every test case must reject at least one.
DELEGATING: answers that hand the work to the implementation the question asks for; the
hidden tests must fail them (questions with nothing to delegate to are left out).
"""

WRONG = {
    "lstm_cell_step": [
        # the output gate looks at the old cell, like the other two
        """
def lstm_cell_step(x, h, c, W_ih, W_hh, b_ih, b_hh, p):
    z_i, z_f, z_g, z_o = (x @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=-1)
    i = torch.sigmoid(z_i + p[0] * c)
    f = torch.sigmoid(z_f + p[1] * c)
    c_new = f * c + i * torch.tanh(z_g)
    o = torch.sigmoid(z_o + p[2] * c)
    return o * torch.tanh(c_new), c_new
""",
        # no peephole on the output gate (the gates see the old cell only)
        """
def lstm_cell_step(x, h, c, W_ih, W_hh, b_ih, b_hh, p):
    z_i, z_f, z_g, z_o = (x @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=-1)
    i = torch.sigmoid(z_i + p[0] * c)
    f = torch.sigmoid(z_f + p[1] * c)
    c_new = f * c + i * torch.tanh(z_g)
    o = torch.sigmoid(z_o)
    return o * torch.tanh(c_new), c_new
""",
        # the peephole rows swapped: p_f into the input gate, p_i into the forget gate
        """
def lstm_cell_step(x, h, c, W_ih, W_hh, b_ih, b_hh, p):
    z_i, z_f, z_g, z_o = (x @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=-1)
    i = torch.sigmoid(z_i + p[1] * c)
    f = torch.sigmoid(z_f + p[0] * c)
    c_new = f * c + i * torch.tanh(z_g)
    o = torch.sigmoid(z_o + p[2] * c_new)
    return o * torch.tanh(c_new), c_new
""",
        # the peephole added after the sigmoid
        """
def lstm_cell_step(x, h, c, W_ih, W_hh, b_ih, b_hh, p):
    z_i, z_f, z_g, z_o = (x @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=-1)
    i = torch.sigmoid(z_i) + p[0] * c
    f = torch.sigmoid(z_f) + p[1] * c
    c_new = f * c + i * torch.tanh(z_g)
    o = torch.sigmoid(z_o + p[2] * c_new)
    return o * torch.tanh(c_new), c_new
""",
        # one peephole vector, p_i, for every gate
        """
def lstm_cell_step(x, h, c, W_ih, W_hh, b_ih, b_hh, p):
    z_i, z_f, z_g, z_o = (x @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=-1)
    i = torch.sigmoid(z_i + p[0] * c)
    f = torch.sigmoid(z_f + p[0] * c)
    c_new = f * c + i * torch.tanh(z_g)
    o = torch.sigmoid(z_o + p[0] * c_new)
    return o * torch.tanh(c_new), c_new
""",
        # gates taken in the order i, f, o, g
        """
def lstm_cell_step(x, h, c, W_ih, W_hh, b_ih, b_hh, p):
    z_i, z_f, z_o, z_g = (x @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=-1)
    i = torch.sigmoid(z_i + p[0] * c)
    f = torch.sigmoid(z_f + p[1] * c)
    c_new = f * c + i * torch.tanh(z_g)
    o = torch.sigmoid(z_o + p[2] * c_new)
    return o * torch.tanh(c_new), c_new
""",
        # the weights used untransposed (as if W_ih were (E_in, 4E_h))
        """
def lstm_cell_step(x, h, c, W_ih, W_hh, b_ih, b_hh, p):
    z_i, z_f, z_g, z_o = (x @ W_ih + b_ih + h @ W_hh + b_hh).chunk(4, dim=-1)
    i = torch.sigmoid(z_i + p[0] * c)
    f = torch.sigmoid(z_f + p[1] * c)
    c_new = f * c + i * torch.tanh(z_g)
    o = torch.sigmoid(z_o + p[2] * c_new)
    return o * torch.tanh(c_new), c_new
""",
    ],
    "memory_bias": [
        # the usual forget-gate bias of 1: sigmoid(1) = 0.73 still forgets
        """
def memory_bias(E_h, dtype=torch.float32):
    bias = torch.zeros(4 * E_h, dtype=dtype)
    bias[E_h : 2 * E_h] = 1.0
    return bias
""",
        # forget gate open, but the input gate left at sigmoid(0) = 0.5
        """
def memory_bias(E_h, dtype=torch.float32):
    bias = torch.zeros(4 * E_h, dtype=dtype)
    bias[E_h : 2 * E_h] = 1000.0
    return bias
""",
        # blocks swapped: input gate open, forget gate closed
        """
def memory_bias(E_h, dtype=torch.float32):
    bias = torch.zeros(4 * E_h, dtype=dtype)
    bias[:E_h] = 1000.0
    bias[E_h : 2 * E_h] = -1000.0
    return bias
""",
        # +-20: sigmoid(20) rounds to 1 in float32, but sigmoid(-20) = 2e-9 still writes into an
        # empty cell entry
        """
def memory_bias(E_h, dtype=torch.float32):
    bias = torch.zeros(4 * E_h, dtype=dtype)
    bias[:E_h] = -20.0
    bias[E_h : 2 * E_h] = 20.0
    return bias
""",
        # the page's float32 recipe +-100: in float64 sigmoid(-100) = 3.7e-44 is no 0
        """
def memory_bias(E_h, dtype=torch.float32):
    bias = torch.zeros(4 * E_h, dtype=dtype)
    bias[:E_h] = -100.0
    bias[E_h : 2 * E_h] = 100.0
    return bias
""",
        # right values, but always float64 (the dtype asked for ignored)
        """
def memory_bias(E_h, dtype=torch.float32):
    bias = torch.zeros(4 * E_h, dtype=torch.float64)
    bias[:E_h] = -1000.0
    bias[E_h : 2 * E_h] = 1000.0
    return bias
""",
        # right values, but always float32
        """
def memory_bias(E_h, dtype=torch.float32):
    bias = torch.zeros(4 * E_h)
    bias[:E_h] = -1000.0
    bias[E_h : 2 * E_h] = 1000.0
    return bias
""",
    ],
    "lstm_parameter_count": [
        # one bias vector instead of two
        """
def lstm_parameter_count(E_in, E_h):
    return 4 * (E_h * E_in + E_h * E_h + E_h)
""",
        # three gates' worth of weights
        """
def lstm_parameter_count(E_in, E_h):
    return 3 * (E_h * E_in + E_h * E_h + 2 * E_h)
""",
        # the count of nn.LSTM(3, 5) hard-coded
        """
def lstm_parameter_count(E_in, E_h):
    return 200
""",
        # input and hidden widths swapped
        """
def lstm_parameter_count(E_in, E_h):
    return 4 * (E_in * E_h + E_in * E_in + 2 * E_in)
""",
        # W_hh taken as (4E_h, E_in)
        """
def lstm_parameter_count(E_in, E_h):
    return 4 * (2 * E_h * E_in + 2 * E_h)
""",
    ],
    "cell_path_gradient": [
        # the last forget gate only
        """
def cell_path_gradient(f):
    return f[-1]
""",
        # summed instead of multiplied
        """
def cell_path_gradient(f):
    return f.sum(dim=0)
""",
        # the product over units instead of over steps
        """
def cell_path_gradient(f):
    return f.prod(dim=1)
""",
        # the expected values of the first check hard-coded
        """
def cell_path_gradient(f):
    return torch.tensor([0.25, 0.9])
""",
        # one step short: the first forget gate left out
        """
def cell_path_gradient(f):
    return f[1:].prod(dim=0)
""",
    ],
    "half_life_steps": [
        # floor without the + 1
        """
import math


def half_life_steps(b_f):
    f = 1 / (1 + math.exp(-b_f))
    return int(math.log(0.5) / math.log(f))
""",
        # tanh instead of the sigmoid for the gate
        """
import math


def half_life_steps(b_f):
    f = math.tanh(b_f)
    return math.floor(math.log(0.5) / math.log(f)) + 1
""",
        # the gate taken as sigmoid(-b_f)
        """
import math


def half_life_steps(b_f):
    f = 1 / (1 + math.exp(b_f))
    return math.floor(math.log(0.5) / math.log(f)) + 1
""",
        # the answer at b_f = 2 hard-coded
        """
def half_life_steps(b_f):
    return 6
""",
        # the ceiling: f**n == 1/2 exactly (b_f = 0) counted as below
        """
import math


def half_life_steps(b_f):
    f = 1 / (1 + math.exp(-b_f))
    return math.ceil(math.log(0.5) / math.log(f))
""",
    ],
    "lstm_padded": [
        # the lengths ignored: the padding is read as input
        """
def lstm_padded(x, lengths, W_ih, W_hh, b_ih, b_hh):
    h = x.new_zeros(x.shape[0], W_hh.shape[1])
    c = torch.zeros_like(h)
    out = []
    for t in range(x.shape[1]):
        i, f, g, o = (x[:, t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        out.append(h)
    return torch.stack(out, dim=1), h, c
""",
        # the padded steps masked by multiplication: NaN * 0 is NaN
        """
def lstm_padded(x, lengths, W_ih, W_hh, b_ih, b_hh):
    h = x.new_zeros(x.shape[0], W_hh.shape[1])
    c = torch.zeros_like(h)
    alive = (torch.arange(x.shape[1])[None, :] < torch.tensor(lengths)[:, None]).to(x.dtype)
    out = []
    for t in range(x.shape[1]):
        i, f, g, o = (x[:, t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=-1)
        c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h_new = torch.sigmoid(o) * torch.tanh(c_new)
        m = alive[:, t, None]
        h, c = m * h_new + (1 - m) * h, m * c_new + (1 - m) * c
        out.append(m * h_new)
    return torch.stack(out, dim=1), h, c
""",
        # the state held at padded steps, but out repeats it there instead of 0
        """
def lstm_padded(x, lengths, W_ih, W_hh, b_ih, b_hh):
    h = x.new_zeros(x.shape[0], W_hh.shape[1])
    c = torch.zeros_like(h)
    alive = torch.arange(x.shape[1])[None, :] < torch.tensor(lengths)[:, None]
    out = []
    for t in range(x.shape[1]):
        i, f, g, o = (x[:, t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=-1)
        c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h_new = torch.sigmoid(o) * torch.tanh(c_new)
        h = torch.where(alive[:, t, None], h_new, h)
        c = torch.where(alive[:, t, None], c_new, c)
        out.append(h)
    return torch.stack(out, dim=1), h, c
""",
        # one step too many: a sequence of length L also reads its first padded step
        """
def lstm_padded(x, lengths, W_ih, W_hh, b_ih, b_hh):
    h = x.new_zeros(x.shape[0], W_hh.shape[1])
    c = torch.zeros_like(h)
    alive = torch.arange(x.shape[1])[None, :] <= torch.tensor(lengths)[:, None]
    out = []
    for t in range(x.shape[1]):
        i, f, g, o = (x[:, t].nan_to_num() @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=-1)
        c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h_new = torch.sigmoid(o) * torch.tanh(c_new)
        h = torch.where(alive[:, t, None], h_new, h)
        c = torch.where(alive[:, t, None], c_new, c)
        out.append(torch.where(alive[:, t, None], h_new, torch.zeros_like(h_new)))
    return torch.stack(out, dim=1), h, c
""",
        # padding zeroed and out right, but h_n and c_n read at the last step T, not at the length
        """
def lstm_padded(x, lengths, W_ih, W_hh, b_ih, b_hh):
    h = x.new_zeros(x.shape[0], W_hh.shape[1])
    c = torch.zeros_like(h)
    alive = torch.arange(x.shape[1])[None, :] < torch.tensor(lengths)[:, None]
    out = []
    for t in range(x.shape[1]):
        i, f, g, o = (x[:, t].nan_to_num() @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        out.append(torch.where(alive[:, t, None], h, torch.zeros_like(h)))
    return torch.stack(out, dim=1), h, c
""",
    ],
}

DELEGATING = {
    "lstm_padded": """
def lstm_padded(x, lengths, W_ih, W_hh, b_ih, b_hh, _lstm=nn.LSTM):
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    alive = torch.arange(x.shape[1])[None, :] < torch.tensor(lengths)[:, None]
    x = torch.where(alive[:, :, None], x, torch.zeros_like(x))
    layer = _lstm(W_ih.shape[1], W_hh.shape[1], batch_first=True, dtype=x.dtype)
    weights = {"weight_ih_l0": W_ih, "weight_hh_l0": W_hh, "bias_ih_l0": b_ih, "bias_hh_l0": b_hh}
    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    out, (h_n, c_n) = torch.func.functional_call(layer, weights, (packed,))
    out, _ = pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
    return out, h_n[0], c_n[0]
""",
    "lstm_cell_step": """
def lstm_cell_step(x, h, c, W_ih, W_hh, b_ih, b_hh, p, _cell=nn.LSTMCell):
    # the peepholes as extra inputs of nn.LSTMCell, as the grader's own step does
    E_h = W_hh.shape[1]
    zero = torch.zeros(E_h, E_h, dtype=x.dtype)
    W = torch.cat([W_ih, torch.cat([p[0].diag(), p[1].diag(), zero, zero]),
                   torch.cat([zero, zero, zero, p[2].diag()])], dim=1)
    cell = _cell(W.shape[1], E_h, dtype=x.dtype)
    weights = {"weight_ih": W, "weight_hh": W_hh, "bias_ih": b_ih, "bias_hh": b_hh}
    _, c_new = torch.func.functional_call(cell, weights, (torch.cat([x, c, 0 * c], dim=1), (h, c)))
    return torch.func.functional_call(cell, weights, (torch.cat([x, c, c_new], dim=1), (h, c)))
""",
    "lstm_parameter_count": """
def lstm_parameter_count(E_in, E_h):
    return sum(p.numel() for p in nn.LSTM(E_in, E_h).parameters())
""",
}

# Plausible wrong answers of the kinds that got past the earlier tests (inputs changed in place,
# broken gradients, delegation, .squeeze() at size 1, the named edge cases, types, float64 from
# float32), written before the tests were strengthened: every one must fail a test case, and a
# public one unless it only delegates (tests/test_exercises.py).
WRONG_NEW = {
    "lstm_cell_step": [
        # delegates to PyTorch's own cell kernel, the peepholes left out
        """
def lstm_cell_step(x, h, c, W_ih, W_hh, b_ih, b_hh, p):
    return torch.lstm_cell(x, (h, c), W_ih, W_hh, b_ih, b_hh)
""",
        # the gates under no_grad: nothing reaches the weights
        """
def lstm_cell_step(x, h, c, W_ih, W_hh, b_ih, b_hh, p):
    with torch.no_grad():
        z = x @ W_ih.T + b_ih + h @ W_hh.T + b_hh
    z_i, z_f, z_g, z_o = z.chunk(4, dim=-1)
    c_new = torch.sigmoid(z_f + p[1] * c) * c + torch.sigmoid(z_i + p[0] * c) * torch.tanh(z_g)
    return torch.sigmoid(z_o + p[2] * c_new) * torch.tanh(c_new), c_new
""",
        # updates the caller's c in place
        """
def lstm_cell_step(x, h, c, W_ih, W_hh, b_ih, b_hh, p):
    z_i, z_f, z_g, z_o = (x @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=-1)
    i, f = torch.sigmoid(z_i + p[0] * c), torch.sigmoid(z_f + p[1] * c)
    c.mul_(f).add_(i * torch.tanh(z_g))
    return torch.sigmoid(z_o + p[2] * c) * torch.tanh(c), c.clone()
""",
        # .squeeze() of the input: breaks at E_in = 1
        """
def lstm_cell_step(x, h, c, W_ih, W_hh, b_ih, b_hh, p):
    z_i, z_f, z_g, z_o = (x.squeeze() @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=-1)
    c_new = torch.sigmoid(z_f + p[1] * c) * c + torch.sigmoid(z_i + p[0] * c) * torch.tanh(z_g)
    return torch.sigmoid(z_o + p[2] * c_new) * torch.tanh(c_new), c_new
""",
        # the peepholes detached ("fixed weights"): no gradient reaches p
        """
def lstm_cell_step(x, h, c, W_ih, W_hh, b_ih, b_hh, p):
    z_i, z_f, z_g, z_o = (x @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=-1)
    p_i, p_f, p_o = p.detach()
    c_new = torch.sigmoid(z_f + p_f * c) * c + torch.sigmoid(z_i + p_i * c) * torch.tanh(z_g)
    return torch.sigmoid(z_o + p_o * c_new) * torch.tanh(c_new), c_new
""",
    ],
    "lstm_parameter_count": [
        # a float
        """
def lstm_parameter_count(E_in, E_h):
    return 4.0 * (E_h * E_in + E_h * E_h + 2 * E_h)
""",
        # one bias vector only
        """
def lstm_parameter_count(E_in, E_h):
    return 4 * (E_h * E_in + E_h * E_h + E_h)
""",
        # builds the module the question says not to build
        """
def lstm_parameter_count(E_in, E_h):
    return sum(p.numel() for p in nn.LSTM(E_in, E_h).parameters())
""",
    ],
    "cell_path_gradient": [
        # float64 from float32
        """
def cell_path_gradient(f):
    return f.double().prod(dim=0)
""",
        # multiplies the caller's tensor in place
        """
def cell_path_gradient(f):
    for s in range(1, f.shape[0]):
        f[s] *= f[s - 1]
    return f[-1].clone()
""",
        # .squeeze(): a scalar when E_h = 1
        """
def cell_path_gradient(f):
    return f.prod(dim=0).squeeze()
""",
    ],
    "half_life_steps": [
        # a float
        """
def half_life_steps(b_f):
    f = 1 / (1 + math.exp(-b_f))
    return float(math.floor(math.log(0.5) / math.log(f)) + 1)
""",
        # ceil: one short at b_f = 0, where f ** 1 equals 1/2 exactly
        """
def half_life_steps(b_f):
    f = 1 / (1 + math.exp(-b_f))
    return math.ceil(math.log(0.5) / math.log(f))
""",
        # a tensor
        """
def half_life_steps(b_f):
    f = torch.sigmoid(torch.tensor(b_f))
    return torch.floor(torch.log(torch.tensor(0.5)) / torch.log(f)).int() + 1
""",
    ],
    "lstm_padded": [
        # zeroes the caller's padding in place
        """
def lstm_padded(x, lengths, W_ih, W_hh, b_ih, b_hh):
    N, T, _ = x.shape
    for n, length in enumerate(lengths):
        x[n, length:] = 0.0
    h = x.new_zeros(N, W_hh.shape[1])
    c = x.new_zeros(N, W_hh.shape[1])
    alive = torch.arange(T)[None, :] < torch.as_tensor(lengths)[:, None]
    out = []
    for t in range(T):
        i, f, g, o = (x[:, t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=-1)
        c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h_new = torch.sigmoid(o) * torch.tanh(c_new)
        keep = alive[:, t, None]
        h, c = torch.where(keep, h_new, h), torch.where(keep, c_new, c)
        out.append(torch.where(keep, h_new, torch.zeros_like(h_new)))
    return torch.stack(out, dim=1), h, c
""",
        # a loop over the sequences, not over time
        """
def lstm_padded(x, lengths, W_ih, W_hh, b_ih, b_hh):
    N, T, _ = x.shape
    E_h = W_hh.shape[1]
    outs, hs, cs = [], [], []
    for n in range(N):
        h, c = x.new_zeros(1, E_h), x.new_zeros(1, E_h)
        out = x.new_zeros(T, E_h)
        for t in range(lengths[n]):
            i, f, g, o = (x[n, t][None] @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=-1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            out[t] = h[0]
        outs.append(out)
        hs.append(h[0])
        cs.append(c[0])
    return torch.stack(outs), torch.stack(hs), torch.stack(cs)
""",
        # where after the cell: the padding's NaN reaches the weight gradients
        """
def lstm_padded(x, lengths, W_ih, W_hh, b_ih, b_hh):
    N, T, _ = x.shape
    h = x.new_zeros(N, W_hh.shape[1])
    c = x.new_zeros(N, W_hh.shape[1])
    alive = torch.arange(T)[None, :] < torch.as_tensor(lengths)[:, None]
    out = []
    for t in range(T):
        i, f, g, o = (x[:, t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=-1)
        c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h_new = torch.sigmoid(o) * torch.tanh(c_new)
        keep = alive[:, t, None]
        h, c = torch.where(keep, h_new, h), torch.where(keep, c_new, c)
        out.append(torch.where(keep, h_new, torch.zeros_like(h_new)))
    return torch.stack(out, dim=1), h, c
""",
        # .squeeze() of the time slice: breaks at E_in = 1
        """
def lstm_padded(x, lengths, W_ih, W_hh, b_ih, b_hh):
    N, T, _ = x.shape
    alive = torch.arange(T)[None, :] < torch.as_tensor(lengths)[:, None]
    x = torch.where(alive[:, :, None], x, torch.zeros_like(x))
    h = x.new_zeros(N, W_hh.shape[1])
    c = x.new_zeros(N, W_hh.shape[1])
    out = []
    for t in range(T):
        i, f, g, o = (x[:, t].squeeze() @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=-1)
        c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h_new = torch.sigmoid(o) * torch.tanh(c_new)
        keep = alive[:, t, None]
        h, c = torch.where(keep, h_new, h), torch.where(keep, c_new, c)
        out.append(torch.where(keep, h_new, torch.zeros_like(h_new)))
    return torch.stack(out, dim=1), h, c
""",
    ],
}

# Kinds of wrong answer that once earned full marks (issue 47), rejected by the public test now.
WRONG_NEW["lstm_parameter_count"] += [
    # nn.LSTM built through its base class, which is not on the question's list
    """
def lstm_parameter_count(E_in, E_h):
    return sum(p.numel() for p in nn.RNNBase("LSTM", E_in, E_h).parameters())
""",
]
WRONG_NEW["half_life_steps"] += [
    # the gate in float32 where the question says Python floats: off by a step at b_f = 6.65
    """
def half_life_steps(b_f):
    f = torch.sigmoid(torch.tensor(float(b_f))).item()
    n = 1
    while f**n >= 0.5:
        n += 1
    return n
""",
]
WRONG_HIDDEN = {}
