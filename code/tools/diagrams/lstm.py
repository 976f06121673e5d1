"""The LSTM chapter's concept diagram: one LSTM cell, its four gates, the cell path along the
top updated by addition, and the gradient along that path (dashed red), scaled by f_t only."""

from tools.diagrams.style import arrow, box, circle, figure, label

RED = "#c0392b"


def lstm_cell():
    fig, ax = figure(7.0, 4.0)
    cy, gy, gh, gw = 3.05, 1.35, 0.5, 0.8  # cell line, gate row, gate box size
    # the cell path along the top: c_{t-1} -> x f_t -> + i_t g_t -> c_t
    box(ax, 0.1, cy - 0.25, 0.8, 0.5, "$c_{t-1}$", role="cell")
    box(ax, 6.1, cy - 0.25, 0.8, 0.5, "$c_t$", role="cell")
    times_f = circle(ax, 1.9, cy, 0.2, "×")
    plus = circle(ax, 3.3, cy, 0.2, "+")
    for start, end in ((0.9, 1.7), (2.1, 3.1), (3.5, 6.1)):  # c_{t-1} -> x -> + -> c_t
        arrow(ax, (start, cy), (end, cy))
    # the four gates, from [h_{t-1}, x_t]
    gates = [(1.9, "$f_t$: $\\sigma$", "forget"), (2.85, "$i_t$: $\\sigma$", "input"),
             (3.75, "$g_t$: tanh", "new content"), (4.75, "$o_t$: $\\sigma$", "output")]  # fmt: skip
    for x, text, name in gates:
        box(ax, x - gw / 2, gy, gw, gh, text, role="op", fontsize=10)
        label(ax, x, gy - 0.17, name, fontsize=8.5, color="#555555")
    arrow(ax, (1.9, gy + gh), (times_f[0], cy - 0.2))  # f_t into the product with c_{t-1}
    circle(ax, 3.3, 2.3, 0.2, "×")
    arrow(ax, (2.85, gy + gh), (3.14, 2.18), connection="arc3,rad=-0.2")
    arrow(ax, (3.75, gy + gh), (3.46, 2.18), connection="arc3,rad=0.2")
    arrow(ax, (3.3, 2.5), (plus[0], cy - 0.2))
    # output: h_t = o_t * tanh(c_t)
    box(ax, 5.2, 2.05, 0.65, 0.42, "tanh", role="op", fontsize=10)
    arrow(ax, (5.52, cy), (5.52, 2.47))
    circle(ax, 5.52, 1.6, 0.2, "×")
    arrow(ax, (5.52, 2.05), (5.52, 1.8))
    arrow(ax, (4.75 + gw / 2, gy + gh / 2 - 0.03), (5.32, 1.58))
    box(ax, 6.1, 1.35, 0.8, 0.5, "$h_t$", role="hidden")
    arrow(ax, (5.72, 1.6), (6.1, 1.6))
    # inputs: h_{t-1} and x_t feed every gate through one bus
    box(ax, 0.1, 0.3, 0.8, 0.5, "$h_{t-1}$", role="hidden")
    box(ax, 2.9, 0.05, 0.7, 0.45, "$x_t$", role="input")
    bus = 0.9
    ax.plot([0.9, 4.75], [bus - 0.35, bus - 0.35], color="#333333", lw=1.4)
    ax.plot([3.25, 3.25], [0.5, bus - 0.35], color="#333333", lw=1.4)
    for x, *_ in gates:
        arrow(ax, (x, bus - 0.35), (x, gy - 0.3))
    label(ax, 1.2, 0.3, "$[h_{t-1}, x_t]$ to every gate", fontsize=8.5, ha="left", va="bottom")
    # the gradient along the cell: multiplied by f_t, no weight matrix
    arrow(ax, (6.3, cy + 0.3), (0.7, cy + 0.3), kind="grad", connection="arc3,rad=0.12")
    text = "$\\partial c_t / \\partial c_{t-1} = \\mathrm{diag}(f_t)$ along this path"
    label(ax, 3.5, 3.78, text, color=RED, fontsize=10.5)
    label(ax, 1.45, cy - 0.3, "keep", fontsize=8.5, color="#555555")
    label(ax, 3.72, cy - 0.3, "add", fontsize=8.5, color="#555555")
    return fig
