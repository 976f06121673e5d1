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


def test_conversions_round_trip_and_additive():
    m = masks.causal_mask(4)
    assert torch.equal(masks.from_torch_mha(masks.to_torch_mha(m)), m)
    additive = masks.to_additive(m)
    assert torch.equal(additive == 0, m) and torch.isinf(additive[~m]).all()


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
        (lambda: masks.to_torch_mha(torch.ones(2, 2)), TypeError, "bool"),
        (lambda: masks.combine(torch.ones(2, dtype=torch.bool), None), ValueError, "attn_mask"),
        (lambda: masks.combine(None, torch.ones(2, 3, 4, dtype=torch.bool)), ValueError, "key_padding_mask"),
    ],
)
def test_bad_masks(call, error, message):
    with pytest.raises(error, match=message):
        call()
