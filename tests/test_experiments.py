import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from seqlab import experiments, text
from seqlab.decoding import greedy
from seqlab.seq2seq import Seq2Seq
from seqlab.text import EOS, PAD, Seq2SeqBatch, Vocab, encode_pairs

LETTERS = Vocab("abcdefghij")


class CopyOracle(nn.Module):
    """A 'model' that copies its source perfectly, with probability ``confidence`` per token."""

    def __init__(self, vocab_size, confidence=0.9):
        super().__init__()
        self.scale = nn.Parameter(torch.tensor(1.0))
        self.vocab_size, self.confidence = vocab_size, confidence

    def _log_probs(self, wanted):  # wanted (...,) ids -> (..., V)
        rest = (1 - self.confidence) / (self.vocab_size - 1)
        probs = torch.full((*wanted.shape, self.vocab_size), rest)
        probs.scatter_(-1, wanted.unsqueeze(-1), self.confidence)
        return probs.log() * self.scale

    def encode(self, src, src_len):
        return {"src": src, "len": src_len, "t": torch.zeros(src.shape[0], dtype=torch.long)}

    def _wanted(self, state):
        t = state["t"]
        at = state["src"].gather(1, t.clamp(max=state["src"].shape[1] - 1).unsqueeze(1)).squeeze(1)
        return torch.where(t < state["len"], at, torch.full_like(at, EOS))

    def decoder_step(self):
        def step(tokens, state):
            return self._log_probs(self._wanted(state)), dict(state, t=state["t"] + 1)

        return step

    def forward(self, src, src_len, tgt_in):
        state, logits = self.encode(src, src_len), []
        for _ in range(tgt_in.shape[1]):
            logits.append(self._log_probs(self._wanted(state)))
            state = dict(state, t=state["t"] + 1)
        return torch.stack(logits, 1), None


def small_model(seed=0, attention="additive"):
    torch.manual_seed(seed)
    return Seq2Seq(len(LETTERS), len(LETTERS), embed_size=8, hidden_size=16, attention=attention)


# --------------------------------------------------------------------------- copy_pairs
def test_copy_pairs_lengths_letters_and_disjoint_splits():
    train = experiments.copy_pairs([3, 5], per_length=40, split="train", vocab=4)
    test = experiments.copy_pairs([3, 5], per_length=10, split="test", vocab=4)
    assert len(train) == 80 and len(test) == 20
    assert [len(s) for s, _ in train] == [3] * 40 + [5] * 40
    assert all(s == t and set(s) <= set("abcd") for s, t in train + test)
    assert not {s for s, _ in train} & {s for s, _ in test}
    assert experiments.copy_pairs([4], 5, "test", seed=1) == experiments.copy_pairs([4], 5, "test", seed=1)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(lengths=[], per_length=2), "lengths"),
        (dict(lengths=[0, 3], per_length=2), "lengths"),
        (dict(lengths=4, per_length=2), "lengths"),
        (dict(lengths=[3], per_length=0), "per_length"),
        (dict(lengths=[3], per_length=2, vocab=27), "vocab"),
    ],
)
def test_copy_pairs_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        experiments.copy_pairs(split="train", **kwargs)


# --------------------------------------------------------------------------- sequence_loss
def _batch(pairs=(("abc", "abc"), ("ab", "ab"), ("jihgf", "jihgf"))):
    return encode_pairs(list(pairs), LETTERS, LETTERS)


def test_sequence_loss_is_cross_entropy_over_the_real_targets():
    model, batch = small_model(), _batch()
    logits, _ = model(batch.src, batch.src_len, batch.tgt_in)
    real = batch.tgt_out != PAD
    by_hand = (
        -logits.log_softmax(-1).gather(-1, batch.tgt_out.clamp(min=0).unsqueeze(-1)).squeeze(-1)[real].mean()
    )
    loss = experiments.sequence_loss(model, batch)
    torch.testing.assert_close(loss, by_hand)
    torch.testing.assert_close(
        loss, F.cross_entropy(logits.flatten(0, 1), batch.tgt_out.flatten(), ignore_index=PAD)
    )
    assert real.sum() < real.numel()  # the batch really has padding to ignore


def test_sequence_loss_with_label_smoothing():
    model, batch = small_model(1), _batch()
    logits, _ = model(batch.src, batch.src_len, batch.tgt_in)
    eps, vocab = 0.1, logits.shape[-1]
    logp = logits.log_softmax(-1)[batch.tgt_out != PAD]  # (real targets, V)
    target = F.one_hot(batch.tgt_out[batch.tgt_out != PAD], vocab).float() * (1 - eps) + eps / vocab
    by_hand = -(target * logp).sum(-1).mean()
    torch.testing.assert_close(experiments.sequence_loss(model, batch, smoothing=eps), by_hand)
    assert experiments.sequence_loss(model, batch, smoothing=eps) != experiments.sequence_loss(model, batch)


