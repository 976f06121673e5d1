"""The parts of chapter 11's block, each against a reference with copied weights: RMSNorm, the
FFNs, RoPE, ALiBi, grouped-query attention and the Block."""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from seqlab.block import Block, DecodeState, KVCache
from seqlab.ffn import FeedForward, SwiGLU
from seqlab.gqa import GroupedQueryAttention
from seqlab.multihead import MultiheadAttention
from seqlab.norms import RMSNorm
from seqlab.rope import alibi_bias, alibi_slopes, apply_rope, rope_angles, rotate_half

N, L, E, H = 3, 7, 16, 4
D = E // H


def _llama():
    """Hugging Face's Llama module (transformers is pinned in requirements.txt; skip only where it
    is not installed at all)."""
    return pytest.importorskip("transformers.models.llama.modeling_llama")


def _randomise(module, std=0.3):
    with torch.no_grad():
        for p in module.parameters():  # not the initial ones: weights off one, biases off zero
            p.copy_(torch.randn_like(p) * std + (1.0 if p.dim() == 1 and p.shape[0] == E else 0.0))
    return module


def _assert_grads(ours, theirs, names, atol=1e-12, rtol=1e-10):
    """Gradient of each of our parameters against theirs, ``names`` {ours: theirs}."""
    grads = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        torch.testing.assert_close(p.grad, grads[names.get(name, name)].grad, atol=atol, rtol=rtol, msg=name)


# ------------------------------------------------------------------ RMSNorm
@pytest.mark.parametrize("dtype, tol", [(torch.float64, 1e-14), (torch.float32, 1e-6)])
def test_rms_norm_equals_torch(dtype, tol):
    ours, ref = RMSNorm(E, eps=1e-6).to(dtype), nn.RMSNorm(E, eps=1e-6).to(dtype)
    _randomise(ref)
    ours.load_state_dict(ref.state_dict())
    x = torch.randn(N, L, E, dtype=dtype, requires_grad=True)
    out, expected = ours(x), ref(x)
    torch.testing.assert_close(out, expected, atol=tol, rtol=tol)
    g = torch.randn_like(out)
    (dx,) = torch.autograd.grad(out, x, g, retain_graph=True)
    (dx_ref,) = torch.autograd.grad(expected, x, g, retain_graph=True)
    torch.testing.assert_close(dx, dx_ref, atol=tol, rtol=tol)
    (out * g).sum().backward(), (expected * g).sum().backward()
    torch.testing.assert_close(ours.weight.grad, ref.weight.grad, atol=10 * tol, rtol=tol)


def test_rms_norm_is_its_equation_and_not_layer_norm():
    x = torch.randn(2, 5, E, dtype=torch.float64) + 3.0  # a mean far from zero
    norm = RMSNorm(E, eps=0.0 + 1e-12).double()
    rms = x.pow(2).mean(-1, keepdim=True).sqrt()
    torch.testing.assert_close(norm(x), x / rms)
    assert (norm(x).pow(2).mean(-1) - 1).abs().max() < 1e-9  # unit root mean square
    assert not torch.allclose(norm(x), F.layer_norm(x, (E,)), atol=0.1)  # no centring


def test_rms_norm_equals_llama_rms_norm_in_float32():
    llama = _llama()
    ref = _randomise(llama.LlamaRMSNorm(E, eps=1e-6))
    ours = RMSNorm(E, eps=1e-6)
    ours.weight.data.copy_(ref.weight)
    x = torch.randn(N, L, E)
    torch.testing.assert_close(ours(x), ref(x), atol=1e-6, rtol=1e-6)


def test_rms_norm_refuses_bad_input():
    with pytest.raises(ValueError, match="E=16"):
        RMSNorm(E)(torch.randn(2, 3, 8))
    with pytest.raises(TypeError, match="dtype"):
        RMSNorm(E)(torch.randn(2, 3, E, dtype=torch.float64))
    with pytest.raises(ValueError, match="eps"):
        RMSNorm(E, eps=0)
    with pytest.raises(TypeError, match="E must be an int"):
        RMSNorm(16.0)


# ------------------------------------------------------------------ FFNs
@pytest.mark.parametrize("activation", ["gelu", "relu"])
def test_feed_forward_is_its_equation(activation):
    ffn = _randomise(FeedForward(E, 24, activation).double())
    x = torch.randn(N, L, E, dtype=torch.float64)
    act = {"gelu": lambda z: 0.5 * z * (1 + torch.erf(z / math.sqrt(2))), "relu": lambda z: z.clamp_min(0)}
    h = act[activation](x @ ffn.linear1.weight.T + ffn.linear1.bias)
    torch.testing.assert_close(ffn(x), h @ ffn.linear2.weight.T + ffn.linear2.bias)


