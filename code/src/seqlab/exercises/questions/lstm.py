"""The graded questions of the chapter lstm (chapters/lstm.ipynb)."""

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from seqlab.exercises import count_torch_calls
from seqlab.exercises.harness import Question

LSTM_FORBIDDEN = ("torch.nn.LSTMCell", "torch.nn.LSTM", "torch.lstm_cell", "torch.lstm", "seqlab.lstm.LSTM")


def lstm_cell_oracle(x, h, c, W_ih, W_hh, b_ih, b_hh, p):
    """The peephole step from two calls of nn.LSTMCell: a peephole is a diagonal weight from a cell
    to a gate, so the cells become extra inputs whose weights are diag(p_i), diag(p_f) (the old
    cell, into i and f) and diag(p_o) (the new cell, into o). The first call gives c_t (o does not
    reach it); the second, fed c_t as well, gives the same c_t and h_t = o * tanh(c_t)."""
    E_h = W_hh.shape[1]
    zero = torch.zeros(E_h, E_h, dtype=x.dtype)
    p_i, p_f, p_o = (torch.diag(row) for row in p)
    # the weights of the input [x, c_(t-1), c_t], blocks i, f, g, o
    W = torch.cat(
        [
            W_ih,
            torch.cat([p_i, p_f, zero, zero]),
            torch.cat([zero, zero, zero, p_o]),
        ],
        dim=1,
    )
    cell = nn.LSTMCell(W.shape[1], E_h, dtype=x.dtype)

    def step(c_new):
        weights = {"weight_ih": W, "weight_hh": W_hh, "bias_ih": b_ih, "bias_hh": b_hh}
        return torch.func.functional_call(cell, weights, (torch.cat([x, c, c_new], dim=1), (h, c)))

    _, c_new = step(torch.zeros_like(c))  # the o block alone reads the last input
    return step(c_new)


def lstm_cell_draw(d):
    N, E_in, E_h = d.sizes(3)  # distinct: a transposed weight cannot fit; each is 1 in one draw
    return (d.randn(N, E_in), d.randn(N, E_h), d.randn(N, E_h), d.randn(4 * E_h, E_in, scale=0.5),
            d.randn(4 * E_h, E_h, scale=0.5), d.randn(4 * E_h), d.randn(4 * E_h),
            d.randn(3, E_h))  # fmt: skip


LSTM_CELL_STEP = Question(
    "lstm_cell_step",
    oracle=lstm_cell_oracle,
    draw=lstm_cell_draw,
    grad=(0, 1, 2, 3, 4, 5, 6, 7),
    forbidden=LSTM_FORBIDDEN,
)


def cell_after(bias, steps, seed, scale=1.0):
    """The cell state of a zero-weight nn.LSTM with bias_ih = bias after `steps` steps, and c0."""
    E_h = bias.shape[0] // 4
    _ = torch.manual_seed(seed)
    layer = nn.LSTM(2, E_h, batch_first=True).to(bias.dtype)
    with torch.no_grad():
        for p in layer.parameters():
            p.zero_()
        layer.bias_ih_l0.copy_(bias)
        layer.bias_hh_l0[2 * E_h : 3 * E_h] = 1.0  # something to write
    c0 = scale * torch.randn(1, 3, E_h, dtype=bias.dtype)
    c0[0, 0, 0] = 0.0  # an empty cell entry must stay exactly 0
    c0[0, 1, 0] = torch.finfo(bias.dtype).tiny  # the smallest normal number of the dtype
    x = scale * torch.randn(3, steps, 2, dtype=bias.dtype)
    _, (_, c_last) = layer(x, (scale * torch.randn_like(c0), c0))
    return c_last, c0


def memory_judge(bias, args, where, steps=200, scale=1.0):
    E_h, dtype = args
    if not isinstance(bias, torch.Tensor) or bias.shape != (4 * E_h,) or bias.dtype != dtype:
        raise AssertionError(f"{where} should be a tensor of shape ({4 * E_h},) and dtype {dtype}")
    c_last, c0 = cell_after(bias, steps, E_h, scale)
    changed = c_last != c0
    if changed.any():
        among = " (among them the entry that started at exactly 0)" if changed[0, 0, 0] else ""
        raise AssertionError(
            f"{where}: the cell changed at {int(changed.sum())} of {c0.numel()} entries{among}"
        )


MEMORY_BIAS = Question(
    "memory_bias",
    oracle=None,
    judge=memory_judge,
    draw=lambda d: (d.sizes(1)[0], d.dtype),  # float32 and float64 draws; E_h = 1 in the first
    arg_names=("E_h", "dtype"),
    draws=(4, 4),  # the hidden test: the same draws, longer and with larger inputs
    bounds={"E_h": (1, None)},
)

