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
        out, _ = sdpa(q, k, v, mask, impl=impl)
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
    out, weights = sdpa(q, k, v, mask)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 3, 4, dtype=torch.float64))
    assert torch.all(weights[..., ~mask] == 0)
    torch.testing.assert_close(out, weights @ v)


@pytest.mark.parametrize("impl", ["scratch", "torch"])
def test_fully_masked_rows_give_zeros_and_finite_gradients(impl):
    q, k, v = _qkv()
    mask = torch.ones(4, 5, dtype=torch.bool)
    mask[2] = False  # query 2 may attend to nothing
    out, _ = sdpa(q, k, v, mask, impl=impl)
    assert torch.all(out[:, :, 2] == 0) and torch.isfinite(out).all()
    grads = torch.autograd.grad(out.sum(), (q, k, v))
    assert all(torch.isfinite(g).all() for g in grads)
    if impl == "scratch":
        _, weights = sdpa(q, k, v, mask)
        assert torch.all(weights[:, :, 2] == 0)


def test_scale_is_applied():
    q, k, v = _qkv()
    torch.testing.assert_close(
        sdpa(q, k, v, scale=0.5)[0], F.scaled_dot_product_attention(q, k, v, scale=0.5)
    )


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
        # a mask with more batch dimensions than the scores would silently enlarge the output
        (
            (torch.randn(2, 3, 4),) * 3,
            {"mask": torch.ones(5, 2, 3, 3, dtype=torch.bool)},
            ValueError,
            r"would make them \(5, 2, 3, 3\)",
        ),
        (
            (torch.randn(2, 3, 4), torch.randn(2, 3, 4).double(), torch.randn(2, 3, 4)),
            {},
            TypeError,
            "float64",
        ),
        ((torch.ones(2, 3, 4, dtype=torch.long),) * 3, {}, TypeError, r"q must be a floating.*int64"),
        ((torch.randn(2, 3, 0),) * 3, {}, ValueError, "D >= 1"),
        (
            (torch.randn(2, 3, 4), torch.randn(3, 3, 4), torch.randn(3, 3, 4)),
            {},
            ValueError,
            "batch dimensions",
        ),
    ],
)
def test_bad_input(args, kwargs, error, message):
    for impl in ("scratch", "torch"):
        if kwargs.get("impl") is not None and impl != kwargs["impl"]:
            continue
        with pytest.raises(error, match=message):
            sdpa(*args, **({"impl": impl} | kwargs))


@pytest.mark.parametrize("impl", ["scratch", "torch"])
def test_empty_batches_and_sequences_behave_as_in_torch(impl):
    for n, length, source in ((0, 3, 4), (2, 0, 4), (2, 3, 0)):
        q, k, v = torch.randn(n, length, 5), torch.randn(n, source, 5), torch.randn(n, source, 6)
        out, _ = sdpa(q, k, v, impl=impl)
        torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v))
        assert out.shape == (n, length, 6)


def test_masked_softmax_refuses_a_mask_that_enlarges_the_scores():
    with pytest.raises(ValueError, match="would make them"):
        masked_softmax(torch.randn(3, 4), torch.ones(2, 3, 4, dtype=torch.bool))
    with pytest.raises(TypeError, match="floating"):
        masked_softmax(torch.ones(3, 4, dtype=torch.long))


from seqlab.attention import AttentionScore, masked_softmax  # noqa: E402
from seqlab.masks import gaussian_window, local_window  # noqa: E402


@pytest.mark.parametrize("kind", ["dot", "general", "concat", "additive"])
def test_scratch_scores_equal_fast_scores(kind):
    sizes = (6, 6) if kind == "dot" else (5, 7)
    score = AttentionScore(kind, *sizes, attention_size=4).double()
    query = torch.randn(2, 3, sizes[0], dtype=torch.float64)
    keys = torch.randn(2, 4, sizes[1], dtype=torch.float64)
    fast = score(query, keys, impl="fast")
    assert fast.shape == (2, 3, 4)
    torch.testing.assert_close(score(query, keys), fast)  # the default: scratch
    with pytest.raises(ValueError, match="impl must be one of"):
        score(query, keys, impl="batched")


