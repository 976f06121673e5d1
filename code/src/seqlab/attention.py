"""Attention as a weighted average: scores, softmax over the keys, and a sum of values.

Scaled dot-product attention (chapter "Self-attention and multi-head attention")::

    scores  = q k^T / sqrt(D)              # (..., L, S)
    weights = softmax(scores over S)       # each row sums to 1 over the keys it may see
    out     = weights v                    # (..., L, D_v)

``impl="scratch"`` computes these three lines; ``impl="torch"`` calls
``F.scaled_dot_product_attention``. Masks follow seqlab's convention (bool, True = may attend,
see ``seqlab.masks``). A query that may attend to no key at all gets an all-zero output and
all-zero weights, never NaN, in both paths.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .masks import check_mask

__all__ = ["scaled_dot_product_attention"]


def _check_qkv(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
    if q.dim() < 2 or q.dim() != k.dim() or k.dim() != v.dim():
        raise ValueError(
            "q, k, v must have the same rank (>= 2): "
            f"got {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}"
        )
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must share their last dimension D: got {q.shape[-1]} and {k.shape[-1]}")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k and v must have the same number of keys S: got {k.shape[-2]} and {v.shape[-2]}")


def scaled_dot_product_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    *,
    scale: float | None = None,
    impl: str = "scratch",
    return_weights: bool = False,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """Attention of queries ``q`` over keys ``k`` and values ``v``.

    Args:
        q: (..., L, D) queries, e.g. (N, H, L, D).
        k: (..., S, D) keys.
        v: (..., S, D_v) values.
        mask: bool, True = may attend, broadcastable to (..., L, S); None attends everywhere.
        scale: multiplies the scores; default 1 / sqrt(D).
        impl: ``"scratch"`` (the three lines above) or ``"torch"`` (the fused kernel).
        return_weights: also return the (..., L, S) weights (scratch path only: the fused kernel
            never forms them).

    Returns:
        out (..., L, D_v), and the weights (..., L, S) if ``return_weights``.
    """
    _check_qkv(q, k, v)
    if impl not in ("scratch", "torch"):
        raise ValueError(f"impl must be 'scratch' or 'torch', got {impl!r}")
    if mask is not None:
        check_mask(mask)
        try:
            torch.broadcast_shapes(mask.shape, (*q.shape[:-1], k.shape[-2]))
        except RuntimeError:
            raise ValueError(
                f"mask of shape {tuple(mask.shape)} does not broadcast to the scores' shape "
                f"{(*q.shape[:-1], k.shape[-2])} (..., L, S)"
            ) from None
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    if impl == "torch":
        if return_weights:
            raise ValueError("impl='torch' cannot return attention weights; use impl='scratch'")
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)

    scores = (q @ k.transpose(-2, -1)) * scale  # (..., L, S)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
        # a row with no allowed key would be softmax(-inf, ..., -inf) = NaN: give it finite
        # scores here and zero weights below, so neither the output nor the gradient is NaN
        seen = mask.any(dim=-1, keepdim=True)
        scores = scores.masked_fill(~seen, 0.0)
        weights = scores.softmax(dim=-1).masked_fill(~seen, 0.0)
    else:
        weights = scores.softmax(dim=-1)
    out = weights @ v
    return (out, weights) if return_weights else out
