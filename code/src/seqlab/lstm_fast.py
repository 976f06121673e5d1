"""The LSTM's fast scratch path: the same equations, with backpropagation through time by hand.

Autograd records about a dozen operations per step of the readable loop and replays them.
``LSTM(impl="fast")`` calls ``lstm_fast`` instead, whose backward pass is written out by hand
(``LSTMBackprop``): nothing is recorded, and each backward step is a short, fixed list of kernel
calls. Tests prove it equal to the readable loop and to ``nn.LSTM``, values and gradients.

The backward loop walks the steps in reverse::

    dh_t += dL/dh_t (from the output)        dc_t += dh_t * o_t * (1 - tanh^2 c_t)
    dz_o = dh_t * tanh(c_t) * o_t (1 - o_t)  dz_i = dc_t * g_t * i_t (1 - i_t)
    dz_f = dc_t * c_{t-1} * f_t (1 - f_t)    dz_g = dc_t * i_t * (1 - g_t^2)
    dh_{t-1} = dz_t W_hh                     dc_{t-1} = dc_t * f_t

The last line is the LSTM's answer to vanishing gradients: along the cell the gradient is
multiplied by the forget gate only, not by W_hh.
"""

from __future__ import annotations

import torch

__all__ = ["lstm_fast", "LSTMBackprop"]


def lstm_fast(
    x, h0, c0, weight_ih, weight_hh, bias_ih, bias_hh
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One LSTM layer with the hand-written backward pass: ``x`` (N >= 1, T, E_in), ``h0``, ``c0``
    (N, E_h), ``weight_ih`` (4 E_h, E_in), ``weight_hh`` (4 E_h, E_h), biases (4 E_h,) or None
    (gates i, f, g, o, as ``nn.LSTM``). Returns out (N, T, E_h), h_T (N, E_h), c_T (N, E_h)."""
    n, steps, e_in = x.shape
    # W_ih x_t^T + b_ih + b_hh for all steps in one product, as columns (4 E_h, T, N): the loop's layout
    x_columns = x.transpose(0, 1).reshape(steps * n, e_in).T  # (E_in, T N), time-major
    zx = weight_ih @ x_columns
    if bias_ih is not None:
        zx = zx + (bias_ih + bias_hh).unsqueeze(1)
    return LSTMBackprop.apply(zx.view(weight_ih.shape[0], steps, n), h0, c0, weight_hh)


class LSTMBackprop(torch.autograd.Function):
    """The LSTM recurrence with backpropagation through time written out by hand.

    Layout, for speed only: inside, every state is a column per example (the transpose of the
    chapter's rows). ``zx`` comes in as (4E, T, N), and ``z_t^T = W_hh h_{t-1}^T + zx_t^T`` puts
    each gate in a contiguous block of rows. At the chapter's sizes a step costs microseconds, so
    the number of calls made from Python, not the arithmetic, sets the speed: each step makes 7
    calls forward and 5 backward, into buffers (and views of them) made before the loop. On a CPU,
    ``nn.LSTM`` instead runs oneDNN's fused kernel over the whole sequence (the LSTM chapter times both).
    Weight gradients are summed over all steps with one matrix product after the loop.
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
