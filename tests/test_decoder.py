"""The Decoder of chapter 11: its configs, its cache for every kind of position, the GPT-2-block
config against chapter 10's GPT, and the Llama config against Hugging Face's ``LlamaForCausalLM``
(random weights from a small ``LlamaConfig``, nothing downloaded)."""

import pytest
import torch
import torch.nn.functional as F

from seqlab.block import DecodeState
from seqlab.decoder import Decoder, DecoderConfig, load_llama_weights
from seqlab.gpt import GPT, lm_loss
from seqlab.sampling import generate
from seqlab.utils import count_parameters

V, E, H, CTX = 29, 16, 4, 12
KINDS = ["learned", "sinusoidal", "rope", "alibi"]


def _randomise(model, std=0.3):
    """Every parameter drawn again: weights and biases of size ~std, norm weights around one."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            one = "norm" in name or "layernorm" in name
            p.copy_(
                torch.randn_like(p) * (0.1 if one else std)
                + (1.0 if one and name.endswith("weight") else 0.0)
            )
    return model


def _decoder(positions="rope", G=2, norm="rms", ffn="swiglu", **kw):
    config = DecoderConfig(V, E, H, G, 2, norm=norm, ffn=ffn, positions=positions, context=CTX, **kw)
    return _randomise(Decoder(config).double())


def test_config_defaults_and_refusals():
    c = DecoderConfig(V)
    assert (c.n_kv_heads, c.hidden, c.norm, c.ffn, c.positions, c.tie) == (
        4,
        256,
        "layer",
        "gelu",
        "learned",
        True,
    )
    assert DecoderConfig(V, ffn="swiglu").hidden == round(8 * 64 / 3)
    for kw, error, match in (
        ({"n_kv_heads": 3}, ValueError, "n_kv_heads = 3"),
        ({"d_model": 30}, ValueError, "divisible by n_heads"),
        ({"norm": "batch"}, ValueError, "norm"),
        ({"ffn": "tanh"}, ValueError, "ffn"),
        ({"positions": "relative"}, ValueError, "positions"),
        ({"impl": "fast"}, ValueError, "impl"),
        ({"dropout": 1.5}, ValueError, "dropout"),
        ({"n_layers": 2.0}, TypeError, "n_layers"),
        ({"d_model": 12, "n_heads": 4, "positions": "rope", "n_kv_heads": 2}, ValueError, "even head width"),
        ({"positions": "rope", "rope_scale": 0.0}, ValueError, "scale"),
    ):
        with pytest.raises(error, match=match):
            DecoderConfig(V, **kw)
    with pytest.raises(TypeError, match="DecoderConfig"):
        Decoder({"vocab_size": V})


def test_the_gpt2_block_config_computes_what_chapter_10s_gpt_computes():
    gpt = _randomise(GPT(V, E, H, 2, 24, context=CTX).double())
    config = DecoderConfig(V, E, H, None, 2, 24, norm="layer", ffn="relu", positions="learned", context=CTX)
    ours = Decoder(config).double()
    mapping = {"attn.o_proj": "attn.out_proj"}
    with torch.no_grad():
        for name, p in ours.named_parameters():
            parts = name.split(".")
            if parts[-2] in ("q_proj", "k_proj", "v_proj"):  # W_q; W_k; W_v stacked in one matrix there
                i = ("q_proj", "k_proj", "v_proj").index(parts[-2])
                kind = "in_proj_weight" if parts[-1] == "weight" else "in_proj_bias"
                source = gpt.get_parameter(".".join(parts[:-2] + [kind])).chunk(3)[i]
            else:
                for ours_name, theirs in mapping.items():
                    name = name.replace(ours_name, theirs)
                source = gpt.get_parameter(name)
            p.copy_(source)
    assert count_parameters(ours) == count_parameters(gpt)
    tokens = torch.randint(0, V, (3, CTX + 1))
    torch.testing.assert_close(ours(tokens[:, :-1]), gpt(tokens[:, :-1]), atol=1e-12, rtol=1e-12)
    lm_loss(ours, (tokens,)).backward(), lm_loss(gpt, (tokens,)).backward()
    torch.testing.assert_close(ours.tok_embed.weight.grad, gpt.tok_embed.weight.grad, atol=1e-12, rtol=1e-10)
    torch.testing.assert_close(
        ours.layers[0].attn.q_proj.weight.grad,
        gpt.layers[0].attn.in_proj_weight.grad[:E],
        atol=1e-12,
        rtol=1e-10,
    )


@pytest.mark.parametrize("positions", KINDS)
@pytest.mark.parametrize("impl", ["scratch", "torch"])
def test_cached_decoding_equals_recomputing_for_every_position_kind(positions, impl):
    model = _decoder(positions, impl=impl)
    tokens = torch.randint(0, V, (2, CTX))
    full = model(tokens)
    state, parts = model.start(2), []
    for a, b in ((0, 3), (3, 4), (4, 9), (9, CTX)):  # a prompt, one token, several, the rest
        logits, state = model.extend(tokens[:, a:b], state)
        parts.append(logits)
    torch.testing.assert_close(torch.cat(parts, 1), full, atol=1e-12, rtol=1e-12)
    assert (
        isinstance(state, DecodeState) and state.t == CTX and state.caches[1].k.shape == (2, 2, CTX, E // H)
    )


@pytest.mark.parametrize("positions", KINDS)
def test_generation_with_the_cache_equals_without(positions):
    model = _decoder(positions, G=1, norm="layer", ffn="gelu").float()
    prompt = torch.randint(0, V, (3, 4))
    runs = [
        generate(model, prompt, 8, top_k=5, generator=torch.Generator().manual_seed(1), cache=c)
        for c in (True, False)
    ]
    assert runs[0].shape == (3, 12) and torch.equal(runs[0], runs[1])


def test_only_learned_positions_stop_at_the_context():
    long = torch.randint(0, V, (1, 3 * CTX))
    with pytest.raises(ValueError, match="learned positions"):
        _decoder("learned")(long)
    with pytest.raises(ValueError, match="learned positions"):
        _decoder("learned").extend(long[:, :1], DecodeState([None, None], CTX, 1))
    for positions in ("sinusoidal", "rope", "alibi"):
        model = _decoder(positions)
        assert model.context is None and model(long).shape == (1, 3 * CTX, V)
    assert generate(_decoder("rope").float(), long[:, :4], 2 * CTX, temperature=0).shape == (1, 4 + 2 * CTX)


def test_causal_and_weights():
    model = _decoder("alibi")
    tokens = torch.randint(0, V, (2, 8))
    changed = tokens.clone()
    changed[:, 5:] = (changed[:, 5:] + 1) % V
    assert torch.equal(model(tokens)[:, :5], model(changed)[:, :5])
    logits, weights = model(tokens, need_weights=True)
    assert len(weights) == 2 and weights[0].shape == (2, H, 8, 8)
    assert torch.equal(weights[0].triu(1), torch.zeros_like(weights[0]))


def test_kv_cache_bytes_per_token():
    assert _decoder(G=2).kv_cache_bytes_per_token() == 2 * 2 * 2 * (E // H) * 4
    assert _decoder(G=4).kv_cache_bytes_per_token(torch.float64) == 2 * 2 * 4 * (E // H) * 8
    assert _decoder(G=1).kv_cache_bytes_per_token(torch.bfloat16) == 2 * 2 * 1 * (E // H) * 2
    with pytest.raises(TypeError, match="dtype"):
        _decoder().kv_cache_bytes_per_token("float32")


def test_tied_and_untied_outputs():
    tied, untied = _decoder(tie=True), _decoder(tie=False)
    assert tied.lm_head is None and untied.lm_head.weight.shape == (V, E)
    assert count_parameters(untied) - count_parameters(tied) == V * E


def test_bad_tokens_and_states_are_refused():
    model = _decoder()
    with pytest.raises(TypeError, match="integer"):
        model(torch.zeros(2, 3))
    with pytest.raises(ValueError, match="outside"):
        model(torch.full((2, 3), V))
    with pytest.raises(ValueError, match="N = 2"):
        model.extend(torch.zeros(3, 1, dtype=torch.long), model.start(2))
    with pytest.raises(TypeError, match="DecodeState"):
        model.extend(torch.zeros(2, 1, dtype=torch.long), {"caches": [None, None], "t": 0, "n": 2})
    with pytest.raises(ValueError, match="3 caches for 2 blocks"):
        model.extend(torch.zeros(2, 1, dtype=torch.long), DecodeState.empty(3, 2))


# ------------------------------------------------------------------ against Hugging Face's Llama
def _transformers():
    """transformers (pinned in requirements.txt, test-only); skip only where it is not installed."""
    return pytest.importorskip("transformers")


def _llama(tie: bool, dtype=torch.float64):
    transformers = _transformers()
    config = transformers.LlamaConfig(
        vocab_size=V, hidden_size=E, intermediate_size=40, num_hidden_layers=2, num_attention_heads=H,
        num_key_value_heads=2, max_position_embeddings=64, rms_norm_eps=1e-6, tie_word_embeddings=tie,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0}, attn_implementation="sdpa",
    )  # fmt: skip
    torch.manual_seed(0)
    hf = _randomise(transformers.LlamaForCausalLM(config).to(dtype)).eval()
    assert (hf.lm_head.weight is hf.model.embed_tokens.weight) == tie
    return hf, config


def _names(i_layers: int, tie: bool) -> dict:
    """Hugging Face's parameter names -> the Decoder's."""
    names = {"model.embed_tokens.weight": "tok_embed.weight", "model.norm.weight": "norm.weight"}
    if not tie:
        names["lm_head.weight"] = "lm_head.weight"
    layer = {
        "input_layernorm": "norm1", "post_attention_layernorm": "norm2",
        "self_attn.q_proj": "attn.q_proj", "self_attn.k_proj": "attn.k_proj",
        "self_attn.v_proj": "attn.v_proj", "self_attn.o_proj": "attn.o_proj",
        "mlp.gate_proj": "ffn.gate_proj", "mlp.up_proj": "ffn.up_proj", "mlp.down_proj": "ffn.down_proj",
    }  # fmt: skip
    for i in range(i_layers):
        names |= {f"model.layers.{i}.{a}.weight": f"layers.{i}.{b}.weight" for a, b in layer.items()}
    return names


def _gaps(hf, ours, config, tokens, chunks=None):
    """Max |difference| of the logits and of every parameter's gradient of a cross-entropy, ours
    against Hugging Face's, and the largest |logit| and |gradient| of Hugging Face's; with
    ``chunks`` both are fed in pieces through their KV caches."""
    transformers = _transformers()
    target = tokens.roll(-1, 1)
    if chunks is None:
        theirs, mine = hf(tokens).logits, ours(tokens)
    else:
        cache, state, theirs, mine = (
            transformers.DynamicCache(config=config),
            ours.start(tokens.shape[0]),
            [],
            [],
        )
        for a, b in chunks:
            out = hf(tokens[:, a:b], past_key_values=cache, use_cache=True)
            cache = out.past_key_values
            theirs.append(out.logits)
            logits, state = ours.extend(tokens[:, a:b], state)
            mine.append(logits)
        theirs, mine = torch.cat(theirs, 1), torch.cat(mine, 1)
    for model, logits in ((hf, theirs), (ours, mine)):
        model.zero_grad()
        F.cross_entropy(logits.flatten(0, 1), target.flatten()).backward()
    grads = dict(ours.named_parameters())
    names = _names(config.num_hidden_layers, config.tie_word_embeddings)
    assert {names[n] for n, _ in hf.named_parameters()} == set(grads)  # every parameter compared
    grad_gap = max((p.grad - grads[names[n]].grad).abs().max().item() for n, p in hf.named_parameters())
    grad_scale = max(p.grad.abs().max().item() for p in hf.parameters())
    return (mine - theirs).abs().max().item(), grad_gap, theirs.abs().max().item(), grad_scale


def _float64_rms_norm(self, x):
    """LlamaRMSNorm's equation in x's dtype: its code rounds x to float32 first, even in float64."""
    return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.variance_epsilon))


CHUNKS = [None, ((0, 4), (4, 5), (5, 9), (9, CTX))]


@pytest.mark.parametrize("tie", [False, True])
@pytest.mark.parametrize("chunks", CHUNKS, ids=["one pass", "KV cache"])
def test_decoder_equals_hugging_face_llama_in_float64(tie, chunks, monkeypatch):
    """Logits and gradients equal to float64's rounding. Two steps of Llama's code compute in
    float32 even in a float64 model: the rotary angles (``rope_angles`` computes them so too, the
    same float32 operations, so they agree to the bit) and ``LlamaRMSNorm``, which rounds its input
    to float32; here it is run in float64 (its equation unchanged, ``_float64_rms_norm``), so that
    every other difference would show at 1e-12. The next test runs Llama's norm as shipped."""
    transformers = _transformers()
    monkeypatch.setattr(transformers.models.llama.modeling_llama.LlamaRMSNorm, "forward", _float64_rms_norm)
    hf, config = _llama(tie)
    ours = Decoder.from_llama(hf)
    assert ours.config.tie == tie and ours.config.n_kv_heads == 2 and ours.config.bias is False
    logit_gap, grad_gap, _, _ = _gaps(hf, ours, config, torch.randint(0, V, (3, CTX)), chunks)
    assert logit_gap < 1e-12 and grad_gap < 1e-12, (logit_gap, grad_gap)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_decoder_equals_hugging_face_llama_as_shipped(dtype):
    """Llama's code as it is. In float64 its RMSNorm rounds each input to float32, so it agrees with
    the float64 Decoder to float32's precision only: each rounding is a relative 2^-24 ~ 6e-8, and
    the models differ by about 1e-6 of the largest logit (and gradient); the bar is 1e-5 of it. In
    float32 both models compute in float32, and differ by as much."""
    hf, config = _llama(tie=False, dtype=dtype)
    ours = Decoder.from_llama(hf)
    for chunks in CHUNKS:
        logit_gap, grad_gap, logit_scale, grad_scale = _gaps(
            hf, ours, config, torch.randint(0, V, (3, CTX)), chunks
        )
        assert logit_gap < 1e-5 * logit_scale and grad_gap < 1e-5 * grad_scale, (chunks, logit_gap, grad_gap)
        if dtype == torch.float64:
            assert logit_gap > 1e-12  # the float32 rounding is really there


