"""Turning a trained decoder into sequences: greedy decoding and beam search.

Both use any model through ``step(tokens, state) -> (log_probs, state)``: the last token of each
hypothesis (B,) and its state (a tensor, or a tuple, list or dict of tensors, hypotheses along
dimension 0) give the next token's log-probabilities (B, V) and the new state. ``greedy`` takes
y_t = argmax_v log p(v | y_<t, x); ``beam_search`` keeps the ``beam_size`` (k) prefixes of highest
summed log-probability, and ranks finished ones by ``log p(y | x) / |y| ** alpha`` (alpha = 0
favours short outputs). Beam search has two paths, chosen with ``impl``: ``"scratch"``,
``_beam_search_one``, the loop of the chapter's equations for one input at a time, and ``"fast"``,
``_beam_search``, which searches N inputs together with one model call per step; the tests prove
them equal. Tokens stay on the model's device. ``CountingStep`` counts the calls
and rows a search costs, a measure of decoding cost that does not depend on the machine's load.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from .checks import check_choice, check_int
from .text import BOS, EOS, PAD

__all__ = ["decoder_step", "select_state", "greedy", "beam_search", "beam_search_batch", "CountingStep"]

State = Any
Step = Callable[[torch.Tensor, State], tuple[torch.Tensor, State]]


def select_state(state: State, index: torch.Tensor) -> State:
    """The rows ``index`` of every tensor in ``state`` (a tensor, tuple, list, dict or None)."""
    if state is None:
        return None
    if isinstance(state, torch.Tensor):
        return state.index_select(0, index.to(state.device))
    if isinstance(state, (tuple, list)):
        rows = [select_state(s, index) for s in state]
        return type(state)(*rows) if hasattr(state, "_fields") else type(state)(rows)  # named tuples too
    if isinstance(state, dict):
        return {k: select_state(v, index) for k, v in state.items()}
    raise TypeError(f"cannot select rows of a state of type {type(state).__name__}")


def _tensors(state: State) -> list[torch.Tensor]:
    if isinstance(state, torch.Tensor):
        return [state]
    if isinstance(state, (tuple, list)):
        return [t for s in state for t in _tensors(s)]
    if isinstance(state, dict):
        return [t for s in state.values() for t in _tensors(s)]
    return []


def _state_device(state: State, device: str | torch.device | None) -> torch.device:
    """``device`` if given, else the device of the state's first tensor, else the CPU."""
    if device is not None:
        return torch.device(device)
    tensors = _tensors(state)
    return tensors[0].device if tensors else torch.device("cpu")


def decoder_step(model) -> Step:
    """``step(tokens, state) -> (log_probs, state)`` for a model whose ``model.step(tokens, state)``
    returns logits (N, V) and the new state first (``Seq2Seq`` and ``Transformer``'s method)."""

    def step(tokens: torch.Tensor, state: State) -> tuple[torch.Tensor, State]:
        logits, state = model.step(tokens.to(_state_device(state, None)), state)[:2]
        return logits.log_softmax(dim=-1), state

    return step


def _check_args(step: Step, state: State, rows: int, max_len: int, **token_ids: int) -> None:
    if not callable(step):
        raise TypeError(f"step must be a function step(tokens, state), got {type(step).__name__}")
    check_int("batch_size", rows), check_int("max_len", max_len)
    for name, value in token_ids.items():
        check_int(name, value, minimum=0)  # a token id
    if state is not None and not isinstance(state, (torch.Tensor, tuple, list, dict)):
        raise TypeError(f"state must be a tensor, tuple, list, dict or None, got {type(state).__name__}")
    wrong = [tuple(t.shape) for t in _tensors(state) if t.dim() > 0 and t.shape[0] != rows]
    if wrong:
        raise ValueError(f"state must hold {rows} row(s) along dimension 0, got tensors of shapes {wrong}")


def _check_log_probs(log_probs: torch.Tensor, rows: int) -> None:
    if not isinstance(log_probs, torch.Tensor) or not log_probs.is_floating_point():
        raise TypeError(f"step must return floating-point log-probabilities, got {log_probs!r:.60}")
    if log_probs.dim() != 2 or log_probs.shape[0] != rows:
        raise ValueError(
            f"step must return log-probabilities of shape ({rows}, V), got {tuple(log_probs.shape)}"
        )
    if torch.isnan(log_probs).any():
        raise ValueError("step returned NaN log-probabilities")


@torch.no_grad()
def greedy(
    step: Step,
    state: State,
    batch_size: int,
    max_len: int,
    bos: int = BOS,
    eos: int = EOS,
    pad: int = PAD,
    device: str | torch.device | None = None,
) -> torch.Tensor:
    """Greedy decoding of N = ``batch_size`` rows of ``state``: (N, T <= ``max_len``) token ids
    without BOS, each row ending at its first EOS, then ``pad``."""
    _check_args(step, state, batch_size, max_len, bos=bos, eos=eos, pad=pad)
    return _greedy(step, state, batch_size, max_len, bos, eos, pad, _state_device(state, device))


