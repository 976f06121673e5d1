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

``impl="scratch"`` runs the loop above in Python (the input projection of all steps is one
matrix product before the loop); ``impl="torch"`` calls PyTorch's kernels. ``LSTM.trace`` returns
every gate, cell and hidden state of every step.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import nn

__all__ = ["LSTMTrace", "LSTM", "GRU"]


class LSTMTrace(NamedTuple):
    """Every gate and state of an LSTM run, each (N, T, E_h)."""

    i: torch.Tensor
    f: torch.Tensor
    g: torch.Tensor
    o: torch.Tensor
    c: torch.Tensor
    h: torch.Tensor


class _Recurrent(nn.Module):
    """Weights laid out as one layer of ``nn.LSTM`` / ``nn.GRU`` (``gates`` blocks of E_h rows)."""

    gates = 1
    torch_class: type[nn.RNNBase] = nn.RNNBase

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, impl: str = "scratch") -> None:
        super().__init__()
        if input_size < 1 or hidden_size < 1:
            raise ValueError(f"sizes must be positive, got {input_size=}, {hidden_size=}")
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        rows = self.gates * hidden_size
        self.weight_ih = nn.Parameter(torch.empty(rows, input_size))
        self.weight_hh = nn.Parameter(torch.empty(rows, hidden_size))
        if bias:
            self.bias_ih = nn.Parameter(torch.empty(rows))
            self.bias_hh = nn.Parameter(torch.empty(rows))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.impl = self._check_impl(impl)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Uniform in [-1/sqrt(E_h), 1/sqrt(E_h)], as PyTorch does."""
        bound = 1 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            nn.init.uniform_(p, -bound, bound)

    @staticmethod
    def _check_impl(impl: str) -> str:
        if impl not in ("scratch", "torch"):
            raise ValueError(f"impl must be 'scratch' or 'torch', got {impl!r}")
        return impl

    def _check_x(self, x: torch.Tensor) -> None:
        if x.dim() != 3 or x.shape[2] != self.input_size:
            raise ValueError(f"x must be (N, T, E_in) with E_in={self.input_size}, got {tuple(x.shape)}")
        if x.shape[1] == 0:
            raise ValueError("x has T = 0 time steps")
        if not torch.isfinite(x).all():
            raise ValueError("x contains NaN or infinite values")

    def _check_state(self, state: torch.Tensor | None, x: torch.Tensor, name: str) -> torch.Tensor:
        n = x.shape[0]
        if state is None:
            return x.new_zeros(n, self.hidden_size)
        if state.shape != (n, self.hidden_size):
            raise ValueError(f"{name} must be (N, E_h) = ({n}, {self.hidden_size}), got {tuple(state.shape)}")
        return state

    def _input_projection(self, x: torch.Tensor) -> torch.Tensor:
        """x W_ih^T + b_ih for every step at once, in one matrix product: (N, T, gates * E_h)."""
        if self.bias_ih is None:
            return x @ self.weight_ih.T
        return torch.addmm(self.bias_ih, x.reshape(-1, x.shape[-1]), self.weight_ih.T).view(*x.shape[:2], -1)

    def _flat_weights(self) -> list[torch.Tensor]:
        weights = [self.weight_ih, self.weight_hh]
        return weights + [self.bias_ih, self.bias_hh] if self.bias_ih is not None else weights

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
    """A single-layer LSTM over a sequence, batch first, with ``nn.LSTM``'s weight layout.

    Args:
        input_size: E_in.
        hidden_size: E_h.
        bias: whether to use ``b_ih`` and ``b_hh`` (each (4 E_h,)).
        impl: default path, ``"scratch"`` or ``"torch"``.
    """

    gates = 4
    torch_class = nn.LSTM

    def forward(
        self,
        x: torch.Tensor,
        state: tuple[torch.Tensor, torch.Tensor] | None = None,
        impl: str | None = None,
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """Run over a sequence.

        Args:
            x: (N, T, E_in).
            state: ``(h0, c0)``, each (N, E_h); zeros if None.
            impl: ``"scratch"`` or ``"torch"``; None uses the module's default.

        Returns:
            ``(out, (h_T, c_T))``: every hidden state (N, T, E_h) and the last hidden and cell
            states (N, E_h).
        """
        impl = self._check_impl(impl or self.impl)
        self._check_x(x)
        h0, c0 = (None, None) if state is None else state
        h = self._check_state(h0, x, "h0")
        c = self._check_state(c0, x, "c0")
        if impl == "torch":
            out, h_n, c_n = torch.lstm(x, (h.unsqueeze(0), c.unsqueeze(0)), self._flat_weights(),
                                       self.bias, 1, 0.0, self.training, False, True)  # fmt: skip
            return out, (h_n[0], c_n[0])
        # W_ih x_t^T + b_ih + b_hh for all steps in one product, as columns (4 E_h, T, N): the loop's layout
        n, steps, e_in = x.shape
        x_columns = x.transpose(0, 1).reshape(steps * n, e_in).T  # (E_in, T N), time-major
        zx = self.weight_ih @ x_columns
        if self.bias_ih is not None:
            zx = zx + (self.bias_ih + self.bias_hh).unsqueeze(1)
        out, h_t, c_t = _LSTMBPTT.apply(zx.view(-1, steps, n), h, c, self.weight_hh)
        return out, (h_t, c_t)

    def trace(self, x: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor] | None = None) -> LSTMTrace:
        """Every gate (after its nonlinearity), cell and hidden state of every step, each (N, T, E_h)."""
        self._check_x(x)
        h0, c0 = (None, None) if state is None else state
        h = self._check_state(h0, x, "h0")
        c = self._check_state(c0, x, "c0")
        xw = self._input_projection(x)
        steps = []
        for t in range(x.shape[1]):
            z = xw[:, t] + h @ self.weight_hh.T
            if self.bias_hh is not None:
                z = z + self.bias_hh
            zi, zf, zg, zo = z.chunk(4, dim=-1)
            i, f, g, o = torch.sigmoid(zi), torch.sigmoid(zf), torch.tanh(zg), torch.sigmoid(zo)
            c = f * c + i * g
            h = o * torch.tanh(c)
            steps.append((i, f, g, o, c, h))
        return LSTMTrace(*(torch.stack(parts, dim=1) for parts in zip(*steps, strict=True)))


class GRU(_Recurrent):
    """A single-layer GRU over a sequence, batch first, with ``nn.GRU``'s weight layout (r, z, n)."""

    gates = 3
    torch_class = nn.GRU

    def forward(
        self, x: torch.Tensor, h0: torch.Tensor | None = None, impl: str | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Run over a sequence: ``x`` (N, T, E_in), ``h0`` (N, E_h) or None.

        Returns ``(out, h_T)``: every hidden state (N, T, E_h) and the last one (N, E_h).
        """
        impl = self._check_impl(impl or self.impl)
        self._check_x(x)
        h = self._check_state(h0, x, "h0")
        if impl == "torch":
            out, h_n = torch.gru(x, h.unsqueeze(0), self._flat_weights(), self.bias, 1, 0.0,
                                 self.training, False, True)  # fmt: skip
            return out, h_n[0]
        xw = self._input_projection(x)
        outputs = []
        for t in range(x.shape[1]):
            hw = h @ self.weight_hh.T  # (N, 3 E_h)
            if self.bias_hh is not None:
                hw = hw + self.bias_hh
            x_r, x_z, x_n = xw[:, t].chunk(3, dim=-1)
            h_r, h_z, h_n = hw.chunk(3, dim=-1)
            r = torch.sigmoid(x_r + h_r)
            z = torch.sigmoid(x_z + h_z)
            n = torch.tanh(x_n + r * h_n)
            h = (1 - z) * n + z * h
            outputs.append(h)
        return torch.stack(outputs, dim=1), h


class _LSTMBPTT(torch.autograd.Function):
    """The LSTM recurrence with backpropagation through time written out by hand.

    Forward runs the equations of the module docstring. Backward walks the steps in reverse::

        dh_t += dL/dh_t (from the output)        dc_t += dh_t * o_t * (1 - tanh^2 c_t)
        dz_o = dh_t * tanh(c_t) * o_t (1 - o_t)  dz_i = dc_t * g_t * i_t (1 - i_t)
        dz_f = dc_t * c_{t-1} * f_t (1 - f_t)    dz_g = dc_t * i_t * (1 - g_t^2)
        dh_{t-1} = dz_t W_hh                     dc_{t-1} = dc_t * f_t

    The last line is the LSTM's answer to vanishing gradients: along the cell the gradient is
    multiplied by the forget gate only, not by W_hh. Weight gradients are summed over all steps
    with one matrix product after the loop. Tests check it against ``nn.LSTM``'s gradients.

    Layout, for speed only: inside, every state is a column per example (the transpose of the
    docstring's rows). ``zx`` comes in as (4E, T, N), and ``z_t^T = W_hh h_{t-1}^T + zx_t^T`` puts
    each gate in a contiguous block of rows. At the chapter's sizes a step costs microseconds, so
    the number of calls made from Python, not the arithmetic, sets the speed: each step makes 7
    calls forward and 5 backward, into buffers (and views of them) made before the loop. On a CPU,
    ``nn.LSTM`` instead runs oneDNN's fused kernel over the whole sequence (``make bench``).
    """

    @staticmethod
    def forward(ctx, zx, h, c, weight_hh):  # zx (4E, T, N), h, c (N, E), weight_hh (4E, E)
        four_e, steps, n = zx.shape
        e = four_e // 4
        acts = zx.new_empty(steps, four_e, n)  # i, f, g, o after their nonlinearities
        cells = zx.new_empty(steps + 1, e, n)  # c_0 .. c_T
        tanh_c = zx.new_empty(steps, e, n)  # tanh(c_1) .. tanh(c_T)
        hs = zx.new_empty(e, steps + 1, n)  # h_0 .. h_T, (E, T+1, N) so that hs[:, :T] is (E, T N)
        cells[0], hs[:, 0] = c.T, h.T
        z = zx.new_empty(four_e, n)  # pre-activations of the current step
        z_g = z[2 * e : 3 * e]
        zx_, a_, c_, tc_, h_ = zx.unbind(1), acts.unbind(0), cells.unbind(0), tanh_c.unbind(0), hs.unbind(1)
        i_, f_, g_, o_ = (acts[:, k * e : (k + 1) * e].unbind(0) for k in range(4))
        for t in range(steps):
            torch.addmm(zx_[t], weight_hh, h_[t], out=z)  # z_t^T = W_hh h_{t-1}^T + zx_t^T
            torch.sigmoid(z, out=a_[t])  # i, f, o (and g, overwritten next)
            torch.tanh(z_g, out=g_[t])
            torch.mul(f_[t], c_[t], out=c_[t + 1])
            c_[t + 1].addcmul_(i_[t], g_[t])  # c_t = f c_{t-1} + i g
            torch.tanh(c_[t + 1], out=tc_[t])
            torch.mul(o_[t], tc_[t], out=h_[t + 1])  # h_t = o tanh(c_t)
        ctx.save_for_backward(acts, cells, tanh_c, hs, weight_hh)
        return hs[:, 1:].permute(2, 1, 0).contiguous(), h_[-1].T.contiguous(), c_[-1].T.contiguous()

    @staticmethod
    def backward(ctx, d_out, d_h_last, d_c_last):
        acts, cells, tanh_c, hs, weight_hh = ctx.saved_tensors
        steps, four_e, n = acts.shape
        e = four_e // 4
        i, f, g, o = acts.split(e, dim=1)  # each (T, E, N)
        h = hs[:, 1:].transpose(0, 1)  # (T, E, N)
        # local derivatives of every step at once, so the loop below is short
        local = torch.addcmul(acts, acts, acts, value=-1)  # s (1 - s) for i, f, o (g's block unused)
        local[:, :e].mul_(g)  # dz_i / dc_t = g i (1 - i)
        local[:, e : 2 * e].mul_(cells[:-1])  # dz_f / dc_t = c_{t-1} f (1 - f)
        torch.addcmul(i, i, g * g, value=-1, out=local[:, 2 * e : 3 * e])  # dz_g / dc_t = i (1 - g^2)
        local[:, 3 * e :].mul_(tanh_c)  # dz_o / dh_t = tanh(c_t) o (1 - o)
        d_c_from_h = torch.addcmul(o, h, tanh_c, value=-1).unbind(0)  # dc_t / dh_t = o (1 - tanh^2 c_t)
        local_ifg = local[:, : 3 * e].view(steps, 3, e, n).unbind(0)
        local_o = local[:, 3 * e :].unbind(0)
        f_ = f.unbind(0)
        dz = acts.new_empty(four_e, steps, n)  # (4E, T, N), so that dz is (4E, T N) for dW_hh
        dz_ = dz.unbind(1)
        dz_ifg = dz[: 3 * e].view(3, e, steps, n).unbind(2)
        dz_o = dz[3 * e :].unbind(1)
        dc3 = acts.new_zeros(1, e, n)  # dL/dc_t, shaped to broadcast over the three gates i, f, g
        dc = dc3[0]
        if d_c_last is not None:
            dc.copy_(d_c_last.T)
        d_out = acts.new_zeros(steps, e, n) if d_out is None else d_out.permute(1, 2, 0).contiguous()
        d_out_ = d_out.unbind(0)
        dh = d_out_[-1] + d_h_last.T if d_h_last is not None else d_out_[-1].clone()
        w_hh_t = weight_hh.T
        for t in range(steps - 1, -1, -1):
            dc.addcmul_(dh, d_c_from_h[t])  # dh_t reaches c_t through h_t = o tanh(c_t)
            torch.mul(local_ifg[t], dc3, out=dz_ifg[t])  # dz_i, dz_f, dz_g
            torch.mul(local_o[t], dh, out=dz_o[t])  # dz_o
            if t > 0:  # dL/dh_{t-1}: through the gates, plus what step t-1's own output sends
                dh = torch.addmm(d_out_[t - 1], w_hh_t, dz_[t])
            else:
                dh = w_hh_t @ dz_[t]
            dc.mul_(f_[t])  # dL/dc_{t-1}: through the forget gate only
        # dW_hh = sum over steps and examples of dz_t^T h_{t-1}: one product over the T N columns
        d_weight_hh = dz.view(four_e, -1) @ hs[:, :-1].reshape(e, -1).T
        return dz, dh.T, dc.T, d_weight_hh
