"""Attention masks: one meaning inside seqlab, and every conversion in one place.

Inside seqlab a mask is a bool tensor where ``True`` means **may attend** (as in
``F.scaled_dot_product_attention``): ``mask[..., i, j]`` is True when query i may look at key j.
The ``forward`` of the classes that mirror torch's (``MultiheadAttention``, ``EncoderLayer``,
``DecoderLayer``) take ``attn_mask`` and ``key_padding_mask`` as torch does, bool True =
**ignore** or float 0 / -inf (any other float, a bias, is refused), and ``from_torch_args``
converts them once. With ``is_causal=True`` a mask given too must hide every key the causal mask
hides (torch would use one or the other). A query with no key to attend gets zeros, never NaN.

Shapes: a key-padding mask is (N, S); an attention mask is (L, S), (N, L, S) or (N, H, L, S).
"""

from __future__ import annotations

import torch

from .checks import check_int, check_mask

__all__ = [
    "padding_mask",
    "causal_mask",
    "from_torch_args",
    "combine",
    "check_mask",
    "local_window",
    "gaussian_window",
]


def padding_mask(lengths: torch.Tensor | list[int], max_len: int | None = None) -> torch.Tensor:
    """(N, S) bool mask, True at the first ``lengths[n]`` (integers, (N,)) positions of row n;
    S = ``max_len``, by default ``max(lengths)`` (0 for an empty batch)."""
    if isinstance(lengths, (list, tuple)) and len(lengths) == 0:
        lengths = torch.zeros(0, dtype=torch.long)
    lengths = torch.as_tensor(lengths)
    if lengths.is_floating_point() or lengths.is_complex() or lengths.dtype == torch.bool:
        raise TypeError(
            f"lengths must be integers (token counts), got dtype {lengths.dtype}: {lengths.tolist()}"
        )
    if lengths.dim() != 1:
        raise ValueError(f"lengths must be 1-D (N,), got shape {tuple(lengths.shape)}")
    if (lengths < 0).any():
        raise ValueError(f"lengths must be >= 0, got {lengths.tolist()}")
    if max_len is None:
        max_len = int(lengths.max()) if lengths.numel() else 0
    else:
        check_int("max_len", max_len, minimum=0)
    if (lengths > max_len).any():
        raise ValueError(f"a length exceeds max_len={max_len}: {lengths.tolist()}")
    return torch.arange(max_len, device=lengths.device) < lengths.unsqueeze(1)


def causal_mask(length: int, source_length: int | None = None, device=None) -> torch.Tensor:
    """(L, S) bool mask, True where query i may see key j: j <= i, itself included (with j < i the
    first token would see nothing at all)."""
    source_length = length if source_length is None else source_length
    if length < 1 or source_length < 1:
        raise ValueError(f"lengths must be positive, got L={length}, S={source_length}")
    return torch.ones(length, source_length, dtype=torch.bool, device=device).tril()


def from_torch_args(
    attn_mask: torch.Tensor | None,
    key_padding_mask: torch.Tensor | None,
    is_causal: bool,
    shape: tuple[int, int, int],
    heads: int | None = None,
    names: tuple[str, str] = ("attn_mask", "key_padding_mask"),
    device: torch.device | None = None,
) -> torch.Tensor | None:
    """Torch-style ``attn_mask`` (L, S) (or (N*H, L, S) with ``heads``), ``key_padding_mask`` (N, S)
    and ``is_causal`` as one seqlab mask broadcastable to (N, H, L, S), or None; ``shape`` is
    (N, L, S), ``names`` the two arguments' names for the messages."""
    n, length, source = shape
    allowed = causal_mask(length, source, device=device) if is_causal else None
    if attn_mask is not None:
        attn_mask = _ignored(attn_mask, names[0])
        shapes = {"(L, S)": (length, source)} | (
            {"(N*H, L, S)": (n * heads, length, source)} if heads else {}
        )
        if tuple(attn_mask.shape) not in shapes.values():
            expected = " or ".join(f"{k} = {v}" for k, v in shapes.items())
            raise ValueError(f"{names[0]} must be {expected}, got {tuple(attn_mask.shape)}")
        given = ~attn_mask if attn_mask.dim() == 2 else (~attn_mask).view(n, heads, length, source)
        if allowed is not None and (given & ~allowed).any():
            raise ValueError(
                f"{names[0]} lets a query see a later key, but is_causal=True says it is causal: "
                "pass is_causal=False to use this mask, or a causal mask"
            )
        allowed = given
    padding = None
    if key_padding_mask is not None:
        key_padding_mask = _ignored(key_padding_mask, names[1])
        if key_padding_mask.shape != (n, source):
            raise ValueError(
                f"{names[1]} must be (N, S) = ({n}, {source}), got {tuple(key_padding_mask.shape)}"
            )
        padding = ~key_padding_mask
    return combine(allowed, padding)


def _ignored(mask: torch.Tensor, name: str) -> torch.Tensor:
    """A torch-style mask as a bool mask, True = ignore: a float mask's -inf entries."""
    meaning = "True = ignore, as in nn.MultiheadAttention"
    if isinstance(mask, torch.Tensor) and mask.is_floating_point():
        if not ((mask == 0) | (mask == float("-inf"))).all():
            raise ValueError(
                f"{name} is a float mask with values other than 0 and -inf: seqlab's attention takes "
                f"masks, not additive biases; pass a bool mask ({meaning}) or one of 0 / -inf"
            )
        return mask == float("-inf")
    return check_mask(mask, name, meaning + "; or a float mask of 0 / -inf")


def combine(attn_mask: torch.Tensor | None, key_padding: torch.Tensor | None) -> torch.Tensor | None:
    """One mask (True = attend), broadcastable to the scores (N, H, L, S), from an attention mask
    (L, S), (N, L, S) or (N, H, L, S) and a key-padding mask (N, S); None when both are None."""
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


def local_window(center: torch.Tensor, source_length: int, half_width: int) -> torch.Tensor:
    """Bool mask (N, L, S), True at the source positions in [p_t - D, p_t + D] (Luong's local
    attention), p_t = ``center`` (N, L), D = ``half_width``."""
    offset = _offsets(center, source_length, half_width, least=0)  # s - p_t: (N, L, S)
    return offset.abs() <= half_width


def gaussian_window(center: torch.Tensor, source_length: int, half_width: int) -> torch.Tensor:
    """Local-p's factor exp(-(s - p_t)^2 / (2 sigma^2)), sigma = D / 2, for every source position s:
    (N, L, S); p_t = ``center`` (N, L), D = ``half_width``."""
    offset = _offsets(center, source_length, half_width, least=1)  # s - p_t: (N, L, S)
    sigma = half_width / 2
    return torch.exp(-(offset**2) / (2 * sigma**2))


def _offsets(center: torch.Tensor, source_length: int, half_width: int, least: int) -> torch.Tensor:
    """s - p_t for every source position s: (N, L, S), after checking the window's arguments."""
    if not isinstance(center, torch.Tensor):
        raise TypeError(f"center must be a torch.Tensor (N, L), got {type(center).__name__}")
    if source_length < 1:
        raise ValueError(f"source_length S must be >= 1, got {source_length}")
    if half_width < least:
        raise ValueError(f"half_width D must be >= {least} for this window, got {half_width}")
    dtype = center.dtype if center.is_floating_point() else torch.float32
    positions = torch.arange(source_length, device=center.device, dtype=dtype)  # (S,)
    return positions - center.unsqueeze(-1)
