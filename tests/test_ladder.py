import dataclasses
import math

import pytest
import torch

from seqlab.decoder import Decoder, DecoderConfig
from seqlab.ladder import cache_bytes_per_token, equal_parameters, position_losses, windows
from seqlab.utils import count_parameters

V = 29


def test_windows_share_one_token_between_neighbours():
    ids = torch.arange(21)
    rows = windows(ids, 5)
    assert rows.shape == (4, 6)
    assert torch.equal(rows[1], torch.arange(5, 11))
    assert all(rows[i, -1] == rows[i + 1, 0] for i in range(3))


@pytest.mark.parametrize(
    "ids, length, match",
    [
        (torch.arange(12).view(3, 4), 2, "1-D"),
        (torch.arange(12.0), 2, "torch.long"),
        (torch.arange(3), 5, "fewer than one window"),
    ],
)
def test_windows_rejects_bad_input(ids, length, match):
    with pytest.raises(ValueError, match=match):
        windows(ids, length)


def test_position_losses_average_to_the_models_loss():
    torch.manual_seed(0)
    model = Decoder(DecoderConfig(V, d_model=16, n_heads=4, n_layers=1, context=8)).double()
    rows = torch.randint(0, V, (7, 9))
    losses = position_losses(model, rows, batch_size=3)  # batches of 3, 3 and 1 rows
    assert losses.shape == (8,) and losses.dtype == torch.float64
    with torch.no_grad():
        logits = model(rows[:, :-1])
        whole = torch.nn.functional.cross_entropy(logits.flatten(0, 1), rows[:, 1:].flatten())
    assert math.isclose(losses.mean().item(), whole.item(), rel_tol=1e-10)
    first = torch.nn.functional.cross_entropy(logits[:, 0], rows[:, 1])
    assert math.isclose(losses[0].item(), first.item(), rel_tol=1e-10)
    assert model.training  # the mode it was in


def test_position_losses_rejects_a_row_without_a_target():
    model = Decoder(DecoderConfig(V, d_model=16, n_heads=4, n_layers=1, context=8))
    with pytest.raises(ValueError, match=r"\(N, T \+ 1\)"):
        position_losses(model, torch.zeros(3, 1, dtype=torch.long))


@pytest.mark.parametrize("ffn", ["gelu", "swiglu"])
def test_equal_parameters_finds_the_closest_width(ffn):
    base = DecoderConfig(V, d_model=16, n_heads=4, n_layers=2, context=8, ffn_hidden=64, ffn="gelu")
    target = count_parameters(Decoder(base))
    config = equal_parameters(dataclasses.replace(base, ffn=ffn), target)

    def gap(h):
        return abs(count_parameters(Decoder(dataclasses.replace(config, ffn_hidden=h))) - target)

    assert all(gap(config.ffn_hidden) <= gap(h) for h in range(1, 200))
    if ffn == "gelu":
        assert config.ffn_hidden == 64


@pytest.mark.parametrize("heads, groups", [(4, 4), (4, 2), (4, 1)])
def test_cache_bytes_per_token_counts_g_heads_of_keys_and_values(heads, groups):
    config = DecoderConfig(V, d_model=16, n_heads=heads, n_kv_heads=groups, n_layers=3, positions="rope")
    model = Decoder(config)
    tokens = torch.randint(0, V, (2, 5))
    # per token: keys and values, in each of 3 blocks, G heads of D = 16 / H float32 numbers
    assert cache_bytes_per_token(model, tokens) == 2 * 3 * groups * (16 // heads) * 4
    assert cache_bytes_per_token(model.double(), tokens) == 2 * 3 * groups * (16 // heads) * 8
