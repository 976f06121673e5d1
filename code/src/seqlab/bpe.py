"""Byte-level byte-pair encoding (BPE): a subword tokenizer learned from the text, as GPT-2's.

Text becomes bytes (UTF-8), so every string can be encoded and nothing is ever unknown: the ids
0-255 are the 256 byte values. Training learns *merges*: it counts every pair of adjacent tokens
over a table of word counts, merges the most frequent pair into a new token (ids 256, 257, ...)
and repeats until the vocabulary has ``vocab_size`` tokens. Encoding cuts a text into words and
replays the merges in the order they were learned; decoding joins the bytes of the tokens.

Words come from GPT-2's pre-tokenisation regex (``GPT2_PATTERN``, with the ``regex`` package's
``\\p{L}`` letters and ``\\p{N}`` numbers): a word carries the space before it (``" the"``), and
merges never cross a word boundary, so "the" at the start of a line and " the" are two tokens.

Two training paths, chosen by ``impl``, give the same merges (the tests prove it):

- ``"scratch"``: the two loops of the page: count the pairs over the whole table, merge the best
  pair in every word; each merge re-reads the whole table.
- ``"fast"``: the same merges from counts kept up to date: after a merge only the words that
  held the pair are counted again (as Hugging Face ``tokenizers``' ``BpeTrainer`` does), and a
  heap gives the most frequent pair.

Ties: when several pairs are the most frequent, both paths take the one ``tokenizers`` takes,
so that the merges equal the library's in the same order: the pair that comes first in the
library's vocabulary. That vocabulary lists the bytes in the order of the printable characters
GPT-2 maps them to (``BYTE_ORDER``: ``!`` to ``~`` first, the space and control bytes last),
then the merged tokens in the order they were made.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable, Sequence

import regex
import torch

from .checks import check_choice

__all__ = [
    "GPT2_PATTERN",
    "BYTE_ORDER",
    "pretokenize",
    "word_counts",
    "count_pairs",
    "best_pair",
    "merge_pair",
    "learn_merges",
    "learn_merges_fast",
    "Tokenizer",
    "train",
    "chars_per_token",
    "pieces_found",
    "against_pieces",
    "library_tokenizer",
    "library_merges",
    "library_tokens",
]

# GPT-2's pattern: contractions, a letter run, a digit run or a run of other symbols (each with
# the space before it), then whitespace (all but the last space before a word, which goes with it)
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
_WORDS = regex.compile(GPT2_PATTERN)

# GPT-2 shows each byte as a printable character: bytes that are printable stand for themselves,
# the others (space, control bytes, 127-160, 173) become the characters 256, 257, ... in order.
_PRINTABLE = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
BYTE_ORDER = tuple(_PRINTABLE + [b for b in range(256) if b not in _PRINTABLE])
_BYTE_RANK = {byte: rank for rank, byte in enumerate(BYTE_ORDER)}
_BYTE_TO_CHAR = {b: chr(b) for b in _PRINTABLE} | {
    b: chr(256 + n) for n, b in enumerate(b for b in range(256) if b not in _PRINTABLE)
}
_CHAR_TO_BYTE = {c: b for b, c in _BYTE_TO_CHAR.items()}
IMPLS = ("scratch", "fast")


def pretokenize(text: str) -> list[str]:
    """The words of ``text`` by GPT-2's pattern: ``"Hello world!"`` -> ``["Hello", " world", "!"]``."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return _WORDS.findall(text)


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as e:  # a lone surrogate, e.g. "\ud800": not Unicode text
        raise ValueError(f"text must be Unicode text; {text[e.start : e.end]!r} at {e.start} is not") from e


def _texts(texts: str | Iterable[str], name: str = "texts") -> list[str]:
    texts = [texts] if isinstance(texts, str) else texts
    if not isinstance(texts, Iterable):
        raise TypeError(f"{name} must be a str or an iterable of str, got {type(texts).__name__}")
    texts = list(texts)
    if bad := [type(t).__name__ for t in texts if not isinstance(t, str)]:
        raise TypeError(f"{name} must be a str or an iterable of str, got items of type {bad[0]}")
    return texts


