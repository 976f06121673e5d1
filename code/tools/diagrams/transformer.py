"""Concept diagrams of the Transformer chapter: the encoder and decoder layers (post-norm), and
training (all positions at once, causal mask) against decoding (one position, KV cache)."""

from matplotlib.patches import Rectangle

from tools.diagrams.style import DASHED, arrow, box, figure, frame, grid, label, legend


def _stack(ax, x, w, h, name, tokens):
    """The frame of a layer stack ``h`` tall, and the embedding of its ``tokens`` below it."""
    left, width = x - 0.35, w + 0.55
    frame(ax, left, 1.05, width, h, "#fbfbfb", "#777777", rounding=0.12)
    label(ax, left + width - 0.08, 1.05 + h - 0.3, name, fontsize=9.5, color="#444444", ha="right")
    emb = box(ax, x, 0.3, w, 0.45, "√E · embedding + position", "input", fontsize=9)
    label(ax, x + w / 2, 0.12, tokens, fontsize=9, color="#444444")
    arrow(ax, (emb[0], 0.75), (emb[0], 1.3))
    return emb


def _sublayer(ax, x, y, w, text, role, residual_from, fontsize=9.5):
    """A sub-layer box, its Add & Norm box above, and the residual path around both."""
    sub = box(ax, x, y, w, 0.42, text, role, fontsize=fontsize)
    norm = box(ax, x, y + 0.62, w, 0.32, "Add & LayerNorm", "op", fontsize=9)
    arrow(ax, (sub[0], y + 0.42), (norm[0], y + 0.62))
    # residual: from below the sub-layer, around its left side, into Add & Norm
    ax.plot([residual_from[0], x - 0.18, x - 0.18], [residual_from[1], residual_from[1], norm[1]],
            color="#333333", lw=1.2)  # fmt: skip
    arrow(ax, (x - 0.18, norm[1]), (x, norm[1]))
    return sub, norm


def transformer_layers():
    """Encoder layer (left) and decoder layer (right), post-norm, with masks and cross-attention."""
    fig, ax = figure(7, 5.6)
    w = 2.1
    # ---------------- encoder
    ex = 0.55
    emb = _stack(ax, ex, w, 3.15, "encoder\nlayer × $n_\\mathrm{layers}$", "source tokens (N, S)")
    sa, n1 = _sublayer(ax, ex, 1.3, w, "self-attention\n(padding mask)", "memory", (emb[0], 1.15))
    ff, n2 = _sublayer(ax, ex, 2.6, w, "FFN: max(0, xW₁+b₁)W₂+b₂", "hidden", (n1[0], 2.45), 8.5)
    arrow(ax, (n1[0], 2.24), (ff[0], 2.6))
    mem = box(ax, ex, 4.45, w, 0.45, "memory (N, S, E)", "memory", fontsize=9.5)
    arrow(ax, (n2[0], 3.54), (mem[0], 4.45))

    # ---------------- decoder
    dx = 4.15
    demb = _stack(ax, dx, w, 4.0, "decoder\nlayer × $n_\\mathrm{layers}$", "target so far (N, L)")
    msa, m1 = _sublayer(ax, dx, 1.3, w, "masked self-attention\n(causal mask)", "query", (demb[0], 1.15))
    ca, m2 = _sublayer(ax, dx, 2.45, w, "cross-attention\nQ: decoder; K, V: memory", "key", (m1[0], 2.3), 8.5)
    arrow(ax, (m1[0], 2.24), (ca[0], 2.45))
    ff2, m3 = _sublayer(ax, dx, 3.6, w, "FFN", "hidden", (m2[0], 3.45))
    arrow(ax, (m2[0], 3.39), (ff2[0], 3.6))
    out = box(ax, dx, 5.2, w, 0.35, "linear + softmax → (N, L, V)", "output", fontsize=9)
    arrow(ax, (m3[0], 4.54), (out[0], 5.2))
    # memory -> cross-attention keys and values
    ax.plot([ex + w, 3.45, 3.45], [mem[1], mem[1], ca[1]], color="#333333", lw=1.4)
    arrow(ax, (3.45, ca[1]), (dx, ca[1]))
    label(ax, 3.2, 3.0, "K, V", fontsize=9.5)
    legend(ax, 0.2, 5.3, ["input", "memory", "query", "key", "hidden"],
           names={"memory": "encoder", "query": "masked", "key": "cross", "hidden": "FFN"},
           fontsize=8.5, dx=0.78)  # fmt: skip
    return fig


def transformer_train_vs_decode():
    """Training: every target position in one pass under the causal mask. Decoding: one new
    position, whose query attends over the cached keys and values of the earlier ones."""
    fig, ax = figure(7, 3.3)
    # ---------------- training
    label(ax, 1.75, 3.1, "training: all L positions in one pass", fontsize=10.5)
    for t in range(5):
        box(ax, 0.25 + t * 0.62, 0.2, 0.5, 0.38, f"y{t}", "input", fontsize=9)
        arrow(ax, (0.5 + t * 0.62, 0.58), (0.5 + t * 0.62, 0.85))
    box(ax, 0.25, 0.85, 2.98, 0.42, "decoder: one batch of matrix products", "op", fontsize=9)
    cell = 0.24
    grid(ax, 1.15, 2.85, 5, cell, lambda i, j: j > i)
    label(ax, 0.6, 2.25, "causal\nmask (L, L)", fontsize=9)
    arrow(ax, (1.75, 1.27), (1.75, 1.6))
    label(ax, 2.75, 1.7, "row i: query i\nsees keys j ≤ i", fontsize=8.5, ha="left")

    # ---------------- decoding with a KV cache
    x0 = 3.85
    label(ax, x0 + 1.5, 3.1, "decoding: one position per step", fontsize=10.5)
    for t in range(5):
        box(ax, x0 + t * 0.55, 2.25, 0.45, 0.38, f"k{t}", "key", fontsize=9)
        box(ax, x0 + t * 0.55, 1.75, 0.45, 0.38, f"v{t}", "value", fontsize=9)
    ax.add_patch(
        Rectangle((x0 - 0.07, 1.68), 4 * 0.55 + 0.02, 1.02, fc="none", ec="#777777", lw=1.0, linestyle=DASHED)
    )
    label(ax, x0 + 1.1, 2.83, "KV cache: kept from steps 0..3", fontsize=8.5, color="#444444")
    q = box(ax, x0 + 4 * 0.55, 0.85, 0.45, 0.38, "q4", "query", fontsize=9)
    new = box(ax, x0 + 4 * 0.55, 0.2, 0.45, 0.38, "y4", "input", fontsize=9)
    arrow(ax, (new[0], 0.58), (q[0], 0.85))
    arrow(ax, (q[0] + 0.22, q[1]), (x0 + 4 * 0.55 + 0.45, 2.0), connection="arc3,rad=0.5")
    label(ax, x0 + 0.9, 1.0, "step t projects only\nthe new token; its\nquery attends over\nall t + 1 keys",
          fontsize=8.5)  # fmt: skip
    legend(ax, 3.9, 0.05, ["query", "key", "value", "mask"], names={"mask": "masked"}, fontsize=8, dx=0.75)
    return fig
