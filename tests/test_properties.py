"""Property-based tests (hypothesis): random shapes, dtypes and masks.

For every draw, seqlab's scratch path, its fused path and PyTorch's own function agree, or the
call is refused with a clear ValueError/TypeError before any computation. Nothing returns NaN
or a tensor of the wrong shape. Each test draws a few dozen cases: a few seconds in all.
"""

import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch import nn

from seqlab.attention import scaled_dot_product_attention as sdpa
from seqlab.multihead import MultiheadAttention

TOLERANCE = {torch.float64: dict(atol=1e-10, rtol=1e-8), torch.float32: dict(atol=1e-5, rtol=1e-4)}
SETTINGS = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@st.composite
def attention_inputs(draw):
    """q, k, v of shapes (N, H, L, D), (N, H, S, D), (N, H, S, D_v) and a mask (or None).

    The mask is either broadcastable to the scores (N, H, L, S), each of its dimensions full
    or 1 and leading ones possibly dropped, or (one case in four) has an extra leading batch
    dimension, which must be refused.
    """
    n, h = draw(st.integers(0, 3)), draw(st.integers(1, 3))
    length, source = draw(st.integers(0, 5)), draw(st.integers(0, 5))
    d, d_v = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    dtype = draw(st.sampled_from([torch.float32, torch.float64]))
    seed = draw(st.integers(0, 2**16))
    generator = torch.Generator().manual_seed(seed)

    def randn(*shape):
        return torch.randn(*shape, generator=generator, dtype=dtype)

    q, k, v = randn(n, h, length, d), randn(n, h, source, d), randn(n, h, source, d_v)
    kind = draw(st.sampled_from(["none", "broadcast", "broadcast", "too many dims"]))
    mask = None
    scores_shape = (n, h, length, source)
    if kind != "none":
        keep = [draw(st.booleans()) for _ in scores_shape]
        shape = [size if full else 1 for size, full in zip(scores_shape, keep, strict=True)]
        shape = shape[draw(st.integers(0, 2)) :]  # drop some leading dimensions
        if kind == "too many dims":
            shape = [draw(st.integers(2, 3)), *scores_shape]
        mask = torch.rand(*shape, generator=generator) > draw(st.sampled_from([0.0, 0.3, 0.7, 1.0]))
    return q, k, v, mask, kind


@SETTINGS
@given(attention_inputs())
def test_scratch_equals_fused_equals_torch_or_refuses(inputs):
    q, k, v, mask, kind = inputs
    if kind == "too many dims":
        for impl in ("scratch", "torch"):
            with pytest.raises(ValueError, match="does not broadcast to the scores' shape"):
                sdpa(q, k, v, mask, impl=impl)
        return
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    if mask is not None:  # seqlab's promise: a query that may see no key gets zeros
        blind = ~mask.any(dim=-1, keepdim=True).expand(*expected.shape[:-1], 1)
        expected = expected.masked_fill(blind, 0.0)
    for impl in ("scratch", "torch"):
        out, _ = sdpa(q, k, v, mask, impl=impl)
        assert out.shape == expected.shape and out.dtype == q.dtype
        assert torch.isfinite(out).all()
        torch.testing.assert_close(out, expected, **TOLERANCE[q.dtype])


@SETTINGS
@given(
    st.sampled_from([torch.float32, torch.float64]),
    st.sampled_from([torch.float16, torch.float32, torch.float64, torch.int64]),
    st.sampled_from(["q", "k", "v"]),
)
def test_mixed_or_integer_dtypes_are_refused(dtype, other, which):
    tensors = {name: torch.ones(2, 3, 4, dtype=dtype) for name in "qkv"}
    tensors[which] = tensors[which].to(other)
    if other == dtype:
        assert sdpa(tensors["q"], tensors["k"], tensors["v"])[0].dtype == dtype
        return
    for impl in ("scratch", "torch"):
        with pytest.raises(TypeError, match=str(other)):
            sdpa(tensors["q"], tensors["k"], tensors["v"], impl=impl)


@st.composite
def mha_inputs(draw):
    heads, head_dim = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    n, length, source = draw(st.integers(0, 3)), draw(st.integers(1, 4)), draw(st.integers(1, 5))
    dtype = draw(st.sampled_from([torch.float32, torch.float64]))
    self_attention = draw(st.booleans())
    if self_attention:
        source = length
    bias = draw(st.booleans())
    padding = attn = None
    if draw(st.booleans()):  # True = ignore; key 0 stays visible (the built-in gives NaN otherwise)
        padding = torch.rand(n, source) > 0.5
        padding[:, 0] = False
    if draw(st.booleans()):
        attn = torch.rand(length, source) > 0.6
        attn[:, 0] = False
    return heads, head_dim, n, length, source, dtype, self_attention, bias, padding, attn


@SETTINGS
@given(mha_inputs(), st.sampled_from(["scratch", "torch"]), st.booleans())
def test_multihead_equals_nn_multihead_attention(inputs, impl, need_weights):
    heads, head_dim, n, length, source, dtype, self_attention, bias, padding, attn = inputs
    torch.manual_seed(0)
    e = heads * head_dim
    reference = nn.MultiheadAttention(e, heads, bias=bias, batch_first=True).to(dtype)
    ours = MultiheadAttention.from_torch(reference, impl=impl)
    query = torch.randn(n, length, e, dtype=dtype)
    memory = query if self_attention else torch.randn(n, source, e, dtype=dtype)
    kwargs = dict(key_padding_mask=padding, attn_mask=attn, need_weights=need_weights)
    out, weights = ours(query, memory, memory, **kwargs)
    assert out.shape == (n, length, e) and torch.isfinite(out).all()
    if n == 0 and padding is not None:
        return  # the built-in cannot reshape an empty key_padding_mask (a torch bug); ours is empty
    out_ref, weights_ref = reference(query, memory, memory, **kwargs)
    torch.testing.assert_close(out, out_ref, **TOLERANCE[dtype])
    if need_weights:
        torch.testing.assert_close(weights, weights_ref, **TOLERANCE[dtype])
    with pytest.raises(TypeError, match="query has dtype"):
        ours(query.to(torch.float16), memory, memory)
