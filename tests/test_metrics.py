import pytest

from seqlab import metrics


def test_exact_match():
    assert metrics.exact_match(["a", "b", "c"], ["a", "x", "c"]) == pytest.approx(2 / 3)


def test_bleu_and_chrf_match_sacrebleu_conventions():
    refs = ["the cat sat on the mat", "a dog barked"]
    assert metrics.corpus_bleu(refs, refs) == pytest.approx(100)
    assert metrics.corpus_chrf(refs, refs) == pytest.approx(100)
    assert metrics.corpus_bleu(["the cat sat on a mat", "a dog barked"], refs) < 100
    # a correct translation worded differently scores low: BLEU counts overlap, not meaning
    assert metrics.corpus_bleu(["on the mat sat the cat"], ["the cat sat on the mat"]) < 50
    # no 4-gram in common: 0 without smoothing, sacrebleu's default exponential smoothing gives more
    assert metrics.corpus_bleu(["on the mat sat the cat"], ["the cat sat on the mat"], smooth="none") == 0
    assert metrics.corpus_bleu(["on the mat sat the cat"], ["the cat sat on the mat"]) > 0
    assert metrics.corpus_bleu(["dreiundzwanzig"], ["dreiundzwanzig"], tokenize="char") == pytest.approx(100)


def test_errors():
    with pytest.raises(ValueError, match="2 predictions but 1 references"):
        metrics.exact_match(["a", "b"], ["a"])
    with pytest.raises(ValueError, match="empty"):
        metrics.corpus_bleu([], [])


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="predictions must be a list of strings"):
        metrics.exact_match("abc", ["abc"])
    with pytest.raises(TypeError, match="references must hold strings only"):
        metrics.corpus_chrf(["a"], [3])
    with pytest.raises(ValueError, match="tokenize"):
        metrics.corpus_bleu(["a b"], ["a b"], tokenize="words")
    with pytest.raises(ValueError, match="smooth"):
        metrics.corpus_bleu(["a b"], ["a b"], smooth="laplace")
