import pytest
import torch
from torch import nn

from seqlab.decoding import beam_search, greedy
from seqlab.seq2seq import Seq2Seq
from seqlab.text import BOS, EOS, PAD

CONFIGS = [
    dict(attention=None),
    dict(attention="additive", style="bahdanau"),
    dict(attention="dot", style="luong"),
    dict(attention="general", style="luong", input_feeding=True),
    dict(attention="concat", style="luong", window=("local-m", 2)),
    dict(attention="general", style="luong", window=("local-p", 2)),
    dict(attention="additive", style="bahdanau", bidirectional=True),
    dict(attention="dot", style="luong", input_feeding=True, bidirectional=True),
]


def _batch():
    src = torch.randint(4, 12, (3, 7))
    src_len = torch.tensor([7, 4, 2])
    src[1, 4:], src[2, 2:] = 0, 0
    tgt_in = torch.randint(4, 10, (3, 5))
    tgt_in[:, 0] = BOS
    return src, src_len, tgt_in


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(str(v) for v in c.values()))
def test_shapes_padding_and_teacher_forcing_equals_stepping(config):
    torch.manual_seed(0)
    model = Seq2Seq(12, 10, embed_size=8, hidden_size=16, **config).eval()
    src, src_len, tgt_in = _batch()
    logits, attention = model(src, src_len, tgt_in)
    assert logits.shape == (3, 5, 10)
    if config["attention"] is None:
        assert attention is None
    else:
        assert attention.shape == (3, 5, 7)
        assert torch.all(attention[1, :, 4:] == 0) and torch.all(attention[2, :, 2:] == 0)  # padding unread
        if "window" not in config:
            torch.testing.assert_close(attention.sum(-1), torch.ones(3, 5))
    state = model.encode(src, src_len)
    for t in range(5):  # the step function used by decoding gives the same logits
        step_logits, state, _ = model.step(tgt_in[:, t], state)
        torch.testing.assert_close(step_logits, logits[:, t])


def test_local_m_window_is_exactly_zero_outside():
    torch.manual_seed(1)
    model = Seq2Seq(
        12, 10, embed_size=8, hidden_size=16, attention="dot", style="luong", window=("local-m", 1)
    )
    src, src_len, tgt_in = _batch()
    _, attention = model(src, src_len, tgt_in)
    for t in range(5):  # step t looks at source positions t-1 .. t+1 only
        outside = [s for s in range(7) if abs(s - t) > 1]
        assert torch.all(attention[:, t, outside] == 0)


@pytest.mark.parametrize("rate", [0.5, 1 / 3])
def test_local_m_rate_moves_the_window_centre_to_rate_times_t(rate):
    torch.manual_seed(6)
    config = dict(attention="dot", style="luong", window=("local-m", 1), local_m_rate=rate)
    model = Seq2Seq(12, 10, embed_size=8, hidden_size=16, **config).eval()
    src, src_len, tgt_in = _batch()
    _, attention = model(src, src_len, tgt_in)
    state = model.encode(src, src_len)
    positions = torch.arange(src.shape[1]).float()
    for t in range(tgt_in.shape[1]):  # step t looks at |j - rate t| <= 1 only, in both paths
        _, state, weights = model.step(tgt_in[:, t], state)
        torch.testing.assert_close(state["center"], torch.full((3,), rate * t))
        outside = (positions - rate * t).abs() > 1
        assert torch.all(attention[:, t, outside] == 0) and torch.all(weights[:, outside] == 0)
        assert (attention[0, t, ~outside] > 0).all()  # row 0 has no padding: the window is read
    # at t = 3 a rate of 1 would look at positions 2..4; 1/2 looks at 1..2 and 1/3 at 0..2
    assert torch.all(attention[:, 3, 3:] == 0)


def test_local_p_window_is_exactly_zero_outside_its_predicted_centre():
    torch.manual_seed(4)
    model = Seq2Seq(
        12, 10, embed_size=8, hidden_size=16, attention="general", style="luong", window=("local-p", 2)
    )
    src, src_len, tgt_in = _batch()
    state = model.encode(src, src_len)
    positions = torch.arange(src.shape[1]).float()
    for t in range(tgt_in.shape[1]):
        _, state, weights = model.step(tgt_in[:, t], state)  # weights (N, S)
        center = state["center"]  # (N,) the predicted p_t, within [0, S_n]
        assert ((center >= 0) & (center <= src_len.float())).all()
        outside = (positions - center.unsqueeze(1)).abs() > 2
        assert torch.all(weights[outside] == 0) and (weights[~outside] >= 0).all()
        assert (weights.sum(-1) <= 1 + 1e-6).all()  # a softmax times a Gaussian of peak 1


def test_source_changes_reach_the_decoder_and_gradients_flow():
    torch.manual_seed(2)
    model = Seq2Seq(12, 10, embed_size=8, hidden_size=16, attention="additive")
    src, src_len, tgt_in = _batch()
    logits, _ = model(src, src_len, tgt_in)
    changed = src.clone()
    changed[0, 0] = 4 if src[0, 0] != 4 else 5
    assert not torch.allclose(model(changed, src_len, tgt_in)[0][0], logits[0])
    logits.sum().backward()
    assert all(p.grad is not None for p in model.parameters())


