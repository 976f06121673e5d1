import math

import pytest
import torch
from torch import nn

from seqlab.gpt import GPT, LSTMLM, lm_loss, shifted_causal_mask, torch_names
from seqlab.lstm import LSTM
from seqlab.sampling import filter_logits, generate, sample_next
from seqlab.utils import count_parameters

V, E, H, FF, CTX = 23, 16, 4, 32, 12


class TorchGPT(nn.Module):
    """The reference: PyTorch's own layers composed as a GPT (embeddings, pre-norm encoder layers
    with a causal mask, a final LayerNorm, the tied output)."""

    def __init__(self, layers=2):
        super().__init__()
        self.tok, self.pos = nn.Embedding(V, E), nn.Embedding(CTX, E)
        kw = {"dropout": 0.0, "batch_first": True, "norm_first": True}
        self.layers = nn.ModuleList(nn.TransformerEncoderLayer(E, H, FF, **kw) for _ in range(layers))
        self.norm = nn.LayerNorm(E)

    def forward(self, tokens):
        t = tokens.shape[1]
        x = self.tok(tokens) + self.pos(torch.arange(t))
        mask = nn.Transformer.generate_square_subsequent_mask(t, dtype=x.dtype)
        for layer in self.layers:
            x = layer(x, src_mask=mask, is_causal=True)
        return self.norm(x) @ self.tok.weight.T


def _copied(layers=2, dtype=torch.float64):
    torch.manual_seed(0)
    ref = TorchGPT(layers).to(dtype)
    for p in ref.parameters():  # not the default initialisation: biases and norms off zero / one
        nn.init.normal_(p, std=0.3)
    ours = GPT(V, E, H, layers, FF, context=CTX).to(dtype)
    ours.tok_embed.load_state_dict(ref.tok.state_dict())
    ours.pos_embed.load_state_dict(ref.pos.state_dict())
    ours.norm.load_state_dict(ref.norm.state_dict())
    for a, b in zip(ours.layers, ref.layers):
        a.load_state_dict(torch_names(b.state_dict()), strict=True)
    return ref, ours


@pytest.mark.parametrize("impl", ["scratch", "torch"])
def test_gpt_equals_torch_composition_forward_and_gradients(impl):
    ref, ours = _copied()
    for layer in ours.layers:
        layer.attn.impl = impl
    tokens = torch.randint(0, V, (3, CTX))
    out_ref, out = ref(tokens), ours(tokens)
    torch.testing.assert_close(out, out_ref, atol=1e-10, rtol=1e-10)
    target = torch.randint(0, V, (3, CTX))
    nn.functional.cross_entropy(out_ref.flatten(0, 1), target.flatten()).backward()
    nn.functional.cross_entropy(out.flatten(0, 1), target.flatten()).backward()
    pairs = [
        (ours.tok_embed, ref.tok),
        (ours.pos_embed, ref.pos),
        (ours.norm, ref.norm),
    ]
    pairs += list(zip(ours.layers, ref.layers))
    for a, b in pairs:
        grads = torch_names(dict(b.named_parameters()))
        for name, p in a.named_parameters():
            torch.testing.assert_close(p.grad, grads[name].grad, atol=1e-10, rtol=1e-9, msg=name)


def test_gpt_output_is_tied_and_counted_once():
    model = GPT(V, E, H, 2, FF, context=CTX)
    per_layer = 4 * E * E + 2 * E * FF + 9 * E + FF
    assert count_parameters(model) == V * E + CTX * E + 2 * per_layer + 2 * E


def test_changing_later_tokens_leaves_earlier_logits_unchanged():
    _, model = _copied()
    tokens = torch.randint(0, V, (2, CTX))
    for t in (0, 5, CTX - 2):
        changed = tokens.clone()
        changed[:, t + 1 :] = (
            changed[:, t + 1 :] + 1 + torch.randint(0, V - 1, changed[:, t + 1 :].shape)
        ) % V
        a, b = model(tokens), model(changed)
        assert torch.equal(a[:, : t + 1], b[:, : t + 1])
        assert not torch.allclose(a[:, t + 1 :], b[:, t + 1 :])


