"""The byte-level BPE: the worked example by hand, scratch = fast = Hugging Face ``tokenizers``
(merges in the same order, the same tokens on held-out text), decode(encode(s)) == s for any
text, and bad input refused."""

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seqlab import bpe, corpus, data

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
VOCAB = 1024


@pytest.fixture(scope="module")
def train_docs():
    return list(corpus.documents("train").values())


@pytest.fixture(scope="module")
def ours(train_docs):
    return bpe.train(train_docs, VOCAB, impl="fast")


@pytest.fixture(scope="module")
def library(train_docs):
    return bpe.library_tokenizer(train_docs, VOCAB)


def strings(tokenizer, ids):
    return [tokenizer.vocab[i] for i in ids]


# ---------------------------------------------------------------------------------------------
# the pieces, by hand


def test_pretokenize_is_gpt2s_pattern():
    words = ["Hello", " world", "!", " ", " It", "'s", " 2024", ".", "\n"]  # "  It": " " + " It"
    assert bpe.pretokenize("Hello world!  It's 2024.\n") == words
    assert bpe.pretokenize("naïve café") == ["naïve", " café"]  # \p{L}: letters of any script


def test_word_counts_are_byte_tuples():
    assert bpe.word_counts(["low low", "é"]) == {(108, 111, 119): 1, (32, 108, 111, 119): 1, (0xC3, 0xA9): 1}


def test_count_pairs_and_merge_pair_by_hand():
    words = {tuple(b"low"): 5, tuple(b"lower"): 2, tuple(b"newest"): 6, tuple(b"widest"): 3}
    pairs = bpe.count_pairs(words)
    e, s, t, w = b"e"[0], b"s"[0], b"t"[0], b"w"[0]
    assert pairs[(e, s)] == pairs[(s, t)] == 9 and pairs[(w, e)] == 8 and pairs[(b"l"[0], b"o"[0])] == 7
    # a tie between "es" and "st" (9 each): the library takes the pair whose first token comes first
    assert bpe.best_pair(pairs) == (e, s)
    assert bpe.merge_pair(tuple(b"newest"), (e, s), 256) == (*b"new", 256, t)
    assert bpe.merge_pair((1, 1, 1, 1, 1), (1, 1), 9) == (9, 9, 1)  # left to right, never overlapping


def test_the_worked_example_merges():
    docs = ["low"] * 5 + ["lower"] * 2 + ["newest"] * 6 + ["widest"] * 3
    tok = bpe.train(docs, 256 + 6)
    assert [a + b for a, b in tok.merged_bytes()] == [b"es", b"est", b"lo", b"low", b"ew", b"new"]
    assert bpe.library_merges(bpe.library_tokenizer(docs, 256 + 6)) == tok.merged_bytes()
    assert strings(tok, tok.encode("lowest")) == [b"low", b"est"]


def test_ties_follow_the_library_byte_order():
    # " " (32) comes after every printable byte in the library's order, "~" (126) before "¡" (161)
    assert bpe.BYTE_ORDER[0] == ord("!") and bpe.BYTE_ORDER.index(32) > bpe.BYTE_ORDER.index(255)
    assert sorted(bpe.BYTE_ORDER) == list(range(256))
    docs = ["ab", "ba", " a", " b"]  # four pairs, each once: the order of the merges is the tie rule
    tok = bpe.train(docs, 256 + 4)
    # by byte values " a" (32, 97) would come first; the library puts the space after the letters
    assert tok.merged_bytes() == [(b"a", b"b"), (b"b", b"a"), (b" ", b"a"), (b" ", b"b")]
    assert bpe.library_merges(bpe.library_tokenizer(docs, 256 + 4)) == tok.merged_bytes()


# ---------------------------------------------------------------------------------------------
# scratch = fast = the library


def test_scratch_and_fast_learn_the_same_merges_on_the_corpus(train_docs):
    docs = train_docs[:12]  # the scratch loops re-read the whole table at each merge: a part of it
    scratch, fast = bpe.train(docs, 512, impl="scratch"), bpe.train(docs, 512, impl="fast")
    assert len(scratch) == 512 and scratch.merges == fast.merges and scratch.vocab == fast.vocab


@SETTINGS
@given(
    st.lists(st.text(alphabet="aab  \n", min_size=1, max_size=30), min_size=1, max_size=6),
    st.integers(256, 300),
    st.integers(0, 3),
)
def test_scratch_fast_and_library_agree_on_tie_heavy_texts(docs, vocab_size, min_frequency):
    scratch = bpe.train(docs, vocab_size, min_frequency, impl="scratch")
    fast = bpe.train(docs, vocab_size, min_frequency, impl="fast")
    library = bpe.library_tokenizer(docs, vocab_size, min_frequency)
    assert scratch.merges == fast.merges
    assert scratch.merged_bytes() == bpe.library_merges(library)
    text = "".join(docs)
    assert strings(scratch, scratch.encode(text)) == bpe.library_tokens(library, text)


def test_merges_equal_the_library_on_the_training_split(ours, library):
    assert len(ours) == len(library.get_vocab()) == VOCAB
    merges = bpe.library_merges(library)
    assert len(merges) == VOCAB - 256 and ours.merged_bytes() == merges


@pytest.mark.parametrize("split", ["validation", "test"])
def test_encodings_equal_the_library_on_held_out_documents(ours, library, split):
    for name, body in corpus.documents(split).items():
        assert strings(ours, ours.encode(body)) == bpe.library_tokens(library, body), name
        assert ours.decode(ours.encode(body)) == body


