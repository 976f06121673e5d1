"""One visual language for the book's concept diagrams, so a reader learns it once: colours by role
(query, key, value, hidden, cell, memory, input, output, weight, mask), a solid dark arrow for data
forward, a dashed red one for gradients back. A chapter's diagrams are functions returning a Figure
in ``code/tools/diagrams/<chapter>.py``, each named as its file (``build.py``).
"""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle  # noqa: E402

# Colour by role (colour-blind-safe: Okabe-Ito based), light fill + dark edge.
ROLE = {
    "query": ("#cfe3f5", "#0072b2"),  # blue
    "key": ("#fbe3c6", "#e69f00"),  # orange
    "value": ("#d3efe4", "#009e73"),  # green
    "hidden": ("#e6dcef", "#7a4f9a"),  # purple: hidden state h
    "cell": ("#f8d9d0", "#d55e00"),  # vermilion: LSTM cell state c
    "memory": ("#f6f0c8", "#a08a00"),  # yellow: memories / tapes / encoder states
    "input": ("#eeeeee", "#555555"),  # grey: inputs, tokens, embeddings
    "output": ("#dde8f0", "#33546b"),  # slate: outputs, logits
    "op": ("#ffffff", "#333333"),  # white: an operation (softmax, +, x, LayerNorm)
    "weight": ("#f2f2f2", "#888888"),  # light grey: parameters
    "mask": ("#f4cccc", "#990000"),  # red: masked entries
}
DATA = dict(arrowstyle="-|>", color="#333333", lw=1.4, mutation_scale=12)
GRAD = dict(arrowstyle="-|>", color="#c0392b", lw=1.4, mutation_scale=12, linestyle=(0, (4, 3)))
FONT = 11  # points; figures are at most 7 in wide, shown ~720 px wide: 11 pt is ~15 px
GREY = "#555555"  # secondary text
DASHED = (0, (4, 3))


def figure(width: float, height: float) -> tuple[plt.Figure, plt.Axes]:
    """A blank canvas ``width`` x ``height`` inches (width <= 7), axes in inches, no frame."""
    if width > 7:
        raise ValueError(f"diagrams are at most 7 inches wide (the page column), got {width}")
    fig = plt.figure(figsize=(width, height))
    ax = fig.add_axes((0, 0, 1, 1), xlim=(0, width), ylim=(0, height), aspect="equal")
    ax.axis("off")
    return fig, ax


def box(ax, x, y, w, h, text="", role="op", *, fontsize=FONT, rounded=True, **text_kw):
    """A labelled box with its lower-left corner at (x, y), coloured by ``role``; returns its centre."""
    face, edge = ROLE[role]
    style = "round,pad=0.02,rounding_size=0.08" if rounded else "square,pad=0.0"
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle=style, fc=face, ec=edge, lw=1.3))
    if text:
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=fontsize, **text_kw)
    return (x + w / 2, y + h / 2)


def circle(ax, x: float, y: float, r: float, text: str, fontsize: float = FONT):
    """An operation node (e.g. "+", "×", "σ") centred at (x, y)."""
    face, edge = ROLE["op"]
    ax.add_patch(plt.Circle((x, y), r, fc=face, ec=edge, lw=1.3))
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize)
    return (x, y)


def arrow(ax, start, end, kind: str = "data", connection: str = "arc3,rad=0", **kw):
    """An arrow from ``start`` to ``end``; ``kind`` "data" (forward) or "grad" (backward)."""
    style = {"data": DATA, "grad": GRAD}[kind] | kw
    ax.add_patch(FancyArrowPatch(start, end, connectionstyle=connection, shrinkA=2, shrinkB=2, **style))


def label(ax, x: float, y: float, text: str, fontsize: float = FONT, **kw):
    """Free text (math allowed, e.g. r"$h_t$")."""
    ax.text(x, y, text, fontsize=fontsize, ha=kw.pop("ha", "center"), va=kw.pop("va", "center"), **kw)


def legend(ax, x, y, roles: list[str], names: dict[str, str] | None = None, fontsize=9.5, dx=1.05):
    """A row of small swatches naming the roles used, starting at (x, y)."""
    for i, role in enumerate(roles):
        face, edge = ROLE[role]
        ax.add_patch(FancyBboxPatch((x + i * dx, y), 0.18, 0.18, boxstyle="square,pad=0", fc=face, ec=edge))
        ax.text(x + i * dx + 0.25, y + 0.09, (names or {}).get(role, role), fontsize=fontsize, va="center")


def frame(ax, x, y, w, h, fc, ec, rounding=0.1, lw=1.0, linestyle=DASHED):
    """A rounded frame around a group of boxes (dashed unless told)."""
    style = f"round,pad=0.02,rounding_size={rounding}"
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle=style, fc=fc, ec=ec, lw=lw, linestyle=linestyle))


def grid(ax, left, top, n, cell, masked, mark=False):
    """An n x n matrix of scores, the entries ``masked(i, j)`` in the mask colours (with "×" if ``mark``)."""
    for i in range(n):
        for j in range(n):
            face, edge = ROLE["mask"] if masked(i, j) else ROLE["query"]
            ax.add_patch(
                Rectangle((left + j * cell, top - (i + 1) * cell), cell, cell, fc=face, ec=edge, lw=0.8)
            )
            if mark and masked(i, j):
                label(ax, left + (j + 0.5) * cell, top - (i + 0.5) * cell, "×", fontsize=8, color=edge)
