"""The oracles of the language-model chapter's questions, checked against what they stand for: the
hidden references of min_p_mask against transformers' MinPLogitsWarper, of fewest_tokens against
trying every split, of wordpiece_pair against exact fractions; the public cases worked out by
hand (or built from their mask) against those references."""

import math
from fractions import Fraction

import pytest
import torch

from seqlab.exercises.harness import Question
from seqlab.exercises.questions import language_models as public

transformers = pytest.importorskip("transformers")


def hidden():
    return {q.name: q.with_hidden() for q in public.QUESTIONS}


def cases(question, public_side: bool):
    """Every case's arguments (and the declared result, for a question whose cases carry one)."""
    for label, make in question.cases(public_side):
        made = make()
        if question.oracle is None and question.judge is None:
            yield label, made[0], made[1]
        else:
            yield label, made, None


def warper_mask(logits, p_min, temperature):
    """The tokens transformers' temperature and min-p warpers leave finite, in float64 (no
    probability that these cases need underflows there)."""
    from transformers.generation.logits_process import MinPLogitsWarper, TemperatureLogitsWarper

    scores = TemperatureLogitsWarper(temperature)(None, logits.double())
    return MinPLogitsWarper(p_min, min_tokens_to_keep=1)(None, scores).isfinite()


def test_min_p_reference_equals_transformers_and_the_public_masks():
    reference = Question.named("min_p_mask").with_hidden().oracle
    checked = 0
    for side_public, question in ((True, Question.named("min_p_mask")), (False, hidden()["min_p_mask"])):
        for label, args, mask in cases(question, side_public):
            got = reference(*args)
            assert torch.equal(got, warper_mask(*args)), label
            if mask is not None:
                assert torch.equal(got, mask), label
            checked += 1
    assert checked >= 40


def test_min_p_public_edge_of_float32_underflow_catches_probabilities():
    """The edge the text names: float32 probabilities drop a token that min-p keeps."""
    (logits, p_min, temperature), mask = public.MIN_P.edges[
        "logits 125 below the top (float32), p_min = 1e-60"
    ]()
    probs = (logits / temperature).softmax(dim=-1)
    assert not torch.equal(probs >= p_min * probs.amax(dim=-1, keepdim=True), mask)


def every_split(word, vocab):
    if not word:
        yield []
        return
    for j in range(1, len(word) + 1):
        if word[:j] in vocab:
            for rest in every_split(word[j:], vocab):
                yield [word[:j], *rest]


def test_fewest_tokens_reference_equals_trying_every_split():
    question = hidden()["fewest_tokens"]
    checked = 0
    for side_public, q in ((True, Question.named("fewest_tokens")), (False, question)):
        for label, (word, vocab), tokens in cases(q, side_public):
            best = min(every_split(word, vocab), key=lambda s: (len(s), [-len(t) for t in s]))
            assert question.oracle(word, vocab) == best, label
            if tokens is not None:
                assert tokens == best, label
            checked += 1
    assert checked >= 30


def wordpiece_by_fractions(table):
    """Every pair's score as a Fraction, the best by comparing them (no cross-multiplying)."""
    words = [(word, n) for word, n in table.items()]
    tokens = {t for word, _ in words for t in word}
    count = {t: sum(n * word.count(t) for word, n in words) for t in tokens}
    pairs = {}
    for word, n in words:
        for i in range(len(word) - 1):
            pairs[word[i : i + 2]] = pairs.get(word[i : i + 2], 0) + n

    def key(p):
        return Fraction(pairs[p], count[p[0]] * count[p[1]]), pairs[p]

    best = max(key(p) for p in pairs)
    return min(p for p in pairs if key(p) == best)


def test_wordpiece_reference_equals_sorted_fractions_and_the_hand_worked_cases():
    question = hidden()["wordpiece_pair"]
    checked = 0
    for side_public, q in ((True, Question.named("wordpiece_pair")), (False, question)):
        for label, (table,), pair in cases(q, side_public):
            assert question.oracle(table) == wordpiece_by_fractions(table), label
            if pair is not None:
                assert pair == wordpiece_by_fractions(table), label
            checked += 1
    assert checked >= 30


def test_the_small_public_counts_match_their_formulas():
    for (N, T, layers, E), count in public.KV_KNOWN.items():
        assert count == 2 * N * T * layers * E
    for (ppl, chars), value in public.PER_CHAR_KNOWN.items():
        assert math.isclose(value, math.exp(math.log(ppl) / chars), rel_tol=1e-12)


def test_kv_cache_count_is_the_gpt_cache_size():
    """2 N T layers E is what the package's GPT holds in its caches after T tokens (3 heads)."""
    from seqlab.gpt import GPT

    N, T, layers, E = 3, 5, 2, 12
    model = GPT(vocab_size=11, d_model=E, nhead=3, num_layers=layers, context=16).eval()
    with torch.no_grad():
        _, state = model.extend(torch.randint(0, 11, (N, T)), model.start(N))
    held = sum(cache.k.numel() + cache.v.numel() for cache in state.caches)
    assert held == 2 * N * T * layers * E
