"""Measuring cost honestly: wall time, operation counts and fitted growth exponents.

``time_fn`` takes the best of several runs (and synchronises a GPU), ``time_runs`` keeps every
run (the spread a comparison of two timings is read against), ``count_ops`` counts the
ATen operations a call dispatches (a measure of how many sequential kernel launches it needs,
independent of machine noise), and ``power_law_exponent`` fits ``y = c x^k`` on a log-log scale.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import torch
from torch.utils._python_dispatch import TorchDispatchMode

__all__ = ["time_fn", "time_runs", "count_ops", "power_law_exponent", "log_slope"]


def _sync(device: torch.device | None) -> None:
    if device is not None and device.type == "cuda":
        torch.cuda.synchronize(device)


def time_fn(fn: Callable[[], object], repeats: int = 5, warmup: int = 1,
            device: str | torch.device | None = None) -> float:  # fmt: skip
    """Best wall time of ``fn()`` in seconds over ``repeats`` runs, after ``warmup`` runs.

    The minimum is the least noisy estimate of what the code costs on an otherwise idle machine.
    Pass ``device`` when ``fn`` runs on a GPU so the clock waits for its kernels.
    """
    return min(time_runs(fn, repeats, warmup, device))


def time_runs(fn: Callable[[], object], repeats: int = 5, warmup: int = 1,
              device: str | torch.device | None = None) -> list[float]:  # fmt: skip
    """The wall time of each of ``repeats`` runs of ``fn()`` in seconds, after ``warmup`` runs: the
    spread a comparison of two timings must be read against (``time_fn`` keeps the best)."""
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    device = torch.device(device) if device is not None else None
    for _ in range(warmup):
        fn()
    _sync(device)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        _sync(device)
        times.append(time.perf_counter() - start)
    return times


class _OpCounter(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.count += 1
        return func(*args, **(kwargs or {}))


def count_ops(fn: Callable[[], object]) -> int:
    """Number of ATen operations dispatched while ``fn()`` runs (forward only, no autograd).

    A loop over T time steps dispatches a few operations per step, so its count grows like T;
    a layer built from whole-sequence matrix products dispatches the same count for any T.
    """
    counter = _OpCounter()
    with torch.no_grad(), counter:
        fn()
    return counter.count


def log_slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Least-squares slope of ``log(y)`` against ``x``: the rate k in ``y ~ c e^{k x}``."""
    x = torch.as_tensor(xs, dtype=torch.float64)
    y = torch.as_tensor(ys, dtype=torch.float64)
    if x.shape != y.shape or x.numel() < 2:
        raise ValueError(f"need two equal-length sequences of >= 2 points, got {x.shape} and {y.shape}")
    if not (y > 0).all():
        raise ValueError("log_slope needs positive y values")
    design = torch.stack([x, torch.ones_like(x)], dim=1)
    return torch.linalg.lstsq(design, y.log().unsqueeze(1)).solution[0, 0].item()


def power_law_exponent(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Least-squares exponent k of ``y = c x^k`` (the slope on a log-log plot)."""
    x = torch.as_tensor(xs, dtype=torch.float64)
    if not (x > 0).all():
        raise ValueError("power_law_exponent needs positive x values")
    return log_slope(x.log().tolist(), ys)
