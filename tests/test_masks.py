import pytest
import torch

from seqlab import masks


def test_padding_mask():
    m = masks.padding_mask([2, 0, 3], 4)
    assert m.tolist() == [[True, True, False, False], [False] * 4, [True, True, True, False]]
    assert masks.padding_mask(torch.tensor([1, 2])).shape == (2, 2)


def test_causal_mask_allows_j_at_most_i():
    m = masks.causal_mask(3)
    assert m.tolist() == [[True, False, False], [True, True, False], [True, True, True]]
    assert m.diagonal().all()  # a token may attend to itself (j <= i, not j < i)


def test_torch_arguments_are_converted_once():
    m = masks.causal_mask(4)
    padding = torch.tensor([[False] * 4, [False, False, True, True]])  # torch's meaning: True = ignore
    converted = masks.from_torch_args(~m, padding, False, (2, 4, 4))
    assert torch.equal(converted, m & ~padding[:, None, None, :])  # (N, 1, L, S), True = may attend
    assert torch.equal(masks.from_torch_args(None, None, True, (2, 4, 4)), m[None, None])
    assert masks.from_torch_args(None, None, False, (2, 4, 4)) is None
    additive = torch.zeros(4, 4).masked_fill(~m, float("-inf"))  # torch's float mask: 0 / -inf
    float_padding = torch.zeros(2, 4).masked_fill(padding, float("-inf"))
    assert torch.equal(masks.from_torch_args(additive, float_padding, False, (2, 4, 4)), converted)


def test_combine_shapes():
    attn, pad = masks.causal_mask(3, 5), masks.padding_mask([5, 2], 5)
    both = masks.combine(attn, pad)
    assert both.shape == (2, 1, 3, 5)
    assert torch.equal(both[1, 0], attn & pad[1])
    assert masks.combine(None, None) is None
    assert masks.combine(None, pad).shape == (2, 1, 1, 5)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: masks.padding_mask([[1, 2]]), ValueError, "1-D"),
        (lambda: masks.padding_mask([3], 2), ValueError, "exceeds"),
        (lambda: masks.causal_mask(0), ValueError, "positive"),
        (lambda: masks.combine(torch.ones(2, dtype=torch.bool), None), ValueError, "attn_mask"),
        (lambda: masks.combine(None, torch.ones(2, 3, 4, dtype=torch.bool)), ValueError, "key_padding_mask"),
        (lambda: masks.padding_mask([2.5, 1.0]), TypeError, r"lengths must be integers.*float"),
        (lambda: masks.padding_mask(torch.tensor([2.0, 1.0])), TypeError, r"lengths.*torch.float32"),
        (lambda: masks.padding_mask(torch.tensor([True, False])), TypeError, r"lengths.*torch.bool"),
        (lambda: masks.padding_mask([1, 2], -1), ValueError, "max_len"),
        (lambda: masks.check_mask(torch.ones(2, 2)), TypeError, "True = may attend"),
        (
            lambda: masks.from_torch_args(torch.ones(2, 2, dtype=torch.long), None, False, (1, 2, 2)),
            TypeError,
            "True = ignore",
        ),  # fmt: skip
        (
            lambda: masks.from_torch_args(None, torch.ones(1, 2, dtype=torch.int8), False, (1, 2, 2)),
            TypeError,
            "key_padding",
        ),  # fmt: skip
        (lambda: masks.from_torch_args(torch.ones(2, 2), None, False, (1, 2, 2)), ValueError, "0 and -inf"),
    ],
)
def test_bad_masks(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_empty_batches_give_empty_masks():
    assert masks.padding_mask([]).shape == (0, 0)
    assert masks.padding_mask([], 4).shape == (0, 4)
    assert masks.padding_mask(torch.zeros(0, dtype=torch.long), 3).dtype == torch.bool
