"""One pre-norm Transformer block, the unit every decoder-only model stacks, and its decoding state.

A block is a causal self-attention and a feed-forward network (FFN), each read through a norm and
added back to the residual stream (the pre-norm order of GPT-2 and Llama)::

    x = x + dropout(attn(norm1(x)))       # tokens exchange information: (N, L, E)
    x = x + dropout(ffn(norm2(x)))        # each token alone:            (N, L, E)

The block does not know which norm, attention or FFN it holds: the GPT of ``seqlab.gpt`` passes LayerNorms,
``seqlab.gpt.SelfAttention`` and a ReLU ``FeedForward``; a Llama block passes RMSNorms,
``seqlab.gqa.GroupedQueryAttention`` with RoPE and ``SwiGLU``. The attention takes and returns a
``KVCache``: the keys and values of the ``P`` tokens already seen, so that a decoding step projects
only its new tokens. ``DecodeState`` is a whole model's decoding state: one cache per block, the
number of tokens seen ``t`` and the batch size ``n``.

Shapes: x (N, L, E); mask broadcastable to (N, H, L, P + L), True = may attend; a cache's k, v
(N, G, P, D) with G key/value heads of width D.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from .checks import check_int, check_probability

__all__ = ["Block", "KVCache", "DecodeState"]


@dataclass
class KVCache:
    """The keys ``k`` and values ``v`` of the ``P`` positions seen so far, each (N, G, P, D)."""

    k: torch.Tensor
    v: torch.Tensor

    def __post_init__(self) -> None:
        for name, t in (("k", self.k), ("v", self.v)):
            if not isinstance(t, torch.Tensor) or t.dim() != 4:
                got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
                raise ValueError(f"KVCache.{name} must be a tensor (N, G, P, D), got {got}")
        if self.k.shape != self.v.shape:
            raise ValueError(
                f"KVCache.k and .v must have one shape, got {tuple(self.k.shape)} and {tuple(self.v.shape)}"
            )

    @property
    def length(self) -> int:
        """P, the number of cached positions."""
        return self.k.shape[2]


@dataclass
class DecodeState:
    """What a decoder keeps between calls of ``extend``: one cache per block (None before the first
    token), the number of tokens seen ``t`` and the batch size ``n``."""

    caches: list[KVCache | None]
    t: int = 0
    n: int = 1

    @classmethod
    def empty(cls, blocks: int, batch_size: int) -> DecodeState:
        """The state before any token: ``blocks`` empty caches, t = 0, n = ``batch_size``."""
        check_int("batch_size", batch_size)
        return cls([None] * check_int("blocks", blocks, minimum=0), 0, batch_size)

    def check(self, tokens: torch.Tensor) -> None:
        """Refuse ``tokens`` (N, L) whose N is not this state's batch size."""
        if tokens.shape[0] != self.n:
            raise ValueError(
                f"tokens must be (N, L) with N = {self.n} (the state's batch), got {tuple(tokens.shape)}"
            )


class Block(nn.Module):
    """``x = x + dropout(attn(norm1(x))); x = x + dropout(ffn(norm2(x)))``: a pre-norm block of the
    four modules given. ``attn(x, mask, cache, start, need_weights)`` returns (out, weights,
    cache) as ``GroupedQueryAttention`` does; ``norm1``, ``norm2`` and ``ffn`` map (N, L, E) to
    (N, L, E)."""

    def __init__(
        self, norm1: nn.Module, attn: nn.Module, norm2: nn.Module, ffn: nn.Module, dropout: float = 0.0
    ) -> None:
        super().__init__()
        for name, module in (("norm1", norm1), ("attn", attn), ("norm2", norm2), ("ffn", ffn)):
            if not isinstance(module, nn.Module):
                raise TypeError(f"{name} must be a torch.nn.Module, got {type(module).__name__}")
        # registered FFN first, then the norms, then the attention: the order of the Transformer's
        # EncoderLayer, so that a GPT's parameters come in the same order (and its gradient norm,
        # summed in that order, is the same to the last bit)
        self.ffn = ffn
        self.norm1, self.norm2 = norm1, norm2
        self.attn = attn
        self.dropout = nn.Dropout(check_probability("dropout", dropout))

    def forward(
        self,
        x: torch.Tensor,
        mask: torch.Tensor | None = None,
        cache: KVCache | None = None,
        start: int = 0,
        need_weights: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None, KVCache]:
        """``x`` (N, L, E) at positions ``start`` .. after the ``cache``'s P positions, ``mask``
        True = may attend, broadcastable to (N, H, L, P + L). Returns x (N, L, E), the attention
        weights (N, H, L, P + L) with ``need_weights`` (else None) and the cache extended by x."""
        h, weights, cache = self.attn(self.norm1(x), mask, cache, start, need_weights)
        x = x + self.dropout(h)
        x = x + self.dropout(self.ffn(self.norm2(x)))
        return x, weights, cache
