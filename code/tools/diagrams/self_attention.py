"""Concept diagram of the self-attention chapter: one multi-head self-attention layer."""

from tools.diagrams.style import arrow, box, figure, frame, grid, label, legend


def self_attention_layer():
    """X -> Q, K, V projections -> masked score matrix -> softmax -> A V, H times; concat; W^O."""
    fig, ax = figure(7, 3.9)
    # the stack of H heads: two shadow frames behind the frame of one head
    for i, shade in ((2, "#f4f4f4"), (1, "#fafafa")):
        frame(ax, 1.2 + 0.09 * i, 0.45 + 0.09 * i, 4.3, 2.95, shade, "#aaaaaa", lw=0.8, linestyle=None)
    frame(ax, 1.2, 0.45, 4.3, 2.95, "white", "#555555")
    label(ax, 2.45, 3.22, "one head h (of H), width D = E / H", fontsize=9.5, color="#444444")
    label(ax, 5.0, 3.72, "× H heads", fontsize=10, color="#444444")

    # input and the three projections
    x_in = box(ax, 0.05, 1.55, 0.85, 0.75, "X\n(T, E)", "input")
    centres = {}
    for role, y in {"query": 2.55, "key": 1.55, "value": 0.65}.items():
        letter = role[0].upper()  # Q, K, V
        w_c = box(ax, 1.35, y, 0.6, 0.5, f"$W^{letter}_h$", "weight")
        centres[role] = box(ax, 2.2, y - 0.05, 0.7, 0.6, f"{letter}\n(T, D)", role, fontsize=10)
        arrow(ax, (x_in[0] + 0.43, x_in[1]), (1.35, w_c[1]))
        arrow(ax, (1.95, w_c[1]), (2.2, w_c[1]))

    # the score matrix Q K^T / sqrt(D), causal mask on the entries j > i
    cell, left, top = 0.24, 3.25, 2.95
    grid(ax, left, top, 4, cell, lambda i, j: j > i, mark=True)
    label(ax, left + 2 * cell, top + 0.13, "key j →", fontsize=8, color="#444444")
    label(ax, left - 0.12, top - 2 * cell, "query i", fontsize=8, color="#444444", rotation=90)
    label(ax, left + 2 * cell, top - 4 * cell - 0.32, "QKᵀ / √D\n+ mask (T, T)", fontsize=9)
    arrow(ax, (2.9, centres["query"][1]), (left, top - 1.2 * cell))
    arrow(ax, (2.9, centres["key"][1]), (left, top - 3.2 * cell))

    # softmax, then the weighted sum of the values
    soft = box(ax, 4.4, 2.3, 0.95, 0.45, "softmax", "op", fontsize=10)
    arrow(ax, (left + 4 * cell, top - 2 * cell), (4.4, soft[1]))
    mix = box(ax, 4.4, 0.7, 0.95, 0.5, "A V\n(T, D)", "op", fontsize=10)
    arrow(ax, (soft[0], 2.3), (soft[0], 1.2))
    label(ax, soft[0] + 0.3, 1.75, "A", fontsize=10)
    arrow(ax, (2.9, centres["value"][1]), (4.4, mix[1]))

    # concatenate the heads, mix them with W^O
    cat = box(ax, 5.85, 2.5, 1.1, 0.55, "concat\n(T, H·D)", "op", fontsize=9.5)
    w_o = box(ax, 5.85, 1.6, 1.1, 0.5, "$W^O$ (E, E)", "weight", fontsize=10)
    box(ax, 5.85, 0.6, 1.1, 0.6, "output\n(T, E)", "output", fontsize=10)
    arrow(ax, (5.35, mix[1]), (cat[0] - 0.3, 2.5), connection="arc3,rad=0.25")
    arrow(ax, (cat[0], 2.5), (cat[0], 2.1))
    arrow(ax, (w_o[0], 1.6), (w_o[0], 1.2))

    legend(ax, 0.1, 0.08, ["input", "query", "key", "value", "weight", "mask", "output"],
           names={"weight": "parameters", "mask": "masked"}, fontsize=8.5, dx=0.98)  # fmt: skip
    return fig
