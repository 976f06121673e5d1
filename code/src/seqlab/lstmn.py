"""The LSTMN (Cheng, Dong & Lapata, 2016): an LSTM that attends over all its past states.

An LSTM keeps one hidden state and one cell and updates them from the previous step only (a
Markov update). The LSTMN keeps every past state on two tapes, the hidden tape
H = (h_0, ..., h_{t-1}) and the memory tape C = (c_0, ..., c_{t-1}), and at every step reads a
summary of them chosen by attention.

One index convention throughout: the inputs are x_1 .. x_T; tape entry 0 is the initial state
(h_0, c_0) and entry i the state after reading x_i. Step t reads x_t and entries 0 .. t-1, and
writes entry t::

    a_i^t = v^T tanh(W_h h_i + W_x x_t + W_h~ h~_{t-1})   for i = 0 .. t-1
    s^t   = softmax(a^t)                                   # over the past only
    h~_t  = sum_i s_i^t h_i ,   c~_t = sum_i s_i^t c_i     # adaptive summaries of the tapes
    then the LSTM step, with h~_t and c~_t in place of h_{t-1} and c_{t-1}:
    z = W_ih x_t + b_ih + W_hh h~_t + b_hh                 # gates i | f | g | o, as nn.LSTM
    c_t = f * c~_t + i * g ,   h_t = o * tanh(c_t)

In code (0-based), x_t is ``x[:, t - 1]`` and h_t is ``out[:, t - 1]``. If the attention put all
its weight on the newest entry (h~_t = h_{t-1}, c~_t = c_{t-1}) this is exactly an LSTM;
``attention="last"`` builds that case, and the tests check it against ``seqlab.lstm.LSTM``. The
gate weights have ``nn.LSTM``'s layout.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from .checks import check_choice, check_int
from .lstm import lstm_cell
from .rnn import check_sequence, check_state, init_recurrent_parameters, reset_recurrent_parameters

__all__ = ["LSTMN"]


class LSTMN(nn.Module):
    """A single-layer LSTMN over a batch-first sequence; ``attention_size`` A (default E_h)."""

    def __init__(self, input_size: int, hidden_size: int, attention_size: int | None = None) -> None:
        super().__init__()
        # the LSTM part, as one layer of nn.LSTM (gates i, f, g, o stacked in 4 E_h rows); checks the sizes
        init_recurrent_parameters(self, input_size, hidden_size, gates=4, bias=True, reset=False)
        a = hidden_size if attention_size is None else check_int("attention_size", attention_size)
        self.attention_size = a
        # the intra-attention: a_i^t = v^T tanh(W_h h_i + W_x x_t + W_h~ h~_{t-1})
        self.attn_h = nn.Linear(hidden_size, a, bias=False)  # W_h: (A, E_h)
        self.attn_x = nn.Linear(input_size, a)  # W_x: (A, E_in), and the score's one bias (A,)
        self.attn_s = nn.Linear(hidden_size, a, bias=False)  # W_h~: (A, E_h), reads h~_{t-1}
        self.attn_v = nn.Linear(a, 1, bias=False)  # v^T: (1, A)
        reset_recurrent_parameters(self)  # drawn after the attention's weights

    def forward(
        self, x: torch.Tensor, lengths: torch.Tensor | None = None, state=None, attention: str = "learned"
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor], torch.Tensor]:
        """``x`` (N, T, E_in) right-padded to ``lengths`` (N,), ``state`` (h_0, c_0) each (N, E_h) or
        None; ``attention="last"`` makes it an LSTM. Returns h_1 .. h_T (N, T, E_h), the state at
        each sequence's end (N, E_h) and the weights (N, T, T): ``[:, t - 1, i]`` is s_i^t, 0 for i >= t."""
        h0, c0, lengths = self._check_inputs(x, lengths, state, attention)
        gates_x = x @ self.weight_ih.T + self.bias_ih + self.bias_hh  # W_ih x_t + b, every t: (N, T, 4E_h)
        query_x = self.attn_x(x)  # W_x x_t (+ bias), every t: (N, T, A)
        hidden_tape, memory_tape = [h0], [c0]  # entry 0: the initial state
        key_tape = [self.attn_h(h0)]  # W_h h_i, once per entry: (N, A) each
        h_sum, rows = h0, []  # h~_0, read by step 1
        for t in range(1, x.shape[1] + 1):  # x_t is x[:, t - 1]; entries 0..t-1
            s = self._weights(query_x[:, t - 1], h_sum, key_tape, attention)  # s^t: (N, t)
            h_sum = (s[:, None] @ torch.stack(hidden_tape, dim=1)).squeeze(1)  # h~_t: (N, E_h)
            c_sum = (s[:, None] @ torch.stack(memory_tape, dim=1)).squeeze(1)  # c~_t: (N, E_h)
            z = gates_x[:, t - 1] + h_sum @ self.weight_hh.T  # pre-activations of i, f, g, o
            new = lstm_cell(z, c_sum)  # the LSTM step on h~_t and c~_t: gates, c_t and h_t
            hidden_tape.append(new.h)  # (h_t, c_t) become tape entry t
            memory_tape.append(new.c)
            key_tape.append(self.attn_h(new.h))
            rows.append(F.pad(s, (0, x.shape[1] - t)))  # s^t, zeros beyond: (N, T)
        return self._outputs(hidden_tape, memory_tape, rows, lengths)

    def _weights(
        self, query_x: torch.Tensor, h_sum: torch.Tensor, key_tape: list[torch.Tensor], attention: str
    ) -> torch.Tensor:
        """s^t (N, t) = softmax_i(a_i^t) from ``query_x`` = W_x x_t (N, A), ``h_sum`` = h~_{t-1} and
        ``key_tape`` = [W_h h_i]; with ``attention="last"``, one-hot on entry t - 1 (an LSTM)."""
        t = len(key_tape)
        if attention == "last":
            newest = torch.full((query_x.shape[0],), t - 1, dtype=torch.long, device=query_x.device)
            return F.one_hot(newest, t).to(query_x.dtype)
        query = query_x + self.attn_s(h_sum)  # W_x x_t + W_h~ h~_{t-1}: (N, A)
        a = self.attn_v(torch.tanh(torch.stack(key_tape, dim=1) + query[:, None]))  # a^t: (N, t, 1)
        return a.squeeze(-1).softmax(dim=-1)

    @staticmethod
    def _outputs(hidden_tape, memory_tape, rows, lengths):
        """h_1 .. h_T (N, T, E_h), the state at each sequence's last real step, the weights."""
        out = torch.stack(hidden_tape[1:], dim=1)  # h_1 .. h_T: (N, T, E_h)
        cells = torch.stack(memory_tape[1:], dim=1)  # c_1 .. c_T
        if lengths is None:
            lengths = torch.full((out.shape[0],), out.shape[1], dtype=torch.long, device=out.device)
        batch = torch.arange(out.shape[0], device=out.device)
        last = (out[batch, lengths - 1], cells[batch, lengths - 1])
        return out, last, torch.stack(rows, dim=1)

    def _check_inputs(self, x, lengths, state, attention):
        check_sequence(x, self.input_size, self.weight_ih)
        check_choice("attention", attention, ("learned", "last"))
        n, steps, _ = x.shape
        if lengths is not None:
            lengths = torch.as_tensor(lengths, device=x.device)
            if lengths.is_floating_point() or lengths.dtype == torch.bool or lengths.is_complex():
                raise TypeError(f"lengths must hold integers, got dtype {lengths.dtype}")
            if lengths.shape != (n,) or (lengths < 1).any() or (lengths > steps).any():
                raise ValueError(
                    f"lengths must be (N,) = ({n},) with values in 1..{steps}, "
                    f"got shape {tuple(lengths.shape)}: {lengths.tolist()}"
                )
        if state is not None and not (isinstance(state, (tuple, list)) and len(state) == 2):
            raise TypeError(f"state must be a pair (h_0, c_0), got {type(state).__name__}")
        h0, c0 = (None, None) if state is None else state
        return (
            check_state(h0, "h_0", x, self.hidden_size),
            check_state(c0, "c_0", x, self.hidden_size),
            lengths,
        )