def test_sequence_loss_gradients_reach_the_model_and_errors():
    model, batch = small_model(2), _batch()
    experiments.sequence_loss(model, batch).backward()
    assert all(p.grad is not None for p in model.parameters() if p.requires_grad)
    with pytest.raises(TypeError, match="Seq2SeqBatch"):
        experiments.sequence_loss(model, tuple(batch))
    with pytest.raises(ValueError, match="smoothing"):
        experiments.sequence_loss(model, batch, smoothing=1.0)

    class Flat(nn.Module):
        def forward(self, src, src_len, tgt_in):
            return torch.zeros(src.shape[0], 7)

    with pytest.raises(ValueError, match=r"logits \(N, L, V\)"):
        experiments.sequence_loss(Flat(), batch)


# --------------------------------------------------------------------------- translate
def test_translate_is_batched_greedy_and_restores_train_mode():
    model = small_model(3)
    model.train()
    sources = ["abc", "j", "hhhhh"]
    got = experiments.translate(model, sources, LETTERS, LETTERS, max_len=6)
    assert model.training
    model.eval()
    for source, out in zip(sources, got, strict=True):
        batch = encode_pairs([(source, "")], LETTERS, LETTERS)
        one = greedy(model.decoder_step(), model.encode(batch.src, batch.src_len), batch_size=1, max_len=6)
        assert out == LETTERS.decode(one[0])
    assert experiments.translate(CopyOracle(len(LETTERS)), sources, LETTERS, LETTERS, 8) == sources


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        (("abc", LETTERS, LETTERS, 5), ValueError, "sources"),
        (([], LETTERS, LETTERS, 5), ValueError, "sources"),
        ((["abc", 3], LETTERS, LETTERS, 5), ValueError, "sources"),
        ((["abc"], "abc", LETTERS, 5), TypeError, "src_vocab"),
        ((["abc"], LETTERS, LETTERS, 0), ValueError, "max_len"),
    ],
)
def test_translate_errors(args, error, match):
    with pytest.raises(error, match=match):
        experiments.translate(small_model(), *args)
    with pytest.raises(TypeError, match="model"):
        experiments.translate(nn.Linear(2, 2), ["abc"], LETTERS, LETTERS, 5)


# --------------------------------------------------------------------------- exact_match_eval
def test_exact_match_eval_scores_greedy_outputs():
    pairs = [("abcdefg", "abcdefg"), ("hgfedcba", "hgfedcba"), ("fghijab", "fghijax"), ("ijij", "jiji")]
    scores = experiments.exact_match_eval(pairs, LETTERS, LETTERS, bleu=True)(CopyOracle(len(LETTERS)))
    assert scores["exact_match"] == pytest.approx(0.5)
    assert 0 < scores["bleu"] < 100 and 0 < scores["chrf"] < 100
    assert set(experiments.exact_match_eval(pairs, LETTERS, LETTERS)(small_model())) == {"exact_match"}


def test_exact_match_eval_errors():
    with pytest.raises(ValueError, match="pairs"):
        experiments.exact_match_eval([], LETTERS, LETTERS)
    with pytest.raises(TypeError, match="pairs"):
        experiments.exact_match_eval([("a", 1)], LETTERS, LETTERS)
    with pytest.raises(TypeError, match="tgt_vocab"):
        experiments.exact_match_eval([("a", "a")], LETTERS, None)


# --------------------------------------------------------------------------- target_log_probs
def test_target_log_probs_sum_the_teacher_forced_steps():
    model, pairs = small_model(4), [("abc", "cba"), ("d", "dddd")]
    got = experiments.target_log_probs(model, pairs, LETTERS, LETTERS)
    model.eval()
    for row, (source, target) in enumerate(pairs):
        batch = encode_pairs([(source, target)], LETTERS, LETTERS)
        state, total = model.encode(batch.src, batch.src_len), 0.0
        step = model.decoder_step()
        for t in range(batch.tgt_in.shape[1]):
            log_probs, state = step(batch.tgt_in[:, t], state)
            total += log_probs[0, batch.tgt_out[0, t]].item()
        assert got[row].item() == pytest.approx(total, abs=1e-4)
    oracle = experiments.target_log_probs(CopyOracle(len(LETTERS), 0.9), [("abc", "abc")], LETTERS, LETTERS)
    assert oracle.item() == pytest.approx(4 * math.log(0.9), abs=1e-5)  # three letters and EOS


# --------------------------------------------------------------------------- beam_eval
def test_beam_eval_width_one_is_greedy_and_counts_the_cost():
    model = small_model(5)
    pairs = [("abc", "abc"), ("hij", "hij"), ("aaaa", "aaaa")]
    rows = experiments.beam_eval(model, pairs, LETTERS, LETTERS, beam_sizes=[1, 3], alphas=[0.0, 1.0])
    assert [(r["beam_size"], r["alpha"]) for r in rows] == [(1, 0.0), (1, 1.0), (3, 0.0), (3, 1.0)]
    greedy_out = experiments.translate(model, [s for s, _ in pairs], LETTERS, LETTERS, max_len=7)
    assert rows[0]["outputs"] == greedy_out
    for r in rows:
        assert 1 <= r["calls"] <= 7  # one batched call per step, at most max_len steps
        assert 1 <= r["hypotheses"] <= 1 + r["beam_size"] * 6
        assert 0 <= r["exact_match"] <= 1 and r["ms"] > 0
    # width 1: one hypothesis per generated token, EOS included
    assert rows[0]["hypotheses"] == pytest.approx(sum(min(len(o) + 1, 7) for o in greedy_out) / 3)
    oracle = experiments.beam_eval(CopyOracle(len(LETTERS)), pairs, LETTERS, LETTERS, [2])
    assert oracle[0]["exact_match"] == 1.0 and oracle[0]["mean_length"] == pytest.approx(10 / 3)


