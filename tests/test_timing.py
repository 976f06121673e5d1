import math

import pytest
import torch

from seqlab import timing
from seqlab.rnn import RNN


def test_power_law_exponent_recovers_the_exponent():
    xs = [10, 20, 40, 80]
    assert abs(timing.power_law_exponent(xs, [3 * x**2 for x in xs]) - 2) < 1e-12
    assert abs(timing.log_slope([0, 1, 2], [1, math.e, math.e**2]) - 1) < 1e-12


def test_log_slope_rejects_bad_input():
    with pytest.raises(ValueError, match="positive"):
        timing.log_slope([0, 1], [1, 0])
    with pytest.raises(ValueError, match="equal-length"):
        timing.log_slope([0, 1, 2], [1, 2])


def test_count_ops_grows_with_a_loop_and_not_with_a_matmul():
    layer = RNN(4, 4)
    counts = [timing.count_ops(lambda t=t: layer(torch.randn(2, t, 4))) for t in (8, 16, 32)]
    assert counts[1] - counts[0] > 0 and counts[2] - counts[1] == 2 * (counts[1] - counts[0])
    w = torch.randn(4, 4)
    flat = [timing.count_ops(lambda t=t: torch.randn(2, t, 4) @ w) for t in (8, 64)]
    assert flat[0] == flat[1]


def test_time_runs_returns_every_run():
    calls = []
    times = timing.time_runs(lambda: calls.append(1), repeats=3, warmup=2)
    assert len(times) == 3 and len(calls) == 5 and all(0 <= t < 1 for t in times)
    with pytest.raises(ValueError, match="repeats"):
        timing.time_runs(lambda: None, repeats=0)


def test_time_fn_returns_seconds():
    assert 0 <= timing.time_fn(lambda: sum(range(100)), repeats=2) < 1
    with pytest.raises(ValueError):
        timing.time_fn(lambda: None, repeats=0)
