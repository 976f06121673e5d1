"""The Bahdanau chapter's concept diagram: one decoder step of additive attention (s_{i-1} scored
against every h_j, softmax, the weighted average c_i into the decoder's GRU with y_{i-1})."""

from matplotlib.patches import Rectangle

from tools.diagrams.style import GREY, ROLE, arrow, box, circle, figure, label, legend


def bahdanau_step():
    fig, ax = figure(7.0, 4.1)
    w, h = 0.62, 0.46
    xs = [0.25, 1.05, 1.85, 2.65]
    alphas = [0.05, 0.15, 0.7, 0.1]  # an illustrative alignment: step i looks at h_3
    # encoder states along the bottom: the keys and the values
    label(ax, 1.75, 0.2, "encoder states $h_j$: keys = values", fontsize=9, color=GREY)
    for j, x in enumerate(xs, 1):
        box(ax, x, 0.45, w, h, f"$h_{j}$", role="memory")
    # the query: the previous decoder state
    q = box(ax, 4.9, 0.45, 0.95, h, "$s_{i-1}$", role="query")
    label(ax, 5.37, 0.2, "previous decoder state: query", fontsize=9, color=GREY)
    # scores e_ij = v^T tanh(W s_{i-1} + U h_j)
    for x in xs:
        c = circle(ax, x + w / 2, 1.55, 0.2, "$e$", fontsize=10)
        arrow(ax, (x + w / 2, 0.45 + h), (c[0], c[1] - 0.2))
    arrow(ax, (q[0] - 0.475, q[1] + 0.1), (xs[-1] + w / 2 + 0.2, 1.5), connection="arc3,rad=0.15")
    label(ax, 3.55, 1.75, "score each $h_j$\nagainst $s_{i-1}$", fontsize=9.5, ha="left")
    # softmax over j
    box(ax, 0.25, 2.05, 3.02, 0.36, "softmax over $j$", role="op", fontsize=10)
    for x in xs:
        arrow(ax, (x + w / 2, 1.75), (x + w / 2, 2.05))
    # the weights alpha_ij as bars
    for x, a in zip(xs, alphas):
        ax.add_patch(
            Rectangle((x + 0.16, 2.6), w - 0.32, 0.6 * a / max(alphas), fc=ROLE["weight"][1], ec="none")
        )
        label(ax, x + w / 2, 3.35, rf"$\alpha_{{i{xs.index(x) + 1}}}$", fontsize=10)
    # context c_i = sum_j alpha_ij h_j
    ctx = box(ax, 3.6, 2.85, 0.75, h, "$c_i$", role="value")
    arrow(ax, (3.27, 2.9), (3.6, 3.05))
    label(ax, 3.97, 3.6, r"$c_i = \sum_j \alpha_{ij} h_j$", fontsize=10)
    # the decoder step: s_i = GRU([y_{i-1}; c_i], s_{i-1}), then the output
    gru = box(ax, 4.9, 2.85, 0.95, h, "GRU", role="hidden")
    arrow(ax, (ctx[0] + 0.375, ctx[1]), (4.9, gru[1]))
    arrow(ax, (gru[0], 0.45 + h), (gru[0], 2.85))
    box(ax, 6.15, 1.9, 0.75, 0.4, "$y_{i-1}$", role="input", fontsize=10)
    arrow(ax, (6.52, 2.3), (gru[0] + 0.3, 2.85))
    out = box(ax, 6.15, 2.85, 0.75, h, "$s_i$", role="hidden")
    arrow(ax, (5.85, gru[1]), (6.15, out[1]))
    box(ax, 6.15, 3.55, 0.75, 0.4, "$y_i$", role="output", fontsize=10)
    arrow(ax, (out[0], 2.85 + h), (out[0], 3.55))
    legend(ax, 0.25, 3.8, ["query", "memory", "value", "hidden", "output"],
           names={"memory": "keys", "value": "context", "hidden": "decoder"}, dx=0.95)  # fmt: skip
    return fig
