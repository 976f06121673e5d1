"""Concept diagrams of the language-model chapter: a GPT beside an LSTM language model, and
in-context copying (where each model must find the token that comes next)."""

from tools.diagrams.style import arrow, box, figure, frame, label


def gpt_vs_lstm_lm():
    """Left: a GPT, token and position embeddings, pre-norm blocks of causal self-attention and an
    FFN, a final LayerNorm and the tied output. Right: an LSTM language model unrolled over time,
    whose state (h, c) carries the past."""
    fig, ax = figure(7, 5.2)
    # ---------------- GPT
    x, w = 0.5, 2.6
    label(ax, x + w / 2, 5.0, "GPT (decoder only)", fontsize=10.5)
    box(ax, x, 0.2, w, 0.42, "tokens x₀ … x_T₋₁  (N, T)", "input", fontsize=9)
    emb = box(ax, x, 0.85, w, 0.42, "W_tok[x] + W_pos[t]  (N, T, E)", "input", fontsize=9)
    arrow(ax, (emb[0], 0.62), (emb[0], 0.85))
    frame(ax, x - 0.3, 1.45, w + 0.55, 2.45, "#fbfbfb", "#777777", rounding=0.12)
    label(ax, x + w + 0.2, 3.72, "block\n× layers", fontsize=9, color="#444444", ha="right")
    ln1 = box(ax, x + 0.35, 1.6, w - 0.35, 0.32, "LayerNorm", "op", fontsize=9)
    att = box(ax, x + 0.35, 2.05, w - 0.35, 0.45, "causal self-attention\n(query t sees keys ≤ t)", "query",
              fontsize=8.5)  # fmt: skip
    ln2 = box(ax, x + 0.35, 2.75, w - 0.35, 0.32, "LayerNorm", "op", fontsize=9)
    ffn = box(ax, x + 0.35, 3.2, w - 0.35, 0.4, "FFN", "hidden", fontsize=9)
    arrow(ax, (emb[0], 1.27), (ln1[0], 1.6))
    arrow(ax, (ln1[0], 1.92), (att[0], 2.05))
    arrow(ax, (att[0], 2.5), (ln2[0], 2.75))
    arrow(ax, (ln2[0], 3.07), (ffn[0], 3.2))
    for y0, y1 in ((1.45, 2.6), (2.65, 3.82)):  # the residual paths: x + sub-layer(LN(x))
        ax.plot([x + 0.35, x + 0.1, x + 0.1], [y0 + 0.08, y0 + 0.08, y1], color="#333333", lw=1.2)
        label(ax, x - 0.08, (y0 + y1) / 2, "+", fontsize=11)
    out = box(ax, x, 4.1, w, 0.42, "LayerNorm, then · W_tokᵀ  → (N, T, V)", "output", fontsize=9)
    arrow(ax, (ffn[0], 3.6), (out[0], 4.1))
    label(ax, x + w / 2, 4.72, "p(x_t+1 | x_≤t) at every t, in one pass", fontsize=8.5, color="#444444")

    # ---------------- LSTM LM
    x0 = 4.05
    label(ax, x0 + 1.3, 5.0, "LSTM language model", fontsize=10.5)
    for t in range(3):
        cx = x0 + t * 0.95
        box(ax, cx, 0.2, 0.75, 0.42, f"x{t}", "input", fontsize=9)
        e = box(ax, cx, 0.85, 0.75, 0.42, "W_tok[x]", "input", fontsize=8.5)
        arrow(ax, (e[0], 0.62), (e[0], 0.85))
        cell = box(ax, cx, 1.8, 0.75, 0.8, "LSTM\nstep", "cell", fontsize=9)
        arrow(ax, (e[0], 1.27), (cell[0], 1.8))
        o = box(ax, cx, 3.2, 0.75, 0.55, "proj\n· W_tokᵀ", "output", fontsize=8.5)
        arrow(ax, (cell[0], 2.6), (o[0], 3.2))
        label(ax, o[0], 4.0, f"p(x{t + 1} | x≤{t})", fontsize=8.5)
        if t:
            arrow(ax, (cx - 0.2, 2.2), (cx, 2.2))
    label(ax, x0 + 1.33, 2.85, "(h, c): all it keeps of the past", fontsize=8.5, color="#444444")
    label(ax, x0 + 1.33, 4.55, "one step after another; the output\nembedding is W_tok (tied), as in the GPT",
          fontsize=8.5, color="#444444")  # fmt: skip
    return fig


def in_context_copying():
    """A random sequence written twice: at the second copy the next token is the one that followed
    the same token in the first copy. Attention can look it up; a recurrent state must have kept it."""
    fig, ax = figure(7, 2.6)
    toks = ["q", "7", "m", "…", "z", "q", "7", "m", "…"]
    roles = ["memory"] * 5 + ["query"] * 4
    for i, (t, role) in enumerate(zip(toks, roles)):
        box(ax, 0.3 + i * 0.7, 0.5, 0.56, 0.42, t, role, fontsize=10)
    label(ax, 2.0, 0.22, "first copy: random tokens", fontsize=8.5, color="#444444")
    label(ax, 5.3, 0.22, "second copy: the same tokens again", fontsize=8.5, color="#444444")
    # the query at the second "7" looks back to the token after the earlier "7"
    arrow(ax, (0.3 + 6 * 0.7 + 0.28, 0.92), (0.3 + 2 * 0.7 + 0.28, 0.92), connection="arc3,rad=0.4")
    label(ax, 3.3, 2.35, "attention: find the earlier 7, copy what came after it (m)", fontsize=9)
    label(
        ax,
        3.3,
        2.0,
        "an LSTM: must have stored every token of the first copy in (h, c)",
        fontsize=9,
        color="#444444",
    )
    return fig
