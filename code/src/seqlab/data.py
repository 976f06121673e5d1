"""Offline task generators: every data set of the course is made here from a seed.

Nothing is downloaded. An example belongs to the split (``"train"``, ``"validation"``, ``"test"``)
chosen by a hash of its content (80% / 10% / 10%), and a generator draws until it has ``n``
examples of its split, so no example is in two splits, whatever the seeds. Tensor tasks return an
``Example(x, y)``; ``dates_task`` and ``number_words_task`` return ``(source, target)`` strings
for ``seqlab.text.encode_pairs``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import NamedTuple

import torch

from .checks import check_choice

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
    "GERMAN_PIECES",
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
    check_choice("split", split, SPLITS)
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


def sequence_task(n: int, length: int, kind: str = "copy", vocab: int = 10, split="train", seed=0) -> Example:
    """Copy, reverse or sort (``kind``) N sequences of length T of tokens ``0 .. vocab - 1``:
    ``Example(x, y)``, both (N, T) int64."""
    _check_common(n, split, seed)
    check_choice("kind", kind, ("copy", "reverse", "sort"))
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
    """The adding problem (Hochreiter & Schmidhuber): each step holds a value in [0, 1) and a marker,
    1 at one step in each half; y is the sum of the two marked values (predicting 1.0 gives an MSE
    of 1/6). ``Example(x, y)``: x (N, T, 2), y (N,), float32."""
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
    n: int, lag: int, k: int = 5, n_symbols: int = 8, noise: bool = False, split="train", seed=0
) -> Example:
    """Read ``k`` symbols (tokens ``1 .. n_symbols``; 0 is the blank), ``lag`` blanks (random symbols
    with ``noise``, so that even k = 1 has disjoint splits of any size), the delimiter
    ``n_symbols + 1`` and k - 1 blanks; the target is k + lag blanks, then the k symbols.
    ``Example(x, y)``, both (N, T = 2k + lag) int64; guessing scores ``1 / n_symbols``."""
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


def dates_task(n: int, split: str = "train", seed: int = 0) -> list[tuple[str, str]]:
    """Dates 1950-2049 in ``DATE_LOCALES`` and ``DATE_FORMATS`` (CLDR names through Babel; the month
    spelled out, random case) to ISO, e.g. ``("Tuesday, March 7, 2023", "2023-03-07")``."""
    import datetime

    from babel.dates import format_date

    first, last = datetime.date(1950, 1, 1).toordinal(), datetime.date(2049, 12, 31).toordinal()

    def make(rng):
        day = datetime.date.fromordinal(rng.randint(first, last))
        text = format_date(day, rng.choice(DATE_FORMATS), locale=rng.choice(DATE_LOCALES))
        case = rng.random()
        text = text.lower() if case < 0.3 else text.upper() if case < 0.45 else text
        return text, day.isoformat()

    return _draw_pairs(n, split, seed, make, lambda source, target: source)


def _check_max_value(max_value: int) -> None:
    if isinstance(max_value, bool) or not isinstance(max_value, int) or not 10 <= max_value <= 9999:
        raise ValueError(f"max_value must be an int in 10..9999 (four-digit numbers), got {max_value!r}")


_EN = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
       "sixteen seventeen eighteen nineteen").split()  # fmt: skip
_EN_TENS = "- - twenty thirty forty fifty sixty seventy eighty ninety".split()
_DE = ("null eins zwei drei vier fünf sechs sieben acht neun zehn elf zwölf dreizehn vierzehn fünfzehn "
       "sechzehn siebzehn achtzehn neunzehn").split()  # fmt: skip
_DE_TENS = "- - zwanzig dreißig vierzig fünfzig sechzig siebzig achtzig neunzig".split()
# the 32 pieces every German number word up to 9999 is written with: a subword vocabulary
# (``text.Vocab(level="piece")``) that cuts "dreiundzwanzig" into "drei", "und", "zwanzig"
GERMAN_PIECES = tuple(sorted({*_DE, *_DE_TENS[2:], "ein", "und", "hundert", "tausend"}))


def _english(v: int) -> str:
    """0 .. 9999 in British English words: "two thousand, three hundred and forty-five"."""
    if v < 20:
        return _EN[v]
    if v < 100:
        return _EN_TENS[v // 10] + (f"-{_EN[v % 10]}" if v % 10 else "")
    if v < 1000:
        return f"{_EN[v // 100]} hundred" + (f" and {_english(v % 100)}" if v % 100 else "")
    rest = v % 1000
    joint = "" if not rest else ", " if rest >= 100 else " and "
    return f"{_EN[v // 1000]} thousand" + joint + (_english(rest) if rest else "")


def _german(v: int) -> str:
    """0 .. 9999 in German words, one word, units before tens: "zweitausenddreihundertfünfundvierzig"."""
    one = "ein"  # "eins" only at the end of a number
    if v < 20:
        return _DE[v]
    if v < 100:
        unit = v % 10
        return ((one if unit == 1 else _DE[unit]) + "und" if unit else "") + _DE_TENS[v // 10]
    big, size = (v // 1000, "tausend") if v >= 1000 else (v // 100, "hundert")
    rest = v % (1000 if v >= 1000 else 100)
    return (one if big == 1 else _DE[big]) + size + (_german(rest) if rest else "")


def _spell(value: int, lang: str) -> str:
    """``value`` (0 .. 9999) in words: the spelling of num2words (a test checks every number), by
    its rules written out, over a hundred times faster: a chapter draws 12,000 pairs."""
    return _english(value) if lang == "en" else _german(value)


def number_words_task(n: int, split: str = "train", seed: int = 0, max_value: int = 9999) -> list:
    """A number 0 .. ``max_value`` (at most 9999) in English words to German words, e.g. ("twenty-three",
    "dreiundzwanzig"): German puts the units first, so attention must reorder."""
    _check_max_value(max_value)

    def make(rng):
        value = rng.randint(0, max_value)
        return _spell(value, "en"), _spell(value, "de")

    return _draw_pairs(n, split, seed, make, lambda source, target: f"en:{source}")


def number_words_split(split: str = "test", max_value: int = 9999) -> list[tuple[str, str]]:
    """Every pair of ``number_words_task`` in ``split``, once, in increasing order (1,012 test
    numbers up to 9,999)."""
    check_choice("split", split, SPLITS)
    _check_max_value(max_value)
    sources = ((v, _spell(v, "en")) for v in range(max_value + 1))
    return [(s, _spell(v, "de")) for v, s in sources if split_of(f"en:{s}".encode()) == split]
