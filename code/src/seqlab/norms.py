"""Normalising the width of every token: LayerNorm's cheaper cousin, RMSNorm.

LayerNorm (Ba et al. 2016) centres each token's features and divides by their standard deviation;
RMSNorm (Zhang and Sennrich 2019) only divides by their root mean square, with no centring and no
bias, the norm of Llama and most open models since::

    LayerNorm(x) = (x - mean(x)) / sqrt(var(x) + eps) * gamma + beta
    RMSNorm(x)   = x / sqrt(mean(x^2) + eps) * gamma                # means over the E features

Shapes: x (..., E), gamma (E,); the output has x's shape.
"""

from __future__ import annotations

import numbers

import torch
from torch import nn

from .checks import check_int, check_tensor

__all__ = ["RMSNorm"]


class RMSNorm(nn.Module):
    """``x / sqrt(mean(x^2) + eps) * weight`` over the last axis of width ``E``; ``weight`` (E,)
    starts at ones. Equal to ``torch.nn.RMSNorm(E, eps)`` with copied weights."""

    def __init__(self, E: int, eps: float = 1e-6) -> None:
        super().__init__()
        check_int("E", E)
        if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not eps > 0:
            raise ValueError(f"eps must be a number > 0, got eps={eps!r}")
        self.eps = float(eps)
        self.weight = nn.Parameter(torch.ones(E))  # gamma (E,)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x`` (..., E) -> (..., E)."""
        check_tensor("x", x, "(..., E)", last=self.weight.shape[0], dtype=self.weight.dtype)
        inv_rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)  # (..., 1)
        return x * inv_rms * self.weight

    def extra_repr(self) -> str:
        return f"{self.weight.shape[0]}, eps={self.eps}"
