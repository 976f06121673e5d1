"""Small helpers shared by the chapters."""

from __future__ import annotations

from torch import nn

__all__ = ["count_parameters"]


def count_parameters(module: nn.Module) -> int:
    """Number of distinct trainable parameters of ``module`` (a tied matrix counts once)."""
    if not isinstance(module, nn.Module):
        raise TypeError(f"module must be a torch.nn.Module, got {type(module).__name__}")
    return sum(p.numel() for p in module.parameters() if p.requires_grad)
