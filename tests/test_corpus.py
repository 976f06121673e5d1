import gzip
import hashlib
import json
from importlib import resources

import pytest

from seqlab import corpus


def test_the_frozen_copy_is_the_python_reference_of_3_11():
    raw = resources.files("seqlab").joinpath("texts", "python_reference.json.gz").read_bytes()
    payload = json.loads(gzip.decompress(raw))
    assert payload["source"] == "pydoc_data.topics of CPython 3.11.7"
    docs = corpus.all_documents()
    assert docs == payload["topics"] and len(docs) == 79
    assert sum(len(body.encode()) for body in docs.values()) == 466_117
    assert 'The "for" statement' in docs["for"]
    # the bytes every Python version reads: a change to the copy must be deliberate
    assert hashlib.sha256(json.dumps(docs, sort_keys=True).encode()).hexdigest()[:16] == "37b51a0283fe8609"


def test_the_licence_note_is_shipped_beside_the_data():
    note = resources.files("seqlab").joinpath("texts", "LICENSE-python-reference.txt").read_text()
    assert "PYTHON SOFTWARE FOUNDATION LICENSE VERSION 2" in note and "pydoc_data.topics" in note
    assert "PSF" in corpus.LICENSE and "pydoc_data.topics" in corpus.SOURCE
    assert "PSF License" in corpus.__doc__ and "pydoc_data.topics" in corpus.__doc__


def test_the_split_is_by_document_and_cuts_the_bytes_80_10_10():
    splits = {split: corpus.documents(split) for split in corpus.SPLITS}
    names = [set(docs) for docs in splits.values()]
    assert set.union(*names) == set(corpus.all_documents())
    assert sum(map(len, names)) == 79  # no document in two splits
    sizes = {split: sum(len(body.encode()) for body in docs.values()) for split, docs in splits.items()}
    assert {split: len(docs) for split, docs in splits.items()} == {"train": 52, "validation": 12, "test": 15}
    assert sizes == {"train": 378_558, "validation": 40_966, "test": 46_593}
    # the largest document is under 14% of the bytes, so no cut can be off by more than 7 points
    assert 0.78 < sizes["train"] / sum(sizes.values()) < 0.84
    assert corpus.text("validation") == "\n\n".join(splits["validation"].values())


def test_bad_split_is_refused():
    with pytest.raises(ValueError, match="split"):
        corpus.documents("dev")
