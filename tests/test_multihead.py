import pytest
import torch
from torch import nn

from seqlab.masks import causal_mask
from seqlab.multihead import (
    KV,
    AttentionPooling,
    MultiheadAttention,
    UnequalHeadsAttention,
    merge_heads,
    split_heads,
)

TOLERANCE = {torch.float64: dict(atol=1e-12, rtol=1e-10), torch.float32: dict(atol=1e-5, rtol=1e-5)}


def _pair(dtype, bias=True):
    reference = nn.MultiheadAttention(8, 2, bias=bias, batch_first=True).to(dtype)
    return reference, MultiheadAttention.from_torch(reference)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("masks", ["none", "padding", "attn", "both", "causal"])
@pytest.mark.parametrize("need_weights", [True, False])
def test_equals_nn_multihead_attention(dtype, bias, masks, need_weights):
    reference, ours = _pair(dtype, bias)
    query = torch.randn(3, 4, 8, dtype=dtype, requires_grad=True)
    memory = torch.randn(3, 6, 8, dtype=dtype, requires_grad=True)
    kwargs = {}
    if masks in ("padding", "both"):
        kwargs["key_padding_mask"] = torch.tensor(
            [[False] * 6, [False] * 4 + [True] * 2, [False] + [True] * 5]
        )
    if masks in ("attn", "both"):
        kwargs["attn_mask"] = torch.rand(4, 6) > 0.7
        kwargs["attn_mask"][:, 0] = (
            False  # keep every row attendable: nn.MultiheadAttention gives NaN otherwise
        )
    if masks == "causal":
        query = memory
        kwargs["attn_mask"] = torch.ones(6, 6, dtype=torch.bool).triu(1)
    out_ref, w_ref = reference(query, memory, memory, need_weights=need_weights, **kwargs)
    out, w = ours(query, memory, memory, need_weights=need_weights, **kwargs)
    torch.testing.assert_close(out, out_ref, **TOLERANCE[dtype])
    if need_weights:
        torch.testing.assert_close(w, w_ref, **TOLERANCE[dtype])
    else:
        assert w is None
    grads_ref = torch.autograd.grad(out_ref.square().sum(), [query, memory, *reference.parameters()])
    grads = torch.autograd.grad(out.square().sum(), [query, memory, *ours.parameters()])
    for a, b in zip(grads, grads_ref, strict=True):
        torch.testing.assert_close(a, b, **TOLERANCE[dtype])


def test_per_head_weights_and_is_causal():
    reference, ours = _pair(torch.float64)
    x = torch.randn(2, 5, 8, dtype=torch.float64)
    causal = torch.ones(5, 5, dtype=torch.bool).triu(1)
    _, w_ref = reference(x, x, x, attn_mask=causal, average_attn_weights=False)
    _, w = ours(x, x, x, is_causal=True, average_attn_weights=False)
    assert w.shape == (2, 2, 5, 5)
    torch.testing.assert_close(w, w_ref)


def test_fast_path_agrees_and_fully_masked_rows_are_zero():
    _, ours = _pair(torch.float64)
    x = torch.randn(2, 5, 8, dtype=torch.float64)
    padding = torch.zeros(2, 5, dtype=torch.bool)
    padding[1] = True  # every key of sequence 1 is padding
    slow, _ = ours(x, x, x, key_padding_mask=padding, need_weights=True)
    fast, _ = ours(x, x, x, key_padding_mask=padding, need_weights=False, impl="torch")
    torch.testing.assert_close(slow, fast)
    expected = ours.out_proj.bias.expand(5, 8)  # zero attention output, then the output bias
    torch.testing.assert_close(slow[1], expected)


def test_split_and_merge_heads():
    x = torch.randn(2, 3, 12)
    heads = split_heads(x, 4)
    assert heads.shape == (2, 4, 3, 3)
    assert torch.equal(heads[:, 1], x[..., 3:6])
    assert torch.equal(merge_heads(heads), x)
    with pytest.raises(ValueError, match="divisible"):
        split_heads(x, 5)