@SETTINGS
@given(st.text(max_size=60))
def test_encodings_equal_the_library_on_any_text(ours, library, text):
    assert strings(ours, ours.encode(text)) == bpe.library_tokens(library, text)


# ---------------------------------------------------------------------------------------------
# round trip, truncation, measurements


@SETTINGS
@given(st.text())
def test_decode_encode_is_the_identity_on_any_text(ours, text):
    ids = ours.encode(text)
    assert all(isinstance(i, int) and 0 <= i < len(ours) for i in ids)
    assert ours.decode(ids) == text
    assert ours.decode(torch.tensor(ids, dtype=torch.long)) == text


def test_decode_of_a_cut_character_gives_the_replacement_character(ours):
    (byte,) = b"\xc3"  # the first byte of "é" alone
    assert ours.decode([byte]) == "\ufffd"


def test_truncated_equals_training_with_the_smaller_vocabulary(train_docs, ours):
    small = bpe.train(train_docs, 300, impl="fast")
    cut = ours.truncated(300)
    assert cut.merges == small.merges and cut.vocab == small.vocab
    assert ours.truncated(256).encode("ab") == [97, 98]


def test_chars_per_token_grows_with_the_vocabulary(ours):
    text = corpus.text("validation")
    curve = [bpe.chars_per_token(ours.truncated(v), text) for v in (256, 384, 512, 768, 1024)]
    assert curve[0] == len(text) / len(text.encode())  # bytes: one token a byte
    assert all(a < b for a, b in zip(curve, curve[1:])) and curve[-1] > 2.5


def test_pieces_found_in_german_number_words():
    words = [german for _, german in data.number_words_split("train")]
    tok = bpe.train(words, 256 + 64, impl="fast")
    found = bpe.pieces_found(tok, data.GERMAN_PIECES)
    assert set(found) <= set(data.GERMAN_PIECES) and {"und", "hundert", "tausend"} <= set(found)
    assert "null" not in found  # only zero is written with it: once in 10,000
    assert bpe.pieces_found(tok.truncated(256), data.GERMAN_PIECES) == []
    kinds = bpe.against_pieces(tok, data.GERMAN_PIECES)
    assert sorted(kinds["a piece"]) == sorted(p.encode() for p in found)
    assert sum(map(len, kinds.values())) == 64  # every learned token in one kind


def test_against_pieces_by_hand():
    tok = bpe.train(["abcd"] * 3 + ["cdab"], 256 + 4)  # ab, cd, abcd, then cdab
    assert [a + b for a, b in tok.merged_bytes()] == [b"ab", b"cd", b"abcd", b"cdab"]
    kinds = bpe.against_pieces(tok.truncated(256 + 3), ["ab", "cdx", "x"])
    assert kinds == {
        "a piece": [b"ab"],
        "whole pieces": [],
        "part of a piece": [b"cd"],
        "across pieces": [b"abcd"],
    }
    kinds = bpe.against_pieces(tok, ["ab", "cd"])
    assert kinds["a piece"] == [b"ab", b"cd"] and kinds["whole pieces"] == [b"abcd", b"cdab"]


# ---------------------------------------------------------------------------------------------
# bad input


def test_bad_input_is_refused(ours):
    with pytest.raises(TypeError, match="texts"):
        bpe.train(5, 300)
    with pytest.raises(TypeError, match="texts"):
        bpe.train(["ok", b"bytes"], 300)
    with pytest.raises(ValueError, match="vocab_size"):
        bpe.train("abc", 255)
    with pytest.raises(ValueError, match="min_frequency"):
        bpe.train("abc", 300, min_frequency=-1)
    with pytest.raises(ValueError, match="impl"):
        bpe.train("abc", 300, impl="torch")
    with pytest.raises(TypeError, match="text"):
        ours.encode(b"bytes")
    with pytest.raises(ValueError, match="text must be Unicode"):
        ours.encode("a\ud800b")  # a lone surrogate has no UTF-8 bytes
    with pytest.raises(ValueError, match="ids"):
        ours.decode([VOCAB])
    with pytest.raises(ValueError, match="ids"):
        ours.decode([-1])
    with pytest.raises(TypeError, match="ids"):
        ours.decode(torch.zeros(3))
    with pytest.raises(TypeError, match="ids"):
        ours.decode(torch.zeros(2, 2, dtype=torch.long))
    with pytest.raises(TypeError, match="ids"):
        ours.decode("abc")
    with pytest.raises(ValueError, match="vocab_size"):
        ours.truncated(VOCAB + 1)
    with pytest.raises(TypeError, match="tokenizer"):
        bpe.chars_per_token("gpt2", "text")
    with pytest.raises(ValueError, match="texts"):
        bpe.chars_per_token(ours, "")
    with pytest.raises(TypeError, match="tokenizer"):
        bpe.pieces_found(None, ["und"])
    with pytest.raises(TypeError, match="tokenizer"):
        bpe.against_pieces(None, ["und"])
    with pytest.raises(TypeError, match="pieces"):
        bpe.against_pieces(ours, [1, 2])
    with pytest.raises(TypeError, match="merges and vocab"):
        bpe.Tokenizer([((97, 98), 256)], ours.vocab)
    with pytest.raises(ValueError, match="vocab must map"):
        bpe.Tokenizer({}, {i: bytes([i]) for i in range(255)})
    with pytest.raises(ValueError, match="merges must join"):
        bpe.Tokenizer({(97, 98): 256}, {**{i: bytes([i]) for i in range(256)}, 256: b"ba"})