@pytest.mark.parametrize("config", CONFIGS[:4], ids=lambda c: "-".join(str(v) for v in c.values()))
def test_decoding_with_the_model_step(config):
    torch.manual_seed(3)
    model = Seq2Seq(12, 10, embed_size=8, hidden_size=16, **config).eval()
    src, src_len, _ = _batch()
    out = greedy(model.decoder_step(), model.encode(src, src_len), batch_size=3, max_len=6)
    # feeding greedy's own output back under teacher forcing, its argmax is that output again
    tgt_in = torch.cat([torch.full((3, 1), BOS), out[:, :-1]], dim=1)
    with torch.no_grad():
        after_eos = (out == EOS).cumsum(1) - (out == EOS).long() > 0  # greedy pads these
        assert torch.equal(model(src, src_len, tgt_in)[0].argmax(-1).masked_fill(after_eos, PAD), out)
        state = model.encode(src[:1], src_len[:1])
        hypotheses = beam_search(model.decoder_step(), state, beam_size=3, max_len=6, alpha=1.0)
        assert 1 <= len(hypotheses) <= 3
        for tokens, score in hypotheses:  # each score is its mean log-probability under the model
            tgt = torch.cat([torch.tensor([BOS]), tokens[:-1]]).unsqueeze(0)
            log_p = model(src[:1], src_len[:1], tgt)[0].log_softmax(-1)[0]
            assert abs(log_p.gather(1, tokens[:, None]).sum().item() / len(tokens) - score) < 1e-5
        one = beam_search(model.decoder_step(), model.encode(src[:1], src_len[:1]), beam_size=1, max_len=6)
        assert torch.equal(one[0][0], out[0][: len(one[0][0])])  # a beam of one is greedy


def test_bad_configurations_and_inputs():
    with pytest.raises(ValueError, match="style"):
        Seq2Seq(5, 5, style="vaswani")
    with pytest.raises(ValueError, match="luong"):
        Seq2Seq(5, 5, attention="dot", style="bahdanau", input_feeding=True)
    with pytest.raises(ValueError, match="window"):
        Seq2Seq(5, 5, attention="dot", style="luong", window=("local-x", 2))
    for rate in (0, -0.5, "1", True):
        with pytest.raises(ValueError, match="local_m_rate must be a number > 0"):
            Seq2Seq(5, 5, attention="dot", style="luong", window=("local-m", 2), local_m_rate=rate)
    with pytest.raises(ValueError, match="local_m_rate needs window"):
        Seq2Seq(5, 5, attention="dot", style="luong", window=("local-p", 2), local_m_rate=0.5)
    model = Seq2Seq(12, 10, embed_size=8, hidden_size=16)
    with pytest.raises(ValueError, match="src_len must lie"):
        model.encode(torch.ones(2, 3, dtype=torch.long), torch.tensor([3, 4]))


def test_bidirectional_encoder_ignores_padding():
    torch.manual_seed(5)
    model = Seq2Seq(12, 10, embed_size=8, hidden_size=16, attention="additive", bidirectional=True).eval()
    src, src_len, tgt_in = _batch()
    logits, _ = model(src, src_len, tgt_in)
    longer = torch.cat([src, torch.zeros(3, 3, dtype=src.dtype)], dim=1)  # three more padding columns
    logits_longer, _ = model(longer, src_len, tgt_in)
    torch.testing.assert_close(logits_longer, logits)
    alone, _ = model(src[2:, :2], src_len[2:], tgt_in[2:])  # row 2 on its own, unpadded
    torch.testing.assert_close(alone[0], logits[2])


def test_bidirectional_encoder_equals_a_packed_bidirectional_gru():
    # the two GRUs with a within-length reversal compute what nn.GRU(bidirectional=True) computes
    # on a packed batch, where the backward direction starts at each row's last real token
    torch.manual_seed(6)
    model = Seq2Seq(12, 10, embed_size=8, hidden_size=16, attention="additive", bidirectional=True).double()
    ref = nn.GRU(8, 16, batch_first=True, bidirectional=True).double()
    with torch.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(ref, f"{name}_l0").copy_(getattr(model.encoder, f"{name}_l0"))
            getattr(ref, f"{name}_l0_reverse").copy_(getattr(model.encoder_backward, f"{name}_l0"))
    src, src_len, _ = _batch()
    packed = nn.utils.rnn.pack_padded_sequence(
        model.src_embed(src), src_len, batch_first=True, enforce_sorted=False
    )
    out, _ = ref(packed)
    out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=src.shape[1])
    state = model.encode(src, src_len)
    mask = state["source_mask"].unsqueeze(-1)
    torch.testing.assert_close(state["enc_out"] * mask, model.bridge(out) * mask)
