import itertools
import math

import pytest
import torch

from seqlab.decoding import CountingStep, beam_search, beam_search_batch, greedy, select_state
from seqlab.text import BOS, EOS

V = 5  # 0 pad, 1 bos, 2 eos, 3 and 4 content


def markov_step(table):
    """A toy model whose next-token distribution depends on the last token only."""
    log_table = torch.log(torch.as_tensor(table, dtype=torch.float64))

    def step(tokens, state):
        return log_table[tokens], state

    return step


def random_table(seed):
    gen = torch.Generator().manual_seed(seed)
    table = torch.rand(V, V, generator=gen, dtype=torch.float64) + 0.05
    table[:, :2] = 0  # never produce pad or bos
    return table / table.sum(1, keepdim=True)


def brute_force(table, max_len, alpha):
    log_table = torch.log(torch.as_tensor(table))
    best = (None, -math.inf)
    for length in range(1, max_len + 1):
        for body in itertools.product([2, 3, 4], repeat=length):
            if EOS in body[:-1] or (body[-1] != EOS and length < max_len):
                continue
            score, last = 0.0, BOS
            for token in body:
                score += log_table[last, token].item()
                last = token
            score /= length**alpha
            if score > best[1]:
                best = (list(body), score)
    return best


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_wide_beam_equals_exhaustive_search(seed, alpha):
    table = random_table(seed)
    results = beam_search(markov_step(table), None, beam_size=64, max_len=5, alpha=alpha)
    tokens, score = results[0]
    best_tokens, best_score = brute_force(table, 5, alpha)
    assert tokens.tolist() == best_tokens and score == pytest.approx(best_score)
    assert [s for _, s in results] == sorted((s for _, s in results), reverse=True)


@pytest.mark.parametrize("seed", range(4))
def test_beam_of_one_is_greedy(seed):
    table = random_table(seed)
    greedy_tokens = greedy(markov_step(table), None, batch_size=1, max_len=6)[0]
    beam_tokens = beam_search(markov_step(table), None, beam_size=1, max_len=6)[0][0]
    end = (greedy_tokens == EOS).nonzero()
    cut = int(end[0]) + 1 if len(end) else len(greedy_tokens)
    assert beam_tokens.tolist() == greedy_tokens[:cut].tolist()


def test_beam_search_can_undo_a_greedy_choice():
    table = torch.zeros(V, V, dtype=torch.float64)
    table[BOS] = torch.tensor([0, 0, 0.0, 0.6, 0.4])  # greedy takes 3 ...
    table[3] = torch.tensor([0, 0, 0.34, 0.33, 0.33])  # ... after which nothing is likely
    table[4] = torch.tensor([0, 0, 1.0, 0.0, 0.0])  # 4 then EOS: p = 0.4 beats 0.6 * 0.34
    greedy_tokens = greedy(markov_step(table), None, batch_size=1, max_len=2)[0].tolist()
    best, score = beam_search(markov_step(table), None, beam_size=2, max_len=2)[0]
    assert greedy_tokens == [3, EOS] and best.tolist() == [4, EOS]
    assert score == pytest.approx(math.log(0.4))


def test_greedy_batches_and_pads_after_eos():
    table = random_table(0)

    def step(tokens, state):  # two rows: row 1 is forced to stop at once
        log_probs = torch.log(torch.as_tensor(table))[tokens].clone()
        log_probs[1] = torch.tensor([-1e9, -1e9, 0.0, -1e9, -1e9])
        return log_probs, state

    out = greedy(step, None, batch_size=2, max_len=4)
    assert out[1, 0] == EOS and (out[1, 1:] == 0).all()


def test_state_is_selected_with_the_beams():
    def step(tokens, state):  # the state counts steps; a wrong selection would scramble it
        counts = state["count"] + 1
        log_probs = torch.full((tokens.shape[0], V), -10.0)
        log_probs[:, 3] = -0.1 * counts
        log_probs[:, EOS] = torch.where(counts >= 3, 0.0, -20.0)
        return log_probs, {"count": counts}

    tokens, _ = beam_search(step, {"count": torch.zeros(1)}, beam_size=3, max_len=6)[0]
    assert tokens.tolist() == [3, 3, EOS]
    assert select_state((torch.arange(3), None), torch.tensor([2, 0]))[0].tolist() == [2, 0]
    with pytest.raises(TypeError):
        select_state(3, torch.tensor([0]))


