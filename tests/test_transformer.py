import pytest
import torch
import torch.nn.functional as F
from torch import nn

from seqlab import attention
from seqlab.decoding import beam_search, greedy
from seqlab.masks import causal_mask, combine
from seqlab.multihead import MultiheadAttention
from seqlab.text import EOS, PAD
from seqlab.train import label_smoothed_cross_entropy, warmup_inverse_sqrt, warmup_scheduler
from seqlab.transformer import DecoderLayer, EncoderLayer, Transformer
from seqlab.utils import count_parameters

E, H, FF = 16, 4, 32


def _grads(module):  # by parameter name: ours are torch's
    return {name: p.grad.clone() for name, p in module.named_parameters()}


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_equals_torch_forward_and_gradients(norm_first):
    torch.manual_seed(0)
    ref = nn.TransformerEncoderLayer(E, H, FF, dropout=0.0, batch_first=True, norm_first=norm_first)
    ours = EncoderLayer.from_torch(ref)
    x = torch.randn(3, 7, E)
    pad = torch.tensor([[False] * 7, [False] * 5 + [True] * 2, [False] * 2 + [True] * 5])
    out_ref, out = ref(x, src_key_padding_mask=pad), ours(x, src_key_padding_mask=pad)
    real = ~pad
    torch.testing.assert_close(out[real], out_ref[real], atol=1e-5, rtol=1e-5)
    out_ref[real].square().sum().backward()
    out[real].square().sum().backward()
    grads = _grads(ref)
    for name, g in _grads(ours).items():
        torch.testing.assert_close(g, grads[name], atol=1e-4, rtol=1e-4, msg=name)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_equals_torch_forward_and_gradients(norm_first):
    torch.manual_seed(1)
    ref = nn.TransformerDecoderLayer(E, H, FF, dropout=0.0, batch_first=True, norm_first=norm_first)
    ours = DecoderLayer.from_torch(ref)
    y, memory = torch.randn(2, 5, E), torch.randn(2, 6, E)
    memory_pad = torch.tensor([[False] * 6, [False] * 3 + [True] * 3])
    mask = ~causal_mask(5)  # torch's meaning: True = ignore
    out_ref = ref(y, memory, tgt_mask=mask, memory_key_padding_mask=memory_pad)
    out = ours(y, memory, tgt_mask=mask, memory_key_padding_mask=memory_pad)
    torch.testing.assert_close(out, out_ref, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(ours(y, memory, tgt_is_causal=True, memory_key_padding_mask=memory_pad), out)
    out_ref.square().sum().backward()
    out.square().sum().backward()
    grads = _grads(ref)
    for name, g in _grads(ours).items():
        torch.testing.assert_close(g, grads[name], atol=1e-4, rtol=1e-4, msg=name)


@pytest.mark.parametrize("norm_first", [False, True])
def test_state_dicts_load_both_ways(norm_first):
    """Torch's parameter names: a state dict loads strictly in both directions, same outputs."""
    torch.manual_seed(2)
    kw = dict(dropout=0.0, batch_first=True, norm_first=norm_first)
    x, memory = torch.randn(2, 5, E), torch.randn(2, 6, E)
    tgt_mask = nn.Transformer.generate_square_subsequent_mask(5)  # float, 0 / -inf
    pairs = [
        (nn.TransformerEncoderLayer(E, H, FF, **kw), EncoderLayer(E, H, FF, norm_first=norm_first), (x,), {}),
        (nn.TransformerDecoderLayer(E, H, FF, **kw), DecoderLayer(E, H, FF, norm_first=norm_first),
         (x, memory), {"tgt_mask": tgt_mask}),
    ]  # fmt: skip
    for ref, ours, args, kwargs in pairs:
        ref.eval(), ours.eval()
        ours.load_state_dict(ref.state_dict(), strict=True)  # torch -> ours
        torch.testing.assert_close(ours(*args, **kwargs), ref(*args, **kwargs), atol=1e-5, rtol=1e-5)
        for p in ours.parameters():
            nn.init.normal_(p)
        ref.load_state_dict(ours.state_dict(), strict=True)  # ours -> torch
        torch.testing.assert_close(ref(*args, **kwargs), ours(*args, **kwargs), atol=1e-4, rtol=1e-4)


def test_from_torch_rejects_what_it_cannot_copy():
    with pytest.raises(ValueError, match="batch_first"):
        EncoderLayer.from_torch(nn.TransformerEncoderLayer(E, H, FF, batch_first=False))
    with pytest.raises(ValueError, match="relu"):
        DecoderLayer.from_torch(nn.TransformerDecoderLayer(E, H, FF, batch_first=True, activation="gelu"))


def _model(**kw):
    torch.manual_seed(2)
    return Transformer(11, 11, d_model=E, nhead=H, dim_feedforward=FF, **kw).eval()


def _batch():
    src = torch.tensor([[4, 5, 6, 7, 8], [9, 4, 5, 0, 0]])
    return src, torch.tensor([5, 3]), torch.tensor([[1, 4, 6, 8], [1, 9, 10, 5]])


@pytest.mark.parametrize("norm_first", [False, True])
def test_cached_decoding_steps_equal_the_teacher_forced_forward(norm_first):
    model = _model(norm_first=norm_first)
    src, src_len, tgt_in = _batch()
    logits = model(src, src_len, tgt_in)
    state = model.encode(src, src_len)
    for t in range(tgt_in.shape[1]):
        step_logits, state = model.step(tgt_in[:, t], state)
        torch.testing.assert_close(step_logits, logits[:, t], atol=1e-5, rtol=1e-5)
    keys, values = state["caches"][0]
    assert keys.shape == values.shape == (2, H, 4, E // H)  # one cached key and value per step


def test_padding_in_the_source_changes_nothing():
    model = _model()
    src, src_len, tgt_in = _batch()
    longer = torch.cat([src, torch.full((2, 3), 7)], dim=1)  # junk after each row's length
    torch.testing.assert_close(
        model(longer, src_len, tgt_in), model(src, src_len, tgt_in), atol=1e-5, rtol=1e-5
    )


def test_cross_attention_shapes_and_dependence_on_the_source():
    model = _model()
    src, src_len, tgt_in = _batch()
    weights = model.attention_weights(src, src_len, tgt_in)
    assert [w.shape for w in weights["cross"]] == [(2, H, 4, 5)] * 2  # (N, H, L, S)
    assert [w.shape for w in weights["decoder"]] == [(2, H, 4, 4)] * 2
    assert [w.shape for w in weights["encoder"]] == [(2, H, 5, 5)] * 2
    assert torch.all(weights["cross"][0][1, :, :, 3:] == 0)  # padding gets no weight
    assert torch.all(weights["decoder"][0].triu(1) == 0)  # no peeking ahead
    changed = src.clone()
    changed[0, 1] = 10
    out, out_changed = model(src, src_len, tgt_in), model(changed, src_len, tgt_in)
    assert not torch.allclose(out[0], out_changed[0]) and torch.allclose(out[1], out_changed[1])


def test_weight_tying_shares_one_matrix():
    untied, tied = _model(), _model(tie_weights=True)
    assert tied.src_embed.weight is tied.tgt_embed.weight is tied.out.weight
    assert count_parameters(untied) - count_parameters(tied) == 2 * 11 * E
    src, src_len, tgt_in = _batch()
    tied(src, src_len, tgt_in).sum().backward()
    assert tied.out.weight.grad is not None
    with pytest.raises(ValueError, match="shared vocabulary"):
        Transformer(11, 12, d_model=E, nhead=H, tie_weights=True)


@pytest.mark.parametrize("options", [dict(residual=False), dict(layer_norm=False), dict(norm_first=True)])
def test_ablations_run_and_differ(options):
    src, src_len, tgt_in = _batch()
    out = _model(**options)(src, src_len, tgt_in)
    assert out.shape == (2, 4, 11) and torch.isfinite(out).all()
    assert not torch.allclose(out, _model()(src, src_len, tgt_in))


def _sequence_log_prob(model, src, src_len, tokens):
    """log p(tokens | src) of one output (T,) under teacher forcing, without the cache."""
    tgt_in = torch.cat([torch.ones(1, dtype=torch.long), tokens[:-1]]).unsqueeze(0)  # BOS first
    log_p = model(src, src_len, tgt_in).log_softmax(-1)[0]  # (T, V)
    return log_p.gather(1, tokens.unsqueeze(1)).sum().item()


def test_greedy_and_beam_search_with_the_cache():
    model = _model()
    src, src_len, _ = _batch()
    out = greedy(model.decoder_step(), model.encode(src, src_len), batch_size=2, max_len=6)
    tgt_in = torch.cat([torch.ones(2, 1, dtype=torch.long), out[:, :-1]], dim=1)
    after_eos = (out == EOS).cumsum(1) - (out == EOS).long() > 0  # greedy pads these
    assert torch.equal(model(src, src_len, tgt_in).argmax(-1).masked_fill(after_eos, PAD), out)  # every step
    beams = beam_search(model.decoder_step(), model.encode(src[:1], src_len[:1]), beam_size=3, max_len=6)
    scores = [score for _, score in beams]
    assert len(beams) == 3 and scores == sorted(scores, reverse=True)
    for tokens, score in beams:  # the cache, reordered between beams, scores what a full pass does
        assert abs(_sequence_log_prob(model, src[:1], src_len[:1], tokens) - score) < 1e-4
    one = beam_search(model.decoder_step(), model.encode(src[:1], src_len[:1]), beam_size=1, max_len=6)
    assert torch.equal(one[0][0], out[0])  # a beam of one is greedy decoding


def test_the_attention_path_chosen_is_the_one_that_runs(monkeypatch):
    calls = {"fused": 0, "scratch": 0}
    fused, softmax = F.scaled_dot_product_attention, attention._masked_softmax

    def counted(kind, fn):
        def wrapper(*args, **kwargs):
            calls[kind] += 1
            return fn(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(F, "scaled_dot_product_attention", counted("fused", fused))
    monkeypatch.setattr(attention, "_masked_softmax", counted("scratch", softmax))
    src, src_len, tgt_in = _batch()
    results = {}
    for impl in ("torch", "scratch"):
        model = _model(impl=impl, dropout=0.0).train()
        calls.update(fused=0, scratch=0)
        logits = model(src, src_len, tgt_in)
        logits.square().sum().backward()
        # 2 encoder layers x 1 attention + 2 decoder layers x 2 attentions, all on the chosen path
        assert calls == {"fused": 6 if impl == "torch" else 0, "scratch": 6 if impl == "scratch" else 0}
        results[impl] = logits, {name: p.grad for name, p in model.named_parameters()}
    torch.testing.assert_close(results["scratch"][0], results["torch"][0], atol=1e-5, rtol=1e-5)
    for name, grad in results["torch"][1].items():
        torch.testing.assert_close(results["scratch"][1][name], grad, atol=1e-5, rtol=1e-4, msg=name)


def test_bad_inputs_are_named():
    model = _model()
    src, src_len, tgt_in = _batch()
    with pytest.raises(ValueError, match="src_len"):
        model(src, torch.tensor([6, 3]), tgt_in)
    with pytest.raises(ValueError, match="tgt_in"):
        model(src, src_len, tgt_in[:1])
    with pytest.raises(ValueError, match="divisible"):
        Transformer(5, 5, d_model=10, nhead=4)
    with pytest.raises(ValueError, match=r"\(N, T, E\)"):
        EncoderLayer(E, H)(torch.randn(2, 3, E + 1))


@pytest.mark.parametrize(
    "change, error, message",
    [
        (dict(src_len=[5, 3]), TypeError, "src_len"),
        (dict(src_len=torch.tensor([5.0, 3.0])), TypeError, "src_len"),
        (dict(src=torch.tensor([[4, 5, 6, 7, 11], [9, 4, 5, 0, 0]])), ValueError, "src .*0..10"),
        (dict(src=torch.tensor([[4.0, 5, 6, 7, 8], [9, 4, 5, 0, 0]])), TypeError, "src"),
        (dict(tgt_in=torch.zeros(2, 0, dtype=torch.long)), ValueError, "tgt_in"),
        (dict(tgt_in=torch.tensor([[1, 4, 6, 8], [1, 9, 10, 12]])), ValueError, "tgt_in .*0..10"),
        (dict(tgt_in=torch.tensor([[1.0, 4, 6, 8], [1, 9, 10, 5]])), TypeError, "tgt_in"),
    ],
)
def test_bad_model_inputs_are_named_before_any_computation(change, error, message):
    model = _model()
    src, src_len, tgt_in = _batch()
    arguments = dict(src=src, src_len=src_len, tgt_in=tgt_in)
    arguments.update(change)
    with pytest.raises(error, match=message):
        model(**arguments)


def test_bad_layer_masks_are_named():
    layer = DecoderLayer(E, H, FF)
    y, memory = torch.randn(2, 5, E), torch.randn(2, 6, E)
    with pytest.raises(ValueError, match="memory_key_padding_mask"):
        layer(y, memory, memory_key_padding_mask=torch.zeros(2, 5, dtype=torch.bool))
    with pytest.raises(ValueError, match="tgt_mask"):
        layer(y, memory, tgt_mask=torch.zeros(5, 6, dtype=torch.bool))
    with pytest.raises(TypeError, match="src_key_padding_mask"):
        EncoderLayer(E, H, FF)(y, src_key_padding_mask=torch.zeros(2, 5, dtype=torch.long))


def test_label_smoothing_equals_torch():
    torch.manual_seed(3)
    logits, target = torch.randn(12, 7), torch.randint(0, 7, (12,))
    target[[2, 5]] = 0
    for eps in (0.0, 0.1, 0.3):
        torch.testing.assert_close(
            label_smoothed_cross_entropy(logits, target, eps, ignore_index=0),
            F.cross_entropy(logits, target, label_smoothing=eps, ignore_index=0),
        )
    with pytest.raises(ValueError, match="smoothing"):
        label_smoothed_cross_entropy(logits, target, 1.0)
    with pytest.raises(ValueError, match="ignore_index"):
        label_smoothed_cross_entropy(logits, torch.zeros(12, dtype=torch.long), 0.1, ignore_index=0)


def test_warmup_schedule_rises_peaks_and_decays():
    lrs = [warmup_inverse_sqrt(s, 64, warmup=100) for s in range(1, 1001)]
    peak = max(range(1000), key=lrs.__getitem__) + 1
    assert peak == 100 and lrs[99] == pytest.approx((64 * 100) ** -0.5)
    assert lrs[49] == pytest.approx(lrs[99] / 2) and lrs[399] == pytest.approx(lrs[99] / 2)
    opt = torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=1.0)
    sched = warmup_scheduler(64, 100)(opt)
    assert opt.param_groups[0]["lr"] == pytest.approx(lrs[0])
    opt.step()
    sched.step()
    assert opt.param_groups[0]["lr"] == pytest.approx(lrs[1])
    with pytest.raises(ValueError, match="step"):
        warmup_inverse_sqrt(0, 64, 100)


def _pad(n, length, real):
    return torch.arange(length).expand(n, length) >= torch.tensor(real).unsqueeze(1)  # True = padding


@pytest.mark.parametrize("norm_first", [False, True])
def test_layers_equal_torch_in_float64(norm_first):
    torch.manual_seed(4)
    kw = dict(dropout=0.0, batch_first=True, norm_first=norm_first, layer_norm_eps=1e-3, dtype=torch.float64)
    ref_enc = nn.TransformerEncoderLayer(E, H, FF, **kw)
    ref_dec = nn.TransformerDecoderLayer(E, H, FF, **kw)
    enc, dec = EncoderLayer.from_torch(ref_enc), DecoderLayer.from_torch(ref_dec)
    assert enc.linear1.weight.dtype == dec.norm3.weight.dtype == torch.float64
    assert enc.norm1.eps == dec.norm2.eps == 1e-3
    x, memory = torch.randn(3, 7, E, dtype=torch.float64), torch.randn(3, 5, E, dtype=torch.float64)
    pad_x, pad_m = _pad(3, 7, [7, 4, 6]), _pad(3, 5, [5, 5, 2])
    real = ~pad_x
    tight = dict(atol=1e-12, rtol=1e-12)
    out, out_ref = enc(x, src_key_padding_mask=pad_x), ref_enc(x, src_key_padding_mask=pad_x)
    torch.testing.assert_close(out[real], out_ref[real], **tight)
    causal = ~causal_mask(7)  # torch's meaning: True = ignore
    out = dec(x, memory, tgt_mask=causal, memory_key_padding_mask=pad_m)
    out_ref = ref_dec(x, memory, tgt_mask=causal, memory_key_padding_mask=pad_m)
    torch.testing.assert_close(out, out_ref, **tight)
    out.square().sum().backward()
    out_ref.square().sum().backward()
    grads = _grads(ref_dec)
    for name, g in _grads(dec).items():
        torch.testing.assert_close(g, grads[name], atol=1e-10, rtol=1e-10, msg=name)


def test_attention_weights_are_returned_not_stored():
    torch.manual_seed(5)
    enc, dec = EncoderLayer(E, H, FF).eval(), DecoderLayer(E, H, FF).eval()
    x, memory = torch.randn(2, 4, E), torch.randn(2, 3, E)
    out, weights = enc(x, need_weights=True)
    torch.testing.assert_close(out, enc(x))
    assert weights.shape == (2, H, 4, 4)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, H, 4))
    out, weights = dec(x, memory, tgt_is_causal=True, need_weights=True)
    assert weights["self"].shape == (2, H, 4, 4) and weights["cross"].shape == (2, H, 4, 3)
    assert torch.all(weights["self"].triu(1) == 0)
    for module in (enc, dec):
        assert not any(isinstance(v, torch.Tensor) for k, v in vars(module).items() if "weight" in k)


