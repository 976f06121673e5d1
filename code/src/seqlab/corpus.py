"""Real text, offline: the Python Language Reference, split into train / validation / test.

Source: the 79 documents of the Python Language Reference that CPython 3.11.7 ships in its
standard library as ``pydoc_data.topics`` (the text ``help("for")`` prints), about 466,000
bytes of English prose and code. A copy is frozen in this package
(``seqlab/texts/python_reference.json.gz``), so every Python version reads the same bytes.
Licence: the PSF License Agreement (Python Software Foundation License Version 2), Copyright
(c) 2001-2023 Python Software Foundation; its text is in ``seqlab/texts/LICENSE-python-reference.txt``.

The split is by document, so no document is in two splits: documents are put in the order of a
hash of their name, and that order is cut where 80% and 90% of the bytes are reached (a document
goes to the split its middle byte falls in). A split by hash alone (as ``data.split_of`` does
for generated examples) would send one of the largest documents to validation by chance; cutting
by bytes keeps the proportions: 52 / 12 / 15 documents, 378,558 / 40,966 / 46,593 bytes.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from functools import cache
from importlib import resources

from .checks import check_choice

__all__ = ["SOURCE", "LICENSE", "SPLITS", "all_documents", "documents", "text"]

SOURCE = "the Python Language Reference, as CPython 3.11.7 ships it in pydoc_data.topics"
LICENSE = "PSF License Agreement (Python Software Foundation License Version 2)"
SPLITS = ("train", "validation", "test")
_CUTS = {"train": 0.8, "validation": 0.9, "test": 1.0}  # cumulative share of the bytes
_FILE = "python_reference.json.gz"


@cache
def _load() -> dict[str, str]:
    raw = resources.files("seqlab").joinpath("texts", _FILE).read_bytes()
    return json.loads(gzip.decompress(raw))["topics"]


def all_documents() -> dict[str, str]:
    """Every document: name -> text (79 documents, in the order of their names)."""
    return dict(_load())


@cache
def _splits() -> dict[str, str]:
    """name -> split, cutting the documents (in the order of a hash of their name) by bytes."""
    docs = _load()
    order = sorted(docs, key=lambda name: hashlib.blake2b(name.encode(), digest_size=8).digest())
    total = sum(len(docs[name].encode()) for name in order)
    split_of, start = {}, 0
    for name in order:
        size = len(docs[name].encode())
        middle = (start + size / 2) / total
        split_of[name] = next(split for split in SPLITS if middle < _CUTS[split])
        start += size
    return split_of


def documents(split: str = "train") -> dict[str, str]:
    """The documents of ``split`` ("train", "validation" or "test"): name -> text, by name."""
    check_choice("split", split, SPLITS)
    return {name: body for name, body in _load().items() if _splits()[name] == split}


def text(split: str = "train") -> str:
    """The documents of ``split`` joined by a blank line, as one string."""
    return "\n\n".join(documents(split).values())
