"""Small helpers shared by the chapters."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from torch import nn

__all__ = ["count_parameters", "eval_mode"]


@contextmanager
def eval_mode(model: nn.Module) -> Iterator[nn.Module]:
    """``with eval_mode(model):`` runs the body in evaluation mode, then restores the mode."""
    was_training = model.training
    model.eval()
    try:
        yield model
    finally:
        model.train(was_training)


def count_parameters(module: nn.Module) -> int:
    """Number of distinct trainable parameters of ``module`` (a tied matrix counts once)."""
    if not isinstance(module, nn.Module):
        raise TypeError(f"module must be a torch.nn.Module, got {type(module).__name__}")
    return sum(p.numel() for p in module.parameters() if p.requires_grad)