def test_feed_forward_equals_the_torch_encoder_layer_ffn():
    ref = nn.TransformerEncoderLayer(E, H, 24, dropout=0.0, batch_first=True).double()
    ffn = FeedForward(E, 24, "relu").double()
    ffn.linear1.load_state_dict(ref.linear1.state_dict())
    ffn.linear2.load_state_dict(ref.linear2.state_dict())
    x = torch.randn(N, L, E, dtype=torch.float64)
    torch.testing.assert_close(ffn(x), ref._ff_block(x), atol=0, rtol=0)


def test_swiglu_is_its_equation_and_equals_llama_mlp():
    ffn = _randomise(SwiGLU(E, 24).double())
    x = torch.randn(N, L, E, dtype=torch.float64, requires_grad=True)
    gate, up = x @ ffn.gate_proj.weight.T, x @ ffn.up_proj.weight.T
    expected = (gate * torch.sigmoid(gate) * up) @ ffn.down_proj.weight.T  # silu(z) = z sigmoid(z)
    torch.testing.assert_close(ffn(x), expected, atol=1e-13, rtol=1e-12)
    assert all(m.bias is None for m in (ffn.gate_proj, ffn.up_proj, ffn.down_proj))
    llama = _llama()
    config = llama.LlamaConfig(hidden_size=E, intermediate_size=24, num_attention_heads=H, hidden_act="silu")
    ref = llama.LlamaMLP(config).double()
    ref.load_state_dict(ffn.state_dict())  # the same parameter names
    out, expected = ffn(x), ref(x)
    torch.testing.assert_close(out, expected, atol=0, rtol=0)
    g = torch.randn_like(out)
    (out * g).sum().backward(), (expected * g).sum().backward()
    _assert_grads(ffn, ref, {}, atol=0, rtol=0)


def test_ffns_refuse_bad_input():
    with pytest.raises(ValueError, match="activation"):
        FeedForward(E, 24, "tanh")
    for ffn in (FeedForward(E, 24), SwiGLU(E, 24)):
        with pytest.raises(ValueError, match="E=16"):
            ffn(torch.randn(2, 3, 15))
        with pytest.raises(TypeError, match="torch.Tensor"):
            ffn([[0.0] * E])


# ------------------------------------------------------------------ RoPE
def test_rope_angles_and_rotation_equal_llamas():
    llama = _llama()
    config = llama.LlamaConfig(hidden_size=E, num_attention_heads=H, max_position_embeddings=64)
    rotary = llama.LlamaRotaryEmbedding(config)
    positions = torch.tensor([0, 1, 2, 5, 17, 63])
    for dtype in (torch.float32, torch.float64):
        x = torch.zeros(1, len(positions), E, dtype=dtype)
        cos_ref, sin_ref = rotary(x, positions[None])  # (1, T, D), computed in float32, cast to dtype
        cos, sin = rope_angles(positions, D)
        assert torch.equal(cos.to(dtype), cos_ref[0]) and torch.equal(sin.to(dtype), sin_ref[0])
        q, k = (
            torch.randn(2, H, len(positions), D, dtype=dtype),
            torch.randn(2, 2, len(positions), D, dtype=dtype),
        )
        q_ref, k_ref = llama.apply_rotary_pos_emb(q, k, cos_ref, sin_ref)
        assert torch.equal(apply_rope(q, cos, sin), q_ref) and torch.equal(apply_rope(k, cos, sin), k_ref)
    assert torch.equal(rotate_half(q), llama.rotate_half(q))


