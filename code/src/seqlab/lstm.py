"""The LSTM and the GRU, from scratch, with every gate readable at every step.

One LSTM step (chapter "LSTM"), in the row-vector form of the code::

    z_t = x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh     # (N, 4 E_h): i | f | g | o
    i_t = sigmoid(z_i)    input gate:  how much new content to write
    f_t = sigmoid(z_f)    forget gate: how much of the old cell to keep
    g_t = tanh(z_g)       new cell content
    o_t = sigmoid(z_o)    output gate: how much of the cell to show
    c_t = f_t * c_{t-1} + i_t * g_t                      # the cell: updated by addition
    h_t = o_t * tanh(c_t)

The gate order (i, f, g, o) and the weight layout are those of ``nn.LSTM``, so
``LSTM.from_torch`` copies a built-in network. The GRU follows ``nn.GRU`` (gates r, z, n)::

    r_t = sigmoid(x W_ir^T + b_ir + h W_hr^T + b_hr)    reset gate
    z_t = sigmoid(x W_iz^T + b_iz + h W_hz^T + b_hz)    update gate
    n_t = tanh(x W_in^T + b_in + r_t * (h W_hn^T + b_hn))
    h_t = (1 - z_t) * n_t + z_t * h_{t-1}

``impl``: ``"scratch"`` loops over time in Python (``LSTM.trace`` keeps every gate), ``"fast"``
(LSTM only) writes out backpropagation through time by hand (``seqlab.lstm_fast``), ``"torch"``
runs PyTorch's kernels; all are tested equal to ``nn.LSTM`` / ``nn.GRU`` with copied weights.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import nn

from .checks import check_choice
from .lstm_fast import lstm_fast
from .rnn import check_sequence, check_state, init_recurrent_parameters, reset_recurrent_parameters

__all__ = ["LSTMStep", "LSTMTrace", "lstm_cell", "LSTM", "GRU"]


class LSTMStep(NamedTuple):
    """The gates and states of one LSTM step, each (N, E_h) (as ``LSTMTrace``, each (N, T, E_h))."""

    i: torch.Tensor
    f: torch.Tensor
    g: torch.Tensor
    o: torch.Tensor
    c: torch.Tensor
    h: torch.Tensor


LSTMTrace = LSTMStep


def lstm_cell(z: torch.Tensor, c: torch.Tensor) -> LSTMStep:
    """The LSTM equations from the pre-activations ``z`` (N, 4 E_h) of i, f, g, o and ``c`` = c_{t-1}
    (N, E_h): every gate and the new c and h, each (N, E_h)."""
    z_i, z_f, z_g, z_o = z.chunk(4, dim=-1)
    i = torch.sigmoid(z_i)  # input gate: how much new content to write
    f = torch.sigmoid(z_f)  # forget gate: how much of the old cell to keep
    g = torch.tanh(z_g)  # new content
    o = torch.sigmoid(z_o)  # output gate: how much of the cell to show
    c = f * c + i * g  # the cell is updated by addition
    h = o * torch.tanh(c)
    return LSTMStep(i, f, g, o, c, h)


class _Recurrent(nn.Module):
    """Weights laid out as one layer of ``nn.LSTM`` / ``nn.GRU`` (``gates`` blocks of E_h rows)."""

    gates = 1
    impls: tuple[str, ...] = ("scratch", "torch")
    torch_class: type[nn.RNNBase] = nn.RNNBase

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, impl: str = "scratch") -> None:
        super().__init__()
        init_recurrent_parameters(self, input_size, hidden_size, self.gates, bias)
        self.impl = check_choice("impl", impl, self.impls)

    def reset_parameters(self) -> None:
        reset_recurrent_parameters(self)

    def _check_inputs(self, x: torch.Tensor, states: dict[str, torch.Tensor | None]) -> list[torch.Tensor]:
        check_sequence(x, self.input_size, self.weight_ih)
        return [check_state(state, name, x, self.hidden_size) for name, state in states.items()]

    def _flat_weights(self) -> list[torch.Tensor]:
        weights = [self.weight_ih, self.weight_hh]
        return weights + [self.bias_ih, self.bias_hh] if self.bias_ih is not None else weights

    def _gate_inputs(self, x_t: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """``x_t W_ih^T + b_ih + h W_hh^T + b_hh``: (N, gates * E_h) from (N, E_in) and (N, E_h)."""
        z = x_t @ self.weight_ih.T + h @ self.weight_hh.T
        if self.bias_ih is not None:
            z = z + self.bias_ih + self.bias_hh
        return z

    @classmethod
    def from_torch(cls, module: nn.RNNBase, impl: str = "scratch"):
        """A copy of a single-layer, unidirectional, batch-first built-in with the same weights."""
        if not isinstance(module, cls.torch_class):
            raise TypeError(f"expected {cls.torch_class.__name__}, got {type(module).__name__}")
        if module.num_layers != 1 or module.bidirectional or not module.batch_first or module.proj_size:
            raise ValueError(
                f"from_torch needs {cls.torch_class.__name__}(num_layers=1, bidirectional=False, "
                f"batch_first=True, proj_size=0); got num_layers={module.num_layers}, "
                f"bidirectional={module.bidirectional}, batch_first={module.batch_first}"
            )
        new = cls(module.input_size, module.hidden_size, module.bias, impl)
        new.to(device=module.weight_ih_l0.device, dtype=module.weight_ih_l0.dtype)
        with torch.no_grad():
            for name in ("weight_ih", "weight_hh") + (("bias_ih", "bias_hh") if module.bias else ()):
                getattr(new, name).copy_(getattr(module, f"{name}_l0"))
        return new


class LSTM(_Recurrent):
    """A single-layer LSTM over a sequence, batch first, with ``nn.LSTM``'s weight layout."""

    gates = 4
    impls = ("scratch", "fast", "torch")
    torch_class = nn.LSTM

    def step(self, x_t: torch.Tensor, h: torch.Tensor, c: torch.Tensor) -> LSTMStep:
        """``lstm_cell`` of the pre-activations of ``x_t`` (N, E_in), ``h`` (N, E_h), and ``c`` (N, E_h)."""
        return lstm_cell(self._gate_inputs(x_t, h), c)

    def forward(
        self, x: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor] | None = None, impl: str | None = None
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """``x`` (N, T, E_in), ``state`` ``(h0, c0)`` each (N, E_h) or None -> every hidden state
        (N, T, E_h) and ``(h_T, c_T)``, each (N, E_h)."""
        impl = check_choice("impl", impl or self.impl, self.impls)
        h0, c0 = (None, None) if state is None else state
        h, c = self._check_inputs(x, {"h0": h0, "c0": c0})
        if impl == "torch":
            # the ATen op nn.LSTM runs, for one layer, one direction, batch first, no dropout
            out, h_n, c_n = torch.lstm(
                x, (h.unsqueeze(0), c.unsqueeze(0)), self._flat_weights(), has_biases=self.bias,
                num_layers=1, dropout=0.0, train=self.training, bidirectional=False, batch_first=True,
            )  # fmt: skip
            return out, (h_n[0], c_n[0])
        if impl == "fast" and x.shape[0] > 0:
            out, h, c = lstm_fast(x, h, c, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
            return out, (h, c)
        steps = self.unroll(x, h, c)
        return torch.stack([step.h for step in steps], dim=1), (steps[-1].h, steps[-1].c)

    def unroll(self, x: torch.Tensor, h: torch.Tensor, c: torch.Tensor) -> list[LSTMStep]:
        """The readable loop (``impl="scratch"``) from ``h`` = h_0 and ``c`` = c_0 (N, E_h) over
        ``x`` (N, T, E_in), T >= 1: one step of the equations per time step, each kept."""
        steps = []
        for t in range(x.shape[1]):
            step = self.step(x[:, t], h, c)  # x_t is x[:, t]
            h, c = step.h, step.c
            steps.append(step)
        return steps

    def trace(self, x: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor] | None = None) -> LSTMTrace:
        """The readable loop on ``forward``'s arguments, keeping every gate and state: each (N, T, E_h)."""
        h0, c0 = (None, None) if state is None else state
        steps = self.unroll(x, *self._check_inputs(x, {"h0": h0, "c0": c0}))
        return LSTMTrace(*(torch.stack(parts, dim=1) for parts in zip(*steps, strict=True)))


