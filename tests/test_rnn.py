import pytest
import torch
from torch import nn

from seqlab import rnn as srnn

TOLERANCE = {torch.float64: dict(atol=1e-12, rtol=1e-10), torch.float32: dict(atol=1e-5, rtol=1e-5)}


def _pair(nonlinearity="tanh", bias=True, dtype=torch.float64, impl="scratch"):
    reference = nn.RNN(3, 5, nonlinearity=nonlinearity, bias=bias, batch_first=True).to(dtype)
    return reference, srnn.RNN.from_torch(reference, impl=impl)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("impl", ["scratch", "torch"])
def test_forward_and_gradients_equal_nn_rnn(dtype, nonlinearity, bias, impl):
    reference, ours = _pair(nonlinearity, bias, dtype, impl)
    x = torch.randn(4, 7, 3, dtype=dtype, requires_grad=True)
    h0 = torch.randn(4, 5, dtype=dtype)
    out_ref, h_ref = reference(x, h0.unsqueeze(0))
    out, h = ours(x, h0)
    torch.testing.assert_close(out, out_ref, **TOLERANCE[dtype])
    torch.testing.assert_close(h, h_ref[0], **TOLERANCE[dtype])

    (out_ref.square().sum() + h_ref.sum()).backward()
    grad_x_ref, x.grad = x.grad.clone(), None
    (out.square().sum() + h.sum()).backward()
    torch.testing.assert_close(x.grad, grad_x_ref, **TOLERANCE[dtype])
    names = [("weight_ih", "weight_ih_l0"), ("weight_hh", "weight_hh_l0")]
    if bias:
        names += [("bias_ih", "bias_ih_l0"), ("bias_hh", "bias_hh_l0")]
    for ours_name, ref_name in names:
        torch.testing.assert_close(
            getattr(ours.cell, ours_name).grad, getattr(reference, ref_name).grad, **TOLERANCE[dtype]
        )


def test_zero_initial_state_by_default():
    reference, ours = _pair()
    x = torch.randn(2, 4, 3, dtype=torch.float64)
    torch.testing.assert_close(ours(x)[0], reference(x)[0])


def test_cell_is_one_step_of_the_layer():
    layer = srnn.RNN(3, 4)
    x = torch.randn(2, 1, 3)
    torch.testing.assert_close(layer(x)[1], layer.cell(x[:, 0]))


def test_linear_rnn_is_linear_in_the_state():
    layer = srnn.RNN(2, 3, nonlinearity="linear", bias=False).double()
    x = torch.zeros(1, 4, 2, dtype=torch.float64)
    h0 = torch.randn(1, 3, dtype=torch.float64)
    W = layer.cell.weight_hh.detach()
    expected = h0 @ torch.linalg.matrix_power(W, 4).T
    torch.testing.assert_close(layer(x, h0)[1], expected)


@pytest.mark.parametrize("nonlinearity", ["tanh", "relu", "linear"])
def test_step_jacobians_match_autograd(nonlinearity):
    layer = srnn.RNN(3, 4, nonlinearity=nonlinearity).double()
    x = torch.randn(2, 5, 3, dtype=torch.float64)
    h0 = torch.randn(2, 4, dtype=torch.float64)
    factors = layer.step_jacobians(x, h0)
    assert factors.shape == (2, 5, 4, 4)
    for n in range(2):
        product = torch.eye(4, dtype=torch.float64)
        for jacobian in factors[n]:
            product = jacobian @ product
        full = torch.autograd.functional.jacobian(lambda h, n=n: layer(x[n : n + 1], h)[1], h0[n : n + 1])
        torch.testing.assert_close(product, full[0, :, 0, :])


def test_hidden_state_grads_match_the_closed_form():
    # linear RNN, J = h_T . u  =>  dJ/dh_t = u^T W^(T - t)
    layer = srnn.RNN(2, 3, nonlinearity="linear").double()
    x = torch.randn(1, 6, 2, dtype=torch.float64)
    u = torch.randn(3, dtype=torch.float64)
    grads = srnn.hidden_state_grads(layer, x, lambda out: out[0, -1] @ u)
    W = layer.cell.weight_hh.detach()
    for t in range(6):
        expected = u @ torch.linalg.matrix_power(W, 5 - t)
        torch.testing.assert_close(grads[0, t], expected)


def test_hidden_state_grads_of_unused_states_are_zero():
    layer = srnn.RNN(2, 3)
    grads = srnn.hidden_state_grads(layer, torch.randn(2, 5, 2), lambda out: out[:, 1].sum())
    assert torch.all(grads[:, 2:] == 0) and grads[:, :2].abs().sum() > 0


