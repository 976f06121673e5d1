import pytest
import torch
import torch.nn.functional as F

from seqlab.attention import scaled_dot_product_attention as sdpa
from seqlab.masks import causal_mask, padding_mask


def _qkv(dtype=torch.float64, n=2, h=3, length=4, source=5, d=6, dv=7):
    return (
        torch.randn(n, h, length, d, dtype=dtype, requires_grad=True),
        torch.randn(n, h, source, d, dtype=dtype, requires_grad=True),
        torch.randn(n, h, source, dv, dtype=dtype, requires_grad=True),
    )


@pytest.mark.parametrize("dtype, tol", [(torch.float64, 1e-12), (torch.float32, 1e-5)])
@pytest.mark.parametrize("masked", [False, True])
def test_scratch_equals_torch_sdpa_forward_and_backward(dtype, tol, masked):
    q, k, v = _qkv(dtype)
    mask = padding_mask([5, 3], 5)[:, None, None, :] if masked else None
    outs, grads = [], []
    for impl in ("scratch", "torch"):
        out = sdpa(q, k, v, mask, impl=impl)
        grads.append(torch.autograd.grad(out.square().sum(), (q, k, v)))
        outs.append(out)
    reference = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(outs[0], reference, atol=tol, rtol=tol)
    torch.testing.assert_close(outs[1], reference, atol=tol, rtol=tol)
    for a, b in zip(*grads, strict=True):
        torch.testing.assert_close(a, b, atol=tol, rtol=tol)


def test_weights_are_row_stochastic_and_respect_the_mask():
    q, k, v = _qkv()
    mask = causal_mask(4, 5)
    out, weights = sdpa(q, k, v, mask, return_weights=True)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 3, 4, dtype=torch.float64))
    assert torch.all(weights[..., ~mask] == 0)
    torch.testing.assert_close(out, weights @ v)


@pytest.mark.parametrize("impl", ["scratch", "torch"])
def test_fully_masked_rows_give_zeros_and_finite_gradients(impl):
    q, k, v = _qkv()
    mask = torch.ones(4, 5, dtype=torch.bool)
    mask[2] = False  # query 2 may attend to nothing
    out = sdpa(q, k, v, mask, impl=impl)
    assert torch.all(out[:, :, 2] == 0) and torch.isfinite(out).all()
    grads = torch.autograd.grad(out.sum(), (q, k, v))
    assert all(torch.isfinite(g).all() for g in grads)
    if impl == "scratch":
        _, weights = sdpa(q, k, v, mask, return_weights=True)
        assert torch.all(weights[:, :, 2] == 0)


def test_scale_is_applied():
    q, k, v = _qkv()
    torch.testing.assert_close(sdpa(q, k, v, scale=0.5), F.scaled_dot_product_attention(q, k, v, scale=0.5))


@pytest.mark.parametrize(
    "args, kwargs, error, message",
    [
        (
            (torch.randn(2, 3, 4), torch.randn(2, 5, 3), torch.randn(2, 5, 4)),
            {},
            ValueError,
            "last dimension D",
        ),
        (
            (torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 6, 4)),
            {},
            ValueError,
            "number of keys S",
        ),
        ((torch.randn(2, 3, 4), torch.randn(5, 4), torch.randn(5, 4)), {}, ValueError, "same rank"),
        ((torch.randn(2, 3, 4),) * 3, {"mask": torch.ones(3, 3)}, TypeError, "bool"),
        ((torch.randn(2, 3, 4),) * 3, {"mask": torch.ones(2, 2, dtype=torch.bool)}, ValueError, "broadcast"),
        ((torch.randn(2, 3, 4),) * 3, {"impl": "flash"}, ValueError, "impl"),
        ((torch.randn(2, 3, 4),) * 3, {"impl": "torch", "return_weights": True}, ValueError, "weights"),
    ],
)
def test_bad_input(args, kwargs, error, message):
    with pytest.raises(error, match=message):
        sdpa(*args, **kwargs)