LSTM_PARAMETER_COUNT = Question(
    "lstm_parameter_count",
    oracle=lambda E_in, E_h: sum(p.numel() for p in nn.LSTM(E_in, E_h).parameters()),
    draw=lambda d: tuple(d.sizes(2, high=9)),  # E_in != E_h: swapping them gives another count
    arg_names=("E_in", "E_h"),
    edges={"E_in = E_h = 1": lambda: (1, 1)},
    forbidden=("seqlab.lstm.LSTM", "torch.nn.LSTMCell", "torch.nn.LSTM"),
    bounds={"E_in": (1, None), "E_h": (1, None)},
)


def cell_path_oracle(f):
    """d c_t / d c_(t-k) by autograd through the cell updates c_s = f_s c_(s-1) + (a constant)."""
    c0 = torch.zeros(f.shape[1], dtype=f.dtype, requires_grad=True)
    c = c0
    for f_s in f:
        c = f_s.detach() * c + 1.0
    return torch.autograd.grad(c.sum(), c0)[0]


CELL_PATH_GRADIENT = Question(
    "cell_path_gradient",
    oracle=cell_path_oracle,
    draw=lambda d: (d.rand(*d.sizes(2)),),
    arg_names=("f",),
    edges={"one step": lambda: (torch.tensor([[0.3, 0.7, 0.99]], dtype=torch.float64),)},
    bounds={"f": (0.0, 1.0)},
)

# b_f: the answer (the public test knows answers, not the formula: the hidden test's oracle)
HALF_LIFE_KNOWN = [((2.0,), 6), ((4.0,), 39), ((0.7,), 2)]
HALF_LIFE_STEPS = Question(
    "half_life_steps",
    oracle=None,
    draw=lambda d: HALF_LIFE_KNOWN[d.index % 3],
    arg_names=("b_f",),
    draws=(3, 3),
    edges={
        "b_f = 0: f = 1/2 exactly": lambda: ((0.0,), 2),
        # float32's sigmoid is off by 6e-8 here: enough to change the count
        "b_f = 6.65, f and its powers as Python floats": lambda: ((6.65,), 536),
    },
    bounds={"b_f": (0.0, 8.0)},
)


def lstm_padded_oracle(x, lengths, W_ih, W_hh, b_ih, b_hh):
    """nn.LSTM with the given weights on the packed batch (its padding zeroed first)."""
    padding = torch.arange(x.shape[1])[None, :, None] >= torch.tensor(lengths)[:, None, None]
    x = x.masked_fill(padding, 0.0)
    layer = nn.LSTM(W_ih.shape[1], W_hh.shape[1], batch_first=True, dtype=x.dtype)
    weights = {"weight_ih_l0": W_ih, "weight_hh_l0": W_hh, "bias_ih_l0": b_ih, "bias_hh_l0": b_hh}
    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    out, (h_n, c_n) = torch.func.functional_call(layer, weights, (packed,))
    out, _ = pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
    return out, h_n[0], c_n[0]


def lstm_padded_draw(d):
    N, T, E_in, E_h = d.sizes(4)
    lengths = [d.integer(1, T) for _ in range(N)]
    x = d.randn(N, T, E_in)
    for n, length in enumerate(lengths):
        x[n, length:] = float("nan") if n % 2 else float("inf")  # the padding
    return (x, lengths, d.randn(4 * E_h, E_in, scale=0.5), d.randn(4 * E_h, E_h, scale=0.5),
            d.randn(4 * E_h), d.randn(4 * E_h))  # fmt: skip


def loops_over_time(answer, public):
    """One loop over time, not one over the sequences: the work does not grow with N."""
    generator = torch.Generator().manual_seed(0)
    weights = [torch.randn(8, 3, generator=generator), torch.randn(8, 2, generator=generator),
               torch.randn(8, generator=generator), torch.randn(8, generator=generator)]  # fmt: skip
    sizes = (2, 6) if public else (1, 5)
    calls = [
        count_torch_calls(lambda N=N: answer(torch.randn(N, 4, 3, generator=generator), [4] * N, *weights))
        for N in sizes
    ]
    if calls[0] != calls[1]:
        raise AssertionError("lstm_padded does more work for more sequences: loop over time, not over them")


LSTM_PADDED = Question(
    "lstm_padded",
    oracle=lstm_padded_oracle,
    draw=lstm_padded_draw,
    grad=(0, 2, 3, 4, 5),
    draws=(5, 20),  # each draw runs two LSTMs and their backward passes: grading stays fast
    forbidden=(*LSTM_FORBIDDEN, "torch.nn.utils.rnn.pack_padded_sequence"),
    extra=loops_over_time,
    # "lengths is a list of ints between 1 and T"
    bounds={
        "lengths": (1, None),
        "max(lengths) - T": (None, 0, lambda x, lengths, *_: max(lengths) - x.shape[1]),
    },
)

QUESTIONS = (
    LSTM_CELL_STEP,
    MEMORY_BIAS,
    LSTM_PARAMETER_COUNT,
    CELL_PATH_GRADIENT,
    HALF_LIFE_STEPS,
    LSTM_PADDED,
)
