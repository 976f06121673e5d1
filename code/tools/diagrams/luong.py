"""The Luong chapter's concept diagram: where global, local-m and local-p attention may look at
step t = 3 over S = 10 source states, positions counted from 0 as in seqlab and the text (windows of
half-width D = 2; local-p's weights times a Gaussian of sigma = D / 2; positions outside the
window, red, get weight zero)."""

import math

from matplotlib.patches import Rectangle

from tools.diagrams.style import GREY, ROLE, box, figure, label

S, D, T = 10, 2, 3  # source length, half-width, the decoder step shown
P_PRED = 6.4  # local-p's predicted centre, an illustrative value
SCORES = [0.2, 0.1, 0.5, 1.2, 0.9, 0.3, 1.6, 1.1, 0.4, 0.2]  # illustrative scores e_tj


def _weights(allowed, gauss=None):
    exp = [math.exp(e) if ok else 0.0 for e, ok in zip(SCORES, allowed)]
    w = [x / sum(exp) for x in exp]
    return w if gauss is None else [a * g for a, g in zip(w, gauss)]


def _panel(ax, x0, title, subtitle, allowed, weights, center=None, gauss=None):
    cell, gap = 0.2, 0.02
    label(ax, x0 + 1.1, 2.75, title, fontsize=10.5, weight="bold")
    label(ax, x0 + 1.1, 2.45, subtitle, fontsize=9)
    top = 0.55  # one scale for the three panels: a bar 1.2 in tall is a weight of 0.55
    for j in range(S):
        x = x0 + j * (cell + gap)
        box(ax, x, 0.55, cell, cell, "", role="memory" if allowed[j] else "mask", rounded=False)
        label(ax, x + cell / 2, 0.38, str(j), fontsize=7.5, color=GREY)
        if weights[j] > 0:
            ax.add_patch(
                Rectangle((x + 0.03, 0.85), cell - 0.06, 1.2 * weights[j] / top, fc=ROLE["weight"][1])
            )
    if center is not None:  # p_t: a position 0 .. S - 1, drawn at its cell's centre
        xc = x0 + center * (cell + gap) + cell / 2
        ax.plot([xc, xc], [0.5, 2.2], color=ROLE["query"][1], lw=1.2, ls=(0, (3, 2)))
        label(ax, xc, 2.28, "$p_t$", fontsize=9, color=ROLE["query"][1])
    if gauss is not None:
        js = [k / 10 for k in range(0, 10 * (S - 1) + 1)]  # from position 0 to S - 1
        xs = [x0 + j * (cell + gap) + cell / 2 for j in js]
        ys = [0.85 + 1.2 * math.exp(-((j - center) ** 2) / (2 * (D / 2) ** 2)) for j in js]
        ax.plot(xs, ys, color=ROLE["query"][1], lw=1.0)
    label(ax, x0 + 1.1, 0.15, "source position $j$", fontsize=8.5, color=GREY)
    right = center is None or center < S / 2  # the sum goes on the side away from p_t
    # the softmax weights alpha sum to 1; local-p's a = alpha x Gaussian do not
    weight = r"\alpha" if gauss is None else "a"
    label(ax, x0 + (2.2 if right else 0.0), 2.0, rf"$\sum_j {weight}_{{tj}} = {sum(weights):.2f}$",
          fontsize=8.5, color=GREY, ha="right" if right else "left")  # fmt: skip


def luong_windows():
    fig, ax = figure(7.0, 3.0)
    everywhere = [True] * S
    _panel(ax, 0.1, "global", "all $S$ positions", everywhere, _weights(everywhere))
    window_m = [abs(j - T) <= D for j in range(S)]
    _panel(
        ax, 2.45, "local-m", f"$p_t = t = {T}$, window $2D+1 = {2 * D + 1}$", window_m, _weights(window_m), T
    )
    window_p = [abs(j - P_PRED) <= D for j in range(S)]
    gauss = [math.exp(-((j - P_PRED) ** 2) / (2 * (D / 2) ** 2)) for j in range(S)]
    _panel(ax, 4.8, "local-p", r"predicted $p_t$, $\times$ Gaussian", window_p, _weights(window_p, gauss),
           P_PRED, gauss)  # fmt: skip
    return fig
