import json
import warnings

import pytest

from seqlab import claims
from seqlab.device import seed_everything


@pytest.fixture
def student(monkeypatch):
    monkeypatch.delenv("SEQLAB_STRICT_CLAIMS", raising=False)
    monkeypatch.delenv("SEQLAB_CLAIMS_LOG", raising=False)


def test_a_held_claim_returns_its_value_silently(student):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert claims.at_least("em", 0.995, 0.99, "the exact match") == 0.995
        assert claims.at_most("loss", 0.2, 0.5, "the loss") == 0.2


def test_a_missed_claim_warns_a_student_in_words_and_runs_on(student):
    with pytest.warns(claims.ClaimWarning) as caught:
        assert claims.at_least("em", 0.975, 0.99, "the held-out exact match") == 0.975
    message = str(caught[0].message)
    assert "the held-out exact match is at least 0.99" in message
    assert "this run got 0.975" in message
    with pytest.warns(claims.ClaimWarning, match="at most 0.5; this run got 0.7"):
        claims.at_most("loss", 0.7, 0.5, "the loss")


def test_the_book_and_make_test_stop_on_a_missed_claim(student, monkeypatch):
    monkeypatch.setenv("SEQLAB_STRICT_CLAIMS", "1")
    with pytest.raises(AssertionError, match="claim 'em'.*at least 0.99.*0.98"):
        claims.at_least("em", 0.98, 0.99, "the exact match")
    claims.at_least("em", 0.99, 0.99, "the exact match")  # the bar itself clears it


def test_the_log_records_every_check_and_never_stops(student, monkeypatch, tmp_path):
    log = tmp_path / "claims.jsonl"
    monkeypatch.setenv("SEQLAB_CLAIMS_LOG", str(log))
    monkeypatch.setenv("SEQLAB_STRICT_CLAIMS", "1")
    claims.at_least("em", 0.98, 0.99, "the exact match", n=1012)
    claims.at_most("loss", 0.1, 0.5, "the loss")
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert records == [
        {"name": "em", "value": 0.98, "bar": 0.99, "op": ">=", "held": False, "n": 1012},
        {"name": "loss", "value": 0.1, "bar": 0.5, "op": "<=", "held": True, "n": None},
    ]


@pytest.mark.parametrize("value", [float("nan"), float("inf"), None, "0.9", True])
def test_a_value_that_is_not_a_finite_number_is_refused(student, value):
    with pytest.raises(ValueError, match="claim 'em': value must be a finite number"):
        claims.at_least("em", value, 0.99, "the exact match")


def test_the_seed_offset_moves_every_seed(monkeypatch):
    import torch

    monkeypatch.setenv("SEQLAB_SEED_OFFSET", "2")
    seed_everything(1)
    shifted = torch.rand(3)
    monkeypatch.delenv("SEQLAB_SEED_OFFSET")
    seed_everything(3)
    assert torch.equal(shifted, torch.rand(3))
    monkeypatch.setenv("SEQLAB_SEED_OFFSET", "two")
    with pytest.raises(ValueError, match="SEQLAB_SEED_OFFSET must be an integer, got 'two'"):
        seed_everything(0)


def test_a_stored_grid_is_read_and_a_missing_one_named():
    with pytest.raises(ValueError, match="chapter must be"):
        claims.grid("../x")
    with pytest.raises(FileNotFoundError, match="make robustness CHAPTERS=no_such_chapter"):
        claims.grid("no_such_chapter")
    grid = claims.grid("language_models")
    assert grid["chapter"] == "language_models" and grid["runs"]
    for run in grid["runs"]:
        assert run["kernel"] in grid["kernels"] and run["seed"] in grid["seeds"]
        assert {"name", "value", "bar", "op", "n"} <= set(run["claims"][0])


def test_a_chapter_without_a_stored_spread_is_named():
    with pytest.raises(ValueError, match="no spread stored for chapter 'no_such_chapter'"):
        claims.stored_spread("no_such_chapter")
    with pytest.raises(ValueError, match="chapter's name"):
        claims.stored_spread("../x")
