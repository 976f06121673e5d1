"""Positional encodings: telling an order-blind attention layer where each token is.

Sinusoidal encoding (Vaswani et al. 2017), for position p and feature pair i = 0 .. E/2 - 1::

    PE[p, 2i]     = sin(p / 10000^(2i / E))
    PE[p, 2i + 1] = cos(p / 10000^(2i / E))

Every row has norm sqrt(E / 2) (each (sin, cos) pair has norm 1), and the distance between
rows p and p + k depends on k only. A learned encoding is one trained vector per position, and
has nothing to say about positions it never saw.
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["sinusoidal_encoding", "SinusoidalPositionalEncoding", "LearnedPositionalEncoding"]


def sinusoidal_encoding(length: int, dim: int, base: float = 10000.0, start: int = 0) -> torch.Tensor:
    """The (T, E) table of sinusoidal encodings for positions ``start .. start + T - 1``.

    ``dim`` must be even (features come in sin/cos pairs).
    """
    if length < 1 or dim < 2 or dim % 2:
        raise ValueError(f"need length >= 1 and an even dim >= 2, got length={length}, dim={dim}")
    position = torch.arange(start, start + length, dtype=torch.float64).unsqueeze(1)  # (T, 1)
    frequency = base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)  # (E/2,)
    table = torch.empty(length, dim, dtype=torch.float64)
    table[:, 0::2] = torch.sin(position * frequency)
    table[:, 1::2] = torch.cos(position * frequency)
    return table.float()


class SinusoidalPositionalEncoding(nn.Module):
    """Adds the sinusoidal table to a batch (N, T, E); works for any T (computed on demand)."""

    def __init__(self, dim: int, base: float = 10000.0) -> None:
        super().__init__()
        if dim % 2:
            raise ValueError(f"dim must be even, got {dim}")
        self.dim, self.base = dim, base

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 3 or x.shape[-1] != self.dim:
            raise ValueError(f"x must be (N, T, E) with E={self.dim}, got {tuple(x.shape)}")
        return x + sinusoidal_encoding(x.shape[1], self.dim, self.base).to(x.device, x.dtype)


class LearnedPositionalEncoding(nn.Module):
    """Adds one trained vector per position to a batch (N, T, E); T must be at most ``max_len``."""

    def __init__(self, max_len: int, dim: int) -> None:
        super().__init__()
        self.table = nn.Embedding(max_len, dim)
        nn.init.normal_(self.table.weight, std=0.02)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        max_len, dim = self.table.weight.shape
        if x.dim() != 3 or x.shape[-1] != dim:
            raise ValueError(f"x must be (N, T, E) with E={dim}, got {tuple(x.shape)}")
        if x.shape[1] > max_len:
            raise ValueError(
                f"sequence of length {x.shape[1]} is longer than the {max_len} positions this encoding "
                "learned; a learned encoding cannot extrapolate"
            )
        return x + self.table.weight[: x.shape[1]]