def test_attention_pooling():
    pool = AttentionPooling(6)
    x = torch.randn(3, 4, 6)
    mask = torch.tensor([[True] * 4, [True, True, False, False], [True, False, False, False]])
    out, weights = pool(x, mask)
    assert out.shape == (3, 6) and weights.shape == (3, 4)
    torch.testing.assert_close(weights.sum(-1), torch.ones(3))
    assert torch.all(weights[~mask] == 0)
    torch.testing.assert_close(out[2], pool.value(x[2, 0]))  # one key allowed: its value


def test_unequal_heads_match_a_hand_computation():
    layer = UnequalHeadsAttention(6, qk_dims=[2, 5], v_dims=[3, 1]).double()
    x = torch.randn(2, 4, 6, dtype=torch.float64)
    out, weights = layer(x, x)
    assert out.shape == (2, 4, 6) and [w.shape for w in weights] == [(2, 4, 4)] * 2
    heads = []
    for i in range(2):
        q, k, v = layer.q[i](x), layer.k[i](x), layer.v[i](x)
        a = torch.softmax(q @ k.transpose(1, 2) / q.shape[-1] ** 0.5, dim=-1)
        heads.append(a @ v)
    torch.testing.assert_close(out, torch.cat(heads, -1) @ layer.out.weight.T)


def test_errors():
    with pytest.raises(ValueError, match="divisible"):
        MultiheadAttention(10, 3)
    _, ours = _pair(torch.float32)
    x = torch.randn(2, 5, 8)
    with pytest.raises(ValueError, match="E=8"):
        ours(torch.randn(2, 5, 7), x, x)
    with pytest.raises(ValueError, match=r"key_padding_mask must be \(N, S\) = \(2, 5\)"):
        ours(x, x, x, key_padding_mask=torch.zeros(2, 4, dtype=torch.bool))
    with pytest.raises(TypeError, match="bool"):
        ours(x, x, x, attn_mask=torch.zeros(5, 5, dtype=torch.long))
    with pytest.raises(ValueError, match=r"\(L, S\)"):
        ours(x, x, x, attn_mask=torch.zeros(4, 5, dtype=torch.bool))
    with pytest.raises(ValueError, match="batch_first"):
        MultiheadAttention.from_torch(nn.MultiheadAttention(8, 2))


def test_clear_errors_for_dtypes_masks_and_sizes():
    _, ours = _pair(torch.float32)
    x = torch.randn(2, 5, 8)
    with pytest.raises(TypeError, match=r"key_padding_mask must be a bool tensor \(True = ignore"):
        ours(x, x, x, key_padding_mask=torch.zeros(2, 5, dtype=torch.int32))
    with pytest.raises(TypeError, match=r"attn_mask must be a bool tensor \(True = ignore"):
        ours(x, x, x, attn_mask=torch.zeros(5, 5, dtype=torch.long))
    with pytest.raises(ValueError, match="attn_mask is a float mask with values other than 0 and -inf"):
        ours(x, x, x, attn_mask=torch.full((5, 5), 0.5))  # a soft bias, not a mask
    with pytest.raises(TypeError, match=r"query has dtype torch.float64.*torch.float32"):
        ours(x.double(), x, x)
    with pytest.raises(TypeError, match=r"key has dtype torch.float64.*torch.float32"):
        ours(x, x.double(), x.double())
    with pytest.raises(TypeError, match=r"query has dtype torch.int64"):
        ours(torch.ones(2, 5, 8, dtype=torch.long), x, x)
    for bad in (0, -2):
        with pytest.raises(ValueError, match="num_heads"):
            MultiheadAttention(8, bad)
    with pytest.raises(TypeError, match="num_heads must be an int, got float 2.0"):
        MultiheadAttention(8, 2.0)
    with pytest.raises(ValueError, match="embed_dim"):
        MultiheadAttention(0, 1)
    with pytest.raises(ValueError, match="num_heads"):
        split_heads(x, 0)


def test_empty_batch_as_in_torch():
    reference, ours = _pair(torch.float32)
    x = torch.randn(0, 5, 8)
    out, w = ours(x, x, x)
    out_ref, w_ref = reference(x, x, x)
    assert out.shape == out_ref.shape == (0, 5, 8) and w.shape == w_ref.shape