def word_counts(texts: str | Iterable[str]) -> dict[tuple[int, ...], int]:
    """The word-count table: each word of ``texts`` as a tuple of its byte values -> its count."""
    counts = Counter(_utf8(word) for text in _texts(texts) for word in pretokenize(text))
    return {tuple(word): n for word, n in counts.items()}


# ---------------------------------------------------------------------------------------------
# training, readable: the two loops


def count_pairs(words: dict[tuple[int, ...], int]) -> Counter[tuple[int, int]]:
    """How often each pair of adjacent tokens occurs, over a table word (token ids) -> count."""
    pairs: Counter[tuple[int, int]] = Counter()
    for word, n in words.items():
        for pair in zip(word, word[1:]):
            pairs[pair] += n
    return pairs


def _tie_rank(token: int) -> int:
    """A token's place in ``tokenizers``' vocabulary: bytes in ``BYTE_ORDER``, merges after."""
    return _BYTE_RANK[token] if token < 256 else token


def best_pair(pairs: Counter[tuple[int, int]]) -> tuple[int, int]:
    """The most frequent pair; on a tie, the one whose tokens come first in the library's order."""
    return min(pairs, key=lambda p: (-pairs[p], _tie_rank(p[0]), _tie_rank(p[1])))


def merge_pair(word: tuple[int, ...], pair: tuple[int, int], new_id: int) -> tuple[int, ...]:
    """``word`` with every occurrence of ``pair`` replaced by ``new_id``, left to right."""
    merged, i = [], 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            merged.append(new_id)
            i += 2
        else:
            merged.append(word[i])
            i += 1
    return tuple(merged)


def _check_sizes(vocab_size: int, min_frequency: int) -> None:
    if not isinstance(vocab_size, int) or isinstance(vocab_size, bool) or vocab_size < 256:
        raise ValueError(f"vocab_size must be an int >= 256 (the bytes), got {vocab_size!r}")
    if not isinstance(min_frequency, int) or isinstance(min_frequency, bool) or min_frequency < 0:
        raise ValueError(f"min_frequency must be an int >= 0, got {min_frequency!r}")


def learn_merges(
    words: dict[tuple[int, ...], int], vocab_size: int, min_frequency: int = 0
) -> tuple[dict[tuple[int, int], int], dict[int, bytes]]:
    """The merges BPE learns from a word-count table (word as token ids -> count), until the
    vocabulary has ``vocab_size`` tokens: ``merges`` (pair -> new id, in the order learned) and
    ``vocab`` (id -> bytes). The readable path: each merge counts the whole table again."""
    _check_sizes(vocab_size, min_frequency)
    vocab = {i: bytes([i]) for i in range(256)}
    merges = {}
    while len(vocab) < vocab_size:
        pairs = count_pairs(words)  # loop 1: count every adjacent pair
        if not pairs:
            break
        best = best_pair(pairs)
        if pairs[best] < max(min_frequency, 1):
            break
        new_id = len(vocab)
        vocab[new_id] = vocab[best[0]] + vocab[best[1]]
        merges[best] = new_id
        words = {merge_pair(word, best, new_id): n for word, n in words.items()}  # loop 2: merge it
    return merges, vocab


# ---------------------------------------------------------------------------------------------
# training, fast: the same merges from pair counts kept up to date