class GRU(_Recurrent):
    """A single-layer GRU over a sequence, batch first, with ``nn.GRU``'s weight layout (r, z, n)."""

    gates = 3
    torch_class = nn.GRU

    def forward(
        self, x: torch.Tensor, h0: torch.Tensor | None = None, impl: str | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``x`` (N, T, E_in), ``h0`` (N, E_h) or None -> every state (N, T, E_h) and the last (N, E_h)."""
        impl = check_choice("impl", impl or self.impl, self.impls)
        (h,) = self._check_inputs(x, {"h0": h0})
        if impl == "torch":
            # the ATen op nn.GRU runs, for one layer, one direction, batch first, no dropout
            out, h_n = torch.gru(
                x, h.unsqueeze(0), self._flat_weights(), has_biases=self.bias, num_layers=1,
                dropout=0.0, train=self.training, bidirectional=False, batch_first=True,
            )  # fmt: skip
            return out, h_n[0]
        outputs = []
        for t in range(x.shape[1]):
            xw = x[:, t] @ self.weight_ih.T  # (N, 3 E_h)
            hw = h @ self.weight_hh.T  # (N, 3 E_h)
            if self.bias_ih is not None:
                xw, hw = xw + self.bias_ih, hw + self.bias_hh
            x_r, x_z, x_n = xw.chunk(3, dim=-1)
            h_r, h_z, h_n = hw.chunk(3, dim=-1)
            r = torch.sigmoid(x_r + h_r)  # reset gate
            z = torch.sigmoid(x_z + h_z)  # update gate
            n = torch.tanh(x_n + r * h_n)  # new content
            h = (1 - z) * n + z * h
            outputs.append(h)
        return torch.stack(outputs, dim=1), h