def _greedy(step, state, batch_size, max_len, bos, eos, pad, device) -> torch.Tensor:
    tokens = torch.full((batch_size,), bos, dtype=torch.long, device=device)  # y_0 = BOS
    done = None  # (N,) rows that have produced EOS, made where the model answers
    out = []
    for _ in range(max_len):
        log_probs, state = step(tokens, state)  # (N, V): log p(v | y_<t, x)
        _check_log_probs(log_probs, batch_size)
        tokens = log_probs.argmax(dim=-1)  # (N,): y_t, on the model's device
        if done is None:
            done = torch.zeros_like(tokens, dtype=torch.bool)
        tokens = tokens.masked_fill(done, pad)  # rows that have finished get padding
        out.append(tokens)
        done = done | (tokens == eos)
        if done.all():
            break
        tokens = tokens.masked_fill(done, eos)  # and are fed EOS from now on
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
    device: str | torch.device | None = None,
    impl: str = "fast",
) -> list[tuple[torch.Tensor, float]]:
    """Beam search for one input: up to ``beam_size`` ``(tokens (T,) without BOS, score)``, best
    first; hypotheses still alive at ``max_len`` are finished there. ``impl``: ``"scratch"`` (the
    readable loop, ``_beam_search_one``) or ``"fast"`` (the batched search); both return the same."""
    return beam_search_batch(step, state, 1, beam_size, max_len, alpha, bos, eos, device, impl)[0]


@torch.no_grad()
def beam_search_batch(
    step: Step,
    state: State,
    batch_size: int,
    beam_size: int,
    max_len: int,
    alpha: float = 0.0,
    bos: int = BOS,
    eos: int = EOS,
    device: str | torch.device | None = None,
    impl: str = "fast",
) -> list[list[tuple[torch.Tensor, float]]]:
    """``beam_search`` for each of N = ``batch_size`` inputs. ``impl="fast"``: one ``step`` call per
    position for all the alive hypotheses (grouped by input); ``impl="scratch"``: the readable
    loop, one input after the other."""
    impl = check_choice("impl", impl, ("scratch", "fast"))
    check_int("beam_size", beam_size)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 <= alpha < math.inf:
        raise ValueError(f"alpha must be a finite number >= 0, got {alpha!r}")
    _check_args(step, state, batch_size, max_len, bos=bos, eos=eos)
    dev = _state_device(state, device)
    if impl == "fast":
        return _beam_search(step, state, batch_size, beam_size, max_len, alpha, bos, eos, dev)
    return [
        _beam_search_one(
            step, select_state(state, torch.tensor([n])), beam_size, max_len, alpha, bos, eos, dev
        )
        for n in range(batch_size)
    ]


def _beam_search_one(
    step: Step,
    state: State,
    beam_size: int,
    max_len: int,
    alpha: float,
    bos: int,
    eos: int,
    device: torch.device,
) -> list[tuple[torch.Tensor, float]]:
    """Beam search for one input, as the equations read: ``state`` holds one row; returns up to
    ``beam_size`` (k) ``(tokens (T,) without BOS, log p / T ** alpha)``, best first."""
    prefixes = torch.full((1, 1), bos, dtype=torch.long, device=device)  # (W, t): live prefixes, BOS first
    scores = torch.zeros(1, device=device)  # (W,): log p(prefix | x) of each
    finished: list[tuple[torch.Tensor, float]] = []  # retired hypotheses, with normalised scores
    for t in range(1, max_len + 1):
        log_probs, state = step(prefixes[:, -1], state)  # (W, V): log p(v | prefix, x)
        _check_log_probs(log_probs, len(prefixes))
        prefixes, scores = prefixes.to(log_probs.device), scores.to(log_probs.device)
        vocab = log_probs.shape[1]
        # extend every live prefix by every token: log p of each extension, (W * V,)
        extensions = (scores[:, None] + log_probs.float()).flatten()
        # the 2k best, in order: up to k may end with EOS and still leave k that go on
        best, index = extensions.topk(min(2 * beam_size, len(extensions)))
        go_on = []  # positions in `best` of the (at most k) extensions kept alive
        for position, i in enumerate(index.tolist()):
            row, token = divmod(i, vocab)
            if token == eos or t == max_len:  # retire it, scored with length normalisation
                tokens = torch.cat([prefixes[row, 1:], index[position : position + 1] % vocab])
                finished.append((tokens, best[position].item() / len(tokens) ** alpha))
            else:
                go_on.append(position)
                if len(go_on) == beam_size:  # the k best that go on: the rest is dropped
                    break
        if not go_on:
            break
        kept = torch.tensor(go_on, device=index.device)
        rows = index[kept] // vocab  # the prefix each kept extension extends
        prefixes = torch.cat([prefixes[rows], (index[kept] % vocab)[:, None]], dim=1)
        scores, state = best[kept], select_state(state, rows)
        # with alpha = 0 a prefix's score only falls as it grows: stop once none can beat the
        # k-th finished hypothesis
        if alpha == 0 and len(finished) >= beam_size:
            if scores.max().item() < sorted(s for _, s in finished)[-beam_size]:
                break
    finished.sort(key=lambda pair: pair[1], reverse=True)
    return finished[:beam_size]