def test_hidden_state_grads_needs_a_scalar():
    with pytest.raises(ValueError, match="scalar"):
        srnn.hidden_state_grads(srnn.RNN(2, 3), torch.randn(2, 4, 2), lambda out: out.sum(1))


def test_spectral_radius_is_set_exactly():
    W = torch.randn(20, 20, dtype=torch.float64)
    for rho in (0.5, 1.0, 1.7):
        scaled = srnn.set_spectral_radius(W, rho)
        assert abs(srnn.spectral_radius(scaled) - rho) < 1e-10
    # not the spectral norm: for a non-normal matrix the largest singular value is larger
    scaled = srnn.set_spectral_radius(W, 1.0)
    assert torch.linalg.matrix_norm(scaled, 2) > 1.2


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda m: m(torch.randn(2, 4)), ValueError, r"\(N, T, E_in\)"),
        (lambda m: m(torch.randn(2, 4, 5)), ValueError, "E_in=3"),
        (
            lambda m: m(torch.randn(2, 4, 3), torch.randn(3, 5)),
            ValueError,
            r"h0 must be \(N, E_h\) = \(2, 5\)",
        ),
        (lambda m: m(torch.full((1, 2, 3), float("nan"))), ValueError, "NaN"),
        (lambda m: m(torch.randn(1, 0, 3)), ValueError, "T = 0"),
        (lambda m: m(torch.randn(1, 2, 3), impl="cuda"), ValueError, "impl"),
        (lambda m: m.cell(torch.randn(2, 3), torch.randn(2, 4)), ValueError, "h must be"),
    ],
)
def test_bad_input_is_a_clear_error(call, error, message):
    with pytest.raises(error, match=message):
        call(srnn.RNN(3, 5))


def test_unsupported_configurations_are_refused():
    with pytest.raises(ValueError, match="nonlinearity"):
        srnn.RNN(2, 2, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="linear"):
        srnn.RNN(2, 2, nonlinearity="linear", impl="torch")
    with pytest.raises(ValueError, match="num_layers=1"):
        srnn.RNN.from_torch(nn.RNN(2, 2, num_layers=2, batch_first=True))
    with pytest.raises(ValueError, match="batch_first"):
        srnn.RNN.from_torch(nn.RNN(2, 2))
    with pytest.raises(ValueError, match="square"):
        srnn.spectral_radius(torch.randn(2, 3))
    with pytest.raises(ValueError, match="rho"):
        srnn.set_spectral_radius(torch.randn(2, 2), -1.0)


@pytest.mark.parametrize("impl", ["scratch", "torch"])
def test_empty_batch_gives_empty_outputs_like_nn_rnn(impl):
    reference, ours = _pair(dtype=torch.float32, impl=impl)
    x = torch.randn(0, 4, 3)
    out_ref, h_ref = reference(x)
    out, h = ours(x)
    assert out.shape == out_ref.shape == (0, 4, 5) and h.shape == h_ref[0].shape == (0, 5)


def test_initial_state_must_be_finite_and_of_the_inputs_dtype():
    layer = srnn.RNN(3, 5)
    with pytest.raises(ValueError, match="h0 contains NaN or infinite"):
        layer(torch.randn(2, 4, 3), torch.full((2, 5), float("nan")))
    with pytest.raises(
        TypeError, match=r"h0 has dtype torch.float64 but x and the weights have dtype torch.float32"
    ):
        layer(torch.randn(2, 4, 3), torch.zeros(2, 5, dtype=torch.float64))
    with pytest.raises(TypeError, match=r"x has dtype torch.float64"):
        layer(torch.randn(2, 4, 3, dtype=torch.float64))


def test_rnn_and_lstm_share_the_parameter_layout_of_pytorch():
    from seqlab.lstm import GRU, LSTM

    for module, gates in ((srnn.RNNCell(3, 5), 1), (GRU(3, 5), 3), (LSTM(3, 5), 4)):
        shapes = {name: tuple(p.shape) for name, p in module.named_parameters()}
        assert shapes == {
            "weight_ih": (gates * 5, 3),
            "weight_hh": (gates * 5, 5),
            "bias_ih": (gates * 5,),
            "bias_hh": (gates * 5,),
        }
        assert all(p.abs().max() <= 5**-0.5 for p in module.parameters())
    with pytest.raises(ValueError, match="input_size must be >= 1, got input_size=0"):
        srnn.RNNCell(0, 3)