def test_beam_eval_errors():
    pairs = [("abc", "abc")]
    with pytest.raises(ValueError, match="beam_sizes"):
        experiments.beam_eval(small_model(), pairs, LETTERS, LETTERS, beam_sizes=3)
    with pytest.raises(ValueError, match="alphas"):
        experiments.beam_eval(small_model(), pairs, LETTERS, LETTERS, [3], alphas=[])
    with pytest.raises(ValueError, match="beam_size"):
        experiments.beam_eval(small_model(), pairs, LETTERS, LETTERS, [0])


def test_the_plumbing_trains_a_model_end_to_end():
    from seqlab.train import fit

    train = experiments.copy_pairs([3], 200, "train", vocab=3)
    vocab = text.Vocab("abc")
    model = Seq2Seq(len(vocab), len(vocab), embed_size=8, hidden_size=32, attention="additive")
    torch.manual_seed(0)
    history = fit(
        model,
        encode_pairs(train, vocab, vocab),
        experiments.sequence_loss,
        steps=60,
        lr=1e-2,
        batch_size=32,
        eval_fn=experiments.exact_match_eval(train[:20], vocab, vocab),
        eval_every=30,
        device="cpu",
        progress=False,
    )
    assert isinstance(encode_pairs(train, vocab, vocab), Seq2SeqBatch)
    assert history.loss[-1] < history.loss[0] and "exact_match" in history.evals[-1][1]


# --------------------------------------------------------------------------- forced_exact_match_eval
def test_forced_exact_match_eval_is_greedy_decodings_score():
    from seqlab.data import number_words_task
    from seqlab.train import fit
    from seqlab.transformer import Transformer

    pairs = [("abcdefg", "abcdefg"), ("hgfedcba", "hgfedcba"), ("fghijab", "fghijax"), ("ijij", "jiji")]
    oracle = CopyOracle(len(LETTERS))
    forced = experiments.forced_exact_match_eval(pairs, LETTERS, LETTERS)(oracle)
    assert forced == experiments.exact_match_eval(pairs, LETTERS, LETTERS)(oracle) == {"exact_match": 0.5}
    # partly trained models of both kinds, scored both ways on pairs they get partly right
    train = number_words_task(600, split="train", max_value=99)
    held_out = number_words_task(60, split="test", max_value=99)
    src_vocab, tgt_vocab = text.joint_vocabs(train, src_level="word", tgt_level="char")
    scores = []
    for make in (
        lambda: Seq2Seq(len(src_vocab), len(tgt_vocab), embed_size=16, hidden_size=32, attention="dot",
                        style="luong"),
        lambda: Transformer(len(src_vocab), len(tgt_vocab), d_model=32, nhead=2, dim_feedforward=64,
                            num_encoder_layers=1, num_decoder_layers=1, impl="torch"),
    ):  # fmt: skip
        torch.manual_seed(0)
        model = make()
        for steps in (0, 150):
            if steps:
                fit(model, encode_pairs(train, src_vocab, tgt_vocab), experiments.sequence_loss, steps=steps,
                    lr=1e-2, batch_size=32, device="cpu", progress=False)  # fmt: skip
            mode = model.training
            greedy_score = experiments.exact_match_eval(held_out, src_vocab, tgt_vocab)(model)
            forced_score = experiments.forced_exact_match_eval(held_out, src_vocab, tgt_vocab)(model)
            assert forced_score == greedy_score, (type(model).__name__, steps)
            assert model.training == mode  # scored in evaluation mode, then put back
            scores.append(greedy_score["exact_match"])
    assert max(scores) > 0.1 and min(scores) < max(scores)  # not all 0 or all 1: the test can fail


def test_forced_exact_match_eval_unknown_tokens_and_errors():
    vocab = Vocab("abc")
    # "d" is not in the vocabulary: decoding can never write it, so the pair is a miss
    pairs = [("abc", "abc"), ("abd", "abd")]
    got = experiments.forced_exact_match_eval(pairs, vocab, vocab)(CopyOracle(len(vocab)))
    assert (
        got
        == experiments.exact_match_eval(pairs, vocab, vocab)(CopyOracle(len(vocab)))
        == {"exact_match": 0.5}
    )
    with pytest.raises(ValueError, match="pairs"):
        experiments.forced_exact_match_eval([], LETTERS, LETTERS)
    with pytest.raises(TypeError, match="src_vocab"):
        experiments.forced_exact_match_eval([("a", "a")], None, LETTERS)
    with pytest.raises(TypeError, match="model"):
        experiments.forced_exact_match_eval([("a", "a")], LETTERS, LETTERS)(nn.Linear(2, 2))
