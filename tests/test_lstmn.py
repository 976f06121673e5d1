import pytest
import torch

from seqlab.lstm import LSTM
from seqlab.lstmn import LSTMN


def _lstm_with_same_gates(model):
    lstm = LSTM(model.input_size, model.hidden_size).double()
    with torch.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(lstm, name).copy_(getattr(model, name))
    return lstm


def test_attention_on_the_last_entry_is_an_lstm():
    model = LSTMN(3, 5).double()
    x = torch.randn(2, 7, 3, dtype=torch.float64)
    h0, c0 = torch.randn(2, 5, dtype=torch.float64), torch.randn(2, 5, dtype=torch.float64)
    out, (h, c), weights = model(x, state=(h0, c0), attention="last")
    out_ref, (h_ref, c_ref) = _lstm_with_same_gates(model)(x, (h0, c0))
    torch.testing.assert_close(out, out_ref)
    torch.testing.assert_close(c, c_ref)
    assert torch.equal(weights.diagonal(dim1=1, dim2=2), torch.ones(2, 7, dtype=torch.float64))


def test_first_step_is_an_lstm_step_whatever_the_attention():
    model = LSTMN(3, 5).double()
    x = torch.randn(2, 4, 3, dtype=torch.float64)
    out, _, weights = model(x)  # at t = 0 the tape holds only the initial state
    out_ref, _ = _lstm_with_same_gates(model)(x[:, :1])
    torch.testing.assert_close(out[:, 0], out_ref[:, 0])
    assert torch.equal(weights[:, 0, 0], torch.ones(2, dtype=torch.float64))


def test_attention_rows_sum_to_one_over_the_past_only():
    model = LSTMN(4, 6)
    _, _, weights = model(torch.randn(3, 8, 4))
    assert weights.shape == (3, 8, 8)
    torch.testing.assert_close(weights.sum(-1), torch.ones(3, 8))
    assert torch.all(weights.triu(1) == 0)  # step t reads entries 0..t only
    assert (weights[:, torch.ones(8, 8, dtype=torch.bool).tril()] > 0).all()


def test_future_inputs_do_not_change_the_past():
    model = LSTMN(4, 6)
    x = torch.randn(2, 9, 4)
    changed = x.clone()
    changed[:, 5:] = torch.randn(2, 4, 4)
    out, _, _ = model(x)
    out_changed, _, _ = model(changed)
    assert torch.equal(out[:, :5], out_changed[:, :5])


def test_lengths_select_the_last_real_state_and_gradients_flow():
    model = LSTMN(4, 6)
    x = torch.randn(3, 5, 4, requires_grad=True)
    out, (h, c), _ = model(x, lengths=torch.tensor([5, 2, 3]))
    torch.testing.assert_close(h, out[torch.arange(3), torch.tensor([4, 1, 2])])
    h.sum().backward()
    assert x.grad[1, 2:].abs().sum() == 0 and x.grad[1, :2].abs().sum() > 0  # padding is not read
    assert all(p.grad is not None for p in model.parameters())


def test_weights_follow_the_index_convention():
    # step t (row t - 1) reads tape entries 0..t-1: h_0 and the states after x_1 .. x_{t-1}
    model = LSTMN(3, 4).double()
    x = torch.randn(2, 5, 3, dtype=torch.float64)
    out, _, weights = model(x)
    t = 3
    tape_h = torch.cat([torch.zeros(2, 1, 4, dtype=torch.float64), out[:, : t - 1]], dim=1)  # (N, t, E_h)
    h_sum_prev = (weights[:, t - 2, : t - 1, None] * tape_h[:, : t - 1]).sum(1)  # h~_{t-1}
    a = model.attn_v(
        torch.tanh(model.attn_h(tape_h) + (model.attn_x(x[:, t - 1]) + model.attn_s(h_sum_prev))[:, None])
    ).squeeze(-1)
    torch.testing.assert_close(weights[:, t - 1, :t], a.softmax(-1))
    assert torch.all(weights[:, t - 1, t:] == 0)


def test_empty_batch_behaves_as_torch():
    model = LSTMN(3, 4)
    out, (h, c), weights = model(torch.randn(0, 5, 3))
    ref, _ = torch.nn.LSTM(3, 4, batch_first=True)(torch.randn(0, 5, 3))
    assert out.shape == ref.shape == (0, 5, 4)
    assert h.shape == c.shape == (0, 4) and weights.shape == (0, 5, 5)
    out, (h, _), _ = model(torch.randn(0, 5, 3), lengths=torch.zeros(0, dtype=torch.long))
    assert h.shape == (0, 4)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda m: m(torch.randn(2, 3, 5)), ValueError, r"E_in=4, got \(2, 3, 5\)"),
        (lambda m: m(torch.randn(3, 4)), ValueError, r"\(N, T, E_in\).*\(3, 4\)"),
        (lambda m: m(torch.randn(2, 0, 4)), ValueError, "T = 0"),
        (lambda m: m([[[0.0] * 4]]), TypeError, "x must be a torch.Tensor"),
        (lambda m: m(torch.randn(2, 3, 4, dtype=torch.float64)), TypeError, "float64.*float32"),
        (lambda m: m(torch.ones(2, 3, 4, dtype=torch.long)), TypeError, "x has dtype torch.int64"),
        (lambda m: m(torch.full((2, 3, 4), float("nan"))), ValueError, "NaN"),
        (
            lambda m: m(torch.randn(2, 3, 4), lengths=torch.tensor([4, 1])),
            ValueError,
            r"lengths.*1\.\.3.*\[4, 1\]",
        ),
        (lambda m: m(torch.randn(2, 3, 4), lengths=torch.tensor([0, 1])), ValueError, r"lengths.*\[0, 1\]"),
        (lambda m: m(torch.randn(2, 3, 4), lengths=torch.tensor([3])), ValueError, r"lengths.*\(2,\)"),
        (lambda m: m(torch.randn(2, 3, 4), lengths=torch.tensor([2.0, 3.0])), TypeError, "lengths.*float32"),
        (lambda m: m(torch.randn(2, 3, 4), attention="first"), ValueError, "attention.*'first'"),
        (
            lambda m: m(torch.randn(2, 3, 4), state=(torch.zeros(3, 6), torch.zeros(2, 6))),
            ValueError,
            r"h_0 must be \(N, E_h\) = \(2, 6\), got \(3, 6\)",
        ),
        (
            lambda m: m(
                torch.randn(2, 3, 4), state=(torch.zeros(2, 6), torch.zeros(2, 6, dtype=torch.float64))
            ),
            TypeError,
            "c_0 has dtype torch.float64",
        ),
        (lambda m: m(torch.randn(2, 3, 4), state=torch.zeros(2, 6)), TypeError, "state must be a pair"),
    ],
)
def test_bad_input_is_named(call, error, message):
    with pytest.raises(error, match=message):
        call(LSTMN(4, 6))


def test_bad_sizes():
    with pytest.raises(ValueError, match="hidden_size must be >= 1, got hidden_size=0"):
        LSTMN(4, 0)
    with pytest.raises(TypeError, match="input_size must be an int, got float 4.0"):
        LSTMN(4.0, 6)
    with pytest.raises(ValueError, match="attention_size must be >= 1"):
        LSTMN(4, 6, attention_size=0)
