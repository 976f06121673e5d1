import itertools
import math

import pytest
import torch

from seqlab.decoding import beam_search, greedy, select_state
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