def test_bad_step_output_is_a_clear_error():
    with pytest.raises(ValueError, match=r"\(1, V\)"):
        greedy(lambda tokens, state: (torch.zeros(V), state), None, batch_size=1, max_len=2)
    with pytest.raises(ValueError, match="NaN"):
        beam_search(
            lambda tokens, state: (torch.full((1, V), float("nan")), state), None, beam_size=2, max_len=2
        )


# --------------------------------------------------------------------------- devices and dtypes
def device_checking_step(table, expect_device):
    """A Markov step that asserts the tokens it receives: int64, on ``expect_device``, never
    copied through the host; it returns log-probabilities on the CPU."""
    log_table = torch.log(torch.as_tensor(table))
    seen = []

    def step(tokens, state):
        assert tokens.dtype == torch.long, tokens.dtype
        assert tokens.device.type == expect_device[0], (tokens.device, expect_device)
        seen.append(tokens.device.type)
        expect_device[0] = "cpu"  # from now on: where the log-probabilities were
        if tokens.device.type == "meta":  # meta tensors hold no values: the first input is BOS
            return log_table[BOS].expand(tokens.shape[0], -1), state
        return log_table[tokens], state

    return step, seen


def test_greedy_feeds_tokens_on_the_given_device_then_where_the_model_answers():
    expect = ["meta"]
    step, seen = device_checking_step(random_table(0), expect)
    out = greedy(step, None, batch_size=2, max_len=4, device="meta")
    assert seen[0] == "meta" and set(seen[1:]) <= {"cpu"} and out.dtype == torch.long


def test_tokens_follow_the_state_device_and_are_never_copied_to_the_host(monkeypatch):
    table = random_table(1)
    log_table = torch.log(torch.as_tensor(table))
    received = []

    def step(tokens, state):
        received.append((tokens.device, tokens.dtype))
        assert tokens.device == state["s"].device
        return log_table[tokens], {"s": state["s"] + 1}

    def refuse(self, *args, **kwargs):
        raise AssertionError("decoding copied a tensor to the host with .cpu()")

    monkeypatch.setattr(torch.Tensor, "cpu", refuse)
    greedy(step, {"s": torch.zeros(3, 2)}, batch_size=3, max_len=5)
    beam_search(step, {"s": torch.zeros(1, 2)}, beam_size=3, max_len=5, alpha=1.0)
    assert received and all(d == torch.device("cpu") and t == torch.long for d, t in received)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_tokens_stay_on_the_gpu():
    log_table = torch.log(torch.as_tensor(random_table(2))).cuda()

    def step(tokens, state):
        assert tokens.is_cuda and tokens.dtype == torch.long
        return log_table[tokens], state

    assert greedy(step, {"s": torch.zeros(2, 1, device="cuda")}, batch_size=2, max_len=5).is_cuda
    tokens, _ = beam_search(step, {"s": torch.zeros(1, 1, device="cuda")}, beam_size=3, max_len=5)[0]
    assert tokens.is_cuda


