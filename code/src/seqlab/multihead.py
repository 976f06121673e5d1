"""Multi-head attention, attention with a learnable query, and heads of unequal widths.

Multi-head attention projects the input to H sets of queries, keys and values of width
D = E / H, runs scaled dot-product attention in each head, concatenates the heads and mixes them
with an output projection W_o::

    Q, K, V = x_q W_q^T, x_kv W_k^T, x_kv W_v^T     # (N, L, E), (N, S, E), (N, S, E)
    head_h  = attention(Q_h, K_h, V_h)              # (N, L, D) for each of the H heads
    out     = concat(head_1 .. head_H) W_o^T        # (N, L, E)

``MultiheadAttention`` is a drop-in for ``nn.MultiheadAttention(batch_first=True)`` (parameters,
``forward`` arguments, mask meanings, return values); unlike it, a query with every key masked
gets zeros, not NaN. ``attend`` (True = may attend) returns the keys and values it attended over
and takes them back as ``cache`` (the *KV cache*: a decoder step projects only the new token);
a memory's keys and values are projected once (``project_kv``) and passed as ``memory_kv``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from . import masks as _masks
from .attention import IMPLS, _attention, _check_mask_shape, scaled_dot_product_attention
from .checks import check_choice, check_int, check_probability, check_tensor

__all__ = [
    "split_heads",
    "merge_heads",
    "MultiheadAttention",
    "AttentionPooling",
    "UnequalHeadsAttention",
    "KV",
]


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """(N, T, E) -> (N, H, T, D) with D = E / H: head h takes features h*D .. (h+1)*D - 1."""
    if x.dim() != 3:
        raise ValueError(f"x must be (N, T, E), got {tuple(x.shape)}")
    check_int("num_heads", num_heads)
    if x.shape[-1] % num_heads:
        raise ValueError(f"E = {x.shape[-1]} is not divisible by the number of heads H = {num_heads}")
    return x.unflatten(-1, (num_heads, x.shape[-1] // num_heads)).transpose(1, 2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(N, H, T, D) -> (N, T, H * D): the inverse of ``split_heads``."""
    if x.dim() != 4:
        raise ValueError(f"x must be (N, H, T, D), got {tuple(x.shape)}")
    n, h, t, d = x.shape
    return x.transpose(1, 2).reshape(n, t, h * d)


def _check_input(name: str, x: torch.Tensor, embed_dim: int, dtype: torch.dtype) -> None:
    check_tensor(name, x, "(N, T, E)", dim=3, last=embed_dim, dtype=dtype)


class KV(NamedTuple):
    """Keys and values split into heads, each (N, H, S, D): a cache, or a projected memory."""

    keys: torch.Tensor
    values: torch.Tensor


