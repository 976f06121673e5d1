"""Grouped-query attention (GQA): H query heads share G key/value heads (Ainslie et al. 2023).

Multi-head attention gives every query head its own keys and values; at decoding time those keys
and values are the KV cache, and it grows with H. Grouped-query attention keeps H query heads but
projects only G key/value heads, G dividing H: query head h reads key/value head h // (H / G).
G = H is multi-head attention, G = 1 multi-query attention (Shazeer 2019)::

    Q = x W_q^T  (N, H, L, D)     K = x W_k^T, V = x W_v^T  (N, G, L, D)     D = E / H
    K, V  <- RoPE(K) after the cache's P positions, then cat(cache, K), cat(cache, V): (N, G, P+L, D)
    K_h, V_h = K[h // (H/G)], V[h // (H/G)]           each key/value head repeated H/G times
    out = concat_h softmax(Q_h K_h^T / sqrt(D) + bias_h, masked) V_h  W_o^T                  (N, L, E)

Positions enter here or not at all: ``positions="rope"`` rotates Q and K (``seqlab.rope``),
``"alibi"`` adds ALiBi's bias to the scores, ``"none"`` leaves positions to the embeddings.
``impl="scratch"`` repeats the key/value heads and does the softmax by hand; ``impl="torch"`` is
``F.scaled_dot_product_attention(..., enable_gqa=True)``, which does the repeating itself.

Shapes: x (N, L, E); mask broadcastable to (N, H, L, P + L), True = may attend; weights
(N, H, L, P + L); cache k, v (N, G, P, D).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .attention import IMPLS, _check_mask_shape, _masked_softmax
from .block import KVCache
from .checks import check_choice, check_int, check_mask, check_probability, check_tensor
from .multihead import merge_heads, split_heads
from .rope import alibi_bias, apply_rope, rope_angles

__all__ = ["GroupedQueryAttention", "POSITIONS"]

POSITIONS = ("rope", "alibi", "none")


class GroupedQueryAttention(nn.Module):
    """Causal self-attention with ``H`` query heads and ``G`` key/value heads over width ``E``;
    ``positions`` ``"rope"`` / ``"alibi"`` / ``"none"``, ``rope_base`` and ``rope_scale`` as in
    ``seqlab.rope.rope_angles``, ``bias`` on the four projections, ``dropout`` on the weights,
    ``impl`` ``"scratch"`` or ``"torch"``. Parameters are named as Llama's (``q_proj``, ``k_proj``,
    ``v_proj``, ``o_proj``)."""

    def __init__(
        self,
        E: int,
        H: int,
        G: int,
        positions: str = "rope",
        rope_base: float = 10000.0,
        rope_scale: float = 1.0,
        bias: bool = False,
        impl: str = "scratch",
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        check_int("E", E), check_int("H", H), check_int("G", G)
        if E % H:
            raise ValueError(f"E = {E} must be divisible by the number of query heads H = {H}")
        if H % G:
            raise ValueError(f"H = {H} query heads must be divisible by G = {G} key/value heads")
        self.positions = check_choice("positions", positions, POSITIONS)
        self.impl = check_choice("impl", impl, IMPLS)
        self.dropout = check_probability("dropout", dropout)
        self.E, self.H, self.G, self.D = E, H, G, E // H
        if positions == "rope":
            if self.D % 2:
                raise ValueError(
                    f"RoPE rotates pairs of features: the head width D = E / H = {self.D} must be even"
                )
            rope_angles(torch.zeros(1), self.D, rope_base, rope_scale)  # checks base and scale now
        self.rope_base, self.rope_scale = rope_base, rope_scale
        self.q_proj = nn.Linear(E, H * self.D, bias=bias)  # W_q (H D, E)
        self.k_proj = nn.Linear(E, G * self.D, bias=bias)  # W_k (G D, E)
        self.v_proj = nn.Linear(E, G * self.D, bias=bias)  # W_v (G D, E)
        self.o_proj = nn.Linear(H * self.D, E, bias=bias)  # W_o (E, H D)

    def forward(
        self,
        x: torch.Tensor,
        mask: torch.Tensor | None = None,
        cache: KVCache | None = None,
        start: int = 0,
        need_weights: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None, KVCache]:
        """``x`` (N, L, E), the tokens at positions ``start`` .. ``start`` + L - 1, after the
        ``cache``'s P positions (``start`` - P .. ``start`` - 1; ``start`` >= P); ``mask`` True = may
        attend, broadcastable to (N, H, L, P + L), None = every key. Returns out (N, L, E), the
        weights (N, H, L, P + L) with ``need_weights`` (else None) and the cache extended by x."""
        self._check(x, mask, cache, start)
        n, length, _ = x.shape
        q = split_heads(self.q_proj(x), self.H)  # (N, H, L, D)
        k = split_heads(self.k_proj(x), self.G)  # (N, G, L, D)
        v = split_heads(self.v_proj(x), self.G)  # (N, G, L, D)
        if self.positions == "rope":
            positions = torch.arange(start, start + length, device=x.device)
            cos, sin = rope_angles(positions, self.D, self.rope_base, self.rope_scale)  # (L, D)
            q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        if cache is not None:  # the keys and values of the earlier positions, already rotated
            k, v = torch.cat([cache.k, k], dim=2), torch.cat([cache.v, v], dim=2)  # (N, G, P + L, D)
        held = k.shape[2] - length  # P
        bias = None
        if self.positions == "alibi":  # query i sits P + i keys along; only distances matter
            bias = alibi_bias(self.H, length, held + length, start=held, dtype=x.dtype, device=x.device)
        dropout_p = self.dropout if self.training else 0.0
        if need_weights or self.impl == "scratch":
            heads, weights = self._scratch(q, k, v, mask, bias, dropout_p)
        else:
            heads, weights = self._torch(q, k, v, mask, bias, dropout_p), None
        out = self.o_proj(merge_heads(heads))  # concatenate the H heads, then W_o: (N, L, E)
        return out, weights if need_weights else None, KVCache(k, v)

    def _scratch(self, q, k, v, mask, bias, dropout_p):
        """The equations: each key/value head repeated for its H / G query heads, then attention."""
        k = k.repeat_interleave(self.H // self.G, dim=1)  # (N, H, S, D): head h reads k[h // (H/G)]
        v = v.repeat_interleave(self.H // self.G, dim=1)  # (N, H, S, D)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.D)  # (N, H, L, S)
        if bias is not None:
            scores = scores + bias  # ALiBi: (H, L, S)
        weights = _masked_softmax(scores, mask)  # a query with no key gets zeros, not NaN
        out = (F.dropout(weights, dropout_p) if dropout_p > 0 else weights) @ v  # (N, H, L, D)
        return out, weights

    def _torch(self, q, k, v, mask, bias, dropout_p):
        """PyTorch's fused kernel, which reads key/value head h // (H/G) for query head h itself."""
        if bias is not None:  # one float mask: the bias where allowed, -inf elsewhere
            bias = bias if mask is None else bias.masked_fill(~mask, float("-inf"))
            mask = bias.expand(q.shape[0], -1, -1, -1)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p, enable_gqa=True)

    def _check(self, x, mask, cache, start) -> None:
        check_tensor("x", x, "(N, L, E)", dim=3, last=self.E, dtype=self.q_proj.weight.dtype)
        held = 0
        if cache is not None:
            if not isinstance(cache, KVCache):
                raise TypeError(f"cache must be a seqlab.block.KVCache or None, got {type(cache).__name__}")
            expected = (x.shape[0], self.G, cache.length, self.D)
            if tuple(cache.k.shape) != expected or cache.k.dtype != x.dtype:
                raise ValueError(
                    f"cache.k and .v must be (N, G, P, D) = {expected} in {x.dtype}, "
                    f"got {tuple(cache.k.shape)} in {cache.k.dtype}"
                )
            held = cache.length
        check_int("start", start, minimum=held)
        if mask is not None:
            scores = (x.shape[0], self.H, x.shape[1], held + x.shape[1])  # (N, H, L, P + L)
            _check_mask_shape(check_mask(mask), scores, "scores")