def _merge_in_place(word: list[int], pair: tuple[int, int], new_id: int) -> list[tuple[tuple[int, int], int]]:
    """Merge ``pair`` in ``word`` (a list, changed in place) as ``merge_pair`` does, and return how
    the counts of the pairs around each merge change: ``[(pair, +1 or -1), ...]`` (what it says of
    ``pair`` itself does not matter: its count is deleted once it is merged)."""
    a, b = pair
    changes, i = [], 0
    while True:
        try:
            i = word.index(a, i)  # the next candidate, found in C: most words hold a pair once
        except ValueError:
            return changes
        if i + 1 < len(word) and word[i + 1] == b:
            if i > 0:  # (left, a) becomes (left, new)
                changes += [((word[i - 1], a), -1), ((word[i - 1], new_id), 1)]
            word[i : i + 2] = [new_id]
            if i + 1 < len(word):  # (b, right) becomes (new, right)
                changes += [((b, word[i + 1]), -1), ((new_id, word[i + 1]), 1)]
        i += 1


def learn_merges_fast(
    words: dict[tuple[int, ...], int], vocab_size: int, min_frequency: int = 0
) -> tuple[dict[tuple[int, int], int], dict[int, bytes]]:
    """What ``learn_merges`` returns, with the pair counts kept up to date instead of recounted."""
    _check_sizes(vocab_size, min_frequency)
    vocab = {i: bytes([i]) for i in range(256)}
    merges = {}
    table = [list(word) for word in words]  # the words, merged in place
    counts = list(words.values())
    pairs = count_pairs(words)
    where: dict[tuple[int, int], set[int]] = {}  # pair -> the words that hold (or held) it
    for w, word in enumerate(table):
        for pair in zip(word, word[1:]):
            where.setdefault(pair, set()).add(w)

    def entry(pair):  # the heap pops the largest count, then the library's first pair
        return (-pairs[pair], _tie_rank(pair[0]), _tie_rank(pair[1]), pair)

    heap = [entry(pair) for pair in pairs]
    heapq.heapify(heap)
    while len(vocab) < vocab_size and heap:
        negative, _, _, best = heapq.heappop(heap)
        if -negative != pairs[best]:  # stale: the count changed since this entry was pushed
            if pairs[best] > 0:
                heapq.heappush(heap, entry(best))
            continue
        if pairs[best] < max(min_frequency, 1):
            break
        new_id = len(vocab)
        vocab[new_id] = vocab[best[0]] + vocab[best[1]]
        merges[best] = new_id
        grown = set()
        for w in where.pop(best):
            for pair, change in _merge_in_place(table[w], best, new_id):
                pairs[pair] += change * counts[w]
                if change > 0:
                    where.setdefault(pair, set()).add(w)
                    grown.add(pair)
        del pairs[best]
        for pair in grown - {best}:  # a count that fell is corrected when its entry is popped
            if pairs[pair] > 0:
                heapq.heappush(heap, entry(pair))
    return merges, vocab


# ---------------------------------------------------------------------------------------------
# the tokenizer


