import math

import pytest
import torch

from seqlab.positional import LearnedPositionalEncoding, SinusoidalPositionalEncoding, sinusoidal_encoding


def test_constant_norm_and_offset_only_distances():
    table = sinusoidal_encoding(50, 16).double()
    torch.testing.assert_close(
        table.norm(dim=1), torch.full((50,), math.sqrt(8.0), dtype=torch.float64), atol=1e-6, rtol=0
    )
    distances = torch.cdist(table, table)
    for k in range(1, 10):
        diagonal = distances.diagonal(k)
        assert (diagonal.max() - diagonal.min()) < 1e-5  # depends on the offset k only


def test_worked_example_d4():
    table = sinusoidal_encoding(3, 4)
    torch.testing.assert_close(table[1], torch.tensor([0.8415, 0.5403, 0.0100, 0.99995]), atol=1e-4, rtol=0)
    torch.testing.assert_close(table[2], torch.tensor([0.9093, -0.4161, 0.0200, 0.9998]), atol=1e-4, rtol=0)


def test_modules_add_positions():
    x = torch.zeros(2, 5, 4)
    torch.testing.assert_close(SinusoidalPositionalEncoding(4)(x)[0], sinusoidal_encoding(5, 4))
    learned = LearnedPositionalEncoding(6, 4)
    torch.testing.assert_close(learned(x)[1], learned.table.weight[:5])


def test_errors():
    with pytest.raises(ValueError, match="even"):
        sinusoidal_encoding(3, 5)
    with pytest.raises(ValueError, match="cannot extrapolate"):
        LearnedPositionalEncoding(4, 4)(torch.zeros(1, 5, 4))
    with pytest.raises(ValueError, match="E=4"):
        SinusoidalPositionalEncoding(4)(torch.zeros(1, 5, 6))
