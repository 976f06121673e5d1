import pytest
import torch

from seqlab import data, text


def test_vocab_round_trip_and_specials():
    vocab = text.Vocab(["abc", "cd"])
    assert vocab.itos[:4] == ["<pad>", "<bos>", "<eos>", "<unk>"] and len(vocab) == 8
    ids = vocab.encode("cab", bos=True, eos=True)
    assert ids[0] == text.BOS and ids[-1] == text.EOS
    assert vocab.decode(ids) == "cab"
    assert vocab.decode(torch.tensor(ids + [text.PAD, 5])) == "cab"  # stops at EOS
    assert vocab.encode("z") == [text.UNK]


def test_word_level_vocab_splits_words_and_punctuation():
    vocab = text.Vocab(["six thousand, three hundred and twenty-three"], level="word")
    assert vocab.tokenize("twenty-three,") == ["twenty", "-", "three", ","]
    ids = vocab.encode("three hundred and twenty-three", eos=True)
    assert len(ids) == 7 and ids[-1] == text.EOS and text.UNK not in ids
    assert vocab.decode(ids) == "three hundred and twenty - three"
    assert vocab.encode("seven") == [text.UNK]
    with pytest.raises(ValueError, match="level"):
        text.Vocab(["ab"], level="bytes")
    with pytest.raises(TypeError, match="text must be a str"):
        vocab.encode(["three"])


def test_pad_and_encode_pairs():
    padded, lengths = text.pad([[5, 6, 7], [8]])
    assert padded.tolist() == [[5, 6, 7], [8, 0, 0]] and lengths.tolist() == [3, 1]
    src_vocab, tgt_vocab = text.Vocab(["ab"]), text.Vocab(["xy"])
    batch = text.encode_pairs([("ab", "xyx"), ("b", "y")], src_vocab, tgt_vocab)
    assert batch.src.shape == (2, 2) and batch.src_len.tolist() == [2, 1]
    assert batch.tgt_in[:, 0].tolist() == [text.BOS, text.BOS]
    assert batch.tgt_out[0, -1] == text.EOS and batch.tgt_out[1].tolist() == [
        tgt_vocab.stoi["y"],
        text.EOS,
        0,
        0,
    ]
    assert torch.equal(batch.tgt_in[0, 1:], batch.tgt_out[0, :-1])  # teacher forcing: shifted by one
    with pytest.raises(ValueError, match="empty"):
        text.pad([])


def test_dates_task():
    pairs = data.dates_task(200, split="train", seed=0)
    assert len(pairs) == 200
    for source, target in pairs:
        year, month, day = target.split("-")
        assert len(year) == 4 and year in source
        assert 1950 <= int(year) <= 2049 and 1 <= int(month) <= 12
    assert pairs == data.dates_task(200, split="train", seed=0)


def test_number_words_task():
    from num2words import num2words

    value_of = {num2words(v, lang="en"): v for v in range(100)}
    pairs = data.number_words_task(50, split="validation", seed=0, max_value=99)
    for source, target in pairs:
        assert target == num2words(value_of[source], lang="de")
    assert num2words(23, lang="de") == "dreiundzwanzig"  # units before tens: attention must reorder


def test_text_splits_never_overlap():
    for make in (data.dates_task, data.number_words_task):
        sources = {split: {s for s, _ in make(300, split=split, seed=3)} for split in data.SPLITS}
        assert not sources["train"] & sources["test"] and not sources["train"] & sources["validation"]
        assert not sources["validation"] & sources["test"]


def test_joint_vocabs_share_ids_across_levels():
    pairs = [("twenty-three", "dreiundzwanzig"), ("one hundred", "einhundert")]
    src, tgt = text.joint_vocabs(pairs)
    assert src.level == "word" and tgt.level == "char"
    assert src.itos == tgt.itos and src.stoi == tgt.stoi and len(src) == len(tgt)
    assert {"twenty", "-", "hundred", "d", "z"} <= set(src.itos)  # words and letters, once each
    ids = src.encode("twenty-three")
    assert len(ids) == 3 and text.UNK not in ids and src.decode(ids) == "twenty - three"
    assert tgt.decode(tgt.encode("einhundert", eos=True)) == "einhundert"
    batch = text.encode_pairs(pairs, src, tgt)
    assert batch.src.shape == (2, 3) and batch.tgt_out.shape == (2, 15)
    assert max(int(batch.src.max()), int(batch.tgt_out.max())) < len(src)  # one embedding fits both
    with pytest.raises(ValueError, match="pairs"):
        text.joint_vocabs([])
    with pytest.raises(TypeError, match="string pairs"):
        text.joint_vocabs([("one", 1)])
    with pytest.raises(ValueError, match="level"):
        text.joint_vocabs(pairs, src_level="bytes")


def test_piece_vocab_cuts_every_german_number_into_its_pieces():
    vocab = text.Vocab(["dreiundzwanzig"], level="piece", pieces=data.GERMAN_PIECES)
    assert vocab.tokenize("siebzehntausend") == ["siebzehn", "tausend"]  # the longest piece first
    assert vocab.tokenize("einhunderteins") == ["ein", "hundert", "eins"]
    for value in range(10000):  # the way the generator wrote each number, piece by piece
        word = data._german(value)
        tokens = vocab.tokenize(word)
        assert "".join(tokens) == word and set(tokens) <= set(data.GERMAN_PIECES), (value, tokens)
        if value % 100 and value % 100 < 20:
            assert tokens[-1] == data._DE[value % 100]  # "dreizehn", not "drei", "zehn"
    assert len(data.GERMAN_PIECES) == 32 and vocab.decode(vocab.encode("dreiundzwanzig", eos=True)) == (
        "dreiundzwanzig"
    )
    assert vocab.encode("vierundzwanzig") == [text.UNK, vocab.stoi["und"], vocab.stoi["zwanzig"]]
    with pytest.raises(ValueError, match="not a string of the vocabulary's pieces"):
        vocab.tokenize("dreiundzwanzigx")
    with pytest.raises(ValueError, match="pieces go with level='piece'"):
        text.Vocab(["drei"], level="piece")
    with pytest.raises(ValueError, match="pieces go with level='piece'"):
        text.Vocab(["drei"], pieces=data.GERMAN_PIECES)
    for bad in ("drei", [], ["drei", ""], ["drei", 3]):
        with pytest.raises(TypeError, match="pieces must be"):
            text.Vocab(["drei"], level="piece", pieces=bad)
    src, tgt = text.joint_vocabs(
        [("twenty-three", "dreiundzwanzig")], tgt_level="piece", pieces=data.GERMAN_PIECES
    )
    assert src.level == "word" and tgt.level == "piece" and src.itos == tgt.itos
    assert {"twenty", "drei", "und", "zwanzig"} <= set(src.itos) and "d" not in src.itos
