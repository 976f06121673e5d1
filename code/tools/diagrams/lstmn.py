"""The LSTMN chapter's concept diagram: the hidden and memory tapes, and one step's
intra-attention over the past entries 0..t-1."""

from matplotlib.patches import Rectangle

from tools.diagrams.style import ROLE, arrow, box, figure, label

ENTRIES = ["0", "1", "\\cdots", "t-1"]  # the tape entries step t reads
WEIGHTS = [0.10, 0.55, 0.10, 0.25]  # an illustrative s^t (sums to 1): the shading of the weights


def lstmn_tapes():
    fig, ax = figure(7.0, 3.9)
    x0, dx, w, hh = 0.75, 0.72, 0.6, 0.42
    hy, cy, wy = 3.2, 2.45, 1.55  # rows: hidden tape, memory tape, attention weights

    def cell(name, i):
        return "$\\cdots$" if ENTRIES[i] == "\\cdots" else f"${name}_{{{ENTRIES[i]}}}$"

    label(ax, 0.35, hy + hh / 2, "$H$", fontsize=12)
    label(ax, 0.35, cy + hh / 2, "$C$", fontsize=12)
    for i in range(len(ENTRIES)):
        box(ax, x0 + i * dx, hy, w, hh, cell("h", i), role="hidden")
        box(ax, x0 + i * dx, cy, w, hh, cell("c", i), role="cell")
        shade = 0.15 + 0.8 * WEIGHTS[i]
        ax.add_patch(Rectangle((x0 + i * dx, wy), w, hh, fc=ROLE["query"][1], alpha=shade, ec="#333333"))
        text = "$\\cdots$" if ENTRIES[i] == "\\cdots" else f"$s_{{{ENTRIES[i]}}}^t$"
        colour = "white" if WEIGHTS[i] > 0.4 else "black"
        label(ax, x0 + i * dx + w / 2, wy + hh / 2, text, fontsize=10.5, color=colour)
    label(ax, x0 + 1.5 * dx + w / 2, 3.83, "the tapes: entries $0, \\dots, t-1$", fontsize=10)
    label(ax, x0 + 1.5 * dx + w / 2, 1.27, "$s^t = \\mathrm{softmax}(a^t)$", fontsize=10, ha="left")
    # the score of every entry, from h_i, x_t and the previous summary
    score = "$a_i^t = v^\\top \\tanh(W_h h_i + W_x x_t + b_a + W_{\\tilde h}\\, \\tilde h_{t-1})$"
    box(ax, 0.55, 0.18, 4.35, 0.62, score, role="op", fontsize=10.5)
    arrow(ax, (1.4, 0.8), (1.4, wy))  # scores -> weights
    arrow(ax, (0.62, hy + 0.05), (0.62, 0.8), connection="arc3,rad=0.35")  # every h_i -> scores
    label(ax, 0.08, 1.95, "every $h_i$", fontsize=9.5, rotation=90)
    # the adaptive summaries: the tapes read with the weights
    sx, sw = 3.75, 1.05
    box(ax, sx, hy, sw, hh, "$\\tilde h_t = \\sum_i s_i^t h_i$", role="hidden", fontsize=9.5)
    box(ax, sx, cy, sw, hh, "$\\tilde c_t = \\sum_i s_i^t c_i$", role="cell", fontsize=9.5)
    end = x0 + (len(ENTRIES) - 1) * dx + w
    arrow(ax, (end, hy + hh / 2), (sx, hy + hh / 2))
    arrow(ax, (end, cy + hh / 2), (sx, cy + hh / 2))
    arrow(ax, (end, wy + hh / 2), (sx + sw / 2, cy), connection="arc3,rad=0.25")
    # the LSTM step on the summaries and x_t
    lx, lw = 5.2, 0.7
    box(ax, lx, cy, lw, hy + hh - cy, "LSTM\nstep", role="op", fontsize=10)
    arrow(ax, (sx + sw, hy + hh / 2), (lx, hy + hh / 2))
    arrow(ax, (sx + sw, cy + hh / 2), (lx, cy + hh / 2))
    box(ax, lx + 0.05, 1.15, 0.6, hh, "$x_t$", role="input")
    arrow(ax, (lx + lw / 2, 1.15 + hh), (lx + lw / 2, cy))
    arrow(ax, (lx + 0.05, 1.3), (4.9, 0.62), connection="arc3,rad=-0.2")  # x_t -> scores
    # the previous step's summary, the third input of the score
    box(ax, lx - 0.05, 0.18, 0.8, hh, "$\\tilde h_{t-1}$", role="hidden", fontsize=10.5)
    arrow(ax, (lx - 0.05, 0.18 + hh / 2), (4.9, 0.18 + hh / 2))  # previous summary -> scores
    label(ax, lx + 0.35, 0.08, "previous summary", fontsize=8.5, va="center")
    # the new entry t
    nx = 6.25
    box(ax, nx, hy, 0.6, hh, "$h_t$", role="hidden")
    box(ax, nx, cy, 0.6, hh, "$c_t$", role="cell")
    arrow(ax, (lx + lw, hy + hh / 2), (nx, hy + hh / 2))
    arrow(ax, (lx + lw, cy + hh / 2), (nx, cy + hh / 2))
    label(ax, nx + 0.3, 3.83, "new entry $t$", fontsize=10)
    label(ax, nx + 0.3, 2.1, "appended;\nread from\nstep $t+1$", fontsize=9, va="top")
    return fig
