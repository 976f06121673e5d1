import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from seqlab import plot  # noqa: E402


def test_plot_curves_draws_each_curve():
    ax = plot.plot_curves(
        {"a": [1.0, 2.0, float("nan")], "b": ([1, 5, 9], torch.tensor([3.0, 2.0, 1.0]))}, logy=True
    )
    assert len(ax.lines) == 2 and ax.get_yscale() == "log"
    assert len(ax.lines[0].get_xdata()) == 2  # the NaN is left out
    plt.close(ax.figure)


def test_plot_curves_smooths():
    ax = plot.plot_curves({"a": list(range(10))}, smooth=5)
    assert len(ax.lines[0].get_xdata()) == 6
    plt.close(ax.figure)


def test_heatmap_labels_and_errors():
    ax = plot.heatmap(torch.rand(2, 3), xlabels=["a", "b", "c"], ylabels=["x", "y"], title="t")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c"]
    plt.close(ax.figure)
    with pytest.raises(ValueError, match="2 xlabels for 3 columns"):
        plot.heatmap(torch.rand(2, 3), xlabels=["a", "b"])
    with pytest.raises(ValueError, match="2-D"):
        plot.heatmap(torch.rand(2, 3, 4))
    with pytest.raises(ValueError, match="x values"):
        plot.plot_curves({"a": ([1, 2], [1, 2, 3])})