def test_from_llama_refuses_what_it_cannot_copy():
    transformers = _transformers()
    config = transformers.LlamaConfig(
        vocab_size=V, hidden_size=E, intermediate_size=40, num_hidden_layers=1, num_attention_heads=H,
        num_key_value_heads=2, hidden_act="gelu",
    )  # fmt: skip
    with pytest.raises(ValueError, match="hidden_act"):
        Decoder.from_llama(transformers.LlamaForCausalLM(config))
    hf, _ = _llama(tie=False)
    with pytest.raises(ValueError, match="norm='rms'"):
        load_llama_weights(_decoder(norm="layer"), hf)
    with pytest.raises(ValueError, match="tie"):
        load_llama_weights(_decoder(tie=True, bias=False), hf)


def test_transformers_is_for_the_tests_only():
    """Pinned for the tests, never in what a student installs or runs: binder's requirements, the
    handout's runtime, the package and the notebooks do not name it."""
    from pathlib import Path

    from tools.handout import student

    root = Path(__file__).resolve().parents[1]
    assert "transformers==" in (root / "requirements.txt").read_text()
    assert "transformers" not in (root / "binder" / "requirements.txt").read_text()
    assert "transformers" not in student.RUNTIME
    for path in [*(root / "code" / "src" / "seqlab").rglob("*.py"), *(root / "chapters").glob("*.ipynb")]:
        text = path.read_text(encoding="utf-8")
        assert "import transformers" not in text and "from transformers" not in text, path
