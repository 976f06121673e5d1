import math

import pytest
import torch

from seqlab.positional import LearnedPositionalEncoding, SinusoidalPositionalEncoding, sinusoidal_encoding


def test_constant_norm_and_offset_only_distances():
    table = sinusoidal_encoding(50, 16, dtype=torch.float64)
    torch.testing.assert_close(
        table.norm(dim=1), torch.full((50,), math.sqrt(8.0), dtype=torch.float64), atol=1e-13, rtol=0
    )
    distances = torch.cdist(table, table)
    for k in range(1, 10):
        diagonal = distances.diagonal(k)
        assert (diagonal.max() - diagonal.min()) < 1e-12  # depends on the offset k only


def test_float64_table_matches_math_sin_cos():
    T, E, start = 300, 64, 5
    table = sinusoidal_encoding(T, E, start=start, dtype=torch.float64)
    assert table.dtype == torch.float64 and table.shape == (T, E)
    expected = torch.tensor(
        [
            [f(p * 10000.0 ** (-2 * i / E)) for i in range(E // 2) for f in (math.sin, math.cos)]
            for p in range(start, start + T)
        ],
        dtype=torch.float64,
    )
    assert (table - expected).abs().max().item() < 1e-15


def test_default_is_float32_rounded_once_from_float64():
    table = sinusoidal_encoding(40, 8)
    assert table.dtype == torch.float32
    assert torch.equal(table, sinusoidal_encoding(40, 8, dtype=torch.float64).float())
    assert sinusoidal_encoding(3, 4, dtype=torch.bfloat16).dtype == torch.bfloat16
    assert sinusoidal_encoding(3, 4, device="cpu").device.type == "cpu"


def test_rotation_by_the_offset():
    E, k = 8, 3
    table = sinusoidal_encoding(20, E, dtype=torch.float64)
    for i in range(E // 2):
        phi = k * 10000.0 ** (-2 * i / E)
        rotation = torch.tensor(
            [[math.cos(phi), math.sin(phi)], [-math.sin(phi), math.cos(phi)]], dtype=torch.float64
        )
        pairs = table[:, 2 * i : 2 * i + 2]  # (T, 2): (sin, cos) of pair i
        torch.testing.assert_close(pairs[:-k] @ rotation.T, pairs[k:], atol=1e-14, rtol=0)


def test_worked_example_d4():
    table = sinusoidal_encoding(3, 4)
    torch.testing.assert_close(table[1], torch.tensor([0.8415, 0.5403, 0.0100, 0.99995]), atol=1e-4, rtol=0)
    torch.testing.assert_close(table[2], torch.tensor([0.9093, -0.4161, 0.0200, 0.9998]), atol=1e-4, rtol=0)


def test_start_and_empty_table():
    torch.testing.assert_close(sinusoidal_encoding(4, 6, start=3), sinusoidal_encoding(7, 6)[3:])
    assert sinusoidal_encoding(0, 6).shape == (0, 6)


def test_modules_add_positions():
    x = torch.zeros(2, 5, 4)
    torch.testing.assert_close(SinusoidalPositionalEncoding(4)(x)[0], sinusoidal_encoding(5, 4))
    x64 = torch.zeros(2, 5, 4, dtype=torch.float64)
    assert torch.equal(
        SinusoidalPositionalEncoding(4)(x64)[1], sinusoidal_encoding(5, 4, dtype=torch.float64)
    )
    learned = LearnedPositionalEncoding(6, 4)
    torch.testing.assert_close(learned(x)[1], learned.table.weight[:5])
    assert SinusoidalPositionalEncoding(4)(torch.zeros(0, 5, 4)).shape == (0, 5, 4)  # empty batch


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (dict(length=3, dim=5), ValueError, "dim must be even.*dim=5"),
        (dict(length=3, dim=0), ValueError, "dim must be >= 2.*dim=0"),
        (dict(length=-1, dim=4), ValueError, "length must be >= 0.*length=-1"),
        (dict(length=3.0, dim=4), TypeError, "length must be an int.*3.0"),
        (dict(length=3, dim=4.0), TypeError, "dim must be an int.*4.0"),
        (dict(length=True, dim=4), TypeError, "length must be an int.*True"),
        (dict(length=3, dim=4, start=0.5), TypeError, "start must be an int.*0.5"),
        (dict(length=3, dim=4, base=0.5), ValueError, "base must be a number > 1.*0.5"),
        (dict(length=3, dim=4, dtype=torch.int64), TypeError, "dtype must be a floating.*int64"),
    ],
)
def test_bad_arguments_are_named(kwargs, error, message):
    with pytest.raises(error, match=message):
        sinusoidal_encoding(**kwargs)


def test_module_errors():
    with pytest.raises(ValueError, match="cannot extrapolate"):
        LearnedPositionalEncoding(4, 4)(torch.zeros(1, 5, 4))
    with pytest.raises(ValueError, match="E=4"):
        SinusoidalPositionalEncoding(4)(torch.zeros(1, 5, 6))
    with pytest.raises(ValueError, match="dim must be even"):
        SinusoidalPositionalEncoding(5)
    with pytest.raises(TypeError, match="floating"):
        SinusoidalPositionalEncoding(4)(torch.zeros(1, 5, 4, dtype=torch.long))