class MultiheadAttention(nn.Module):
    """Multi-head attention, a drop-in for ``nn.MultiheadAttention(batch_first=True)``; ``impl``:
    the default path, ``"scratch"`` or ``"torch"`` (the fused kernel)."""

    def __init__(
        self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True, impl: str = "scratch"
    ) -> None:
        super().__init__()
        check_int("embed_dim", embed_dim), check_int("num_heads", num_heads)
        if embed_dim % num_heads:
            raise ValueError(f"embed_dim = {embed_dim} is not divisible by num_heads = {num_heads}")
        self.impl = check_choice("impl", impl, IMPLS)
        self.embed_dim, self.num_heads, self.head_dim = embed_dim, num_heads, embed_dim // num_heads
        self.dropout = check_probability("dropout", dropout)
        self.in_proj_weight = nn.Parameter(torch.empty(3 * embed_dim, embed_dim))  # W_q; W_k; W_v
        self.in_proj_bias = nn.Parameter(torch.zeros(3 * embed_dim)) if bias else None
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        nn.init.xavier_uniform_(self.in_proj_weight)
        if bias:
            nn.init.zeros_(self.out_proj.bias)

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        key_padding_mask: torch.Tensor | None = None,
        need_weights: bool = True,
        attn_mask: torch.Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
        *,
        impl: str | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """``query`` (N, L, E) over ``key``, ``value`` (N, S, E), masks as in torch:
        ``key_padding_mask`` (N, S), ``attn_mask`` (L, S) or (N*H, L, S), True / -inf = ignore.
        Returns out (N, L, E) and the weights (N, L, S), (N, H, L, S) unaveraged, or None;
        ``need_weights`` forces the scratch path, which forms them."""
        self._check(query, key, value, impl)
        shape = (query.shape[0], query.shape[1], key.shape[1])
        mask = _masks.from_torch_args(
            attn_mask, key_padding_mask, is_causal, shape, self.num_heads, device=query.device
        )
        out, weights, _ = self._attend(
            query, key, value, mask, None, need_weights, average_attn_weights, impl
        )
        return out, weights

    def attend(
        self,
        query: torch.Tensor,
        key: torch.Tensor | None,
        value: torch.Tensor | None,
        mask: torch.Tensor | None = None,
        *,
        cache: KV | None = None,
        memory_kv: KV | None = None,
        need_weights: bool = False,
        average_attn_weights: bool = True,
        impl: str | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None, KV]:
        """``forward`` with ``mask`` True = may attend, broadcastable to (N, H, L, S), and a
        ``cache`` that ``key``, ``value`` are appended to, or ``memory_kv`` (``project_kv``) with
        key = value = None. Returns out, weights and the keys and values (N, H, S, D) attended over."""
        self._check(query, key, value, impl, cache, memory_kv)
        if mask is not None:
            held = sum(kv.keys.shape[2] for kv in (cache, memory_kv) if kv is not None)
            source = held + (0 if key is None else key.shape[1])
            scores = (query.shape[0], self.num_heads, query.shape[1], source)  # (N, H, L, S)
            _check_mask_shape(_masks.check_mask(mask), scores, "scores")
        kv = memory_kv if memory_kv is not None else cache
        return self._attend(query, key, value, mask, kv, need_weights, average_attn_weights, impl)

    def _attend(self, query, key, value, mask, kv, need_weights, average_attn_weights, impl):
        """The equations, on checked arguments; ``kv``: a cache or a projected memory."""
        q, k, v = self._project(query, key, value)  # x W^T + b: (N, L, E), (N, S', E), (N, S', E)
        q = split_heads(q, self.num_heads)  # (N, H, L, D)
        kv = kv if k is None else self._append(kv, k, v)  # the keys and values: (N, H, S, D) each
        impl = "scratch" if need_weights else (impl or self.impl)  # only the scratch path forms weights
        dropout_p = self.dropout if self.training else 0.0
        heads, weights = _attention(q, *kv, mask, 1 / math.sqrt(self.head_dim), impl, dropout_p)
        out = self.out_proj(merge_heads(heads))  # concatenate the H heads, then W_o: (N, L, E)
        if need_weights and average_attn_weights:
            weights = weights.mean(dim=1)  # (N, L, S)
        return out, weights if need_weights else None, kv

    def _project(self, query: torch.Tensor, key: torch.Tensor | None, value: torch.Tensor | None):
        """``x W^T + b`` for each of query, key, value (N, T, E) or None; one product for self-attention."""
        w, b = self.in_proj_weight, self.in_proj_bias  # W_q; W_k; W_v
        if query is key and key is value:
            return F.linear(query, w, b).chunk(3, dim=-1)
        biases = b.chunk(3) if b is not None else (None,) * 3
        return [
            x if x is None else F.linear(x, w_i, b_i)
            for x, w_i, b_i in zip((query, key, value), w.chunk(3), biases)
        ]

    def _append(self, cache: KV | None, k: torch.Tensor, v: torch.Tensor) -> KV:
        """``cache`` with ``k``, ``v`` (N, S', E) appended: (N, H, S, D)."""
        k, v = split_heads(k, self.num_heads), split_heads(v, self.num_heads)
        if cache is None:
            return KV(k, v)
        return KV(torch.cat([cache.keys, k], dim=2), torch.cat([cache.values, v], dim=2))

    def project_kv(self, x: torch.Tensor) -> KV:
        """The keys and values of ``x`` (N, S, E), split into heads: pass them as ``memory_kv``."""
        _check_input("x", x, self.embed_dim, self.in_proj_weight.dtype)
        _, k, v = self._project(None, x, x)
        return self._append(None, k, v)

    def _check(self, query, key, value, impl, cache=None, memory_kv=None):
        if impl is not None:
            check_choice("impl", impl, IMPLS)
        if (memory_kv is None) != (key is not None and value is not None) or (
            memory_kv is not None and cache is not None
        ):
            raise ValueError(
                "pass key and value, or memory_kv with key = value = None; a cache needs key and value"
            )
        named = [("query", query)] + ([("key", key), ("value", value)] if memory_kv is None else [])
        for name, t in named:
            _check_input(name, t, self.embed_dim, self.in_proj_weight.dtype)
        n = query.shape[0]
        if memory_kv is None and (key.shape[:2] != value.shape[:2] or key.shape[0] != n):
            raise ValueError(
                f"query, key, value must share N and key/value must share S: got {tuple(query.shape)}, "
                f"{tuple(key.shape)}, {tuple(value.shape)}"
            )
        for kv in (cache, memory_kv):
            heads = (n, self.num_heads, self.head_dim)  # (N, H, D)
            ok = kv is None or (
                isinstance(kv, KV) and kv.keys.dim() == 4 and kv.keys.shape == kv.values.shape
            )
            if not ok or (kv is not None and (*kv.keys.shape[:2], kv.keys.shape[3]) != heads):
                raise ValueError(
                    f"cache and memory_kv must be KV(keys, values), each (N, H, S, D), (N, H, D) = {heads}"
                )

    @classmethod
    def from_torch(cls, mha: nn.MultiheadAttention, impl: str = "scratch") -> MultiheadAttention:
        """A copy of a batch-first ``nn.MultiheadAttention`` (same E for query, key and value)."""
        if not mha.batch_first or not mha._qkv_same_embed_dim or mha.bias_k is not None or mha.add_zero_attn:
            raise ValueError(
                "from_torch needs nn.MultiheadAttention(batch_first=True) with kdim = vdim = embed_dim, "
                "no add_bias_kv and no add_zero_attn"
            )
        new = cls(mha.embed_dim, mha.num_heads, mha.dropout, bias=mha.in_proj_bias is not None, impl=impl)
        new.to(device=mha.in_proj_weight.device, dtype=mha.in_proj_weight.dtype)
        new.load_state_dict(mha.state_dict())
        return new.train(mha.training)