def test_counting_step_counts_calls_and_hypotheses():
    table = random_table(3)
    counted = CountingStep(markov_step(table))
    beam_search(counted, None, beam_size=4, max_len=5, alpha=1.0)
    # step 1 scores one hypothesis (BOS), later steps at most k each
    assert counted.calls <= 5 and 1 + 4 * (counted.calls - 1) >= counted.rows >= counted.calls
    counted = CountingStep(markov_step(table))
    out = greedy(counted, None, batch_size=3, max_len=5)
    assert counted.calls == out.shape[1] and counted.rows == 3 * counted.calls
    with pytest.raises(TypeError, match="step"):
        CountingStep(None)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda s: greedy(s, None, batch_size=0, max_len=2), ValueError, "batch_size"),
        (lambda s: greedy(s, None, batch_size=1, max_len=0), ValueError, "max_len"),
        (lambda s: greedy(s, None, batch_size=1, max_len=2.5), TypeError, "max_len must be an int"),
        (lambda s: greedy(s, None, batch_size=1, max_len=2, eos=-1), ValueError, "eos"),
        (lambda s: greedy(None, None, batch_size=1, max_len=2), TypeError, "step"),
        (lambda s: greedy(s, "state", batch_size=1, max_len=2), TypeError, "state"),
        (
            lambda s: greedy(s, {"h": torch.zeros(3, 4)}, batch_size=2, max_len=2),
            ValueError,
            r"2 row.*\(3, 4\)",
        ),
        (lambda s: beam_search(s, None, beam_size=0, max_len=2), ValueError, "beam_size"),
        (lambda s: beam_search(s, None, beam_size=2, max_len=-1), ValueError, "max_len"),
        (lambda s: beam_search(s, None, beam_size=2, max_len=2, alpha=-1.0), ValueError, "alpha"),
        (lambda s: beam_search(s, None, beam_size=2, max_len=2, alpha=float("nan")), ValueError, "alpha"),
        (lambda s: beam_search(s, torch.zeros(2, 3), beam_size=2, max_len=2), ValueError, "1 row"),
        (lambda s: beam_search(s, None, beam_size=2, max_len=2, bos=1.5), TypeError, "bos must be an int"),
    ],
)
def test_bad_arguments_name_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call(markov_step(random_table(0)))


def test_integer_log_probs_are_a_type_error():
    with pytest.raises(TypeError, match="floating-point"):
        greedy(lambda tokens, state: (torch.zeros(1, V, dtype=torch.long), state), None, 1, 2)


# --------------------------------------------------------------------------- batched beam search
def biased_markov_step(table):
    """A Markov model whose distribution also depends on the input, through state["bias"] (N, V)."""
    log_table = torch.log(torch.as_tensor(table))

    def step(tokens, state):
        return (log_table[tokens] + state["bias"]).log_softmax(-1), state

    return step


def _finite(hypotheses):
    return [(tokens.tolist(), round(score, 6)) for tokens, score in hypotheses if math.isfinite(score)]


@pytest.mark.parametrize("beam_size", [1, 2, 3, 5])
@pytest.mark.parametrize("alpha", [0.0, 0.7, 1.0])
def test_batched_beam_search_equals_beam_search_input_by_input(beam_size, alpha):
    table = random_table(beam_size)
    gen = torch.Generator().manual_seed(beam_size)
    bias = 2 * torch.randn(6, V, generator=gen, dtype=torch.float64)
    step = biased_markov_step(table)
    batched = beam_search_batch(step, {"bias": bias}, 6, beam_size=beam_size, max_len=6, alpha=alpha)
    for n in range(6):
        alone = beam_search(step, {"bias": bias[n : n + 1]}, beam_size=beam_size, max_len=6, alpha=alpha)
        assert _finite(batched[n]) == _finite(alone), n


@pytest.mark.parametrize("attention", [None, "additive"])
def test_batched_beam_search_on_a_seq2seq_model(attention):
    from seqlab.seq2seq import Seq2Seq

    torch.manual_seed(0)
    model = Seq2Seq(9, 7, embed_size=8, hidden_size=16, attention=attention).eval()
    src = torch.randint(4, 9, (4, 5))
    src_len = torch.tensor([5, 3, 4, 1])
    state = model.encode(src, src_len)
    counted = CountingStep(model.decoder_step())
    batched = beam_search_batch(counted, state, 4, beam_size=3, max_len=7, alpha=1.0)
    rows_alone = 0
    for n in range(4):
        alone_step = CountingStep(model.decoder_step())
        one = model.encode(src[n : n + 1], src_len[n : n + 1])
        alone = beam_search(alone_step, one, beam_size=3, max_len=7, alpha=1.0)
        rows_alone += alone_step.rows
        assert [t.tolist() for t, _ in batched[n]] == [t.tolist() for t, _ in alone]
        assert [s for _, s in batched[n]] == pytest.approx([s for _, s in alone], abs=1e-5)
    assert counted.rows == rows_alone  # the same hypotheses, run in fewer calls
    assert counted.calls <= 7