def test_memory_is_causal_without_a_mask_applies_the_causal_mask():
    torch.manual_seed(6)
    dec = DecoderLayer(E, H, FF).eval()
    y, memory = torch.randn(2, 4, E), torch.randn(2, 6, E)
    out, weights = dec(y, memory, memory_is_causal=True, need_weights=True)
    assert torch.all(weights["cross"].triu(1) == 0)
    torch.testing.assert_close(out, dec(y, memory, memory_mask=~causal_mask(4, 6)))
    assert not torch.allclose(out, dec(y, memory))


def test_decoder_layer_step_equals_forward_with_the_same_mask_meaning():
    torch.manual_seed(7)
    dec = DecoderLayer(E, H, FF, norm_first=True).eval()
    y, memory = torch.randn(2, 5, E), torch.randn(2, 6, E)
    pad = _pad(2, 6, [6, 3])  # True = padding, in step as in forward
    full = dec(y, memory, tgt_is_causal=True, memory_key_padding_mask=pad)
    memory_kv, cache = dec.multihead_attn.project_kv(memory), None
    keys = combine(None, ~pad)  # (N, 1, 1, S), seqlab's meaning: True = a real memory position
    for t in range(5):
        out, _, cache = dec.decode(y[:, t : t + 1], memory_kv, None, keys, cache)
        torch.testing.assert_close(out[:, 0], full[:, t], atol=1e-5, rtol=1e-5)