def test_score_formulas():
    q, k = torch.randn(1, 1, 3), torch.randn(1, 2, 3)
    torch.testing.assert_close(AttentionScore("dot", 3, 3)(q, k)[0, 0], k[0] @ q[0, 0])
    general = AttentionScore("general", 3, 3)
    torch.testing.assert_close(general(q, k)[0, 0], k[0] @ general.W.weight.T @ q[0, 0])
    with pytest.raises(ValueError, match="query_size == key_size"):
        AttentionScore("dot", 3, 4)
    with pytest.raises(ValueError, match="kind"):
        AttentionScore("cosine", 3, 3)


def test_masked_softmax_rows():
    scores = torch.randn(2, 3, requires_grad=True)
    mask = torch.tensor([[True, False, True], [False, False, False]])
    weights = masked_softmax(scores, mask)
    torch.testing.assert_close(weights[0].sum(), torch.tensor(1.0))
    assert weights[0, 1] == 0 and torch.all(weights[1] == 0)
    weights.sum().backward()
    assert torch.isfinite(scores.grad).all()


def test_local_windows_are_exactly_zero_outside():
    center = torch.tensor([[0.0, 4.0, 6.3]])
    window = local_window(center, 10, 2)
    assert window[0, 0].nonzero().flatten().tolist() == [0, 1, 2]
    assert window[0, 1].nonzero().flatten().tolist() == [2, 3, 4, 5, 6]
    assert window[0, 2].nonzero().flatten().tolist() == [5, 6, 7, 8]
    weights = masked_softmax(torch.randn(1, 3, 10), window) * gaussian_window(center, 10, 2)
    assert torch.all(weights[~window] == 0)
    g = gaussian_window(torch.tensor([[4.0]]), 10, 2)[0, 0]
    assert g[4] == 1 and abs(g[5].item() - torch.exp(torch.tensor(-0.5)).item()) < 1e-6  # sigma = D / 2 = 1


def test_window_functions_refuse_bad_arguments():
    with pytest.raises(TypeError, match="center"):
        local_window([[1.0]], 5, 2)
    with pytest.raises(ValueError, match="half_width"):
        local_window(torch.zeros(1, 1), 5, -1)
    with pytest.raises(ValueError, match="source_length"):
        gaussian_window(torch.zeros(1, 1), 0, 2)
    with pytest.raises(ValueError, match="half_width"):
        gaussian_window(torch.zeros(1, 1), 5, 0)


def test_dropout_on_the_weights_both_paths():
    torch.manual_seed(3)
    q, k, v = torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 6)
    out, weights = sdpa(q, k, v, dropout_p=1.0)  # every weight dropped
    assert torch.all(out == 0)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 3))  # weights before dropout
    fused, none = sdpa(q, k, v, impl="torch", dropout_p=1.0)
    assert torch.all(fused == 0) and none is None  # the fused kernel forms no weights
    torch.testing.assert_close(sdpa(q, k, v, dropout_p=0.0)[0], sdpa(q, k, v, impl="torch")[0])
    for bad in (-0.1, 1.5, True, "0.1"):
        with pytest.raises(ValueError, match="dropout_p"):
            sdpa(q, k, v, dropout_p=bad)


@pytest.mark.parametrize("kind", ["dot", "general", "concat", "additive"])
def test_projected_keys_give_the_same_scores(kind):
    # a decoder projects the keys once per source and reuses them at every step
    score = AttentionScore(kind, 5, 5, attention_size=4).double()
    query, keys = torch.randn(2, 3, 5, dtype=torch.float64), torch.randn(2, 4, 5, dtype=torch.float64)
    projected = score.project_keys(keys)
    if kind in ("dot", "general"):
        assert projected is None
    else:
        assert projected.shape == (2, 4, 4)
    torch.testing.assert_close(score(query, keys, impl="fast", projected=projected), score(query, keys))
    if projected is not None:
        with pytest.raises(ValueError, match="projected"):
            score(query, keys, impl="fast", projected=projected[:, :2])