def _rotation_matrix(p: float, dim: int, base: float = 10000.0) -> torch.Tensor:
    """The (D, D) matrix that turns the plane of features (i, i + D/2) by p * base^(-2i/D)."""
    r = torch.zeros(dim, dim, dtype=torch.float64)
    for i in range(dim // 2):
        a = p * base ** (-2 * i / dim)
        j = i + dim // 2
        r[i, i], r[i, j], r[j, i], r[j, j] = math.cos(a), -math.sin(a), math.sin(a), math.cos(a)
    return r


def test_rope_is_a_rotation_by_position():
    positions = torch.arange(0, 40, 7)
    cos, sin = rope_angles(positions, D, dtype=torch.float64)
    x = torch.randn(2, 3, len(positions), D, dtype=torch.float64)
    rotated = apply_rope(x, cos, sin)
    for t, p in enumerate(positions.tolist()):
        expected = x[:, :, t] @ _rotation_matrix(p, D).T  # R_p x for every row
        torch.testing.assert_close(rotated[:, :, t], expected, atol=1e-13, rtol=1e-12)
    torch.testing.assert_close(rotated.norm(dim=-1), x.norm(dim=-1))  # lengths kept


@pytest.mark.parametrize("dtype, tol", [(torch.float64, 1e-12), (torch.float32, 2e-5)])
def test_rope_scores_depend_on_the_distance_only(dtype, tol):
    """q_m . k_n after RoPE is the same when both positions move by the same amount. In float32
    angles (the default, Llama's) each angle p * w_i is rounded to 2^-24 of itself: at p <= 100
    a difference of up to ~1e-5 in a score of size ~D."""
    q, k = torch.randn(D, dtype=torch.float64), torch.randn(D, dtype=torch.float64)

    def score(m, n):
        cos, sin = rope_angles(torch.tensor([m, n]), D, dtype=dtype)
        x = torch.stack([q, k])[None, None]  # (1, 1, 2, D)
        r = apply_rope(x, cos.double(), sin.double())[0, 0]
        return r[0] @ r[1]

    for m, n in ((5, 2), (3, 3), (0, 9)):
        for shift in (1, 17, 90):
            torch.testing.assert_close(score(m + shift, n + shift), score(m, n), atol=tol, rtol=tol)
    assert (score(5, 2) - score(5, 3)).abs() > 1e-3  # and it does depend on the distance


def test_rope_scale_is_position_interpolation():
    positions = torch.arange(0, 12)
    cos, sin = rope_angles(positions, D, scale=4.0, dtype=torch.float64)
    cos_ref, sin_ref = rope_angles(positions / 4.0, D, dtype=torch.float64)
    torch.testing.assert_close(cos, cos_ref), torch.testing.assert_close(sin, sin_ref)


def test_rope_refuses_bad_input():
    with pytest.raises(ValueError, match="1-D"):
        rope_angles(torch.zeros(2, 3), D)
    with pytest.raises(ValueError, match="even"):
        rope_angles(torch.arange(3), 5)
    with pytest.raises(ValueError, match="base"):
        rope_angles(torch.arange(3), D, base=1.0)
    with pytest.raises(ValueError, match="scale"):
        rope_angles(torch.arange(3), D, scale=0)
    cos, sin = rope_angles(torch.arange(3), D)
    with pytest.raises(ValueError, match=r"cos must be \(T, D\) = \(4, 4\)"):
        apply_rope(torch.randn(1, 2, 4, D), cos, sin)
    with pytest.raises(ValueError, match=r"\(N, H, T, D\)"):
        apply_rope(torch.randn(2, 3, D), cos, sin)


# ------------------------------------------------------------------ ALiBi
def test_alibi_slopes_and_bias_follow_the_definition():
    assert alibi_slopes(8).tolist() == [2.0**-k for k in range(1, 9)]
    assert alibi_slopes(4).tolist() == [2.0**-2, 2.0**-4, 2.0**-6, 2.0**-8]
    # 6 heads: the 4-head slopes, then every other slope of 8 heads (2^-1, 2^-3, ...), two of them
    assert alibi_slopes(6).tolist() == [2.0**-2, 2.0**-4, 2.0**-6, 2.0**-8, 2.0**-1, 2.0**-3]
    assert alibi_slopes(1).tolist() == [2.0**-8]
    slopes = alibi_slopes(6)
    bias = alibi_bias(6, 3, 8, start=5, dtype=torch.float64)
    assert bias.shape == (6, 3, 8)
    for h in range(6):
        for i in range(3):
            for j in range(8):
                assert bias[h, i, j] == -slopes[h] * ((5 + i) - j)
    assert bias[:, 0, 5].eq(0).all() and (bias[:, :, :5].diff(dim=-1) > 0).all()  # nearer: less penalty
    with pytest.raises(ValueError, match="start"):
        alibi_bias(4, 2, 3, start=-1)
    with pytest.raises(TypeError, match="H must be an int"):
        alibi_slopes(2.0)


# ------------------------------------------------------------------ grouped-query attention
def _reference_gqa(attn, x, mask, positions=None):
    """The projections of ``attn``, then PyTorch's fused attention with ``enable_gqa=True``."""
    q = attn.q_proj(x).unflatten(-1, (attn.H, attn.D)).transpose(1, 2)
    k = attn.k_proj(x).unflatten(-1, (attn.G, attn.D)).transpose(1, 2)
    v = attn.v_proj(x).unflatten(-1, (attn.G, attn.D)).transpose(1, 2)
    if positions is not None:
        cos, sin = rope_angles(positions, attn.D)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
    return attn.o_proj(out.transpose(1, 2).flatten(-2))


@pytest.mark.parametrize("G", [1, 2, 4])
@pytest.mark.parametrize("positions", ["none", "rope"])
@pytest.mark.parametrize("impl", ["scratch", "torch"])
def test_gqa_equals_torch_sdpa_with_enable_gqa(G, positions, impl):
    attn = _randomise(GroupedQueryAttention(E, H, G, positions, bias=True, impl=impl).double())
    x = torch.randn(N, L, E, dtype=torch.float64, requires_grad=True)
    mask = torch.ones(L, L, dtype=torch.bool).tril()
    out, weights, cache = attn(x, mask)
    expected = _reference_gqa(attn, x, mask, torch.arange(L) if positions == "rope" else None)
    torch.testing.assert_close(out, expected, atol=1e-13, rtol=1e-12)
    assert weights is None and cache.k.shape == (N, G, L, D) == cache.v.shape
    g = torch.randn_like(out)
    grads = torch.autograd.grad(out, [x, *attn.parameters()], g)
    grads_ref = torch.autograd.grad(expected, [x, *attn.parameters()], g)
    for a, b in zip(grads, grads_ref):
        torch.testing.assert_close(a, b, atol=1e-12, rtol=1e-10)


def test_gqa_with_g_equal_h_is_multihead_attention():
    mha = _randomise(MultiheadAttention(E, H, bias=True).double())
    attn = GroupedQueryAttention(E, H, H, "none", bias=True).double()
    with torch.no_grad():  # W_q; W_k; W_v stacked in one matrix there
        for proj, w, b in zip(
            (attn.q_proj, attn.k_proj, attn.v_proj), mha.in_proj_weight.chunk(3), mha.in_proj_bias.chunk(3)
        ):
            proj.weight.copy_(w), proj.bias.copy_(b)
        attn.o_proj.load_state_dict(mha.out_proj.state_dict())
    x = torch.randn(N, L, E, dtype=torch.float64, requires_grad=True)
    mask = torch.ones(L, L, dtype=torch.bool).tril()
    out, weights, _ = attn(x, mask, need_weights=True)
    expected, weights_ref, _ = mha.attend(x, x, x, mask, need_weights=True, average_attn_weights=False)
    torch.testing.assert_close(out, expected, atol=1e-13, rtol=1e-12)
    torch.testing.assert_close(weights, weights_ref, atol=1e-14, rtol=1e-12)
    (dx,) = torch.autograd.grad(out.pow(2).sum(), x)
    (dx_ref,) = torch.autograd.grad(expected.pow(2).sum(), x)
    torch.testing.assert_close(dx, dx_ref, atol=1e-12, rtol=1e-10)


def test_gqa_query_heads_share_their_groups_key_value_head():
    attn = GroupedQueryAttention(E, H, 2, "none").double()
    x = torch.randn(1, L, E, dtype=torch.float64)
    _, weights, _ = attn(x, need_weights=True)
    with torch.no_grad():  # change key/value head 1's key projection: query heads 2, 3 only
        attn.k_proj.weight[D:] += 1.0
    _, changed, _ = attn(x, need_weights=True)
    assert torch.equal(weights[:, :2], changed[:, :2]) and not torch.allclose(weights[:, 2:], changed[:, 2:])


@pytest.mark.parametrize("positions", ["none", "rope", "alibi"])
@pytest.mark.parametrize("impl", ["scratch", "torch"])
def test_gqa_cache_equals_one_pass(positions, impl):
    attn = GroupedQueryAttention(E, H, 2, positions, impl=impl).double()
    x = torch.randn(N, L, E, dtype=torch.float64)
    full = attn(x, torch.ones(L, L, dtype=torch.bool).tril())[0]
    cache, parts = None, []
    for a, b in ((0, 3), (3, 4), (4, L)):
        mask = torch.ones(b - a, b, dtype=torch.bool).tril(a)
        out, _, cache = attn(x[:, a:b], mask, cache=cache, start=a)
        parts.append(out)
    torch.testing.assert_close(torch.cat(parts, 1), full, atol=1e-13, rtol=1e-12)


def test_gqa_alibi_scores_are_biased_by_distance():
    attn = GroupedQueryAttention(E, H, H, "alibi").double()
    with torch.no_grad():
        attn.q_proj.weight.zero_()  # every score q . k is 0: only the bias is left
    x = torch.randn(1, 5, E, dtype=torch.float64)
    _, weights, _ = attn(x, torch.ones(5, 5, dtype=torch.bool).tril(), need_weights=True)
    causal = torch.ones(5, 5, dtype=torch.bool).tril()
    expected = torch.softmax(alibi_bias(H, 5, 5, dtype=torch.float64).masked_fill(~causal, -math.inf), -1)
    torch.testing.assert_close(weights[0], expected)
    scratch = attn(x, torch.ones(5, 5, dtype=torch.bool).tril())[0]
    attn.impl = "torch"  # the bias as a float mask of the fused kernel
    torch.testing.assert_close(attn(x, torch.ones(5, 5, dtype=torch.bool).tril())[0], scratch)


def test_gqa_refuses_bad_input():
    with pytest.raises(ValueError, match="divisible by G = 3"):
        GroupedQueryAttention(E, H, 3)
    with pytest.raises(ValueError, match="divisible by the number of query heads"):
        GroupedQueryAttention(E, 3, 1)
    with pytest.raises(ValueError, match="positions"):
        GroupedQueryAttention(E, H, 2, "learned")
    with pytest.raises(ValueError, match="even"):
        GroupedQueryAttention(12, 4, 2, "rope")  # D = 3
    attn = GroupedQueryAttention(E, H, 2)
    with pytest.raises(ValueError, match="E=16"):
        attn(torch.randn(2, 3, 8))
    with pytest.raises(TypeError, match="dtype"):
        attn(torch.randn(2, 3, E, dtype=torch.float64))
    with pytest.raises(ValueError, match="does not broadcast"):
        attn(torch.randn(2, 3, E), torch.ones(3, 4, dtype=torch.bool))
    with pytest.raises(TypeError, match="bool"):
        attn(torch.randn(2, 3, E), torch.ones(3, 3))
    cache = KVCache(torch.zeros(2, 2, 5, D), torch.zeros(2, 2, 5, D))
    with pytest.raises(ValueError, match="start must be >= 5"):
        attn(torch.randn(2, 1, E), cache=cache, start=2)
    with pytest.raises(ValueError, match=r"\(N, G, P, D\) = \(2, 2, 5, 4\)"):
        attn(torch.randn(2, 1, E), cache=KVCache(torch.zeros(2, 4, 5, D), torch.zeros(2, 4, 5, D)), start=5)
    with pytest.raises(TypeError, match="KVCache"):
        attn(torch.randn(2, 1, E), cache=(torch.zeros(2, 2, 5, D),) * 2, start=5)
    with pytest.raises(ValueError, match="one shape"):
        KVCache(torch.zeros(1, 2, 3, 4), torch.zeros(1, 2, 2, 4))


# ------------------------------------------------------------------ the block
def test_block_is_its_two_residual_lines():
    norm1, norm2 = RMSNorm(E).double(), RMSNorm(E).double()
    attn, ffn = GroupedQueryAttention(E, H, 2).double(), SwiGLU(E, 24).double()
    block = Block(norm1, attn, norm2, ffn)
    x = torch.randn(N, L, E, dtype=torch.float64)
    mask = torch.ones(L, L, dtype=torch.bool).tril()
    out, weights, cache = block(x, mask, need_weights=True)
    a = x + attn(norm1(x), mask)[0]
    torch.testing.assert_close(out, a + ffn(norm2(a)), atol=0, rtol=0)
    assert weights.shape == (N, H, L, L) and cache.k.shape == (N, 2, L, D)
    with pytest.raises(TypeError, match="ffn must be a torch.nn.Module"):
        Block(norm1, attn, norm2, lambda z: z)


def test_decode_state():
    state = DecodeState.empty(3, 2)
    assert state.caches == [None] * 3 and state.t == 0 and state.n == 2
    with pytest.raises(ValueError, match="N = 2"):
        state.check(torch.zeros(3, 1, dtype=torch.long))
    with pytest.raises(ValueError, match="batch_size"):
        DecodeState.empty(3, 0)