def test_attention_dropout_acts_on_the_weights():
    torch.manual_seed(9)
    mha = MultiheadAttention(E, H, dropout=1.0)
    nn.init.normal_(mha.out_proj.bias)
    x = torch.randn(2, 5, E)
    out, _ = mha(x, x, x)  # training mode: every weight dropped
    torch.testing.assert_close(out, mha.out_proj.bias.expand(2, 5, E))
    layer = EncoderLayer(E, H, FF, dropout=0.5)
    assert layer.self_attn.dropout == 0.5
    torch.testing.assert_close(layer.eval()(x), layer.eval()(x))
    assert not torch.allclose(layer.train()(x), layer.train()(x))


def test_from_torch_refuses_a_different_attention_dropout():
    ref = nn.TransformerEncoderLayer(E, H, FF, dropout=0.1, batch_first=True)
    ref.self_attn.dropout = 0.3
    with pytest.raises(ValueError, match="dropout"):
        EncoderLayer.from_torch(ref)
    copy = EncoderLayer.from_torch(nn.TransformerEncoderLayer(E, H, FF, dropout=0.2, batch_first=True))
    assert copy.dropout.p == copy.self_attn.dropout == 0.2  # the attention weights' dropout too


def test_count_parameters():
    assert count_parameters(nn.Linear(3, 2)) == 8
    with pytest.raises(TypeError, match="module"):
        count_parameters([nn.Parameter(torch.zeros(2))])