def test_pooling_and_unequal_heads_refuse_bad_inputs():
    pool = AttentionPooling(6)
    with pytest.raises(TypeError, match=r"x has dtype torch.float64"):
        pool(torch.randn(2, 3, 6, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"x must be \(N, T, E\) with E=6"):
        pool(torch.randn(2, 3, 5))
    with pytest.raises(TypeError, match=r"mask must be a bool tensor \(True = may attend"):
        pool(torch.randn(2, 3, 6), torch.ones(2, 3))
    layer = UnequalHeadsAttention(6, qk_dims=[2], v_dims=[3])
    with pytest.raises(ValueError, match="x_kv must be"):
        layer(torch.randn(2, 3, 6), torch.randn(2, 3, 4))
    with pytest.raises(TypeError, match="x_q has dtype torch.int64"):
        layer(torch.ones(2, 3, 6, dtype=torch.long), torch.randn(2, 3, 6))


ANTI_CAUSAL = torch.ones(5, 5, dtype=torch.bool).tril(-1)  # torch's meaning: query i ignores keys j < i
CAUSAL = torch.ones(5, 5, dtype=torch.bool).triu(1)  # query i ignores keys j > i
STRICTER = CAUSAL | torch.eye(5, dtype=torch.bool).roll(-1, 0).tril(-1)  # causal, and i ignores i - 1


@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("attn", ["none", "causal", "stricter", "anti-causal"])
@pytest.mark.parametrize("padding", [False, True])
@pytest.mark.parametrize("need_weights", [False, True])
def test_is_causal_with_every_mask_against_torch(is_causal, attn, padding, need_weights):
    """One rule: is_causal applies the causal mask; a mask given with it must hide every later key
    (then it is used, as torch uses it when it forms the weights), else a ValueError."""
    reference, ours = _pair(torch.float64)
    x = torch.randn(2, 5, 8, dtype=torch.float64)
    attn_mask = {"none": None, "causal": CAUSAL, "stricter": STRICTER, "anti-causal": ANTI_CAUSAL}[attn]
    kpm = torch.tensor([[False] * 5, [False, False, True, False, False]]) if padding else None  # no row empty
    kwargs = dict(key_padding_mask=kpm, need_weights=need_weights)
    if is_causal and attn == "anti-causal":
        with pytest.raises(ValueError, match="attn_mask lets a query see a later key"):
            ours(x, x, x, attn_mask=attn_mask, is_causal=True, **kwargs)
        return
    out, weights = ours(x, x, x, attn_mask=attn_mask, is_causal=is_causal, **kwargs)
    # torch's answer where it is defined: the mask itself (the causal mask when only is_causal)
    expected = CAUSAL if is_causal and attn_mask is None else attn_mask
    out_ref, weights_ref = reference(x, x, x, attn_mask=expected, **kwargs)
    torch.testing.assert_close(out, out_ref)
    if need_weights:
        torch.testing.assert_close(weights, weights_ref)
    if attn_mask is not None and (attn != "stricter" or need_weights):  # torch's hint is then safe
        hinted, _ = reference(x, x, x, attn_mask=attn_mask, is_causal=is_causal, **kwargs)
        torch.testing.assert_close(out, hinted)


def test_the_cache_and_a_projected_memory_give_the_full_attention():
    torch.manual_seed(4)
    mha = MultiheadAttention(8, 2).double()
    x, memory = torch.randn(2, 5, 8, dtype=torch.float64), torch.randn(2, 6, 8, dtype=torch.float64)
    full, _ = mha(x, x, x, is_causal=True)
    again, _, kv = mha.attend(x, x, x, causal_mask(5))  # seqlab's meaning: True = may attend
    torch.testing.assert_close(again, full)
    assert isinstance(kv, KV) and kv.keys.shape == kv.values.shape == (2, 2, 5, 4)
    cache = None
    for t in range(5):  # one position at a time, over the cached ones: the causal result
        out, _, cache = mha.attend(x[:, t : t + 1], x[:, t : t + 1], x[:, t : t + 1], cache=cache)
        torch.testing.assert_close(out[:, 0], full[:, t])
        assert cache.keys.shape == (2, 2, t + 1, 4)
    torch.testing.assert_close(cache.keys, kv.keys)
    padding = torch.tensor([[False] * 6, [False] * 2 + [True] * 4])
    cross, weights = mha(x, memory, memory, key_padding_mask=padding)
    projected, keys = mha.project_kv(memory), ~padding[:, None, None, :]  # (N, 1, 1, S)
    again, weights_again, same = mha.attend(x, None, None, keys, memory_kv=projected, need_weights=True)
    torch.testing.assert_close(again, cross)
    torch.testing.assert_close(weights_again, weights)
    assert same is projected
    with pytest.raises(ValueError, match="memory_kv"):
        mha.attend(x, memory, memory, memory_kv=projected)
    with pytest.raises(ValueError, match="memory_kv"):
        mha.attend(x, None, None)
    with pytest.raises(ValueError, match="memory_kv"):
        mha(x, None, None)
    with pytest.raises(ValueError, match=r"\(N, H, S, D\), \(N, H, D\) = \(2, 2, 4\)"):
        mha.attend(x, None, None, memory_kv=KV(projected.keys[:, :1], projected.values))
    with pytest.raises(ValueError, match="KV"):
        mha.attend(x, x, x, cache=(projected.keys, projected.values))  # a plain pair, not a KV
    with pytest.raises(ValueError, match="does not broadcast"):
        mha.attend(x[:, :1], x[:, :1], x[:, :1], causal_mask(5), cache=cache)  # 1 query, 6 keys
    with pytest.raises(TypeError, match=r"mask must be a bool tensor \(True = may attend"):
        mha.attend(x, x, x, causal_mask(5).float())


def test_a_snippet_written_for_torch_runs_unchanged():
    """Code ported from nn.MultiheadAttention: two return values, torch's float causal mask,
    and a state dict that loads both ways."""
    torch.manual_seed(5)
    L = 5
    for mha in (nn.MultiheadAttention(8, 2, batch_first=True), MultiheadAttention(8, 2)):
        q, k, v = torch.randn(3, L, 8), torch.randn(3, L, 8), torch.randn(3, L, 8)
        out, w = mha(q, k, v, attn_mask=nn.Transformer.generate_square_subsequent_mask(L))
        assert out.shape == (3, L, 8) and w.shape == (3, L, L)
        assert torch.all(w.triu(1) == 0)  # the -inf entries were ignored
    ours, reference = MultiheadAttention(8, 2), nn.MultiheadAttention(8, 2, batch_first=True)
    ours.load_state_dict(reference.state_dict(), strict=True)
    padding = torch.zeros(3, L)
    padding[1, 3:] = float("-inf")  # a float key-padding mask: the second sequence has 3 tokens
    mask = nn.Transformer.generate_square_subsequent_mask(L)
    expected = reference(q, k, v, key_padding_mask=padding, attn_mask=mask)
    for got in (ours(q, k, v, key_padding_mask=padding, attn_mask=mask),
                ours(q, k, v, key_padding_mask=padding.isinf(), attn_mask=mask.isinf())):  # fmt: skip
        torch.testing.assert_close(got, expected)
    reference.load_state_dict(MultiheadAttention(8, 2).state_dict(), strict=True)  # ours -> torch


def test_from_torch_carries_the_attention_dropout():
    reference = nn.MultiheadAttention(8, 2, dropout=0.5, batch_first=True).double()
    ours = MultiheadAttention.from_torch(reference)
    assert ours.dropout == 0.5 and ours.training
    x = torch.randn(2, 5, 8, dtype=torch.float64)
    torch.manual_seed(11)
    out_ref, _ = reference(x, x, x)
    torch.manual_seed(11)
    out, _ = ours(x, x, x)
    torch.testing.assert_close(out, out_ref)  # the same weights dropped, in training mode
    assert not torch.allclose(out, ours.eval()(x, x, x)[0])  # no dropout in evaluation
