"""The Elman recurrent network, from scratch, and the probes that show why its gradients vanish.

One step of the network (chapter "RNNs and vanishing/exploding gradients")::

    a_t = x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh        # (N, E_h)
    h_t = phi(a_t)                                          # phi = tanh, relu or the identity

The weights have the names and layout of ``nn.RNN`` (``weight_ih_l0`` becomes ``weight_ih``), so
``RNN.from_torch(nn.RNN(...))`` copies a built-in network and the two compute the same thing.

Backpropagation through time multiplies one Jacobian per step::

    dh_t / dh_{t-1} = diag(phi'(a_t)) W_hh                  # (E_h, E_h)

``step_jacobians`` computes those matrices, ``hidden_state_grads`` measures dJ/dh_t for every t
with autograd, and ``set_spectral_radius`` builds recurrent matrices of a chosen spectral radius.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .checks import check_choice, check_int

__all__ = [
    "NONLINEARITIES",
    "RNNCell",
    "RNN",
    "spectral_radius",
    "set_spectral_radius",
    "hidden_state_grads",
    "init_recurrent_parameters",
    "check_sequence",
    "check_state",
]

NONLINEARITIES = ("tanh", "relu", "linear")


def _phi(a: torch.Tensor, nonlinearity: str) -> torch.Tensor:
    if nonlinearity == "tanh":
        return torch.tanh(a)
    if nonlinearity == "relu":
        return torch.relu(a)
    return a


def _phi_prime(a: torch.Tensor, h: torch.Tensor, nonlinearity: str) -> torch.Tensor:
    """phi'(a) from the pre-activation a and the output h = phi(a)."""
    if nonlinearity == "tanh":
        return 1 - h * h
    if nonlinearity == "relu":
        return (a > 0).to(a.dtype)
    return torch.ones_like(a)


def init_recurrent_parameters(
    module: nn.Module, input_size: int, hidden_size: int, gates: int, bias: bool, reset: bool = True
) -> None:
    """Give ``module`` one ``nn.RNN`` / ``nn.LSTM`` layer's parameters, initialised as PyTorch does
    (unless not ``reset``): ``weight_ih`` (gates E_h, E_in), ``weight_hh`` (gates E_h, E_h) and,
    with ``bias``, ``bias_ih``, ``bias_hh`` (gates E_h,)."""
    input_size, hidden_size = check_int("input_size", input_size), check_int("hidden_size", hidden_size)
    module.input_size, module.hidden_size, module.bias = input_size, hidden_size, bias
    rows = gates * hidden_size
    module.weight_ih = nn.Parameter(torch.empty(rows, input_size))
    module.weight_hh = nn.Parameter(torch.empty(rows, hidden_size))
    if bias:
        module.bias_ih = nn.Parameter(torch.empty(rows))
        module.bias_hh = nn.Parameter(torch.empty(rows))
    else:
        module.register_parameter("bias_ih", None)
        module.register_parameter("bias_hh", None)
    if reset:
        reset_recurrent_parameters(module)


def reset_recurrent_parameters(module: nn.Module) -> None:
    """Every parameter uniform in [-1/sqrt(E_h), 1/sqrt(E_h)], as PyTorch initialises them."""
    bound = 1 / math.sqrt(module.hidden_size)
    for p in module.parameters(recurse=False):
        nn.init.uniform_(p, -bound, bound)


