"""Checks that the graded exercises call, with failure messages written for students.

A test cell in a chapter says, for example, ``check_close(out, expected, "out")``; when the
answer is wrong the student reads which value is off, its shape, or how far it is from the
expected one, instead of a bare ``AssertionError``.
"""

from __future__ import annotations

import torch

__all__ = ["check_tensor", "check_close"]


def check_tensor(value, name: str, shape: tuple[int, ...] | None = None) -> torch.Tensor:
    """Assert that ``value`` is a finite tensor (of ``shape`` if given) and return it."""
    if value is None or value is Ellipsis:
        raise AssertionError(f"{name} is {value!r}: the function is not written yet (or returns nothing)")
    if not isinstance(value, torch.Tensor):
        raise AssertionError(f"{name} should be a torch.Tensor, got {type(value).__name__}")
    if shape is not None and tuple(value.shape) != tuple(shape):
        raise AssertionError(f"{name} has shape {tuple(value.shape)}, expected {tuple(shape)}")
    if value.is_floating_point() and not torch.isfinite(value).all():
        raise AssertionError(f"{name} contains NaN or infinite values")
    return value


def check_close(value, expected: torch.Tensor, name: str, atol: float = 1e-5, rtol: float = 1e-5) -> None:
    """Assert that ``value`` is a tensor of ``expected``'s shape and close to it elementwise."""
    value = check_tensor(value, name, tuple(expected.shape))
    value = value.detach().to(expected.dtype)
    expected = expected.detach()
    diff = (value - expected).abs()
    allowed = atol + rtol * expected.abs()
    if (diff > allowed).any():
        worst = int(torch.argmax(diff - allowed))
        index = tuple(int(i) for i in torch.unravel_index(torch.tensor(worst), diff.shape))
        raise AssertionError(
            f"{name} differs from the expected values at {int((diff > allowed).sum())} of "
            f"{diff.numel()} entries; largest |difference| is {diff.max().item():.3g} "
            f"(at index {index}: got {value[index].item():.6g}, expected {expected[index].item():.6g})"
        )
