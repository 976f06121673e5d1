"""The plumbing of the sequence-to-sequence experiments, so that a chapter shows one call.

Every translation-style chapter (seq2seq, Bahdanau, Luong, the Transformer) trains a model that
maps a source string to a target string and scores it by exact match on held-out pairs. What
they share lives here:

- ``copy_pairs``: (source, target) string pairs of the copy task at several lengths;
- ``sequence_loss``: teacher-forced cross-entropy over the target tokens, padding ignored;
- ``translate``: batched greedy decoding of a list of source strings;
- ``exact_match_eval``: an ``eval_fn`` for ``seqlab.train.fit`` that decodes held-out pairs and
  returns ``{"exact_match": ...}`` (and BLEU/chrF when asked).

A model fits if it has ``forward(src, src_len, tgt_in)`` returning logits (N, L, V) (or a tuple
whose first item is the logits), ``encode(src, src_len) -> state`` and ``decoder_step()`` as
``seqlab.decoding`` expects: ``seqlab.seq2seq.Seq2Seq`` and ``seqlab.transformer.Transformer`` do.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from . import data, metrics
from .decoding import greedy
from .text import PAD, Seq2SeqBatch, Vocab, encode_pairs

__all__ = ["copy_pairs", "sequence_loss", "translate", "exact_match_eval"]

Pairs = Sequence[tuple[str, str]]


def copy_pairs(
    lengths: Sequence[int], per_length: int, split: str, vocab: int = 10, seed: int = 0
) -> list[tuple[str, str]]:
    """``per_length`` copy-task pairs ``(s, s)`` for every length in ``lengths``.

    The symbols are the letters ``a``, ``b``, ... (``vocab`` of them); ``split`` and ``seed`` pick
    the examples as ``seqlab.data.sequence_task`` does, so the splits never overlap.
    """
    if not lengths:
        raise ValueError("lengths must name at least one sequence length")
    if not 1 <= vocab <= 26:
        raise ValueError(f"vocab must lie in 1..26 (letters a..z), got {vocab}")
    pairs = []
    for length in lengths:
        x, _ = data.sequence_task(per_length, length, kind="copy", vocab=vocab, split=split, seed=seed)
        pairs += [("".join(chr(97 + v) for v in row.tolist()),) * 2 for row in x]
    return pairs


def sequence_loss(model: nn.Module, batch: Seq2SeqBatch, smoothing: float = 0.0) -> torch.Tensor:
    """Teacher-forced cross-entropy of ``model`` on ``batch``, averaged over non-padding targets.

    ``batch``: a ``Seq2SeqBatch`` (src (N, S), src_len (N,), tgt_in (N, L), tgt_out (N, L)).
    ``smoothing``: label smoothing, the target distribution being
    ``(1 - smoothing) * one_hot + smoothing / V`` (as ``F.cross_entropy(label_smoothing=...)``).
    Returns a scalar. Use as ``fit(model, batch, sequence_loss, ...)``.
    """
    if not isinstance(batch, Seq2SeqBatch):
        raise TypeError(f"batch must be a seqlab.text.Seq2SeqBatch, got {type(batch).__name__}")
    out = model(batch.src, batch.src_len, batch.tgt_in)
    logits = out[0] if isinstance(out, tuple) else out  # (N, L, V)
    return F.cross_entropy(
        logits.flatten(0, 1), batch.tgt_out.flatten(), ignore_index=PAD, label_smoothing=smoothing
    )


@torch.no_grad()
def translate(
    model: nn.Module,
    sources: Sequence[str],
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    max_len: int,
    device: str | torch.device | None = None,
) -> list[str]:
    """Greedy translations of ``sources`` (a list of strings), decoded in one batch.

    ``max_len``: the most target tokens to generate (EOS included). ``device``: where the model
    is (default: where its first parameter is).
    """
    if isinstance(sources, str) or not sources:
        raise ValueError("sources must be a non-empty list of strings")
    if device is None:
        device = next(model.parameters()).device
    batch = encode_pairs([(s, "") for s in sources], src_vocab, tgt_vocab)
    was_training = model.training
    model.eval()
    state = model.encode(batch.src.to(device), batch.src_len.to(device))
    out = greedy(model.decoder_step(), state, batch_size=len(sources), max_len=max_len)
    model.train(was_training)
    return [tgt_vocab.decode(row) for row in out]


def exact_match_eval(
    pairs: Pairs,
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    *,
    bleu: bool = False,
    device: str | torch.device | None = None,
) -> Callable[[nn.Module], dict[str, float]]:
    """An ``eval_fn`` for ``fit``: greedy-decode the sources of ``pairs`` and score them.

    Returns ``model -> {"exact_match": ...}``, plus character-level ``"bleu"`` and ``"chrf"``
    (0..100) when ``bleu`` is True. Decoding may run 2 tokens past the longest reference.
    """
    if not pairs:
        raise ValueError("pairs must hold at least one (source, target) pair")
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
