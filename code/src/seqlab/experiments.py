"""The plumbing of the sequence-to-sequence experiments, so that a chapter shows one call.

The translation-style chapters train a model that maps a source string to a target string and
score it by exact match on held-out pairs. A model fits if it has ``forward(src, src_len,
tgt_in)`` returning logits (N, L, V) (or a tuple, logits first), ``encode(src, src_len) -> state``
and ``decoder_step()`` (``seqlab.decoding``), as ``Seq2Seq`` and ``Transformer`` do.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from . import data, metrics
from .checks import check_int
from .decoding import CountingStep, beam_search_batch, greedy
from .text import PAD, UNK, Seq2SeqBatch, Vocab, encode_pairs
from .utils import eval_mode

__all__ = [
    "copy_pairs", "sequence_loss", "translate", "exact_match_eval", "forced_exact_match_eval",
    "target_log_probs", "beam_eval",
]  # fmt: skip

Pairs = Sequence[tuple[str, str]]


def _check_pairs(pairs: Pairs) -> None:
    if isinstance(pairs, str) or not isinstance(pairs, Sequence) or not pairs:
        raise ValueError("pairs must be a non-empty list of (source, target) string pairs")
    bad = [
        p for p in pairs if not (isinstance(p, tuple) and len(p) == 2 and all(isinstance(s, str) for s in p))
    ]
    if bad:
        raise TypeError(f"pairs must hold (source, target) string pairs, got {bad[0]!r}")


def _check_vocabs(**vocabs: object) -> None:
    for name, vocab in vocabs.items():
        if not isinstance(vocab, Vocab):
            raise TypeError(f"{name} must be a seqlab.text.Vocab, got {type(vocab).__name__}")


def _check_model(model: object) -> None:
    missing = [name for name in ("encode", "decoder_step") if not hasattr(model, name)]
    if not isinstance(model, nn.Module) or missing:
        raise TypeError(
            f"model must be an nn.Module with encode() and decoder_step(), got {type(model).__name__}"
            + (f" without {missing}" if missing else "")
        )


def copy_pairs(
    lengths: Sequence[int], per_length: int, split: str, vocab: int = 10, seed: int = 0
) -> list[tuple[str, str]]:
    """``per_length`` copy-task pairs ``(s, s)`` of each length, over ``vocab`` letters a, b, ...
    (drawn by ``seqlab.data.sequence_task``, so the splits never overlap)."""
    if (
        isinstance(lengths, int)
        or not lengths
        or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in lengths)
    ):
        raise ValueError(f"lengths must be a non-empty list of ints >= 1, got {lengths!r}")
    check_int("per_length", per_length)
    if not 1 <= vocab <= 26:
        raise ValueError(f"vocab must lie in 1..26 (letters a..z), got {vocab}")
    pairs = []
    for length in lengths:
        x, _ = data.sequence_task(per_length, length, kind="copy", vocab=vocab, split=split, seed=seed)
        pairs += [("".join(chr(97 + v) for v in row.tolist()),) * 2 for row in x]
    return pairs


def sequence_loss(model: nn.Module, batch: Seq2SeqBatch, smoothing: float = 0.0) -> torch.Tensor:
    """Teacher-forced cross-entropy (label ``smoothing`` as ``F.cross_entropy``'s), averaged over the
    non-padding targets of ``batch`` (src (N, S), src_len (N,), tgt_in (N, L), tgt_out (N, L))."""
    if not isinstance(batch, Seq2SeqBatch):
        raise TypeError(f"batch must be a seqlab.text.Seq2SeqBatch, got {type(batch).__name__}")
    if isinstance(smoothing, bool) or not isinstance(smoothing, (int, float)) or not 0 <= smoothing < 1:
        raise ValueError(f"smoothing must be a number in [0, 1), got {smoothing!r}")
    out = model(batch.src, batch.src_len, batch.tgt_in)
    logits = out[0] if isinstance(out, tuple) else out  # (N, L, V)
    if logits.dim() != 3 or logits.shape[:2] != batch.tgt_out.shape:
        raise ValueError(
            f"model must return logits (N, L, V) = {tuple(batch.tgt_out.shape)} + (V,), "
            f"got {tuple(logits.shape)}"
        )
    return F.cross_entropy(
        logits.flatten(0, 1), batch.tgt_out.flatten(), ignore_index=PAD, label_smoothing=smoothing
    )


@torch.no_grad()
def translate(
    model: nn.Module, sources: Sequence[str], src_vocab: Vocab, tgt_vocab: Vocab, max_len: int, device=None
) -> list[str]:
    """Greedy translations of ``sources``, decoded in one batch on ``device`` (None: the model's)."""
    if isinstance(sources, str) or not sources or not all(isinstance(s, str) for s in sources):
        raise ValueError("sources must be a non-empty list of strings")
    _check_model(model)
    _check_vocabs(src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    check_int("max_len", max_len)
    if device is None:
        device = next(model.parameters()).device
    batch = encode_pairs([(s, "") for s in sources], src_vocab, tgt_vocab)
    with eval_mode(model):
        state = model.encode(batch.src.to(device), batch.src_len.to(device))
        out = greedy(model.decoder_step(), state, batch_size=len(sources), max_len=max_len)
    return [tgt_vocab.decode(row) for row in out]


def exact_match_eval(
    pairs: Pairs, src_vocab: Vocab, tgt_vocab: Vocab, *, bleu: bool = False, device=None
) -> Callable[[nn.Module], dict[str, float]]:
    """An ``eval_fn`` for ``fit``: ``model -> {"exact_match": ...}`` of greedy decoding, plus
    character-level ``"bleu"`` and ``"chrf"`` with ``bleu``."""
    _check_pairs(pairs)
    _check_vocabs(src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    sources = [s for s, _ in pairs]
    references = [t for _, t in pairs]
    max_len = max(len(tgt_vocab.encode(t)) for t in references) + 3

    def evaluate(model: nn.Module) -> dict[str, float]:
        predictions = translate(model, sources, src_vocab, tgt_vocab, max_len, device=device)
        result = {"exact_match": metrics.exact_match(predictions, references)}
        if bleu:
            result["bleu"] = metrics.corpus_bleu(predictions, references, tokenize="char")
            result["chrf"] = metrics.corpus_chrf(predictions, references)
        return result

    return evaluate


def forced_exact_match_eval(
    pairs: Pairs, src_vocab: Vocab, tgt_vocab: Vocab, *, device=None
) -> Callable[[nn.Module], dict[str, float]]:
    """An ``eval_fn`` for ``fit``: ``model -> {"exact_match": ...}`` of greedy decoding, read off one
    teacher-forced pass instead of decoding step by step.

    Greedy decoding writes a reference exactly if and only if, fed the reference's own prefix, the
    model's most likely next token is the reference's at every position, EOS included: then each
    step's argmax is the reference token, and the next step sees the same prefix as under teacher
    forcing. So ``exact_match_eval``'s score is the share of rows whose teacher-forced argmax is
    right everywhere, and one forward pass (N, L, V) gives it. The two differ only where a model
    predicts PAD or BOS (never a training target; counted as a miss here, skipped by ``decode``)
    or where two logits tie to rounding, which the step-by-step and full-sequence paths can break
    differently. A reference with a token outside ``tgt_vocab`` is a miss, as decoding it is."""
    _check_pairs(pairs)
    _check_vocabs(src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    batch = encode_pairs(list(pairs), src_vocab, tgt_vocab)
    unknown = (batch.tgt_out == UNK).any(dim=1)  # (N,) references that decoding cannot write

    def evaluate(model: nn.Module) -> dict[str, float]:
        _check_model(model)
        where = device if device is not None else next(model.parameters()).device
        with eval_mode(model), torch.no_grad():
            out = model(batch.src.to(where), batch.src_len.to(where), batch.tgt_in.to(where))
        logits = out[0] if isinstance(out, tuple) else out  # (N, L, V)
        predicted, target = logits.argmax(dim=-1).cpu(), batch.tgt_out  # (N, L) each
        right = (predicted == target) | (target == PAD)  # positions after EOS do not count
        exact = right.all(dim=1) & ~unknown
        return {"exact_match": int(exact.sum()) / len(exact)}

    return evaluate


@torch.no_grad()
def target_log_probs(model, pairs: Pairs, src_vocab: Vocab, tgt_vocab: Vocab, device=None) -> torch.Tensor:
    """log p(y | x) = sum_t log p(y_t | y_<t, x) of every target (EOS included): (N,) float on the
    CPU. A reference scoring above the decoded output means a search error, else a model error."""
    _check_model(model)
    _check_pairs(pairs)
    _check_vocabs(src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    if device is None:
        device = next(model.parameters()).device
    batch = encode_pairs(list(pairs), src_vocab, tgt_vocab)
    with eval_mode(model):
        out = model(batch.src.to(device), batch.src_len.to(device), batch.tgt_in.to(device))
    logits = out[0] if isinstance(out, tuple) else out  # (N, L, V)
    target = batch.tgt_out.to(device)
    picked = logits.log_softmax(-1).gather(-1, target.unsqueeze(-1)).squeeze(-1)  # (N, L)
    return picked.masked_fill(target == PAD, 0.0).sum(1).float().cpu()


@torch.no_grad()
def beam_eval(
    model: nn.Module, pairs: Pairs, src_vocab: Vocab, tgt_vocab: Vocab, beam_sizes: Sequence[int],
    alphas: Sequence[float] = (0.0,), device=None,
) -> list[dict]:  # fmt: skip
    """Beam-search the sources of ``pairs`` for each beam size and alpha: a row each, with
    ``exact_match``, ``mean_length`` (characters), ``hypotheses`` (scored per sequence), ``calls``
    (for the whole set), ``ms`` (wall, per sequence) and the ``outputs``."""
    _check_model(model)
    _check_pairs(pairs)
    _check_vocabs(src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    if isinstance(beam_sizes, int) or not beam_sizes:
        raise ValueError(f"beam_sizes must be a non-empty list of ints >= 1, got {beam_sizes!r}")
    if isinstance(alphas, (int, float)) or not alphas:
        raise ValueError(f"alphas must be a non-empty list of numbers >= 0, got {alphas!r}")
    if device is None:
        device = next(model.parameters()).device
    sources = [s for s, _ in pairs]
    references = [t for _, t in pairs]
    max_len = max(len(tgt_vocab.encode(t)) for t in references) + 3
    batch = encode_pairs([(s, "") for s in sources], src_vocab, tgt_vocab)
    with eval_mode(model):
        states = model.encode(batch.src.to(device), batch.src_len.to(device))
        rows = []
        for k in beam_sizes:
            for alpha in alphas:
                counted = CountingStep(model.decoder_step())
                began = time.perf_counter()
                results = beam_search_batch(
                    counted, states, len(sources), beam_size=k, max_len=max_len, alpha=alpha
                )
                outputs = [tgt_vocab.decode(hypotheses[0][0]) for hypotheses in results]
                seconds = time.perf_counter() - began
                rows.append({
                    "beam_size": k, "alpha": alpha, "exact_match": metrics.exact_match(outputs, references),
                    "mean_length": sum(map(len, outputs)) / len(outputs), "calls": counted.calls,
                    "hypotheses": counted.rows / len(outputs), "ms": 1e3 * seconds / len(outputs),
                    "outputs": outputs,
                })  # fmt: skip
    return rows
