"""Attention masks: one meaning inside seqlab, and every conversion in one place.

Inside seqlab a mask is a boolean tensor where ``True`` means **may attend** (the convention of
``F.scaled_dot_product_attention``). ``nn.MultiheadAttention`` uses the opposite one for its
boolean ``key_padding_mask`` and ``attn_mask`` (``True`` means **ignore**); ``from_torch_mha``
and ``to_torch_mha`` convert. A float mask is additive: 0 where allowed, ``-inf`` where not.

Shapes: a key-padding mask is (N, S); an attention mask is (L, S), (N, L, S) or (N, H, L, S).
"""

from __future__ import annotations

import torch

__all__ = [
    "padding_mask",
    "causal_mask",
    "to_torch_mha",
    "from_torch_mha",
    "to_additive",
    "combine",
    "check_mask",
]


def check_mask(mask: torch.Tensor, name: str = "mask") -> torch.Tensor:
    """Raise a clear error unless ``mask`` is a boolean tensor; return it."""
    if not isinstance(mask, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(mask).__name__}")
    if mask.dtype != torch.bool:
        raise TypeError(f"{name} must be a bool tensor (True = may attend), got dtype {mask.dtype}")
    return mask


def padding_mask(lengths: torch.Tensor | list[int], max_len: int | None = None) -> torch.Tensor:
    """(N, S) bool mask, True at the first ``lengths[n]`` positions of row n (the real tokens).

    Args:
        lengths: (N,) number of real (non-padding) tokens per sequence.
        max_len: S; defaults to ``max(lengths)``.
    """
    lengths = torch.as_tensor(lengths)
    if lengths.dim() != 1:
        raise ValueError(f"lengths must be 1-D (N,), got shape {tuple(lengths.shape)}")
    if (lengths < 0).any():
        raise ValueError(f"lengths must be >= 0, got {lengths.tolist()}")
    max_len = int(lengths.max()) if max_len is None else max_len
    if (lengths > max_len).any():
        raise ValueError(f"a length exceeds max_len={max_len}: {lengths.tolist()}")
    return torch.arange(max_len, device=lengths.device) < lengths.unsqueeze(1)


def causal_mask(length: int, source_length: int | None = None, device=None) -> torch.Tensor:
    """(L, S) bool mask, True where key j may be seen by query i: j <= i (no peeking ahead).

    Query i sees keys 0..i, itself included. (Some lecture notes write j < i; that would stop
    a token from attending to itself, and the first token would see nothing at all.)
    """
    source_length = length if source_length is None else source_length
    if length < 1 or source_length < 1:
        raise ValueError(f"lengths must be positive, got L={length}, S={source_length}")
    return torch.ones(length, source_length, dtype=torch.bool, device=device).tril()


def to_torch_mha(mask: torch.Tensor) -> torch.Tensor:
    """seqlab meaning (True = attend) to ``nn.MultiheadAttention``'s (True = ignore)."""
    return ~check_mask(mask)


def from_torch_mha(mask: torch.Tensor) -> torch.Tensor:
    """``nn.MultiheadAttention``'s boolean meaning (True = ignore) to seqlab's (True = attend)."""
    return ~check_mask(mask)


def to_additive(mask: torch.Tensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Bool mask (True = attend) to an additive float mask: 0 where allowed, -inf elsewhere."""
    check_mask(mask)
    return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(~mask, float("-inf"))


def combine(attn_mask: torch.Tensor | None, key_padding: torch.Tensor | None) -> torch.Tensor | None:
    """One mask (True = attend) from an attention mask and a key-padding mask (N, S).

    The attention mask may be (L, S), (N, L, S) or (N, H, L, S); the result broadcasts against
    attention scores of shape (N, H, L, S): (N, 1, 1, S), (1, 1, L, S), (N, 1, L, S) or
    (N, H, L, S). Returns None when both are None.
    """
    result = None
    if attn_mask is not None:
        check_mask(attn_mask, "attn_mask")
        if attn_mask.dim() == 2:
            result = attn_mask[None, None]
        elif attn_mask.dim() == 3:
            result = attn_mask[:, None]
        elif attn_mask.dim() == 4:
            result = attn_mask
        else:
            raise ValueError(
                f"attn_mask must be (L, S), (N, L, S) or (N, H, L, S); got {tuple(attn_mask.shape)}"
            )
    if key_padding is not None:
        check_mask(key_padding, "key_padding_mask")
        if key_padding.dim() != 2:
            raise ValueError(f"key_padding_mask must be (N, S), got {tuple(key_padding.shape)}")
        padding = key_padding[:, None, None, :]
        result = padding if result is None else result & padding
    return result