def test_embedding_dropout_is_separate_from_the_layers():
    model = Transformer(9, 9, d_model=8, nhead=2, dim_feedforward=16, dropout=0.0, embedding_dropout=0.3)
    assert model.dropout.p == 0.3 and all(layer.dropout.p == 0.0 for layer in model.encoder)
    assert Transformer(9, 9, d_model=8, nhead=2, dropout=0.2).dropout.p == 0.2  # default: the same
    with pytest.raises(ValueError, match="embedding_dropout"):
        Transformer(9, 9, d_model=8, nhead=2, embedding_dropout=1.5)
    src, src_len, tgt = torch.randint(4, 9, (2, 5)), torch.tensor([5, 3]), torch.randint(4, 9, (2, 4))
    model.eval()
    torch.testing.assert_close(model(src, src_len, tgt), model(src, src_len, tgt))
    model.train()
    assert not torch.allclose(model(src, src_len, tgt), model(src, src_len, tgt))


def test_the_same_seed_gives_the_same_untied_model():
    # the two embeddings are initialised in a fixed order (iterating over a set of modules follows
    # their memory addresses, which change from run to run)
    models = []
    for _ in range(20):
        torch.manual_seed(0)
        models.append(Transformer(9, 11, d_model=8, nhead=2, dim_feedforward=16))
    for model in models[1:]:
        for (name, a), b in zip(models[0].named_parameters(), model.parameters()):
            assert torch.equal(a, b), name


def test_layers_follow_the_one_is_causal_rule():
    torch.manual_seed(12)
    ref = nn.TransformerEncoderLayer(E, H, FF, dropout=0.0, batch_first=True)
    ours = EncoderLayer.from_torch(ref)
    x = torch.randn(2, 5, E)
    causal = ~causal_mask(5)  # torch's meaning: True = ignore
    expected = ref(x, src_mask=causal)
    torch.testing.assert_close(ours(x, is_causal=True), expected, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(ours(x, src_mask=causal, is_causal=True), expected, atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match="src_mask lets a query see a later key"):
        ours(x, src_mask=torch.ones(5, 5, dtype=torch.bool).tril(-1), is_causal=True)  # i sees j >= i
    dec = DecoderLayer(E, H, FF)
    with pytest.raises(ValueError, match="tgt_mask lets a query see a later key"):
        dec(x, x, tgt_mask=torch.zeros(5, 5, dtype=torch.bool), tgt_is_causal=True)
