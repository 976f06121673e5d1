"""The LSTMN (Cheng, Dong & Lapata, 2016): an LSTM that attends over all its past states.

An LSTM keeps one hidden state and one cell and updates them from the previous step only (a
Markov update). The LSTMN keeps every past state on two tapes, the hidden tape
H = (h_0, ..., h_{t-1}) and the memory tape C = (c_0, ..., c_{t-1}) (h_0 and c_0 are the initial
state), and at every step reads a summary of them chosen by attention (source note 002)::

    a_i = v^T tanh(W_h h_i + W_x x_t + W_s h~_{t-1})     for every tape entry i < t
    s   = softmax(a)                                     # over the past only
    h~_t = sum_i s_i h_i ,   c~_t = sum_i s_i c_i        # adaptive summaries of the tapes
    then the LSTM step, with h~_t and c~_t in place of h_{t-1} and c_{t-1}:
    z = x_t W_ih^T + b_ih + h~_t W_hh^T + b_hh           # gates i | f | g | o, as nn.LSTM
    c_t = f * c~_t + i * g ,   h_t = o * tanh(c_t)

If the attention put all its weight on the last entry (h~_t = h_{t-1}, c~_t = c_{t-1}) this is
exactly an LSTM; ``attention="last"`` builds that case, and the tests check it against
``seqlab.lstm.LSTM``. The gate weights have ``nn.LSTM``'s layout.
"""

from __future__ import annotations

import math

import torch
from torch import nn

__all__ = ["LSTMN"]


class LSTMN(nn.Module):
    """A single-layer LSTMN over a batch-first sequence.

    Args:
        input_size: E_in.
        hidden_size: E_h.
        attention_size: width A of the intra-attention's hidden layer (default E_h).
    """

    def __init__(self, input_size: int, hidden_size: int, attention_size: int | None = None) -> None:
        super().__init__()
        if input_size < 1 or hidden_size < 1:
            raise ValueError(f"sizes must be positive, got {input_size=}, {hidden_size=}")
        a = attention_size or hidden_size
        self.input_size, self.hidden_size = input_size, hidden_size
        # the LSTM part, laid out as nn.LSTM: gates i, f, g, o stacked in 4 E_h rows
        self.weight_ih = nn.Parameter(torch.empty(4 * hidden_size, input_size))
        self.weight_hh = nn.Parameter(torch.empty(4 * hidden_size, hidden_size))
        self.bias_ih = nn.Parameter(torch.empty(4 * hidden_size))
        self.bias_hh = nn.Parameter(torch.empty(4 * hidden_size))
        # the intra-attention: a_i = v^T tanh(W_h h_i + W_x x_t + W_s h~_{t-1})
        self.attn_h = nn.Linear(hidden_size, a, bias=False)
        self.attn_x = nn.Linear(input_size, a)
        self.attn_s = nn.Linear(hidden_size, a, bias=False)
        self.attn_v = nn.Linear(a, 1, bias=False)
        bound = 1 / math.sqrt(hidden_size)
        for p in (self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh):
            nn.init.uniform_(p, -bound, bound)

    def forward(
        self,
        x: torch.Tensor,
        lengths: torch.Tensor | None = None,
        state: tuple[torch.Tensor, torch.Tensor] | None = None,
        attention: str = "learned",
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor], torch.Tensor]:
        """Run over a sequence.

        Args:
            x: (N, T, E_in) inputs, right-padded.
            lengths: (N,) true lengths; the returned last state is taken at each sequence's end.
            state: ``(h0, c0)``, each (N, E_h); zeros if None. They are tape entry 0.
            attention: ``"learned"``, or ``"last"`` to put all weight on the newest tape entry
                (which makes the LSTMN an LSTM).

        Returns:
            ``(out, (h_last, c_last), weights)``: every hidden state (N, T, E_h); the state at
            each sequence's last real step (N, E_h); the intra-attention weights (N, T, T),
            where row t holds the weights step t gave to tape entries 0..t (entry 0 is the
            initial state, entry i the state after input i - 1) and zeros beyond: no peeking.
        """
        if x.dim() != 3 or x.shape[-1] != self.input_size:
            raise ValueError(f"x must be (N, T, E_in) with E_in={self.input_size}, got {tuple(x.shape)}")
        if attention not in ("learned", "last"):
            raise ValueError(f"attention must be 'learned' or 'last', got {attention!r}")
        n, steps, _ = x.shape
        if steps == 0:
            raise ValueError("x has T = 0 time steps")
        if not torch.isfinite(x).all():
            raise ValueError("x contains NaN or infinite values")
        if lengths is not None:
            lengths = torch.as_tensor(lengths, device=x.device)
            if lengths.shape != (n,) or (lengths < 1).any() or (lengths > steps).any():
                raise ValueError(
                    f"lengths must be (N,) = ({n},) with values in 1..{steps}, got {lengths.tolist()}"
                )
        zeros = x.new_zeros(n, self.hidden_size)
        h0, c0 = (zeros, zeros) if state is None else state
        for name, s in (("h0", h0), ("c0", c0)):
            if s.shape != (n, self.hidden_size):
                raise ValueError(f"{name} must be (N, E_h) = ({n}, {self.hidden_size}), got {tuple(s.shape)}")

        gates_x = x @ self.weight_ih.T + self.bias_ih + self.bias_hh  # (N, T, 4 E_h), all steps at once
        attn_x = self.attn_x(x)  # (N, T, A)
        hidden_tape, memory_tape, key_tape = [h0], [c0], [self.attn_h(h0)]
        summary = h0  # h~_{t-1}
        outputs, weight_rows = [], []
        for t in range(steps):
            if attention == "last":
                weights = x.new_zeros(n, t + 1)
                weights[:, -1] = 1.0
            else:
                keys = torch.stack(key_tape, dim=1)  # (N, t+1, A): W_h h_i for the past only
                query = attn_x[:, t] + self.attn_s(summary)  # (N, A)
                scores = self.attn_v(torch.tanh(keys + query.unsqueeze(1))).squeeze(-1)  # (N, t+1)
                weights = scores.softmax(dim=-1)
            h_sum = (weights.unsqueeze(1) @ torch.stack(hidden_tape, dim=1)).squeeze(1)  # h~_t (N, E_h)
            c_sum = (weights.unsqueeze(1) @ torch.stack(memory_tape, dim=1)).squeeze(1)  # c~_t
            i, f, g, o = (gates_x[:, t] + h_sum @ self.weight_hh.T).chunk(4, dim=-1)
            c = torch.sigmoid(f) * c_sum + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            hidden_tape.append(h)
            memory_tape.append(c)
            key_tape.append(self.attn_h(h))
            summary = h_sum
            outputs.append(h)
            weight_rows.append(nn.functional.pad(weights, (0, steps - t - 1)))
        out = torch.stack(outputs, dim=1)
        cells = torch.stack(memory_tape[1:], dim=1)
        last = (lengths - 1) if lengths is not None else torch.full((n,), steps - 1, device=x.device)
        rows = torch.arange(n, device=x.device)
        return out, (out[rows, last], cells[rows, last]), torch.stack(weight_rows, dim=1)
