"""Figures used across the chapters: training curves and heatmaps (attention, Jacobians, gates).

Every function draws on a Matplotlib ``Axes`` (a new one if none is given) and returns it, so a
notebook can arrange several in one figure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch

__all__ = ["plot_curves", "heatmap", "to_numpy"]


def to_numpy(values) -> np.ndarray:
    """A tensor (any device, with or without grad), list or array as a NumPy array."""
    if isinstance(values, torch.Tensor):
        return values.detach().float().cpu().numpy()
    return np.asarray(values, dtype=float)


def plot_curves(
    curves: Mapping[str, Sequence[float] | tuple[Sequence[float], Sequence[float]]],
    ax: plt.Axes | None = None,
    *,
    xlabel: str = "step",
    ylabel: str = "",
    title: str | None = None,
    logy: bool = False,
    smooth: int = 1,
) -> plt.Axes:
    """One line per entry of ``curves``: ``{label: ys}`` or ``{label: (xs, ys)}``.

    ``smooth`` > 1 draws a running mean over that many points. Non-finite values are left out.
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.5))
    for label, values in curves.items():
        if isinstance(values, tuple) and len(values) == 2:
            xs, ys = to_numpy(values[0]), to_numpy(values[1])
        else:
            ys = to_numpy(values)
            xs = np.arange(1, len(ys) + 1)
        if len(xs) != len(ys):
            raise ValueError(f"curve {label!r}: {len(xs)} x values but {len(ys)} y values")
        if smooth > 1 and len(ys) >= smooth:
            ys = np.convolve(ys, np.ones(smooth) / smooth, mode="valid")
            xs = xs[smooth - 1 :]
        keep = np.isfinite(ys)
        ax.plot(xs[keep], ys[keep], label=label)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    if len(curves) > 1:
        ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    return ax


def heatmap(
    matrix,
    ax: plt.Axes | None = None,
    *,
    xlabels: Sequence[str] | None = None,
    ylabels: Sequence[str] | None = None,
    xlabel: str = "",
    ylabel: str = "",
    title: str | None = None,
    cmap: str = "viridis",
    colorbar: bool = True,
    vmin: float | None = None,
    vmax: float | None = None,
) -> plt.Axes:
    """Draw a 2-D matrix (rows down, columns across), e.g. attention weights (L, S).

    ``xlabels`` / ``ylabels`` name the columns / rows (their lengths must match).
    """
    m = to_numpy(matrix)
    if m.ndim != 2:
        raise ValueError(f"heatmap needs a 2-D matrix, got shape {m.shape}")
    if xlabels is not None and len(xlabels) != m.shape[1]:
        raise ValueError(f"{len(xlabels)} xlabels for {m.shape[1]} columns")
    if ylabels is not None and len(ylabels) != m.shape[0]:
        raise ValueError(f"{len(ylabels)} ylabels for {m.shape[0]} rows")
    if ax is None:
        _, ax = plt.subplots(figsize=(max(3, 0.35 * m.shape[1] + 1.5), max(2.5, 0.35 * m.shape[0] + 1)))
    image = ax.imshow(m, cmap=cmap, aspect="auto", vmin=vmin, vmax=vmax, interpolation="nearest")
    if xlabels is not None:
        ax.set_xticks(range(len(xlabels)), xlabels, rotation=90)
    if ylabels is not None:
        ax.set_yticks(range(len(ylabels)), ylabels)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    if colorbar:
        ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    return ax