def check_sequence(x: torch.Tensor, input_size: int, weight: torch.Tensor) -> None:
    """Refuse ``x`` unless (N, T, E_in) with T >= 1 (N = 0 is allowed), finite, of the weights' dtype."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if x.dim() != 3 or x.shape[2] != input_size:
        raise ValueError(f"x must be (N, T, E_in) with E_in={input_size}, got {tuple(x.shape)}")
    if x.shape[1] == 0:
        raise ValueError("x has T = 0 time steps")
    if x.dtype != weight.dtype:
        raise TypeError(f"x has dtype {x.dtype} but the weights have dtype {weight.dtype}")
    if not torch.isfinite(x).all():
        raise ValueError("x contains NaN or infinite values")


def check_state(state: torch.Tensor | None, name: str, x: torch.Tensor, hidden_size: int) -> torch.Tensor:
    """An initial state (N, E_h) for ``x`` (N, T, E_in): zeros if None, else checked (shape,
    finite, ``x``'s dtype)."""
    n = x.shape[0]
    if state is None:
        return x.new_zeros(n, hidden_size)
    if not isinstance(state, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(state).__name__}")
    if state.shape != (n, hidden_size):
        raise ValueError(f"{name} must be (N, E_h) = ({n}, {hidden_size}), got {tuple(state.shape)}")
    if state.dtype != x.dtype:
        raise TypeError(f"{name} has dtype {state.dtype} but x and the weights have dtype {x.dtype}")
    if not torch.isfinite(state).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    return state


class RNNCell(nn.Module):
    """One step of an Elman RNN, ``h_t = phi(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)``, with
    ``nonlinearity`` ``"tanh"``, ``"relu"`` or ``"linear"`` (the identity; no torch built-in)."""

    def __init__(
        self, input_size: int, hidden_size: int, nonlinearity: str = "tanh", bias: bool = True
    ) -> None:
        super().__init__()
        check_choice("nonlinearity", nonlinearity, NONLINEARITIES)
        self.nonlinearity = nonlinearity
        init_recurrent_parameters(self, input_size, hidden_size, gates=1, bias=bias)

    def reset_parameters(self) -> None:
        reset_recurrent_parameters(self)

    def pre_activation(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """``a_t`` from ``x`` (N, E_in) and ``h`` (N, E_h); returns (N, E_h)."""
        a = x @ self.weight_ih.T + h @ self.weight_hh.T
        if self.bias_ih is not None:
            a = a + self.bias_ih + self.bias_hh
        return a

    def forward(self, x: torch.Tensor, h: torch.Tensor | None = None) -> torch.Tensor:
        """One step. ``x`` (N, E_in), ``h`` (N, E_h) or None for zeros; returns ``h_t`` (N, E_h)."""
        if x.dim() != 2 or x.shape[1] != self.input_size:
            raise ValueError(f"x must be (N, {self.input_size}), got {tuple(x.shape)}")
        if h is None:
            h = x.new_zeros(x.shape[0], self.hidden_size)
        elif h.shape != (x.shape[0], self.hidden_size):
            raise ValueError(f"h must be (N, E_h) = ({x.shape[0]}, {self.hidden_size}), got {tuple(h.shape)}")
        return _phi(self.pre_activation(x, h), self.nonlinearity)


class RNN(nn.Module):
    """A single-layer Elman RNN over a sequence, batch first: ``impl="scratch"`` loops over time
    with ``RNNCell`` (the probes use it), ``impl="torch"`` calls ``nn.RNN``'s fused kernel."""

    def __init__(
        self, input_size: int, hidden_size: int, nonlinearity: str = "tanh", bias: bool = True, impl="scratch"
    ) -> None:
        super().__init__()
        self.cell = RNNCell(input_size, hidden_size, nonlinearity, bias)
        self.impl = self._check_impl(impl)

    input_size = property(lambda self: self.cell.input_size)
    hidden_size = property(lambda self: self.cell.hidden_size)
    nonlinearity = property(lambda self: self.cell.nonlinearity)

    def _check_impl(self, impl: str) -> str:
        check_choice("impl", impl, ("scratch", "torch"))
        if impl == "torch" and self.cell.nonlinearity == "linear":
            raise ValueError("impl='torch' has no linear RNN kernel; use impl='scratch'")
        return impl

    def _check_inputs(self, x: torch.Tensor, h0: torch.Tensor | None) -> torch.Tensor:
        check_sequence(x, self.input_size, self.cell.weight_ih)
        return check_state(h0, "h0", x, self.hidden_size)

    def forward(
        self, x: torch.Tensor, h0: torch.Tensor | None = None, impl: str | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``x`` (N, T, E_in), ``h0`` (N, E_h) or None -> every state (N, T, E_h) and the last (N, E_h)."""
        impl = self._check_impl(impl or self.impl)
        h = self._check_inputs(x, h0)
        if impl == "torch":
            c = self.cell
            params = [c.weight_ih, c.weight_hh]
            if c.bias_ih is not None:
                params += [c.bias_ih, c.bias_hh]
            kernel = torch.rnn_tanh if c.nonlinearity == "tanh" else torch.rnn_relu
            # the ATen op nn.RNN runs, for one layer, one direction, batch first, no dropout
            out, h_n = kernel(
                x, h.unsqueeze(0), params, has_biases=c.bias_ih is not None, num_layers=1,
                dropout=0.0, train=self.training, bidirectional=False, batch_first=True,
            )  # fmt: skip
            return out, h_n[0]
        hs = self.unroll(x, h)
        return torch.stack(hs, dim=1), hs[-1]

    def unroll(self, x: torch.Tensor, h0: torch.Tensor) -> list[torch.Tensor]:
        """The scratch loop, keeping every state: returns T tensors ``h_1 .. h_T``, each (N, E_h).

        The states stay in the autograd graph, so ``torch.autograd.grad(loss, hs)`` gives
        dJ/dh_t for every t (see ``hidden_state_grads``).
        """
        hs, h = [], h0
        for t in range(x.shape[1]):
            h = self.cell(x[:, t], h)
            hs.append(h)
        return hs

    def step_jacobians(self, x: torch.Tensor, h0: torch.Tensor | None = None) -> torch.Tensor:
        """The BPTT factors ``dh_t/dh_{t-1} = diag(phi'(a_t)) W_hh`` for ``x`` (N, T, E_in), ``h0``
        (N, E_h) or None: (N, T, E_h, E_h), entry ``[n, t-1, i, j]`` is ``d h_t[i] / d h_{t-1}[j]``."""
        h = self._check_inputs(x, h0)
        jacobians = []
        with torch.no_grad():
            for t in range(x.shape[1]):
                a = self.cell.pre_activation(x[:, t], h)
                h = _phi(a, self.nonlinearity)
                d = _phi_prime(a, h, self.nonlinearity)  # (N, E_h)
                jacobians.append(d.unsqueeze(-1) * self.cell.weight_hh)  # diag(d) @ W_hh
        return torch.stack(jacobians, dim=1)

    @classmethod
    def from_torch(cls, rnn: nn.RNN, impl: str = "scratch") -> RNN:
        """A copy of a single-layer, unidirectional, batch-first ``nn.RNN`` with the same weights."""
        if rnn.num_layers != 1 or rnn.bidirectional or not rnn.batch_first:
            raise ValueError(
                "from_torch needs nn.RNN(num_layers=1, bidirectional=False, batch_first=True); "
                f"got num_layers={rnn.num_layers}, bidirectional={rnn.bidirectional}, "
                f"batch_first={rnn.batch_first}"
            )
        new = cls(rnn.input_size, rnn.hidden_size, rnn.nonlinearity, rnn.bias, impl)
        new.to(device=rnn.weight_ih_l0.device, dtype=rnn.weight_ih_l0.dtype)
        with torch.no_grad():
            new.cell.weight_ih.copy_(rnn.weight_ih_l0)
            new.cell.weight_hh.copy_(rnn.weight_hh_l0)
            if rnn.bias:
                new.cell.bias_ih.copy_(rnn.bias_ih_l0)
                new.cell.bias_hh.copy_(rnn.bias_hh_l0)
        return new


def spectral_radius(weight: torch.Tensor) -> float:
    """The largest absolute eigenvalue of a square matrix (E, E)."""
    if weight.dim() != 2 or weight.shape[0] != weight.shape[1]:
        raise ValueError(f"weight must be a square matrix, got shape {tuple(weight.shape)}")
    return torch.linalg.eigvals(weight.detach().double()).abs().max().item()


def set_spectral_radius(weight: torch.Tensor, rho: float) -> torch.Tensor:
    """A new ``weight`` (E, E) scaled so that its largest absolute eigenvalue is ``rho`` (not the
    spectral norm, which is larger for a non-symmetric matrix)."""
    if not rho > 0 or not math.isfinite(rho):
        raise ValueError(f"rho must be a positive finite number, got {rho!r}")
    current = spectral_radius(weight)
    if current == 0:
        raise ValueError("weight has spectral radius 0 (nilpotent); it cannot be rescaled")
    return weight * (rho / current)


def hidden_state_grads(rnn: RNN, x: torch.Tensor, loss_fn, h0: torch.Tensor | None = None) -> torch.Tensor:
    """dJ/dh_t for every t, by autograd through the scratch loop: ``x`` (N, T, E_in), ``h0`` (N, E_h)
    or None, ``loss_fn(out (N, T, E_h))`` a scalar J. Returns (N, T, E_h), ``[:, t-1]`` = dJ/dh_t."""
    h = rnn._check_inputs(x, h0)
    hs = rnn.unroll(x, h)
    loss = loss_fn(torch.stack(hs, dim=1))
    if loss.dim() != 0:
        raise ValueError(f"loss_fn must return a scalar, got shape {tuple(loss.shape)}")
    grads = torch.autograd.grad(loss, hs, allow_unused=True)
    grads = [torch.zeros_like(h) if g is None else g for g, h in zip(grads, hs, strict=True)]
    return torch.stack(grads, dim=1)
