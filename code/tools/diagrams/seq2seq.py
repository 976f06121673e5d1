"""The seq2seq chapter's concept diagrams: the encoder-decoder with its single context vector
(the bottleneck), and the beam search tree of the chapter's worked example (k = 2)."""

from tools.diagrams.style import GREY, ROLE, arrow, box, figure, label


def seq2seq_bottleneck():
    fig, ax = figure(7.0, 3.3)
    w, h, y = 0.62, 0.5, 1.45  # a GRU cell box, and the row of the recurrent states
    # encoder: reads x_1 .. x_4, one state per token
    label(ax, 1.6, 2.85, "encoder (reads the source)", fontsize=10)
    xs = [0.15, 0.95, 1.75, 2.55]
    for i, x in enumerate(xs, start=1):
        box(ax, x, y, w, h, f"$h_{i}$", role="hidden")
        box(ax, x + 0.08, 0.45, w - 0.16, 0.42, f"$x_{i}$", role="input")
        arrow(ax, (x + w / 2, 0.87), (x + w / 2, y))
        if i > 1:
            arrow(ax, (xs[i - 2] + w, y + h / 2), (x, y + h / 2))
    # the context: the last encoder state, the only thing the decoder sees
    box(ax, 3.5, y - 0.1, 0.8, h + 0.2, "$c = h_S$", role="memory")
    arrow(ax, (xs[-1] + w, y + h / 2), (3.5, y + h / 2))
    label(
        ax, 3.9, 2.35, "one vector of\n$E_h$ numbers:\nthe bottleneck", fontsize=9.5, color=ROLE["memory"][1]
    )
    # decoder: starts from c, writes y_1, y_2, EOS
    label(ax, 5.6, 2.85, "decoder (writes the target)", fontsize=10)
    ds = [4.6, 5.4, 6.2]
    outs, ins = ["$y_1$", "$y_2$", "EOS"], ["BOS", "$y_1$", "$y_2$"]
    for i, x in enumerate(ds):
        box(ax, x, y, w, h, f"$s_{i + 1}$", role="hidden")
        box(ax, x + 0.04, 0.45, w - 0.08, 0.42, ins[i], role="input", fontsize=10)
        box(ax, x + 0.04, 2.2, w - 0.08, 0.42, outs[i], role="output", fontsize=10)
        arrow(ax, (x + w / 2, 0.87), (x + w / 2, y))
        arrow(ax, (x + w / 2, y + h), (x + w / 2, 2.2))
        if i > 0:
            arrow(ax, (ds[i - 1] + w, y + h / 2), (x, y + h / 2))
    arrow(ax, (4.3, y + h / 2), (ds[0], y + h / 2))
    note = "input $y_{t-1}$: the true token (teacher forcing)\nor its own last output (free running)"
    label(ax, 5.55, 0.2, note, fontsize=8.5, color=GREY)
    label(ax, 1.6, 0.2, "source tokens", fontsize=8.5, color=GREY)
    return fig


# The worked example's next-token table (it depends on the last token only): p(. | previous).
TABLE = {"BOS": {"a": 0.5, "b": 0.4, "EOS": 0.1}, "a": {"a": 0.3, "b": 0.3, "EOS": 0.4},
         "b": {"a": 0.05, "b": 0.05, "EOS": 0.9}}  # fmt: skip


def seq2seq_beam_tree():
    fig, ax = figure(7.0, 3.8)
    w, h = 0.95, 0.42
    root = box(ax, 0.1, 1.6, 0.7, h, "BOS", role="input", fontsize=10)
    first = {"a": 2.75, "b": 1.6, "EOS": 0.35}  # y of each step-1 node
    kept = ("a", "b")  # the k = 2 best prefixes after step 1
    for token, yy in first.items():
        p = TABLE["BOS"][token]
        role = "hidden" if token in kept else "input"
        centre = box(ax, 1.5, yy, w, h, f"{token}  {p:.2f}", role=role, fontsize=10)
        arrow(ax, (0.8, root[1]), (1.5, centre[1]), color="#333333" if token in kept else "#aaaaaa")
        if token not in kept:
            label(ax, 1.5 + w / 2, yy - 0.17, "not kept (k = 2)", fontsize=8, color=GREY)
    # step 2: every extension of the kept prefixes, scored by the product of probabilities
    rows = [("a", "a", 3.1), ("a", "b", 2.65), ("a", "EOS", 2.2), ("b", "a", 1.55), ("b", "b", 1.1),
            ("b", "EOS", 0.65)]  # fmt: skip
    for parent, token, yy in rows:
        p = TABLE["BOS"][parent] * TABLE[parent][token]
        best = (parent, token) == ("b", "EOS")
        greedy = (parent, token) == ("a", "EOS")
        role = "output" if best else "memory" if greedy else "input"
        text = f"{parent} {token}   {TABLE['BOS'][parent]:.1f} × {TABLE[parent][token]:.2f} = {p:.2f}"
        box(ax, 3.3, yy, 2.2, 0.36, text, role=role, fontsize=9.5)
        arrow(ax, (1.5 + w, first[parent] + h / 2), (3.3, yy + 0.18))
        if best:
            label(ax, 5.6, yy + 0.18, "beam's output", fontsize=9, ha="left", color=ROLE["output"][1])
        if greedy:
            label(ax, 5.6, yy + 0.18, "greedy's output", fontsize=9, ha="left", color=ROLE["memory"][1])
    label(ax, 1.97, 3.62, "step 1", fontsize=9.5, color=GREY)
    label(ax, 4.4, 3.62, "step 2: p(prefix) × p(next | last)", fontsize=9.5, color=GREY)
    return fig
