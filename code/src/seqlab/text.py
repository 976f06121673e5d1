"""From strings to padded tensors and back: vocabularies, encoding, batching.

The text tasks of ``seqlab.data`` are strings. A ``Vocab`` maps each token to an id, with four
special tokens at fixed ids (``PAD = 0``, ``BOS = 1``, ``EOS = 2``, ``UNK = 3``). A token is a
character (``level="char"``, the default), a word or punctuation mark (``level="word"``:
"twenty-three," is ``twenty``, ``-``, ``three``, ``,``), which makes a sentence 5-6 times shorter,
or a piece of a word from a given list (``level="piece"``, a subword vocabulary: with
``data.GERMAN_PIECES`` "dreiundzwanzig" is ``drei``, ``und``, ``zwanzig``); ``joint_vocabs`` gives
a source and a target of different levels one set of ids (for tied embeddings).
``encode_pairs`` turns (source, target) pairs into the tensors a sequence-to-sequence model
trains on::

    src      (N, S)  source ids, padded with PAD
    src_len  (N,)    true source lengths
    tgt_in   (N, L)  BOS + target ids        (the decoder's input under teacher forcing)
    tgt_out  (N, L)  target ids + EOS        (what the decoder must predict), padded with PAD
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

import torch

__all__ = ["PAD", "BOS", "EOS", "UNK", "Vocab", "joint_vocabs", "pad", "Seq2SeqBatch", "encode_pairs"]

PAD, BOS, EOS, UNK = 0, 1, 2, 3
SPECIALS = ("<pad>", "<bos>", "<eos>", "<unk>")


LEVELS = ("char", "word", "piece")
_WORD = re.compile(r"\w+|[^\w\s]")  # a word, or one punctuation mark


class Vocab:
    """A vocabulary of the tokens of ``texts``, with the four special tokens first.

    ``level``: ``"char"`` (every character is a token), ``"word"`` (words and punctuation
    marks; spaces only separate them) or ``"piece"`` (each text is cut into ``pieces``, a list
    of strings, the longest piece that fits first: a subword vocabulary).
    """

    def __init__(
        self, texts: Iterable[str], level: str = "char", pieces: Sequence[str] | None = None
    ) -> None:
        if level not in LEVELS:
            raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
        if (level == "piece") != (pieces is not None):
            raise ValueError(
                f"pieces go with level='piece', and it needs them; got {level=} and pieces={pieces!r}"
            )
        self.level = level
        if pieces is not None:
            if isinstance(pieces, str) or not all(isinstance(p, str) and p for p in pieces) or not pieces:
                raise TypeError(f"pieces must be a non-empty list of non-empty strings, got {pieces!r}")
            longest_first = sorted(pieces, key=len, reverse=True)  # "achtzehn" before "acht"
            self._piece = re.compile("|".join(map(re.escape, longest_first)))
        tokens = sorted({token for text in texts for token in self.tokenize(text)})
        self.itos: list[str] = list(SPECIALS) + tokens
        self.stoi: dict[str, int] = {s: i for i, s in enumerate(self.itos)}

    def __len__(self) -> int:
        return len(self.itos)

    def tokenize(self, text: str) -> list[str]:
        """The tokens of ``text``: its characters, its words and punctuation marks, or its pieces."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        if self.level != "piece":
            return list(text) if self.level == "char" else _WORD.findall(text)
        tokens = self._piece.findall(text)
        if "".join(tokens) != text:
            raise ValueError(f"text {text!r} is not a string of the vocabulary's pieces (read as {tokens})")
        return tokens

    def encode(self, text: str, bos: bool = False, eos: bool = False) -> list[int]:
        """Ids of the tokens of ``text`` (unknown ones as UNK), optionally framed by BOS/EOS."""
        ids = [self.stoi.get(token, UNK) for token in self.tokenize(text)]
        return ([BOS] if bos else []) + ids + ([EOS] if eos else [])

    def decode(self, ids: Sequence[int] | torch.Tensor) -> str:
        """The text of ``ids``, stopping at the first EOS and skipping PAD and BOS."""
        if isinstance(ids, torch.Tensor):
            ids = ids.tolist()
        out = []
        for i in ids:
            if i == EOS:
                break
            if i in (PAD, BOS):
                continue
            out.append(self.itos[i] if 0 <= i < len(self.itos) else SPECIALS[UNK])
        return (" " if self.level == "word" else "").join(out)


def joint_vocabs(
    pairs: Sequence[tuple[str, str]],
    src_level: str = "word",
    tgt_level: str = "char",
    pieces: Sequence[str] | None = None,
) -> tuple[Vocab, Vocab]:
    """A source and a target vocabulary, each with its own level, over one set of ids.

    Each tokenizes as its ``level`` says (English number words as words, German ones as
    letters or as ``pieces``, which go to the side whose level is ``"piece"``), but both hold
    every token of both sides, in one order: an id means the same token in either, so a model
    can tie its source embedding, target embedding and output layer to one (V, E) matrix
    (``Transformer(tie_weights=True)``). ``pairs``: (source, target) strings.
    """
    if isinstance(pairs, str) or not isinstance(pairs, Sequence) or not pairs:
        raise ValueError("pairs must be a non-empty list of (source, target) string pairs")

    def is_pair(p: object) -> bool:
        return isinstance(p, tuple) and len(p) == 2 and all(isinstance(s, str) for s in p)

    bad = [p for p in pairs if not is_pair(p)]
    if bad:
        raise TypeError(f"pairs must hold (source, target) string pairs, got {bad[0]!r}")
    src, tgt = (
        Vocab(texts, level, pieces if level == "piece" else None)
        for texts, level in (((s for s, _ in pairs), src_level), ((t for _, t in pairs), tgt_level))
    )
    itos = list(SPECIALS) + sorted(set(src.itos[len(SPECIALS) :]) | set(tgt.itos[len(SPECIALS) :]))
    for vocab in (src, tgt):
        vocab.itos, vocab.stoi = list(itos), {s: i for i, s in enumerate(itos)}
    return src, tgt


def pad(sequences: Sequence[Sequence[int]], value: int = PAD) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad lists of ids into (N, T_max) int64, and return the (N,) lengths too."""
    if not sequences:
        raise ValueError("cannot pad an empty list of sequences")
    lengths = [len(s) for s in sequences]
    longest = max(lengths)
    rows = [list(s) + [value] * (longest - len(s)) for s in sequences]  # one tensor, not N copies
    return torch.tensor(rows, dtype=torch.long), torch.tensor(lengths)


class Seq2SeqBatch(NamedTuple):
    """Tensors for teacher-forced training; see the module docstring for the shapes."""

    src: torch.Tensor
    src_len: torch.Tensor
    tgt_in: torch.Tensor
    tgt_out: torch.Tensor


def encode_pairs(pairs: Sequence[tuple[str, str]], src_vocab: Vocab, tgt_vocab: Vocab) -> Seq2SeqBatch:
    """Encode (source, target) string pairs into padded tensors."""
    src, src_len = pad([src_vocab.encode(s) for s, _ in pairs])
    tgt_in, _ = pad([tgt_vocab.encode(t, bos=True) for _, t in pairs])
    tgt_out, _ = pad([tgt_vocab.encode(t, eos=True) for _, t in pairs])
    return Seq2SeqBatch(src, src_len, tgt_in, tgt_out)
