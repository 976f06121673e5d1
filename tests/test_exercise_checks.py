import pytest
import torch

from seqlab.exercises import check_close, check_tensor


def test_check_close_accepts_a_match():
    check_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0 + 1e-7]), "x")


@pytest.mark.parametrize(
    "value, message",
    [
        (None, "not written yet"),
        (Ellipsis, "not written yet"),
        ([1.0, 2.0], "should be a torch.Tensor"),
        (torch.zeros(3), r"shape \(3,\), expected \(2,\)"),
        (torch.tensor([1.0, float("nan")]), "NaN"),
        (torch.tensor([1.0, 2.5]), r"1 of 2 entries.*index \(1,\): got 2\.5, expected 2"),
    ],
)
def test_check_close_explains_what_is_wrong(value, message):
    with pytest.raises(AssertionError, match=message):
        check_close(value, torch.tensor([1.0, 2.0]), "answer")


def test_check_tensor_returns_the_tensor():
    t = torch.ones(2)
    assert check_tensor(t, "t", (2,)) is t