def test_batched_beam_search_errors():
    step = markov_step(random_table(0))
    with pytest.raises(ValueError, match="batch_size"):
        beam_search_batch(step, None, 0, beam_size=2, max_len=3)
    with pytest.raises(ValueError, match="beam_size"):
        beam_search_batch(step, None, 2, beam_size=0, max_len=3)
    with pytest.raises(ValueError, match="alpha"):
        beam_search_batch(step, None, 2, beam_size=2, max_len=3, alpha=-0.5)
    with pytest.raises(ValueError, match=r"3 row"):
        beam_search_batch(step, torch.zeros(2, 4), 3, beam_size=2, max_len=3)


# --------------------------------------------------------------------------- the readable loop
def random_model_step(seed, vocab, width=6):
    """A random recurrent toy model: the state (B, width) is updated from each token's embedding,
    and the log-probabilities depend on it, so a wrong state selection changes the outcome."""
    gen = torch.Generator().manual_seed(seed)
    embed = torch.randn(vocab, width, generator=gen)
    mix = torch.randn(width, width, generator=gen) / width**0.5
    out = 3 * torch.randn(width, vocab, generator=gen)

    def step(tokens, state):
        state = torch.tanh(state @ mix + embed[tokens])
        return (state @ out).log_softmax(-1), state

    return step, gen


@pytest.mark.parametrize("seed", range(40))
def test_readable_beam_search_equals_the_fast_one(seed):
    vocab = 4 + seed % 5
    step, gen = random_model_step(seed, vocab)
    batch = 1 + seed % 4
    state = torch.randn(batch, 6, generator=gen)
    k = 1 + seed % 5
    alpha = (0.0, 0.6, 1.0)[seed % 3]
    max_len = 2 + seed % 7
    fast = beam_search_batch(step, state, batch, beam_size=k, max_len=max_len, alpha=alpha, impl="fast")
    readable = beam_search_batch(
        step, state, batch, beam_size=k, max_len=max_len, alpha=alpha, impl="scratch"
    )
    for n in range(batch):
        one = beam_search(step, state[n : n + 1], beam_size=k, max_len=max_len, alpha=alpha, impl="scratch")
        for hypotheses in (readable[n], one):
            assert [t.tolist() for t, _ in hypotheses] == [t.tolist() for t, _ in fast[n]], (seed, n)
            assert [s for _, s in hypotheses] == [s for _, s in fast[n]], (seed, n)


@pytest.mark.parametrize("attention", [None, "additive"])
def test_readable_beam_search_on_a_seq2seq_model(attention):
    from seqlab.seq2seq import Seq2Seq

    for seed in range(3):
        torch.manual_seed(seed)
        model = Seq2Seq(9, 7, embed_size=8, hidden_size=16, attention=attention).eval()
        src = torch.randint(4, 9, (3, 5))
        state = model.encode(src, torch.tensor([5, 2, 4]))
        kwargs = dict(beam_size=3, max_len=8, alpha=1.0)
        fast = beam_search_batch(model.decoder_step(), state, 3, impl="fast", **kwargs)
        readable = beam_search_batch(model.decoder_step(), state, 3, impl="scratch", **kwargs)
        for f, r in zip(fast, readable, strict=True):
            assert [t.tolist() for t, _ in f] == [t.tolist() for t, _ in r]
            assert [s for _, s in f] == pytest.approx([s for _, s in r], abs=1e-5)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_wide_readable_beam_equals_exhaustive_search(seed, alpha):
    table = random_table(seed)
    tokens, score = beam_search(
        markov_step(table), None, beam_size=64, max_len=5, alpha=alpha, impl="scratch"
    )[0]
    best_tokens, best_score = brute_force(table, 5, alpha)
    assert tokens.tolist() == best_tokens and score == pytest.approx(best_score)


def test_beam_search_impl_is_checked():
    with pytest.raises(ValueError, match="impl"):
        beam_search(markov_step(random_table(0)), None, beam_size=2, max_len=3, impl="torch")