class AttentionPooling(nn.Module):
    """A learnable query q pools (N, S, E) into (N, E): softmax(x W_k^T q / sqrt(E)) over x W_v^T."""

    def __init__(self, embed_dim: int) -> None:
        super().__init__()
        self.query = nn.Parameter(torch.randn(embed_dim) / math.sqrt(embed_dim))
        self.key = nn.Linear(embed_dim, embed_dim)
        self.value = nn.Linear(embed_dim, embed_dim)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """``x`` (N, S, E), ``mask`` (N, S) True = may attend -> pooled (N, E), weights (N, S)."""
        _check_input("x", x, self.query.shape[0], self.query.dtype)
        q = self.query.expand(x.shape[0], 1, -1)  # (N, 1, E)
        m = None if mask is None else _masks.check_mask(mask)[:, None, :]  # (N, 1, S)
        out, weights = scaled_dot_product_attention(q, self.key(x), self.value(x), m)
        return out[:, 0], weights[:, 0]


class UnequalHeadsAttention(nn.Module):
    """Multi-head attention whose head i has query/key width ``qk_dims[i]`` and value width
    ``v_dims[i]``; the concatenated heads are projected back to E by W_o."""

    def __init__(self, embed_dim: int, qk_dims: list[int], v_dims: list[int]) -> None:
        super().__init__()
        if len(qk_dims) != len(v_dims) or not qk_dims or min(qk_dims + v_dims) < 1:
            raise ValueError(f"need one positive qk and v width per head, got {qk_dims=}, {v_dims=}")
        self.q = nn.ModuleList(nn.Linear(embed_dim, d, bias=False) for d in qk_dims)
        self.k = nn.ModuleList(nn.Linear(embed_dim, d, bias=False) for d in qk_dims)
        self.v = nn.ModuleList(nn.Linear(embed_dim, d, bias=False) for d in v_dims)
        self.out = nn.Linear(sum(v_dims), embed_dim, bias=False)

    def forward(
        self, x_q: torch.Tensor, x_kv: torch.Tensor, mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """``x_q`` (N, L, E), ``x_kv`` (N, S, E), mask True = attend, broadcastable to (N, L, S).
        Returns (N, L, E) and each head's weights, H tensors (N, L, S)."""
        for name, t in (("x_q", x_q), ("x_kv", x_kv)):
            _check_input(name, t, self.out.out_features, self.out.weight.dtype)
        heads, all_weights = [], []
        for wq, wk, wv in zip(self.q, self.k, self.v, strict=True):
            out, weights = scaled_dot_product_attention(wq(x_q), wk(x_kv), wv(x_kv), mask)
            heads.append(out)
            all_weights.append(weights)
        return self.out(torch.cat(heads, dim=-1)), all_weights
