import pytest
import torch
from torch import nn

from seqlab.lstm import GRU, LSTM

TOLERANCE = {torch.float64: dict(atol=1e-12, rtol=1e-10), torch.float32: dict(atol=1e-5, rtol=1e-5)}
PARAMS = ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]


def _loss(out, h, c=None):
    extra = 0 if c is None else (c**3).sum()
    return out.square().sum() + (1.3 * h).sum() + extra


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("impl", ["scratch", "torch"])
@pytest.mark.parametrize("shape", [(4, 7, 3, 5), (1, 1, 2, 3), (3, 2, 6, 1)])  # (N, T, E_in, E_h)
def test_lstm_forward_and_gradients_equal_nn_lstm(dtype, bias, impl, shape):
    n, steps, e_in, e_h = shape
    reference = nn.LSTM(e_in, e_h, bias=bias, batch_first=True).to(dtype)
    ours = LSTM.from_torch(reference, impl=impl)
    inputs = [
        torch.randn(n, steps, e_in, dtype=dtype),
        torch.randn(n, e_h, dtype=dtype),
        torch.randn(n, e_h, dtype=dtype),
    ]
    for t in inputs:
        t.requires_grad_(True)
    x, h0, c0 = inputs
    out_ref, (h_ref, c_ref) = reference(x, (h0.unsqueeze(0), c0.unsqueeze(0)))
    out, (h, c) = ours(x, (h0, c0))
    for a, b in ((out, out_ref), (h, h_ref[0]), (c, c_ref[0])):
        torch.testing.assert_close(a, b, **TOLERANCE[dtype])
    grads_ref = torch.autograd.grad(_loss(out_ref, h_ref[0], c_ref[0]), inputs + list(reference.parameters()))
    grads = torch.autograd.grad(_loss(out, h, c), inputs + list(ours.parameters()))
    for a, b in zip(grads, grads_ref, strict=True):
        torch.testing.assert_close(a, b, **TOLERANCE[dtype])


def test_lstm_hand_written_backward_passes_gradcheck():
    layer = LSTM(2, 3).double()
    x = torch.randn(2, 5, 2, dtype=torch.float64, requires_grad=True)
    h0 = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    c0 = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x, h0, c0: layer(x, (h0, c0))[0], (x, h0, c0))
    assert torch.autograd.gradcheck(lambda x, h0, c0: layer(x, (h0, c0))[1][1], (x, h0, c0))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("impl", ["scratch", "torch"])
def test_gru_forward_and_gradients_equal_nn_gru(dtype, impl):
    reference = nn.GRU(3, 5, batch_first=True).to(dtype)
    ours = GRU.from_torch(reference, impl=impl)
    x = torch.randn(4, 6, 3, dtype=dtype, requires_grad=True)
    h0 = torch.randn(4, 5, dtype=dtype)
    out_ref, h_ref = reference(x, h0.unsqueeze(0))
    out, h = ours(x, h0)
    torch.testing.assert_close(out, out_ref, **TOLERANCE[dtype])
    torch.testing.assert_close(h, h_ref[0], **TOLERANCE[dtype])
    grads_ref = torch.autograd.grad(_loss(out_ref, h_ref[0]), [x, *reference.parameters()])
    grads = torch.autograd.grad(_loss(out, h), [x, *ours.parameters()])
    for a, b in zip(grads, grads_ref, strict=True):
        torch.testing.assert_close(a, b, **TOLERANCE[dtype])


def test_trace_matches_forward_and_the_equations():
    layer = LSTM(3, 4).double()
    x = torch.randn(2, 6, 3, dtype=torch.float64)
    trace = layer.trace(x)
    out, (h, c) = layer(x)
    torch.testing.assert_close(trace.h, out)
    torch.testing.assert_close(trace.c[:, -1], c)
    for gate in (trace.i, trace.f, trace.o):
        assert gate.shape == (2, 6, 4) and 0 < gate.min() and gate.max() < 1
    previous = torch.cat([torch.zeros(2, 1, 4, dtype=torch.float64), trace.c[:, :-1]], dim=1)
    torch.testing.assert_close(trace.c, trace.f * previous + trace.i * trace.g)
    torch.testing.assert_close(trace.h, trace.o * torch.tanh(trace.c))


def test_forget_one_input_zero_keeps_the_cell_bit_for_bit():
    layer = LSTM(3, 4)
    with torch.no_grad():
        layer.weight_ih.zero_()
        layer.weight_hh.zero_()
        layer.bias_hh.zero_()
        layer.bias_ih.zero_()
        layer.bias_ih[4:8] = 100.0  # forget gate: sigmoid(100) == 1.0 in float32
        layer.bias_ih[0:4] = -100.0  # input gate: sigmoid(-100) ~ 4e-44 in float32
        layer.bias_ih[8:12] = 1.0  # new content g = tanh(1): something to write, were the gate open
    c0 = torch.randn(2, 4)
    trace = layer.trace(torch.randn(2, 500, 3), (torch.zeros(2, 4), c0))
    assert torch.equal(trace.c[:, -1], c0)
    _, (_, c_last) = layer(torch.randn(2, 500, 3), (torch.zeros(2, 4), c0))
    assert torch.equal(c_last, c0)


@pytest.mark.parametrize("cls", [LSTM, GRU])
def test_bad_input_is_a_clear_error(cls):
    layer = cls(3, 5)
    with pytest.raises(ValueError, match=r"\(N, T, E_in\) with E_in=3"):
        layer(torch.randn(2, 4, 4))
    with pytest.raises(ValueError, match="NaN"):
        layer(torch.full((1, 2, 3), float("inf")))
    with pytest.raises(ValueError, match="impl"):
        layer(torch.randn(1, 2, 3), impl="fast")


def test_bad_states_and_modules_are_refused():
    with pytest.raises(ValueError, match=r"c0 must be \(N, E_h\) = \(2, 5\)"):
        LSTM(3, 5)(torch.randn(2, 4, 3), (torch.zeros(2, 5), torch.zeros(5)))
    with pytest.raises(ValueError, match=r"h0 must be"):
        GRU(3, 5)(torch.randn(2, 4, 3), torch.zeros(3, 5))
    with pytest.raises(TypeError, match="expected LSTM"):
        LSTM.from_torch(nn.GRU(2, 2, batch_first=True))
    with pytest.raises(ValueError, match="num_layers=1"):
        LSTM.from_torch(nn.LSTM(2, 2, num_layers=2, batch_first=True))
    with pytest.raises(ValueError, match="proj_size"):
        LSTM.from_torch(nn.LSTM(2, 3, proj_size=2, batch_first=True))
