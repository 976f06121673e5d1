"""Positional encodings: telling an order-blind attention layer where each token is.

Sinusoidal encoding (Vaswani et al. 2017), for position p and feature pair i = 0 .. E/2 - 1,
with the pair's angular frequency w_i = 10000^(-2i / E)::

    PE[p, 2i]     = sin(p * w_i)
    PE[p, 2i + 1] = cos(p * w_i)

Every row has norm sqrt(E / 2) (each (sin, cos) pair has norm 1), and moving from row p to row
p + k turns every pair by the angle k * w_i, the same rotation for every p, so the distance between
rows p and p + k depends on k only. A learned encoding is one trained vector per position, and
has nothing to say about positions it never saw.
"""

from __future__ import annotations

import numbers

import numpy as np
import torch
from torch import nn

from .checks import check_int, check_tensor

__all__ = ["sinusoidal_encoding", "SinusoidalPositionalEncoding", "LearnedPositionalEncoding"]


def sinusoidal_encoding(
    length: int, dim: int, base: float = 10000.0, start: int = 0, *, dtype=torch.float32, device=None
) -> torch.Tensor:
    """The (T, E) table for positions ``start .. start + T - 1``, E = ``dim`` even, computed in
    float64 and rounded once to ``dtype``."""
    check_int("length", length, minimum=0)
    check_int("dim", dim, minimum=2)
    check_int("start", start, minimum=None)
    if dim % 2:
        raise ValueError(f"dim must be even (features come in sin/cos pairs), got dim={dim}")
    if isinstance(base, bool) or not isinstance(base, numbers.Real) or not base > 1:
        raise ValueError(f"base must be a number > 1, got base={base!r}")
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"dtype must be a floating torch dtype, got dtype={dtype!r}")
    return torch.from_numpy(_table(length, dim, float(base), start)).to(device=device, dtype=dtype)


def _table(length: int, dim: int, base: float, start: int) -> np.ndarray:
    """The (T, E) table of ``sinusoidal_encoding``, in float64 throughout: Python's pow, NumPy's
    sin and cos (the C library's, correct to the last bit of a double)."""
    p = np.arange(start, start + length, dtype=np.float64)[:, None]  # (T, 1)
    omega = np.array([base ** (-2 * i / dim) for i in range(dim // 2)])  # w_i
    angle = p * omega  # p * w_i: (T, E/2)
    table = np.empty((length, dim))
    table[:, 0::2] = np.sin(angle)  # PE[p, 2i]
    table[:, 1::2] = np.cos(angle)  # PE[p, 2i + 1]
    return table


class SinusoidalPositionalEncoding(nn.Module):
    """Adds the sinusoidal table to a batch (N, T, E); works for any T (computed on demand, in
    the batch's dtype and on its device)."""

    def __init__(self, dim: int, base: float = 10000.0) -> None:
        super().__init__()
        check_int("dim", dim, minimum=2)
        if dim % 2:
            raise ValueError(f"dim must be even, got dim={dim}")
        self.dim, self.base = dim, base

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_tensor("x", x, "(N, T, E)", dim=3, last=self.dim)
        return x + sinusoidal_encoding(x.shape[1], self.dim, self.base, dtype=x.dtype, device=x.device)


class LearnedPositionalEncoding(nn.Module):
    """Adds one trained vector per position to a batch (N, T, E); T must be at most ``max_len``."""

    def __init__(self, max_len: int, dim: int) -> None:
        super().__init__()
        check_int("max_len", max_len, minimum=1)
        check_int("dim", dim, minimum=1)
        self.table = nn.Embedding(max_len, dim)
        nn.init.normal_(self.table.weight, std=0.02)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        max_len, dim = self.table.weight.shape
        check_tensor("x", x, "(N, T, E)", dim=3, last=dim)
        if x.shape[1] > max_len:
            raise ValueError(
                f"sequence of length {x.shape[1]} is longer than the {max_len} positions this encoding "
                "learned; a learned encoding cannot extrapolate"
            )
        return x + self.table.weight[: x.shape[1]]
