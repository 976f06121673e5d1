import math

import pytest
import torch
from torch import nn

from seqlab.train import History, clip_grad_norm, fit, linear_decay, progress_enabled
from seqlab.utils import eval_mode


def _regression(n=256):
    x = torch.randn(n, 3)
    return x, x @ torch.tensor([1.0, -2.0, 0.5]) + 0.3


def _mse(model, batch):
    x, y = batch
    return (model(x).squeeze(-1) - y).square().mean()


def test_fit_learns_and_records_history():
    model = nn.Linear(3, 1)
    history = fit(model, _regression(), _mse, steps=300, lr=0.05, batch_size=32, device="cpu",
                  eval_fn=lambda m: {"w0": m.weight[0, 0].item()}, eval_every=100)  # fmt: skip
    assert history.steps == 300 and len(history.grad_norm) == 300 and not history.diverged
    assert history.loss[-1] < 1e-3 < history.loss[0]
    steps, values = history.eval_curve("w0")
    assert steps == [100, 200, 300] and abs(values[-1] - 1.0) < 0.05
    assert "300 steps" in repr(history) and "final w0" in history.summary()


def test_fit_is_repeatable():
    runs = []
    for _ in range(2):
        torch.manual_seed(1)
        runs.append(fit(nn.Linear(3, 1), _regression(), _mse, steps=20, seed=4, device="cpu").loss)
    assert runs[0] == runs[1]


def test_clipping_bounds_the_step_and_is_reported():
    model = nn.Linear(3, 1)
    x, y = _regression()
    history = fit(model, (x, 100 * y), _mse, steps=5, clip_norm=1.0, optimizer="sgd", lr=0.1, device="cpu")
    assert all(history.clipped) and min(history.grad_norm) > 1.0
    assert "clipped 100%" in history.summary()


def test_divergence_stops_training_and_is_flagged():
    model = nn.Linear(3, 1)
    x, y = _regression()
    history = fit(model, (x, y), _mse, steps=200, optimizer="sgd", lr=10.0, device="cpu")
    assert history.diverged and history.steps < 200
    assert all(math.isfinite(v) for v in history.loss)
    assert "DIVERGED" in history.summary()


def test_clip_grad_norm_equals_torch():
    a, b = nn.Linear(4, 3), nn.Linear(4, 3)
    b.load_state_dict(a.state_dict())
    x = torch.randn(5, 4)
    for layer in (a, b):
        (50 * layer(x).square().sum()).backward()
    norm = clip_grad_norm(list(a.parameters()), 2.0)
    reference = nn.utils.clip_grad_norm_(b.parameters(), 2.0)
    assert abs(norm - reference.item()) < 1e-3
    for p, q in zip(a.parameters(), b.parameters()):
        torch.testing.assert_close(p.grad, q.grad)


@pytest.mark.parametrize(
    "dtype, size", [(torch.float32, 1e20), (torch.float32, 1e-25), (torch.float64, 1e160)]
)
def test_clip_grad_norm_holds_where_the_squares_overflow_or_underflow(dtype, size):
    """Any finite gradients whose global norm the dtype can hold: squaring entries near 1e20 in
    float32 overflows (and near 1e-25 underflows to 0), yet the norm and the clipped gradients
    are right."""
    p, q = nn.Parameter(torch.zeros(2, dtype=dtype)), nn.Parameter(torch.zeros(1, 2, dtype=dtype))
    p.grad = torch.tensor([3.0, 0.0], dtype=dtype) * size
    q.grad = torch.tensor([[0.0, 4.0]], dtype=dtype) * size
    norm = clip_grad_norm([p, q], 1.0 if size > 1 else 1e-30)
    assert norm == pytest.approx(5 * size, rel=1e-6)
    if size > 1:
        torch.testing.assert_close(p.grad, torch.tensor([0.6, 0.0], dtype=dtype))
        torch.testing.assert_close(q.grad, torch.tensor([[0.0, 0.8]], dtype=dtype))
    else:
        torch.testing.assert_close(p.grad / 1e-30, torch.tensor([0.6, 0.0], dtype=dtype), rtol=1e-5, atol=0)


