"""The RNN chapter's concept diagram: the network unrolled in time, the forward path (solid) and
backpropagation through time (dashed red), one Jacobian per step, multiplied together."""

from tools.diagrams.style import arrow, box, figure, label


def rnn_unrolled():
    fig, ax = figure(7.0, 3.6)
    w, hh, hy, xy = 0.78, 0.5, 1.55, 0.25  # box width/height, hidden row, input row
    columns = [(0.25, "$h_0$", None), (1.55, "$h_1$", "$x_1$"), (2.85, "$h_2$", "$x_2$"),
               (4.15, None, None), (5.15, "$h_T$", "$x_T$")]  # fmt: skip
    for x, h, xin in columns:
        if h is None:
            label(ax, x + w / 2, hy + hh / 2, "$\\cdots$", fontsize=14)
            continue
        box(ax, x, hy, w, hh, h, role="hidden")
        if xin is not None:
            box(ax, x, xy, w, hh, xin, role="input")
            arrow(ax, (x + w / 2, xy + hh), (x + w / 2, hy))
    label(ax, 1.55 + w / 2 + 0.42, 1.12, "$W_{ih}$", fontsize=9.5)
    # forward: h_{t-1} -> h_t through W_hh
    for (x0, *_), (x1, *_) in zip(columns[:-1], columns[1:], strict=True):
        start = x0 + w if x0 != 4.15 else x0 + 0.45
        end = x1 if x1 != 4.15 else x1 + 0.1
        arrow(ax, (start, hy + hh / 2), (end, hy + hh / 2))
    label(ax, 1.29, hy + hh / 2 - 0.17, "$W_{hh}$", fontsize=9.5)
    # the loss from the last state
    box(ax, 6.3, hy, 0.55, hh, "$J$", role="output")
    arrow(ax, (5.15 + w, hy + hh / 2), (6.3, hy + hh / 2))
    # backward: one Jacobian per step, dashed red, above the row
    gy = hy + hh + 0.08
    for (x0, *_), (x1, *_) in zip(columns[:-1], columns[1:], strict=True):
        left = x0 + (0.22 if x0 == 4.15 else w / 2)
        right = x1 + (0.22 if x1 == 4.15 else w / 2)
        arrow(ax, (right, gy), (left, gy), kind="grad", connection="arc3,rad=0.45")
    arrow(ax, (6.55, gy), (5.15 + w / 2, gy), kind="grad", connection="arc3,rad=0.45")
    label(ax, 3.24 + 0.04, gy + 0.5, "$\\partial h_2/\\partial h_1$", fontsize=10, color="#c0392b")
    label(ax, 1.94 + 0.04, gy + 0.5, "$\\partial h_1/\\partial h_0$", fontsize=10, color="#c0392b")
    label(ax, 6.0, gy + 0.5, "$\\partial J/\\partial h_T$", fontsize=10, color="#c0392b")
    # the product
    text = r"$\dfrac{\partial h_T}{\partial h_k} = \prod_{t=k+1}^{T} \mathrm{diag}(\tanh'(a_t))\, W_{hh}$"
    label(ax, 3.5, 3.25, text, fontsize=11.5, color="#c0392b")
    label(ax, 6.45, xy + hh / 2, "forward: solid\nbackward: dashed", fontsize=8.5, color="#333333")
    return fig
