"""Concept diagrams of the chapter on what the block became: the GPT-2 block beside the Llama
block (the four parts that changed), and grouped-query attention (query heads sharing key/value
heads, and the cache that shrinks with them)."""

from tools.diagrams.style import arrow, box, figure, frame, label, legend


def _block(ax, x, w, title, parts, positions_below, positions_inside, changed):
    """One pre-norm block at ``x`` (``w`` wide): embedding, norm, attention, norm, FFN, output.
    ``parts`` names (norm, attention, FFN); ``changed`` draws a thick edge on the new parts."""
    norm, attn, ffn = parts
    label(ax, x + w / 2, 5.55, title, fontsize=10.5)
    box(ax, x, 0.2, w, 0.4, "tokens  (N, T)", "input", fontsize=9)
    emb = box(ax, x, 0.8, w, 0.42, positions_below, "input", fontsize=8.5)
    arrow(ax, (emb[0], 0.6), (emb[0], 0.8))
    frame(ax, x - 0.3, 1.42, w + 0.55, 2.95, "#fbfbfb", "#777777", rounding=0.12)
    label(ax, x + w + 0.2, 4.2, "× L", fontsize=9, color="#444444", ha="right")
    ln1 = box(ax, x + 0.35, 1.58, w - 0.35, 0.32, norm, "op", fontsize=9)
    att = box(ax, x + 0.35, 2.05, w - 0.35, 0.62, attn + "\n" + positions_inside, "query", fontsize=8.5)
    ln2 = box(ax, x + 0.35, 2.92, w - 0.35, 0.32, norm, "op", fontsize=9)
    ff = box(ax, x + 0.35, 3.38, w - 0.35, 0.48, ffn, "hidden", fontsize=8.5)
    if changed:  # a thick edge on the parts that changed
        for y, h in ((1.58, 0.32), (2.05, 0.62), (2.92, 0.32), (3.38, 0.48)):
            frame(ax, x + 0.33, y - 0.02, w - 0.31, h + 0.04, "none", "#222222", rounding=0.09, lw=2.2,
                  linestyle="-")  # fmt: skip
    arrow(ax, (emb[0], 1.22), (ln1[0], 1.58))
    arrow(ax, (ln1[0], 1.9), (att[0], 2.05))
    arrow(ax, (att[0], 2.67), (ln2[0], 2.92))
    arrow(ax, (ln2[0], 3.24), (ff[0], 3.38))
    for y0, y1 in ((1.42, 2.78), (2.82, 4.05)):  # the residual paths: x + sub-layer(norm(x))
        ax.plot([x + 0.35, x + 0.1, x + 0.1], [y0 + 0.08, y0 + 0.08, y1], color="#333333", lw=1.2)
        label(ax, x - 0.08, (y0 + y1) / 2, "+", fontsize=11)
    out = box(ax, x, 4.6, w, 0.42, norm.split()[0] + ", then · W_tokᵀ → (N, T, V)", "output", fontsize=8.5)
    arrow(ax, (ff[0], 3.86), (out[0], 4.6))


def block_before_after():
    """Left: the GPT-2 block of the language-model chapter (LayerNorm, learned positions added to
    the embedding, multi-head attention, a GELU FFN). Right: the Llama block (RMSNorm, rotary
    positions applied to queries and keys inside attention, grouped-query attention, SwiGLU)."""
    fig, ax = figure(7, 6.0)
    w = 2.55
    _block(ax, 0.55, w, "GPT-2 block (2019)",
           ("LayerNorm (mean, scale, bias)", "multi-head attention", "FFN: GELU(x W₁ + b₁) W₂ + b₂"),
           "W_tok[x] + W_pos[t]  (N, T, E)", "H query, H key/value heads", changed=False)  # fmt: skip
    _block(ax, 4.05, w, "Llama block (2023)",
           ("RMSNorm (scale only)", "grouped-query attention", "SwiGLU: (silu(x W_g) ⊙ x W_u) W_d"),
           "W_tok[x]  (N, T, E): no positions", "RoPE rotates q, k; G < H k/v heads",
           changed=True)  # fmt: skip
    arrow(ax, (3.45, 2.5), (3.7, 2.5))
    return fig


def gqa_heads():
    """H = 4 query heads over G = 2 key/value heads: heads 1-2 read k/v head 1, heads 3-4 k/v head 2;
    the KV cache keeps G heads per token, not H."""
    fig, ax = figure(7, 3.0)
    for x0, g, title in ((0.35, 4, "multi-head (G = H = 4)"),
                         (2.65, 2, "grouped-query (G = 2)"),
                         (4.95, 1, "multi-query (G = 1)")):  # fmt: skip
        label(ax, x0 + 0.95, 2.75, title, fontsize=9.5)
        qs = [box(ax, x0 + i * 0.5, 1.9, 0.4, 0.4, f"q{i + 1}", "query", fontsize=8.5) for i in range(4)]
        kw = 1.9 / g
        sep = ", " if g < 4 else "\n"  # a narrow box: k above v
        kvs = [box(ax, x0 + j * kw + 0.03, 0.75, kw - 0.1, 0.45, f"k{j + 1}{sep}v{j + 1}", "key", fontsize=8)
               for j in range(g)]  # fmt: skip
        for i, q in enumerate(qs):
            kv = kvs[i * g // 4]
            arrow(ax, (q[0], 1.9), (kv[0], 1.2))
        label(ax, x0 + 0.95, 0.4, f"cache: {g} of 4 heads", fontsize=8.5, color="#444444")
    legend(ax, 2.3, 0.02, ["query", "key"], {"query": "query head", "key": "key/value head (cached)"}, dx=1.3)
    return fig