def test_shifted_causal_mask():
    m = shifted_causal_mask(2, 3)
    assert m.tolist() == [
        [True, True, True, True, False],
        [True, True, True, True, True],
    ]
    assert torch.equal(shifted_causal_mask(4, 0), torch.ones(4, 4, dtype=torch.bool).tril())


def test_kv_cache_equals_recomputing_the_prefix():
    _, model = _copied()
    tokens = torch.randint(0, V, (2, CTX))
    full = model(tokens)
    state = model.start(2)
    chunks = []
    for a, b in (
        (0, 3),
        (3, 4),
        (4, 9),
        (9, CTX),
    ):  # a prompt, one token, several, the rest
        logits, state = model.extend(tokens[:, a:b], state)
        chunks.append(logits)
    torch.testing.assert_close(torch.cat(chunks, dim=1), full, atol=1e-12, rtol=1e-12)
    assert state.t == CTX and state.caches[0].k.shape == (2, H, CTX, E // H)
    with pytest.raises(ValueError, match="context"):
        model.extend(tokens[:, :1], state)


def test_generate_with_and_without_cache_agree():
    _, model = _copied(dtype=torch.float32)
    prompt = torch.randint(0, V, (3, 4))
    runs = [
        generate(
            model,
            prompt,
            8,
            top_k=5,
            generator=torch.Generator().manual_seed(1),
            cache=c,
        )
        for c in (True, False)
    ]
    assert runs[0].shape == (3, 12) and torch.equal(runs[0], runs[1])
    assert torch.equal(runs[0][:, :4], prompt)
    greedy = generate(model, prompt, 8, temperature=0)
    cold = generate(model, prompt, 8, temperature=1e-6, generator=torch.Generator().manual_seed(3))
    assert torch.equal(greedy, cold)
    with pytest.raises(ValueError, match="context"):
        generate(model, prompt, 9)


def test_lstm_lm_equals_nn_lstm_and_extends():
    torch.manual_seed(0)
    model = LSTMLM(V, E, 24, impl="scratch").double()
    ref = nn.LSTM(E, 24, batch_first=True).double()
    model.lstm = LSTM.from_torch(ref, impl="fast")
    tokens = torch.randint(0, V, (2, 9))
    expected = model.proj(ref(model.tok_embed(tokens))[0]) @ model.tok_embed.weight.T
    torch.testing.assert_close(model(tokens), expected)
    state, parts = model.start(2), []
    for a, b in ((0, 4), (4, 5), (5, 9)):
        logits, state = model.extend(tokens[:, a:b], state)
        parts.append(logits)
    torch.testing.assert_close(torch.cat(parts, 1), expected)
    assert count_parameters(model) == V * E + 4 * 24 * (E + 24) + 8 * 24 + 24 * E + E


def test_lm_loss_shifts_targets():
    torch.manual_seed(0)
    model = GPT(V, E, H, 1, FF, context=CTX)
    batch = torch.randint(0, V, (2, 6))
    logits = model(batch[:, :-1])
    expected = -logits.log_softmax(-1).gather(-1, batch[:, 1:, None]).mean()
    torch.testing.assert_close(lm_loss(model, (batch,)), expected)


def test_bad_tokens_are_refused():
    model = GPT(V, E, H, 1, FF, context=CTX)
    with pytest.raises(TypeError, match="integer"):
        model(torch.zeros(2, 3))
    with pytest.raises(ValueError, match="outside"):
        model(torch.full((2, 3), V))
    with pytest.raises(ValueError, match="context"):
        model(torch.zeros(1, CTX + 1, dtype=torch.long))
    with pytest.raises(ValueError, match="N = 2"):
        model.extend(torch.zeros(3, 1, dtype=torch.long), model.start(2))
    with pytest.raises(TypeError, match="DecodeState"):
        model.extend(torch.zeros(2, 1, dtype=torch.long), {"caches": [None], "t": 0, "n": 2})
    lstm = LSTMLM(V, E, 8)
    with pytest.raises(TypeError, match="LSTMState"):
        lstm.extend(torch.zeros(2, 1, dtype=torch.long), model.start(2))
    with pytest.raises(ValueError, match="N = 2"):
        lstm.extend(torch.zeros(3, 1, dtype=torch.long), lstm.start(2))


# ------------------------------------------------------------------ sampling
def test_filter_logits_temperature_top_k_top_p():
    z = torch.tensor([[2.0, 1.0, 1.0, 0.0, -1.0], [0.0, 0.0, 0.0, 0.0, 5.0]])
    torch.testing.assert_close(filter_logits(z, temperature=2.0), z / 2)
    kept = filter_logits(z, top_k=2).isfinite()
    # row 0: the 2nd largest is 1.0, tied with a third token: both kept
    assert kept.tolist() == [
        [True, True, True, False, False],
        [True, True, True, True, True],
    ]
    assert filter_logits(z, top_k=1).isfinite().sum(1).tolist() == [1, 1]
    p = z.softmax(-1)[0]  # 0.563, 0.207, 0.207, 0.076, 0.028
    kept = filter_logits(z[:1], top_p=0.6).isfinite()[0]
    assert kept.tolist() == [
        True,
        True,
        True,
        False,
        False,
    ]  # needs 0.563 + 0.207; the tie stays
    kept = filter_logits(z[:1], top_p=float(p[0]) - 1e-6).isfinite()[0]
    assert kept.tolist() == [True, False, False, False, False]
    assert filter_logits(z, top_p=1.0).isfinite().all()
    # temperature before top-p: a flatter distribution needs more tokens for the same mass
    assert filter_logits(z[:1], temperature=5.0, top_p=0.6).isfinite().sum() > 3 - 1


def test_top_p_on_uniform_rows_keeps_everything_tied():
    z = torch.zeros(2, 7)
    assert filter_logits(z, top_p=0.1).isfinite().all()


def test_sample_next_draws_from_the_filtered_distribution():
    z = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]])).expand(20000, 4)
    g = torch.Generator().manual_seed(0)
    counts = torch.bincount(sample_next(z, top_k=2, generator=g), minlength=4).double() / 20000
    torch.testing.assert_close(
        counts,
        torch.tensor([0.625, 0.375, 0, 0], dtype=torch.double),
        atol=0.015,
        rtol=0,
    )
    counts = torch.bincount(sample_next(z, top_p=0.9, generator=g), minlength=4).double() / 20000
    torch.testing.assert_close(counts, torch.tensor([0.5, 0.3, 0.15, 0], dtype=torch.double) / 0.95,
                               atol=0.015, rtol=0)  # fmt: skip
    assert torch.equal(sample_next(z[:3], temperature=0), torch.zeros(3, dtype=torch.long))


def test_sampling_arguments_are_checked():
    z = torch.zeros(2, 5)
    for kwargs, error in (
        ({"temperature": -1.0}, ValueError),
        ({"temperature": math.inf}, ValueError),
        ({"top_k": 0}, ValueError),
        ({"top_k": 1.5}, TypeError),
        ({"top_p": 0.0}, ValueError),
        ({"top_p": 1.5}, ValueError),
    ):
        with pytest.raises(error):
            filter_logits(z, **kwargs)
    with pytest.raises(ValueError, match=r"\(N, V\)"):
        filter_logits(torch.zeros(5))
    with pytest.raises(TypeError, match="floating"):
        sample_next(torch.zeros(2, 5, dtype=torch.long))
    with pytest.raises(ValueError, match="greedy"):
        filter_logits(z, temperature=0)
    with pytest.raises(ValueError, match="prompt"):
        generate(GPT(V, E, H, 1, FF, context=CTX), torch.zeros(3, dtype=torch.long), 2)
