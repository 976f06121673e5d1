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


def test_bad_input():
    model = LSTMN(4, 6)
    with pytest.raises(ValueError, match="E_in=4"):
        model(torch.randn(2, 3, 5))
    with pytest.raises(ValueError, match="lengths"):
        model(torch.randn(2, 3, 4), lengths=torch.tensor([4, 1]))
    with pytest.raises(ValueError, match="attention"):
        model(torch.randn(2, 3, 4), attention="first")
    with pytest.raises(ValueError, match="h0 must be"):
        model(torch.randn(2, 3, 4), state=(torch.zeros(3, 6), torch.zeros(2, 6)))