def test_clip_grad_norm_leaves_small_gradients_alone():
    p = nn.Parameter(torch.ones(3))
    p.grad = torch.full((3,), 0.1)
    clip_grad_norm([p], 1.0)
    assert torch.equal(p.grad, torch.full((3,), 0.1))


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(data=(torch.zeros(4, 3), torch.zeros(5))), ValueError, "first dimension"),
        (dict(data=torch.zeros(4, 3)), TypeError, "tuple"),
        (dict(steps=0), ValueError, "positive"),
        (dict(clip_norm=-1.0), ValueError, "clip_norm"),
        (dict(optimizer="rmsprop"), ValueError, "optimizer"),
    ],
)
def test_bad_arguments(kwargs, error, message):
    arguments = dict(data=_regression(), steps=2, device="cpu")
    arguments.update(kwargs)
    data = arguments.pop("data")
    with pytest.raises(error, match=message):
        fit(nn.Linear(3, 1), data, _mse, **arguments)


def test_loss_must_be_scalar():
    with pytest.raises(ValueError, match="scalar"):
        fit(nn.Linear(3, 1), _regression(), lambda m, b: m(b[0]), steps=1, device="cpu")


def test_progress_switch(monkeypatch):
    monkeypatch.setenv("SEQLAB_PROGRESS", "0")
    assert not progress_enabled()
    assert progress_enabled(True)
    monkeypatch.setenv("SEQLAB_PROGRESS", "1")
    assert progress_enabled()


def test_empty_history_summary():
    assert "no steps" in History().summary()


def test_stop_when_ends_training_early():
    model = nn.Linear(3, 1)
    history = fit(model, _regression(), _mse, steps=1000, lr=0.05, device="cpu",
                  eval_fn=lambda m: {"loss": _mse(m, _regression(64)).item()}, eval_every=20,
                  stop_when=lambda metrics: metrics["loss"] < 1e-2)  # fmt: skip
    assert history.stopped_early and history.steps < 1000 and history.evals[-1][1]["loss"] < 1e-2
    assert "stopped early" in history.summary()


def test_training_is_bounded_by_steps_not_time():
    import inspect

    assert "max_seconds" not in inspect.signature(fit).parameters
    model = nn.Linear(3, 1)
    history = fit(
        model, _regression(), _mse, steps=7, device="cpu", eval_fn=lambda m: {"a": 1.0}, eval_every=3
    )
    assert history.steps == 7 and [s for s, _ in history.evals] == [3, 6, 7]
    assert history.seconds >= history.eval_seconds >= 0
    # the training time before each evaluation, evaluations excluded, grows and ends at the total
    at = [history.train_seconds_at(s) for s in (3, 6, 7)]
    assert 0 <= at[0] <= at[1] <= at[2] <= history.train_seconds + 1e-9
    with pytest.raises(ValueError, match="no evaluation at step 4"):
        history.train_seconds_at(4)


def test_fit_clips_with_clip_grad_norm(monkeypatch):
    import seqlab.train as train

    calls = []

    def spy(params, max_norm):
        calls.append(max_norm)
        return clip_grad_norm(params, max_norm)

    monkeypatch.setattr(train, "clip_grad_norm", spy)
    fit(nn.Linear(3, 1), _regression(), _mse, steps=3, clip_norm=0.5, device="cpu")
    fit(nn.Linear(3, 1), _regression(), _mse, steps=2, device="cpu")
    assert calls == [0.5] * 3 + [math.inf] * 2


def test_linear_decay_rises_then_falls_to_zero():
    opt = torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=2.0)
    sched = linear_decay(6, warmup=2)(opt)
    rates = []
    for _ in range(6):
        rates.append(opt.param_groups[0]["lr"])  # the rate the next step uses
        opt.step()
        sched.step()
    assert rates == pytest.approx([1.0, 2.0, 2.0, 1.5, 1.0, 0.5])
    assert opt.param_groups[0]["lr"] == 0.0
    opt = torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=1.0)
    sched = linear_decay(4)(opt)  # no warm-up: starts at lr
    assert opt.param_groups[0]["lr"] == 1.0
    for bad in (dict(steps=0), dict(steps=5, warmup=5), dict(steps=5, warmup=-1)):
        with pytest.raises(ValueError, match="warmup"):
            linear_decay(**bad)
    with pytest.raises(TypeError, match="steps"):
        linear_decay(10.0)


def test_eval_mode_restores_the_mode_even_after_an_error():
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout(0.5))
    with eval_mode(model):
        assert not model.training and not model[1].training
    assert model.training and model[1].training
    with pytest.raises(ZeroDivisionError):
        with eval_mode(model):
            1 / 0
    assert model.training and model[1].training  # restored, though the body raised
    model.eval()
    with eval_mode(model):
        pass
    assert not model.training  # a model in evaluation mode stays there