class Tokenizer:
    """A byte-level BPE tokenizer: ``merges`` (pair -> new id, in the order learned) and ``vocab``
    (id -> bytes). ``encode(text) -> list[int]``, ``decode(ids) -> str``; ``len()`` is V."""

    def __init__(self, merges: dict[tuple[int, int], int], vocab: dict[int, bytes]) -> None:
        if not isinstance(merges, dict) or not isinstance(vocab, dict):
            raise TypeError(
                f"merges and vocab must be dicts, got {type(merges).__name__}, {type(vocab).__name__}"
            )
        if any(vocab.get(i) != bytes([i]) for i in range(256)):
            raise ValueError("vocab must map each id 0-255 to its byte")
        for (a, b), new_id in merges.items():
            if (
                not all(isinstance(vocab.get(i), bytes) for i in (a, b, new_id))
                or vocab[new_id] != vocab[a] + vocab[b]
            ):
                raise ValueError(
                    f"merges must join two tokens of vocab into a third: {(a, b)} -> {new_id!r} does not"
                )
        self.merges = dict(merges)
        self.vocab = dict(vocab)
        self._rank = {pair: rank for rank, pair in enumerate(self.merges)}
        self._cache: dict[bytes, list[int]] = {}

    def __len__(self) -> int:
        return len(self.vocab)

    def __repr__(self) -> str:
        return f"Tokenizer(vocab_size={len(self)}, merges={len(self.merges)})"

    def merged_bytes(self) -> list[tuple[bytes, bytes]]:
        """The merges as pairs of byte strings, in the order learned (to compare with a library)."""
        return [(self.vocab[a], self.vocab[b]) for a, b in self.merges]

    def truncated(self, vocab_size: int) -> Tokenizer:
        """The tokenizer of the first merges only, whose vocabulary has ``vocab_size`` tokens: what
        training with that ``vocab_size`` gives, without training again."""
        if not isinstance(vocab_size, int) or not 256 <= vocab_size <= len(self):
            raise ValueError(f"vocab_size must be an int in [256, {len(self)}], got {vocab_size!r}")
        merges = {}
        for pair, new_id in self.merges.items():
            if new_id >= vocab_size:
                break
            merges[pair] = new_id
        return Tokenizer(merges, {i: b for i, b in self.vocab.items() if i < vocab_size})

    def _encode_word(self, word: bytes) -> list[int]:
        if word not in self._cache:
            tokens = tuple(word)
            while len(tokens) > 1:  # the earliest learned merge first, as training made them
                pair = min(zip(tokens, tokens[1:]), key=lambda p: self._rank.get(p, len(self._rank)))
                if pair not in self._rank:
                    break
                tokens = merge_pair(tokens, pair, self.merges[pair])
            self._cache[word] = list(tokens)
        return self._cache[word]

    def encode(self, text: str) -> list[int]:
        """The token ids of ``text``: a list of ints in [0, V). Any Unicode text can be encoded."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        _utf8(text)  # refuse a lone surrogate before any work
        return [i for word in pretokenize(text) for i in self._encode_word(word.encode("utf-8"))]

    def decode(self, ids: Sequence[int] | torch.Tensor) -> str:
        """The text of ``ids`` (a sequence of ints or an integer tensor of shape (T,)). Ids that cut
        a character's bytes in the middle (a model may sample them) decode to U+FFFD, as GPT-2's."""
        if isinstance(ids, torch.Tensor):
            if ids.dim() != 1 or ids.dtype.is_floating_point or ids.dtype == torch.bool:
                shape = tuple(ids.shape)
                raise TypeError(f"ids must be a 1-d integer tensor (T,), got {ids.dtype} of shape {shape}")
            ids = ids.tolist()
        if isinstance(ids, str | bytes) or not isinstance(ids, Sequence):
            raise TypeError(f"ids must be a sequence of ints, got {type(ids).__name__}")
        if bad := [i for i in ids if not isinstance(i, int) or isinstance(i, bool) or i not in self.vocab]:
            raise ValueError(f"ids must be ints in [0, {len(self)}), got {bad[0]!r}")
        return b"".join(self.vocab[i] for i in ids).decode("utf-8", errors="replace")


def train(
    texts: str | Iterable[str], vocab_size: int, min_frequency: int = 0, impl: str = "scratch"
) -> Tokenizer:
    """A byte-level BPE tokenizer learned from ``texts`` (a string, or documents: words never span
    two), with ``vocab_size`` tokens (256 bytes + the merges), or fewer if no pair occurs at least
    ``min_frequency`` times (and once). ``impl``: ``"scratch"`` (the page's loops) or ``"fast"``."""
    _check_sizes(vocab_size, min_frequency)
    check_choice("impl", impl, IMPLS)
    words = word_counts(texts)
    learn = learn_merges if impl == "scratch" else learn_merges_fast
    return Tokenizer(*learn(words, vocab_size, min_frequency))


def chars_per_token(tokenizer: Tokenizer, texts: str | Iterable[str]) -> float:
    """Characters of ``texts`` per token of ``tokenizer``: how much text one token carries."""
    if not isinstance(tokenizer, Tokenizer):
        raise TypeError(f"tokenizer must be a bpe.Tokenizer, got {type(tokenizer).__name__}")
    texts = _texts(texts)
    tokens = sum(len(tokenizer.encode(text)) for text in texts)
    if tokens == 0:
        raise ValueError("texts must hold at least one character")
    return sum(map(len, texts)) / tokens


def pieces_found(tokenizer: Tokenizer, pieces: Iterable[str]) -> list[str]:
    """The ``pieces`` (strings) that are tokens of ``tokenizer``: which of the pieces written by
    hand (``data.GERMAN_PIECES``) a BPE learned from the words has found by itself."""
    if not isinstance(tokenizer, Tokenizer):
        raise TypeError(f"tokenizer must be a bpe.Tokenizer, got {type(tokenizer).__name__}")
    pieces = _texts(pieces, "pieces")
    tokens = set(tokenizer.vocab.values())
    return [piece for piece in pieces if _utf8(piece) in tokens]


def _made_of(token: bytes, pieces: list[bytes]) -> bool:
    """Whether ``token`` is a concatenation of ``pieces`` (any number, repeats allowed)."""
    ends = {0}  # the positions a concatenation of pieces can reach
    for i in range(len(token)):
        if i in ends:
            ends |= {i + len(p) for p in pieces if token.startswith(p, i)}
    return len(token) in ends


def against_pieces(tokenizer: Tokenizer, pieces: Iterable[str]) -> dict[str, list[bytes]]:
    """The tokens ``tokenizer`` learned (its merges, in order) set beside ``pieces`` written by
    hand: ``"a piece"`` (one of them), ``"whole pieces"`` (two or more of them joined, as
    ``"zweitausend"``), ``"part of a piece"`` (inside one, as ``"hund"``) or ``"across pieces"``
    (none of these: it cuts through a boundary between pieces). Tokens as bytes."""
    if not isinstance(tokenizer, Tokenizer):
        raise TypeError(f"tokenizer must be a bpe.Tokenizer, got {type(tokenizer).__name__}")
    pieces = [_utf8(piece) for piece in _texts(pieces, "pieces")]
    kinds: dict[str, list[bytes]] = {
        "a piece": [],
        "whole pieces": [],
        "part of a piece": [],
        "across pieces": [],
    }
    for new_id in dict.fromkeys(tokenizer.merges.values()):
        token = tokenizer.vocab[new_id]
        if token in pieces:
            kinds["a piece"].append(token)
        elif _made_of(token, pieces):
            kinds["whole pieces"].append(token)
        elif any(token in piece for piece in pieces):
            kinds["part of a piece"].append(token)
        else:
            kinds["across pieces"].append(token)
    return kinds


# ---------------------------------------------------------------------------------------------
# the library, for the comparison: Hugging Face tokenizers with the same bytes and words


def library_tokenizer(texts: str | Iterable[str], vocab_size: int, min_frequency: int = 0):
    """``tokenizers``' BPE trained by its ``BpeTrainer`` on the same words as ``train``: GPT-2's
    ``ByteLevel`` pre-tokenizer (no space added in front), the 256 bytes as initial alphabet,
    no special tokens."""
    from tokenizers import Tokenizer as HFTokenizer
    from tokenizers import decoders, models, pre_tokenizers, trainers

    tok = HFTokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=[],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_texts(texts), trainer)
    return tok


def _unmap(token: str) -> bytes:
    return bytes(_CHAR_TO_BYTE[c] for c in token)


def library_merges(tok) -> list[tuple[bytes, bytes]]:
    """The merges of a ``tokenizers`` BPE, in order, as pairs of byte strings."""
    import json

    merges = json.loads(tok.to_str())["model"]["merges"]
    return [(_unmap(a), _unmap(b)) for a, b in (m.split(" ") if isinstance(m, str) else m for m in merges)]


def library_tokens(tok, text: str) -> list[bytes]:
    """The tokens a ``tokenizers`` tokenizer cuts ``text`` into, as byte strings."""
    return [_unmap(t) for t in tok.encode(text).tokens]
