"""Offline task generators: every data set of the course is made here from a seed.

Nothing is downloaded. Each generator returns tensors for one split, ``"train"``, ``"validation"``
or ``"test"``, and the splits never overlap: an example belongs to the split chosen by a hash of
its content (80% / 10% / 10%), and a generator keeps drawing until it has ``n`` examples of the
split it was asked for. So the same example can never appear in two splits, whatever the seeds.

Tensor tasks (an ``Example(x, y)`` of tensors):

- ``sequence_task``: copy, reverse or sort a sequence of tokens (``x`` and ``y`` are ``(N, T)``).
- ``adding_task``: the adding problem of Hochreiter & Schmidhuber (``x`` is ``(N, T, 2)``).
- ``copy_memory_task``: remember ``k`` symbols over a chosen lag, then write them out.

String-pair tasks (a list of ``(source, target)`` strings, for ``seqlab.text.encode_pairs``):

- ``dates_task``: a date written in one of ``DATE_LOCALES`` and ``DATE_FORMATS`` (month and day
  names from Unicode's CLDR data, through Babel) to its ISO form ``YYYY-MM-DD``.
- ``number_words_task``: a number in English words to the same number in German words
  (through num2words); German puts the units before the tens, so attention must reorder.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from typing import NamedTuple

import torch

__all__ = [
    "SPLITS",
    "Example",
    "split_of",
    "sequence_task",
    "adding_task",
    "copy_memory_task",
    "COPY_MEMORY_BLANK",
    "DATE_FORMATS",
    "DATE_LOCALES",
    "dates_task",
    "number_words_task",
    "number_words_split",
]

SPLITS = ("train", "validation", "test")
_BUCKETS = {"train": range(0, 8), "validation": range(8, 9), "test": range(9, 10)}
COPY_MEMORY_BLANK = 0


class Example(NamedTuple):
    """A batch of examples: inputs ``x`` and targets ``y`` (shapes depend on the task)."""

    x: torch.Tensor
    y: torch.Tensor


def split_of(content: bytes) -> str:
    """The split an example belongs to, decided by a hash of its bytes (80/10/10)."""
    bucket = hashlib.blake2b(content, digest_size=8).digest()[0] % 10
    for name, buckets in _BUCKETS.items():
        if bucket in buckets:
            return name
    raise AssertionError("unreachable")


def _check_common(n: int, split: str, seed: int) -> None:
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive int, got {n!r}")
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    if not isinstance(seed, int):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")


def _draw(
    n: int,
    split: str,
    seed: int,
    make: Callable[[int, torch.Generator], tuple[torch.Tensor, torch.Tensor]],
    key: Callable[[torch.Tensor, torch.Tensor], bytes],
) -> Example:
    """Draw candidates with ``make(count, generator)`` and keep those whose hash is in ``split``."""
    gen = torch.Generator().manual_seed(seed * 1000 + SPLITS.index(split))
    share = len(_BUCKETS[split]) / 10
    xs, ys, have = [], [], 0
    for _ in range(1000):
        count = int((n - have) / share * 1.2) + 16
        x, y = make(count, gen)
        keep = [i for i in range(count) if split_of(key(x[i], y[i])) == split]
        keep = keep[: n - have]
        xs.append(x[keep])
        ys.append(y[keep])
        have += len(keep)
        if have == n:
            return Example(torch.cat(xs), torch.cat(ys))
    raise RuntimeError(f"could not draw {n} examples for split {split!r}; is the task too small?")


def sequence_task(
    n: int,
    length: int,
    kind: str = "copy",
    vocab: int = 10,
    split: str = "train",
    seed: int = 0,
) -> Example:
    """Copy, reverse or sort a random token sequence.

    Args:
        n: number of examples N.
        length: sequence length T.
        kind: ``"copy"`` (y = x), ``"reverse"`` (y = x backwards) or ``"sort"`` (y = sorted x).
        vocab: tokens are drawn uniformly from ``0 .. vocab - 1``.
        split, seed: which split, and the seed of the draw.

    Returns:
        ``Example(x, y)``, both ``(N, T)`` int64.
    """
    _check_common(n, split, seed)
    if kind not in ("copy", "reverse", "sort"):
        raise ValueError(f"kind must be 'copy', 'reverse' or 'sort', got {kind!r}")
    if length < 1 or vocab < 2:
        raise ValueError(f"need length >= 1 and vocab >= 2, got length={length}, vocab={vocab}")

    def make(count: int, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        x = torch.randint(0, vocab, (count, length), generator=gen)
        if kind == "copy":
            y = x.clone()
        elif kind == "reverse":
            y = x.flip(1)
        else:
            y = x.sort(dim=1).values
        return x, y

    return _draw(n, split, seed, make, lambda x, y: x.numpy().tobytes())


def adding_task(n: int, length: int, split: str = "train", seed: int = 0) -> Example:
    """The adding problem: add the two numbers that carry a marker.

    Each step carries two features: a value drawn uniformly from [0, 1) and a marker that is 1 at
    exactly two steps (one in each half of the sequence) and 0 elsewhere. The target is the sum
    of the two marked values. Predicting the mean (1.0) gives a mean squared error of 1/6.

    Returns:
        ``Example(x, y)``: x ``(N, T, 2)`` float32, y ``(N,)`` float32.
    """
    _check_common(n, split, seed)
    if length < 2:
        raise ValueError(f"the adding problem needs length >= 2, got {length}")

    def make(count: int, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        values = torch.rand(count, length, generator=gen)
        half = length // 2
        first = torch.randint(0, half, (count,), generator=gen)
        second = torch.randint(half, length, (count,), generator=gen)
        marker = torch.zeros(count, length)
        rows = torch.arange(count)
        marker[rows, first] = 1.0
        marker[rows, second] = 1.0
        x = torch.stack([values, marker], dim=-1)
        y = values[rows, first] + values[rows, second]
        return x, y

    return _draw(n, split, seed, make, lambda x, y: x.numpy().tobytes())


def copy_memory_task(
    n: int,
    lag: int,
    k: int = 5,
    n_symbols: int = 8,
    noise: bool = False,
    split: str = "train",
    seed: int = 0,
) -> Example:
    """The copy-memory task: read ``k`` symbols, wait, then write them out again.

    Tokens: 0 is the blank, ``1 .. n_symbols`` are symbols, ``n_symbols + 1`` is the delimiter
    (so the vocabulary has ``n_symbols + 2`` tokens). The input is the ``k`` symbols, ``lag``
    blanks, the delimiter and ``k - 1`` blanks; the target is ``k + lag`` blanks followed by the
    ``k`` symbols. Every symbol must be recalled exactly ``k + lag`` steps after it was read, and
    the sequence length is ``T = 2k + lag``. Guessing gives an accuracy of ``1 / n_symbols`` on the
    recalled positions ``y[:, -k:]``.

    With ``noise=True`` the ``lag`` waiting steps carry random symbols instead of blanks: the
    network must hold on to the first ``k`` symbols and ignore everything after them. Every
    example is then different, so even ``k = 1`` has disjoint splits of any size (with blanks
    there are only ``n_symbols ** k`` distinct examples to share among the splits).

    Returns:
        ``Example(x, y)``, both ``(N, T)`` int64.
    """
    _check_common(n, split, seed)
    if lag < 0 or k < 1 or n_symbols < 2:
        raise ValueError(f"need lag >= 0, k >= 1, n_symbols >= 2; got {lag=}, {k=}, {n_symbols=}")
    length = 2 * k + lag
    delimiter = n_symbols + 1

    def make(count: int, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        symbols = torch.randint(1, n_symbols + 1, (count, k), generator=gen)
        x = torch.zeros(count, length, dtype=torch.long)
        y = torch.zeros(count, length, dtype=torch.long)
        x[:, :k] = symbols
        if noise:
            x[:, k : k + lag] = torch.randint(1, n_symbols + 1, (count, lag), generator=gen)
        x[:, k + lag] = delimiter
        y[:, -k:] = symbols
        return x, y

    if noise:
        return _draw(n, split, seed, make, lambda x, y: x.numpy().tobytes())
    # the split depends on the symbols only, so an example's split does not change with the lag
    return _draw(n, split, seed, make, lambda x, y: x[:k].numpy().tobytes())


# --------------------------------------------------------------------------- text-to-text tasks
# These return lists of (source, target) strings; seqlab.text turns them into padded tensors.

DATE_FORMATS = ("full", "long", "medium", "d MMMM y", "EEE d MMM y", "MMMM d, y")
DATE_LOCALES = ("en", "fr", "de", "es", "it")


def _draw_pairs(n, split, seed, make, key) -> list[tuple[str, str]]:
    """Draw (source, target) pairs with ``make(rng)`` until ``n`` fall in ``split`` by ``key``."""
    import random

    _check_common(n, split, seed)
    rng = random.Random(seed * 1000 + SPLITS.index(split))
    pairs: list[tuple[str, str]] = []
    for _ in range(1000 * n + 10000):
        source, target = make(rng)
        if split_of(key(source, target).encode()) == split:
            pairs.append((source, target))
            if len(pairs) == n:
                return pairs
    raise RuntimeError(f"could not draw {n} pairs for split {split!r}; is the task too small?")


def dates_task(
    n: int,
    split: str = "train",
    seed: int = 0,
    locales: tuple[str, ...] = DATE_LOCALES,
    formats: tuple[str, ...] = DATE_FORMATS,
    years: tuple[int, int] = (1950, 2049),
) -> list[tuple[str, str]]:
    """Human-readable dates in several languages, to ISO ``YYYY-MM-DD``.

    Month and day names come from the Unicode CLDR data in Babel; every format spells the month
    out and writes a four-digit year, so no source is ambiguous. The case is randomised (as
    written, lower or upper). The alignment between source and target is nearly monotonic.
    Splits are decided by the source string.

    Returns:
        ``n`` pairs such as ``("Tuesday, March 7, 2023", "2023-03-07")``.
    """
    import datetime

    from babel.dates import format_date

    first = datetime.date(years[0], 1, 1).toordinal()
    last = datetime.date(years[1], 12, 31).toordinal()

    def make(rng):
        day = datetime.date.fromordinal(rng.randint(first, last))
        text = format_date(day, rng.choice(formats), locale=rng.choice(locales))
        case = rng.random()
        text = text.lower() if case < 0.3 else text.upper() if case < 0.45 else text
        return text, day.isoformat()

    return _draw_pairs(n, split, seed, make, lambda source, target: source)


def number_words_task(
    n: int,
    split: str = "train",
    seed: int = 0,
    source_lang: str = "en",
    target_lang: str = "de",
    max_value: int = 9999,
) -> list[tuple[str, str]]:
    """A number written in words in one language, to the same number in another (num2words).

    English to German is the default: German puts the units before the tens
    ("twenty-three" -> "dreiundzwanzig"), so attention must reorder. Splits are decided by the
    number itself, so a test number never appears in training in any spelling.

    Returns:
        ``n`` pairs such as ``("twenty-three", "dreiundzwanzig")``.
    """
    if max_value < 10:
        raise ValueError(f"max_value must be at least 10, got {max_value}")

    def make(rng):
        value = rng.randint(0, max_value)
        return _spell(value, source_lang), _spell(value, target_lang)

    return _draw_pairs(n, split, seed, make, lambda source, target: f"{source_lang}:{source}")


@functools.cache
def _spell(value: int, lang: str) -> str:
    """``value`` in words (num2words), spelled once per process: tasks draw each number often."""
    from num2words import num2words

    return num2words(value, lang=lang)


def number_words_split(
    split: str = "test", source_lang: str = "en", target_lang: str = "de", max_value: int = 9999
) -> list[tuple[str, str]]:
    """Every number from 0 to ``max_value`` that belongs to ``split``, once, in increasing order.

    The same split as ``number_words_task`` (decided by the source spelling), drawn exhaustively:
    a held-out set as large as the split allows (1,012 test numbers up to 9,999).
    """
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    if max_value < 10:
        raise ValueError(f"max_value must be at least 10, got {max_value}")
    sources = ((v, _spell(v, source_lang)) for v in range(max_value + 1))
    return [
        (s, _spell(v, target_lang)) for v, s in sources if split_of(f"{source_lang}:{s}".encode()) == split
    ]
