"""The argument checks of seqlab's public functions and modules, each written once.

Every public boundary checks its arguments with these before any computation, so the mechanisms
below it read as their equations. A bad argument gets a ``TypeError`` (wrong kind: a float for
a size, an int tensor for activations, a float mask) or a ``ValueError`` (right kind, wrong
value or shape), and the message names the argument and what was wrong with it.
"""

from __future__ import annotations

import operator

import torch

__all__ = ["check_int", "check_probability", "check_choice", "check_tensor", "check_mask"]


def check_int(name: str, value, minimum: int | None = 1) -> int:
    """``value`` as an int if it is an integer >= ``minimum`` (None: any), numpy and torch
    integers included; a bool is refused."""
    try:
        number = operator.index(value)
    except TypeError:
        number = None
    if number is None or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if minimum is not None and number < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {name}={value!r}")
    return number


def check_probability(name: str, value) -> float:
    """``value`` if it is a number in [0, 1], as ``nn.Dropout`` takes (1 drops everything)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ValueError(f"{name} must be a number in [0, 1], got {name}={value!r}")
    return value


def check_choice(name: str, value, choices: tuple[str, ...]) -> str:
    """``value`` if it is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value


def check_tensor(
    name: str, x, shape: str = "", dim: int | None = None, last: int | None = None, dtype=None
) -> torch.Tensor:
    """``x`` if it is a floating-point tensor with ``dim`` dimensions, last size ``last`` and
    the dtype ``dtype`` of the module's parameters (each when given); ``shape`` (e.g.
    ``"(N, T, E)"``) goes into the messages."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor {shape}, got {type(x).__name__}")
    if dtype is not None and x.dtype != dtype:
        raise TypeError(f"{name} has dtype {x.dtype} but the module's parameters are {dtype}")
    if not x.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got dtype {x.dtype}")
    if (dim is not None and x.dim() != dim) or (last is not None and x.shape[-1] != last):
        size = f" with {shape.strip('()').split(', ')[-1]}={last}" if last is not None else ""
        raise ValueError(f"{name} must be {shape}{size}, got {tuple(x.shape)}")
    return x


def check_mask(mask, name: str = "mask", meaning: str = "True = may attend") -> torch.Tensor:
    """``mask`` if it is a bool tensor; ``meaning`` (its convention) goes into the message."""
    if not isinstance(mask, torch.Tensor):
        raise TypeError(f"{name} must be a bool torch.Tensor ({meaning}), got {type(mask).__name__}")
    if mask.dtype != torch.bool:
        raise TypeError(f"{name} must be a bool tensor ({meaning}), got dtype {mask.dtype}")
    return mask
