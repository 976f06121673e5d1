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
@pytest.mark.parametrize("impl", ["scratch", "fast", "torch"])
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
    layer = LSTM(2, 3, impl="fast").double()
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
    for impl in LSTM.impls:
        _, (_, c_last) = layer(torch.randn(2, 500, 3), (torch.zeros(2, 4), c0), impl=impl)
        assert torch.equal(c_last, c0), impl


@pytest.mark.parametrize("cls", [LSTM, GRU])
def test_bad_input_is_a_clear_error(cls):
    layer = cls(3, 5)
    with pytest.raises(ValueError, match=r"\(N, T, E_in\) with E_in=3"):
        layer(torch.randn(2, 4, 4))
    with pytest.raises(ValueError, match="NaN"):
        layer(torch.full((1, 2, 3), float("inf")))
    with pytest.raises(ValueError, match="impl"):
        layer(torch.randn(1, 2, 3), impl="bogus")


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


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("bias", [True, False])
def test_fast_path_equals_the_readable_loop(dtype, bias):
    layer = LSTM(4, 6, bias=bias).to(dtype)
    x = torch.randn(3, 11, 4, dtype=dtype, requires_grad=True)
    h0, c0 = torch.randn(3, 6, dtype=dtype), torch.randn(3, 6, dtype=dtype)
    results = {}
    for impl in ("scratch", "fast"):
        out, (h, c) = layer(x, (h0, c0), impl=impl)
        grads = torch.autograd.grad(_loss(out, h, c), [x, *layer.parameters()])
        results[impl] = (out, h, c, *grads)
    for a, b in zip(results["scratch"], results["fast"], strict=True):
        torch.testing.assert_close(a, b, **TOLERANCE[dtype])


def test_step_is_one_step_of_the_loop():
    layer = LSTM(3, 4).double()
    x = torch.randn(2, 1, 3, dtype=torch.float64)
    h0, c0 = torch.randn(2, 4, dtype=torch.float64), torch.randn(2, 4, dtype=torch.float64)
    step = layer.step(x[:, 0], h0, c0)
    _, (h, c) = layer(x, (h0, c0))
    torch.testing.assert_close(step.h, h)
    torch.testing.assert_close(step.c, c)
    torch.testing.assert_close(step.c, step.f * c0 + step.i * step.g)


@pytest.mark.parametrize("impl", LSTM.impls)
def test_lstm_empty_batch_gives_empty_outputs_like_nn_lstm(impl):
    reference = nn.LSTM(3, 5, batch_first=True)
    ours = LSTM.from_torch(reference, impl=impl)
    x = torch.randn(0, 4, 3, requires_grad=True)
    out_ref, (h_ref, c_ref) = reference(x)
    out, (h, c) = ours(x)
    assert out.shape == out_ref.shape == (0, 4, 5)
    assert h.shape == c.shape == h_ref[0].shape == (0, 5)
    out.sum().backward()  # the empty output still belongs to the graph
    assert x.grad.shape == x.shape


@pytest.mark.parametrize("impl", GRU.impls)
def test_gru_empty_batch_gives_empty_outputs_like_nn_gru(impl):
    reference = nn.GRU(3, 5, batch_first=True)
    out_ref, h_ref = reference(torch.randn(0, 4, 3))
    out, h = GRU.from_torch(reference, impl=impl)(torch.randn(0, 4, 3))
    assert out.shape == out_ref.shape == (0, 4, 5)
    assert h.shape == h_ref[0].shape == (0, 5)


@pytest.mark.parametrize("impl", LSTM.impls)
@pytest.mark.parametrize("name", ["h0", "c0"])
def test_lstm_refuses_a_nan_or_infinite_initial_state(impl, name):
    bad = torch.zeros(2, 5)
    bad[1, 3] = float("nan") if name == "h0" else float("inf")
    state = (bad, torch.zeros(2, 5)) if name == "h0" else (torch.zeros(2, 5), bad)
    with pytest.raises(ValueError, match=f"{name} contains NaN or infinite"):
        LSTM(3, 5)(torch.randn(2, 4, 3), state, impl=impl)


def test_gru_refuses_a_nan_initial_state():
    with pytest.raises(ValueError, match="h0 contains NaN"):
        GRU(3, 5)(torch.randn(2, 4, 3), torch.full((2, 5), float("nan")))


@pytest.mark.parametrize("impl", LSTM.impls)
def test_lstm_refuses_a_dtype_mismatch_naming_both_dtypes(impl):
    # nn.LSTM refuses a float64 state for float32 weights too (a RuntimeError); no silent cast here
    layer = LSTM(3, 5)
    x = torch.randn(2, 4, 3)
    with pytest.raises(TypeError, match=r"h0 has dtype torch.float64 .* torch.float32"):
        layer(x, (torch.zeros(2, 5, dtype=torch.float64), torch.zeros(2, 5)), impl=impl)
    with pytest.raises(TypeError, match=r"c0 has dtype torch.float64 .* torch.float32"):
        layer(x, (torch.zeros(2, 5), torch.zeros(2, 5, dtype=torch.float64)), impl=impl)
    with pytest.raises(
        TypeError, match=r"x has dtype torch.float64 but the weights have dtype torch.float32"
    ):
        layer(x.double(), impl=impl)


def test_gru_refuses_a_dtype_mismatch():
    with pytest.raises(TypeError, match=r"h0 has dtype torch.float64"):
        GRU(3, 5)(torch.randn(2, 4, 3), torch.zeros(2, 5, dtype=torch.float64))


def test_bad_sizes_and_impls_are_refused():
    with pytest.raises(ValueError, match="hidden_size must be >= 1, got hidden_size=0"):
        LSTM(3, 0)
    with pytest.raises(ValueError, match="impl must be one of"):
        GRU(3, 4, impl="fast")  # the hand-written backward pass exists for the LSTM only
    with pytest.raises(ValueError, match="impl must be one of"):
        LSTM(3, 4, impl="cuda")
