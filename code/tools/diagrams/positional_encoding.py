"""The positional-encoding chapter's concept diagram: each feature pair is a sinusoid of its
own frequency, read at the token's position, and moving k positions on turns every pair by the
angle k * w_i, the same rotation for every position p."""

import numpy as np
from matplotlib.patches import Arc, Circle

from tools.diagrams.style import ROLE, arrow, figure, label

OMEGAS = [1.0, 0.35, 0.12]  # illustrative frequencies w_0 > w_1 > w_2 (fast to slow)
COLOURS = [ROLE["query"][1], ROLE["value"][1], ROLE["key"][1]]
P, K = 3, 3  # the position read, and the shift drawn as a rotation


def positional_sinusoids():
    fig, ax = figure(7.0, 3.1)
    # left: the sinusoids sin(p w_i), sampled at the integer positions
    left = fig.add_axes((0.07, 0.17, 0.5, 0.72))
    fine = np.linspace(0, 12, 400)
    for i, (w, colour) in enumerate(zip(OMEGAS, COLOURS)):
        offset = 2.6 * (len(OMEGAS) - 1 - i)
        left.plot(fine, offset + np.sin(w * fine), color=colour, lw=1.5)
        p = np.arange(13)
        left.plot(p, offset + np.sin(w * p), "o", color=colour, ms=3.5)
        left.text(12.4, offset, f"$\\sin(p\\,\\omega_{i})$", color=colour, fontsize=10, va="center")
    left.axvspan(P - 0.3, P + 0.3, color="#999999", alpha=0.25, lw=0)
    left.axvspan(P + K - 0.3, P + K + 0.3, color="#999999", alpha=0.12, lw=0)
    left.set_xlim(-0.5, 12.5)
    left.set_ylim(-1.4, 2.6 * (len(OMEGAS) - 1) + 1.4)
    left.set_yticks([])
    left.set_xticks(range(0, 13, 2))
    left.set_xlabel("position $p$", fontsize=10)
    left.spines[["left", "top", "right"]].set_visible(False)
    left.text(P, 2.6 * (len(OMEGAS) - 1) + 1.55, "$PE(p)$", ha="center", fontsize=10)
    left.text(P + K, 2.6 * (len(OMEGAS) - 1) + 1.55, "$PE(p+k)$", ha="center", fontsize=10)
    # right: pair i as a point on the unit circle, (sin, cos) = (x, y); a shift by k turns it
    cx, cy, r = 5.62, 1.55, 0.95
    ax.add_patch(Circle((cx, cy), r, fill=False, ec="#888888", lw=1.0))
    ax.plot([cx - r - 0.1, cx + r + 0.1], [cy, cy], color="#bbbbbb", lw=0.8)
    ax.plot([cx, cx], [cy - r - 0.1, cy + r + 0.1], color="#bbbbbb", lw=0.8)
    w = OMEGAS[1]
    for pos, name in ((P, "p"), (P + K, "p+k")):
        px, py = cx + r * np.sin(pos * w), cy + r * np.cos(pos * w)
        arrow(ax, (cx, cy), (px, py))
        ax.plot(px, py, "o", color=COLOURS[1], ms=5)
        label(ax, px + 0.08, py + 0.12, f"${name}$", fontsize=9.5, ha="left")
    start, end = 90 - np.degrees((P + K) * w), 90 - np.degrees(P * w)  # angles from the x axis
    ax.add_patch(Arc((cx, cy), 0.9, 0.9, theta1=start, theta2=end, color="#333333", lw=1.2))
    mid = np.radians((start + end) / 2)
    label(ax, cx + 0.62 * np.cos(mid) + 0.05, cy + 0.62 * np.sin(mid), "$k\\,\\omega_i$", fontsize=10)
    label(ax, cx, cy - r - 0.3, "$x = \\sin(p\\,\\omega_i)$,  $y = \\cos(p\\,\\omega_i)$", fontsize=9.5)
    label(ax, cx, 3.0, "shift by $k$ = rotation by $k\\,\\omega_i$", fontsize=10)
    return fig
