"""Answers for the graded exercises of the lstm chapter, used by tests/test_exercises.py.

WRONG: plausible wrong answers per question; every test case must reject at least one.
DELEGATING: answers that hand the work to the implementation the question asks for; the
hidden tests must fail them (questions with nothing to delegate to are left out).
"""

WRONG = {
    "lstm_cell_step": [
        # gates taken in the order i, f, o, g
        """
def lstm_cell_step(x, h, c, W_ih, W_hh, b_ih, b_hh):
    z = x @ W_ih.T + b_ih + h @ W_hh.T + b_hh
    i, f, o, g = z.chunk(4, dim=-1)
    c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c_new), c_new
""",
        # h from the cell without the tanh
        """
def lstm_cell_step(x, h, c, W_ih, W_hh, b_ih, b_hh):
    z = x @ W_ih.T + b_ih + h @ W_hh.T + b_hh
    i, f, g, o = z.chunk(4, dim=-1)
    c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * c_new, c_new
""",
    ],
    "memory_bias": [
        # the usual forget-gate bias of 1: sigmoid(1) = 0.73 still forgets
        """
def memory_bias(E_h):
    bias = torch.zeros(4 * E_h)
    bias[E_h : 2 * E_h] = 1.0
    return bias
""",
        # forget gate open, but the input gate left at sigmoid(0) = 0.5
        """
def memory_bias(E_h):
    bias = torch.zeros(4 * E_h)
    bias[E_h : 2 * E_h] = 100.0
    return bias
""",
        # blocks swapped: input gate open, forget gate closed
        """
def memory_bias(E_h):
    bias = torch.zeros(4 * E_h)
    bias[:E_h] = 100.0
    bias[E_h : 2 * E_h] = -100.0
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
    ],
}

DELEGATING = {
    "lstm_cell_step": """
def lstm_cell_step(x, h, c, W_ih, W_hh, b_ih, b_hh, _cell=nn.LSTMCell):
    cell = _cell(W_ih.shape[1], W_hh.shape[1]).to(x.dtype)
    with torch.no_grad():
        for p, w in zip(cell.parameters(), (W_ih, W_hh, b_ih, b_hh)):
            p.copy_(w)
    return cell(x, (h, c))
""",
    "lstm_parameter_count": """
def lstm_parameter_count(E_in, E_h):
    return sum(p.numel() for p in nn.LSTM(E_in, E_h).parameters())
""",
}
