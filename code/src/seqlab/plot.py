"""Figures and tables used across the chapters, in one style.

``use_book_style()`` (called at the top of every chapter) sets figures at most ``MAX_WIDTH``
inches wide with legible fonts. Every plotting function draws on a Matplotlib ``Axes`` (a new one
if none is given) and returns it; ``results_table`` renders result rows as a Markdown table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.ticker import MaxNLocator

__all__ = [
    "MAX_WIDTH",
    "use_book_style",
    "integer_ticks",
    "plot_curves",
    "heatmap",
    "results_table",
    "to_numpy",
]

MAX_WIDTH = 7.0  # inches: the page shows a figure about 720 px wide, so ~100 px per inch

BOOK_STYLE = {
    "figure.figsize": (6.4, 3.6),
    "figure.dpi": 100,
    "savefig.dpi": 200,
    "savefig.bbox": "tight",
    "font.size": 10,  # 10 pt at ~100 px per inch: about 14 px on the page
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "axes.grid": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "image.cmap": "viridis",
}


def use_book_style() -> None:
    """Set the book's figure style, and ask IPython (if running) for retina PNGs (twice the pixels)."""
    plt.rcParams.update(BOOK_STYLE)
    try:
        from IPython import get_ipython
        from matplotlib_inline.backend_inline import set_matplotlib_formats
    except ImportError:  # plain Python: nothing to configure
        return
    if get_ipython() is not None:
        set_matplotlib_formats("retina")


def integer_ticks(ax: plt.Axes, axis: str = "x") -> plt.Axes:
    """Put ticks on whole numbers only (for counts, lengths, steps) on ``axis`` ("x", "y", "both")."""
    if axis not in ("x", "y", "both"):
        raise ValueError(f'axis must be "x", "y" or "both", got {axis!r}')
    for name in ("x", "y") if axis == "both" else (axis,):
        getattr(ax, f"{name}axis").set_major_locator(MaxNLocator(integer=True))
    return ax


def to_numpy(values) -> np.ndarray:
    """A tensor (any device, with or without grad), list or array as a NumPy array."""
    if isinstance(values, torch.Tensor):
        return values.detach().float().cpu().numpy()
    return np.asarray(values, dtype=float)


def plot_curves(
    curves: Mapping[str, Sequence[float] | tuple[Sequence[float], Sequence[float]]], ax=None,
    *, xlabel: str = "step", ylabel: str = "", title: str | None = None, logy: bool = False, smooth: int = 1,
) -> plt.Axes:  # fmt: skip
    """One line per entry of ``curves``, ``{label: ys}`` or ``{label: (xs, ys)}``, without the
    non-finite values; ``smooth`` > 1 draws a running mean over that many points."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.5))
    if not curves:
        raise ValueError("curves is empty: nothing to plot")
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
    matrix, ax: plt.Axes | None = None, *, xlabels: Sequence[str] | None = None,
    ylabels: Sequence[str] | None = None, xlabel: str = "", ylabel: str = "", title: str | None = None,
    cmap: str = "viridis", colorbar: bool = True, vmin: float | None = None, vmax: float | None = None,
) -> plt.Axes:  # fmt: skip
    """Draw a 2-D matrix, e.g. attention weights (L, S), ``xlabels`` / ``ylabels`` naming the
    columns / rows."""
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
        single = all(len(str(label)) <= 1 for label in xlabels)  # characters read upright
        ax.set_xticks(range(len(xlabels)), xlabels, rotation=0 if single else 90)
    if ylabels is not None:
        ax.set_yticks(range(len(ylabels)), ylabels)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    if colorbar:
        ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    return ax


def results_table(
    rows: Sequence[Mapping[str, object]], columns: Mapping[str, str] | Sequence[str] | None = None,
    formats: Mapping[str, str] | None = None,
):  # fmt: skip
    """An ``IPython.display.Markdown`` table of ``rows`` (``{key: value}`` each): the ``columns``
    (default: the first row's keys; a mapping ``{key: header}`` names them), values formatted by
    ``formats`` (``{key: spec}``, e.g. ``{"ms": ".0f"}``)."""
    from IPython.display import Markdown

    if not rows:
        raise ValueError("rows is empty: nothing to tabulate")
    if columns is None:
        columns = list(rows[0])
    headers = dict(columns) if isinstance(columns, Mapping) else {key: key for key in columns}
    formats = dict(formats or {})
    unknown = sorted(set(formats) - set(headers))
    if unknown:
        raise ValueError(f"formats name columns that are not shown: {unknown}")

    def cell(row: Mapping[str, object], key: str) -> str:
        if key not in row:
            raise ValueError(f"a row has no value for column {key!r}: {dict(row)}")
        value = row[key]
        return format(value, formats[key]) if key in formats else str(value)

    lines = ["| " + " | ".join(headers.values()) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(row, key) for key in headers) + " |" for row in rows]
    return Markdown("\n".join(lines))
