"""Positions inside attention: rotary position embeddings (RoPE) and ALiBi's linear biases.

**RoPE** (Su et al. 2021) rotates each query and key before the dot product, by an angle that
grows with its position p. Feature i is paired with feature i + D/2 (the rotate-half convention of
Llama's code), and pair i turns at the angular frequency w_i = base^(-2i / D)::

    theta[p, i] = (p / scale) * w_i                              i = 0 .. D/2 - 1
    RoPE(x)_p   = x_p * cos(theta_p) + rotate_half(x_p) * sin(theta_p)
    rotate_half((x_1, x_2)) = (-x_2, x_1)                        x_1, x_2 the two halves of x

A rotation keeps lengths, and the dot product of two rotated vectors depends on the difference of
their angles only: RoPE(q)_m . RoPE(k)_n is a function of q, k and m - n, so attention scores see
relative positions. ``scale`` > 1 divides every position (position interpolation, Chen et al.
2023): a model trained on C tokens sees positions up to scale * C at the angles it was trained on.

**ALiBi** (Press et al. 2022) adds no embedding at all: head h adds -m_h * (i - j) to the score of
query position i against key position j, a penalty growing with the distance, with slopes m_h a
geometric sequence (1/2, 1/4, ... for 8 heads).

Shapes: positions (T,); cos, sin (T, D); x (N, H, T, D); biases (H, L, S).
"""

from __future__ import annotations

import math
import numbers

import torch

from .checks import check_int, check_tensor

__all__ = ["rope_angles", "rotate_half", "apply_rope", "alibi_slopes", "alibi_bias"]


def _check_positive(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value > 0:
        raise ValueError(f"{name} must be a number > 0, got {name}={value!r}")
    return float(value)


def rope_angles(
    positions: torch.Tensor, D: int, base: float = 10000.0, scale: float = 1.0, *, dtype=torch.float32
) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of the angles theta[p, i] = (p / ``scale``) * ``base``^(-2i / D) for every
    position p of ``positions`` (T,), each (T, D): columns i and i + D/2 hold pair i. Computed in
    ``dtype``: float32 by default, as Llama's reference code does even in a float64 model (so that
    the two agree); ``apply_rope`` casts them to the activations' dtype."""
    if not isinstance(positions, torch.Tensor) or positions.dim() != 1:
        shape = tuple(positions.shape) if isinstance(positions, torch.Tensor) else type(positions).__name__
        raise ValueError(f"positions must be a 1-D tensor (T,), got {shape}")
    if positions.is_complex() or positions.dtype == torch.bool:
        raise TypeError(f"positions must be real numbers, got dtype {positions.dtype}")
    check_int("D", D, minimum=2)
    if D % 2:
        raise ValueError(f"D must be even (features are rotated in pairs), got D={D}")
    if _check_positive("base", base) <= 1:
        raise ValueError(f"base must be > 1, got base={base!r}")
    scale = _check_positive("scale", scale)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"dtype must be a floating torch dtype, got dtype={dtype!r}")
    omega = 1.0 / (base ** (torch.arange(0, D, 2, dtype=dtype, device=positions.device) / D))  # w_i
    theta = (positions.to(dtype) / scale)[:, None] * omega  # (T, D/2)
    theta = torch.cat([theta, theta], dim=-1)  # (T, D): pair i in columns i and i + D/2
    return theta.cos(), theta.sin()


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """(x_1, x_2) -> (-x_2, x_1) on the halves of the last axis: (..., D) -> (..., D)."""
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """``x`` (N, H, T, D) rotated: ``x * cos + rotate_half(x) * sin`` with ``cos``, ``sin`` (T, D)
    of ``rope_angles`` (cast to x's dtype): (N, H, T, D)."""
    check_tensor("x", x, "(N, H, T, D)", dim=4)
    for name, t in (("cos", cos), ("sin", sin)):
        check_tensor(name, t, "(T, D)", dim=2)
        if t.shape != x.shape[2:]:
            raise ValueError(
                f"{name} must be (T, D) = {tuple(x.shape[2:])} for x {tuple(x.shape)}, got {tuple(t.shape)}"
            )
    cos, sin = cos.to(x.dtype), sin.to(x.dtype)
    return x * cos + rotate_half(x) * sin


def alibi_slopes(H: int) -> torch.Tensor:
    """ALiBi's slope m_h of each of ``H`` heads, (H,) float64: 2^(-8h / H) for h = 1 .. H when H is
    a power of two; otherwise those of the nearest smaller power of two n, then every other slope
    of 2n heads (Press et al. 2022)."""
    check_int("H", H)

    def powers(n: int) -> list[float]:
        return [2.0 ** (-8.0 * h / n) for h in range(1, n + 1)]

    n = 2 ** int(math.floor(math.log2(H)))
    slopes = powers(n) + powers(2 * n)[0::2][: H - n]
    return torch.tensor(slopes, dtype=torch.float64)


def alibi_bias(H: int, L: int, S: int, start: int = 0, *, dtype=torch.float32, device=None) -> torch.Tensor:
    """ALiBi's additive biases (H, L, S): -m_h * (i - j) for query i at position ``start`` + i
    (i < L) and key j at position j (j < S), in ``dtype``. Keys after the query (j > start + i)
    get a positive bias: the causal mask hides them."""
    check_int("L", L), check_int("S", S)
    check_int("start", start, minimum=0)
    queries = torch.arange(start, start + L, dtype=torch.float64, device=device)[:, None]  # (L, 1)
    keys = torch.arange(S, dtype=torch.float64, device=device)[None, :]  # (1, S)
    slopes = alibi_slopes(H).to(device)[:, None, None]  # (H, 1, 1)
    return (-slopes * (queries - keys)).to(dtype)  # (H, L, S)
