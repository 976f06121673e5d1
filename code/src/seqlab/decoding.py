"""Turning a trained decoder into sequences: greedy decoding and beam search.

Both work with any model through one function, ``step(tokens, state) -> (log_probs, state)``:
given the last token of each hypothesis (B,) and the model's state for each (any tensor, or a
tuple, list or dict of tensors, with the hypotheses along dimension 0), it returns the
log-probabilities of the next token (B, V) and the new state. An RNN decoder's state is its
hidden state; a Transformer's can be the prefix so far.

- ``greedy`` takes the most probable token at every step: fast, batched, and it can never undo
  a choice.
- ``beam_search`` keeps the ``beam_size`` best partial hypotheses at every step. Finished
  hypotheses are ranked by ``log p / length ** alpha``; with ``alpha = 0`` short outputs are
  favoured (every token costs probability), ``alpha = 1`` ranks by mean log-probability per token.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from .text import BOS, EOS, PAD

__all__ = ["select_state", "greedy", "beam_search"]

State = Any
Step = Callable[[torch.Tensor, State], tuple[torch.Tensor, State]]


def select_state(state: State, index: torch.Tensor) -> State:
    """The rows ``index`` of every tensor in ``state`` (a tensor, tuple, list, dict or None)."""
    if state is None:
        return None
    if isinstance(state, torch.Tensor):
        return state.index_select(0, index.to(state.device))
    if isinstance(state, (tuple, list)):
        return type(state)(select_state(s, index) for s in state)
    if isinstance(state, dict):
        return {k: select_state(v, index) for k, v in state.items()}
    raise TypeError(f"cannot select rows of a state of type {type(state).__name__}")


def _check_log_probs(log_probs: torch.Tensor, rows: int) -> None:
    if log_probs.dim() != 2 or log_probs.shape[0] != rows:
        raise ValueError(
            f"step must return log-probabilities of shape ({rows}, V), got {tuple(log_probs.shape)}"
        )
    if torch.isnan(log_probs).any():
        raise ValueError("step returned NaN log-probabilities")


@torch.no_grad()
def greedy(
    step: Step, state: State, batch_size: int, max_len: int, bos: int = BOS, eos: int = EOS, pad: int = PAD
) -> torch.Tensor:
    """Greedy decoding of a batch.

    Returns:
        (N, T) token ids without the BOS, T <= ``max_len``; each row ends at its first EOS
        (included) and is padded with ``pad`` after it.
    """
    if max_len < 1:
        raise ValueError(f"max_len must be >= 1, got {max_len}")
    tokens = torch.full((batch_size,), bos, dtype=torch.long)
    done = torch.zeros(batch_size, dtype=torch.bool)
    out = []
    for _ in range(max_len):
        log_probs, state = step(tokens, state)
        _check_log_probs(log_probs, batch_size)
        tokens = log_probs.argmax(dim=-1).cpu()
        tokens = torch.where(done, torch.full_like(tokens, pad), tokens)
        out.append(tokens)
        done |= tokens == eos
        if done.all():
            break
        tokens = torch.where(done, torch.full_like(tokens, eos), tokens)
    return torch.stack(out, dim=1)


@torch.no_grad()
def beam_search(
    step: Step,
    state: State,
    beam_size: int,
    max_len: int,
    alpha: float = 0.0,
    bos: int = BOS,
    eos: int = EOS,
) -> list[tuple[torch.Tensor, float]]:
    """Beam search for one input (``state`` has batch size 1).

    Args:
        step: the model, as described in the module docstring.
        state: the initial state for the single input.
        beam_size: k, the number of hypotheses kept alive at every step.
        max_len: the longest output (EOS included); hypotheses still alive then are finished.
        alpha: length normalisation, score = log p / length ** alpha.

    Returns:
        Up to ``beam_size`` finished hypotheses, best first: ``(tokens, score)`` with tokens the
        (T,) ids without BOS (ending with EOS unless cut at ``max_len``).
    """
    if beam_size < 1 or max_len < 1:
        raise ValueError(f"beam_size and max_len must be >= 1, got {beam_size}, {max_len}")
    alive = torch.full((1, 1), bos, dtype=torch.long)  # (B, t) with BOS first
    scores = torch.zeros(1)  # log-probability of each alive hypothesis
    finished: list[tuple[torch.Tensor, float]] = []
    for t in range(1, max_len + 1):
        log_probs, state = step(alive[:, -1], state)
        _check_log_probs(log_probs, alive.shape[0])
        log_probs = log_probs.float().cpu()
        vocab = log_probs.shape[1]
        candidates = (scores[:, None] + log_probs).flatten()  # (B * V,)
        top_scores, top = candidates.topk(min(2 * beam_size, candidates.numel()))
        keep_rows, keep_scores, keep_tokens = [], [], []
        for score, flat in zip(top_scores.tolist(), top.tolist(), strict=True):
            row, token = divmod(flat, vocab)
            if token == eos or t == max_len:
                sequence = torch.cat([alive[row, 1:], torch.tensor([token])])
                finished.append((sequence, score / len(sequence) ** alpha))
            else:
                keep_rows.append(row)
                keep_scores.append(score)
                keep_tokens.append(token)
            if len(keep_rows) == beam_size:
                break
        if not keep_rows:
            break
        if alpha == 0 and len(finished) >= beam_size:
            # with alpha = 0 a score can only fall as a hypothesis grows: stop once no alive
            # hypothesis can still enter the k best finished ones
            kth_best = sorted((s for _, s in finished), reverse=True)[beam_size - 1]
            if max(keep_scores) < kth_best:
                break
        rows = torch.tensor(keep_rows)
        alive = torch.cat([alive[rows], torch.tensor(keep_tokens)[:, None]], dim=1)
        scores = torch.tensor(keep_scores)
        state = select_state(state, rows)
    finished.sort(key=lambda pair: pair[1], reverse=True)
    return finished[:beam_size]