def _beam_search(step, state, batch_size, beam_size, max_len, alpha, bos, eos, dev):
    owner = torch.arange(batch_size, device=dev)  # (R,): the input each alive row belongs to
    alive = torch.full((batch_size, 1), bos, dtype=torch.long, device=dev)  # (R, t)
    scores = torch.zeros(batch_size, device=dev)  # (R,)
    finished: list[list[tuple[torch.Tensor, float]]] = [[] for _ in range(batch_size)]
    for t in range(1, max_len + 1):
        log_probs, state = step(alive[:, -1], state)  # (R, V)
        _check_log_probs(log_probs, alive.shape[0])
        dev = log_probs.device
        owner, alive, scores = owner.to(dev), alive.to(dev), scores.to(dev)
        vocab = log_probs.shape[1]
        # lay the rows out as (inputs still searching A, at most k rows W, V) to rank per input
        active, counts = owner.unique_consecutive(return_counts=True)  # (A,), (A,)
        start = counts.cumsum(0) - counts  # each input's first row
        group = torch.repeat_interleave(torch.arange(len(active), device=dev), counts)  # (R,)
        slot = torch.arange(len(owner), device=dev) - start[group]  # (R,): rank within the input
        width = int(counts.max())
        # the bracket of the top-k equation for every prefix and token, (A, W, V); -inf in empty slots
        candidates = torch.full((len(active), width, vocab), -math.inf, device=dev)
        candidates[group, slot] = scores[:, None] + log_probs.float()
        top_scores, top = candidates.flatten(1).topk(min(2 * beam_size, width * vocab), dim=1)  # (A, C)
        parent, tokens = top // vocab, top % vocab
        valid = parent < counts[:, None]  # not a padding slot
        rows = start[:, None] + parent  # (A, C): the global row of each candidate's prefix
        ends = valid if t == max_len else valid & (tokens == eos)
        goes_on = valid & ~ends
        rank = goes_on.cumsum(1)
        keep = goes_on & (rank <= beam_size)  # (A, C): the k best that go on, per input
        position = torch.arange(top.shape[1], device=dev)
        kth = torch.where(goes_on & (rank == beam_size), position, top.shape[1]).min(1).values
        record = ends & (position < kth[:, None])  # finished, ranked above the k-th kept
        a_done, c_done = record.nonzero(as_tuple=True)
        for a, c, score in zip(
            a_done.tolist(), c_done.tolist(), top_scores[a_done, c_done].tolist(), strict=True
        ):
            sequence = torch.cat([alive[rows[a, c], 1:], tokens[a, c : c + 1]])
            finished[int(active[a])].append((sequence, score / len(sequence) ** alpha))
        stop = ~keep.any(1)  # (A,): no hypothesis goes on
        if alpha == 0:
            best_alive = torch.where(keep, top_scores, -math.inf).max(1).values.tolist()
            for a, n in enumerate(active.tolist()):
                if len(finished[n]) >= beam_size:
                    kth_best = sorted((s for _, s in finished[n]), reverse=True)[beam_size - 1]
                    if best_alive[a] < kth_best:
                        stop[a] = True
        a_keep, c_keep = (keep & ~stop[:, None]).nonzero(as_tuple=True)  # grouped by input, best first
        if len(a_keep) == 0:
            break
        kept_rows = rows[a_keep, c_keep]
        alive = torch.cat([alive[kept_rows], tokens[a_keep, c_keep, None]], dim=1)
        scores, owner = top_scores[a_keep, c_keep], active[a_keep]
        state = select_state(state, kept_rows)
    for hypotheses in finished:
        hypotheses.sort(key=lambda pair: pair[1], reverse=True)
    return [hypotheses[:beam_size] for hypotheses in finished]


class CountingStep:
    """A step function that counts its ``calls`` and the hypotheses (``rows``) it scores."""

    def __init__(self, step: Step) -> None:
        if not callable(step):
            raise TypeError(f"step must be a function step(tokens, state), got {type(step).__name__}")
        self.step, self.calls, self.rows = step, 0, 0

    def __call__(self, tokens: torch.Tensor, state: State) -> tuple[torch.Tensor, State]:
        self.calls += 1
        self.rows += tokens.shape[0]
        return self.step(tokens, state)
