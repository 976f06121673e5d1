"""Scoring generated sequences: exact match and corpus BLEU and chrF.

BLEU and chrF come from sacrebleu, so the numbers are the standard, comparable ones. BLEU
counts matching word n-grams (n = 1..4) against the reference with a brevity penalty; chrF
counts character n-grams. Both are 0..100. For one-word outputs (a German number is one long
word) word-level BLEU is harsh; ``tokenize="char"`` scores characters instead.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["exact_match", "corpus_bleu", "corpus_chrf"]


def _check_lists(predictions: Sequence[str], references: Sequence[str]) -> None:
    for name, texts in (("predictions", predictions), ("references", references)):
        if isinstance(texts, str) or not isinstance(texts, Sequence):
            raise TypeError(f"{name} must be a list of strings, got {type(texts).__name__}")
        bad = next((t for t in texts if not isinstance(t, str)), None)
        if bad is not None:
            raise TypeError(f"{name} must hold strings only, got {type(bad).__name__}: {bad!r}")
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions but {len(references)} references")
    if not predictions:
        raise ValueError("nothing to score: the lists are empty")


def exact_match(predictions: Sequence[str], references: Sequence[str]) -> float:
    """Fraction of predictions equal to their reference, character for character."""
    _check_lists(predictions, references)
    return sum(p == r for p, r in zip(predictions, references, strict=True)) / len(references)


def corpus_bleu(
    predictions: Sequence[str], references: Sequence[str], tokenize: str = "13a", smooth: str = "exp"
) -> float:
    """Corpus BLEU (0..100) of ``predictions`` against one reference each, via sacrebleu.
    ``smooth``: how an n-gram order without a match counts, ``"exp"`` (sacrebleu's default) or
    ``"floor"`` or ``"add-k"`` with sacrebleu's values, or ``"none"`` (BLEU as Papineni et al.
    define it: 0 when an order has no match)."""
    import sacrebleu

    _check_lists(predictions, references)
    if tokenize not in sacrebleu.BLEU.TOKENIZERS:
        raise ValueError(f"tokenize must be one of {sorted(sacrebleu.BLEU.TOKENIZERS)}, got {tokenize!r}")
    if smooth not in sacrebleu.BLEU.SMOOTH_DEFAULTS:
        raise ValueError(f"smooth must be one of {sorted(sacrebleu.BLEU.SMOOTH_DEFAULTS)}, got {smooth!r}")
    references = [list(references)]
    return sacrebleu.corpus_bleu(list(predictions), references, tokenize=tokenize, smooth_method=smooth).score


def corpus_chrf(predictions: Sequence[str], references: Sequence[str]) -> float:
    """Corpus chrF (0..100), character n-gram F-score, via sacrebleu."""
    import sacrebleu

    _check_lists(predictions, references)
    return sacrebleu.corpus_chrf(list(predictions), [list(references)]).score
