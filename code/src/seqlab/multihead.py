"""Multi-head attention, attention with a learnable query, and heads of unequal widths.

Multi-head attention projects the input to H sets of queries, keys and values of width
D = E / H, runs scaled dot-product attention in each head, concatenates the heads and mixes them
with an output projection W_o::

    Q, K, V = x_q W_q^T, x_kv W_k^T, x_kv W_v^T     # (N, L, E), (N, S, E), (N, S, E)
    head_h  = attention(Q_h, K_h, V_h)              # (N, L, D) for each of the H heads
    out     = concat(head_1 .. head_H) W_o^T        # (N, L, E)

``MultiheadAttention`` mirrors ``nn.MultiheadAttention`` (batch first): same parameter names and
layout, so ``from_torch`` copies one, and the same mask meaning in its signature
(``key_padding_mask`` and bool ``attn_mask``: True = ignore). Inside, masks are converted once by
``seqlab.masks``. Unlike the built-in, a query with every key masked gets zeros, not NaN.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from . import masks as _masks
from .attention import scaled_dot_product_attention

__all__ = [
    "split_heads",
    "merge_heads",
    "MultiheadAttention",
    "AttentionPooling",
    "UnequalHeadsAttention",
    "project_kv",
    "cached_attention",
]


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """(N, T, E) -> (N, H, T, D) with D = E / H: head h takes features h*D .. (h+1)*D - 1."""
    if x.dim() != 3:
        raise ValueError(f"x must be (N, T, E), got {tuple(x.shape)}")
    if isinstance(num_heads, bool) or not isinstance(num_heads, int) or num_heads < 1:
        raise ValueError(f"num_heads must be a positive integer, got {num_heads!r}")
    n, t, e = x.shape
    if e % num_heads:
        raise ValueError(f"E = {e} is not divisible by the number of heads H = {num_heads}")
    return x.unflatten(-1, (num_heads, e // num_heads)).transpose(1, 2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(N, H, T, D) -> (N, T, H * D): the inverse of ``split_heads``."""
    if x.dim() != 4:
        raise ValueError(f"x must be (N, H, T, D), got {tuple(x.shape)}")
    n, h, t, d = x.shape
    return x.transpose(1, 2).reshape(n, t, h * d)


def _check_input(name: str, x: torch.Tensor, embed_dim: int, dtype: torch.dtype) -> None:
    """Refuse anything but a (N, T, E) tensor of the module's dtype, naming ``name``."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.dtype != dtype:
        raise TypeError(f"{name} has dtype {x.dtype} but the module's parameters are {dtype}")
    if x.dim() != 3 or x.shape[-1] != embed_dim:
        raise ValueError(f"{name} must be (N, T, E) with E={embed_dim}, got {tuple(x.shape)}")


class MultiheadAttention(nn.Module):
    """Multi-head attention with ``nn.MultiheadAttention``'s parameters and signature.

    Args:
        embed_dim: E.
        num_heads: H; E must be divisible by H.
        bias: biases on the input and output projections.
        impl: default attention path, ``"scratch"`` or ``"torch"``.
    """

    def __init__(self, embed_dim: int, num_heads: int, bias: bool = True, impl: str = "scratch") -> None:
        super().__init__()
        for name, value in (("embed_dim", embed_dim), ("num_heads", num_heads)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {name}={value!r}")
        if embed_dim % num_heads:
            raise ValueError(f"embed_dim = {embed_dim} is not divisible by num_heads = {num_heads}")
        if impl not in ("scratch", "torch"):
            raise ValueError(f"impl must be 'scratch' or 'torch', got {impl!r}")
        self.embed_dim, self.num_heads, self.impl = embed_dim, num_heads, impl
        self.head_dim = embed_dim // num_heads
        self.in_proj_weight = nn.Parameter(torch.empty(3 * embed_dim, embed_dim))  # W_q; W_k; W_v
        self.in_proj_bias = nn.Parameter(torch.zeros(3 * embed_dim)) if bias else None
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        nn.init.xavier_uniform_(self.in_proj_weight)
        if bias:
            nn.init.zeros_(self.out_proj.bias)

    def _mask(self, attn_mask, key_padding_mask, n: int, length: int, source: int, is_causal: bool):
        """One bool mask (True = attend) broadcastable to (N, H, L, S), from torch-style inputs."""
        attn = None
        if is_causal:
            attn = _masks.causal_mask(length, source, device=self.in_proj_weight.device)
        if attn_mask is not None:
            _masks.check_mask(attn_mask, "attn_mask", "True = ignore, as in nn.MultiheadAttention")
            allowed = _masks.from_torch_mha(attn_mask)
            if allowed.dim() == 3:
                if allowed.shape[0] != n * self.num_heads:
                    raise ValueError(
                        f"a 3-D attn_mask must be (N*H, L, S) = ({n * self.num_heads}, {length}, {source}), "
                        f"got {tuple(allowed.shape)}"
                    )
                allowed = allowed.view(n, self.num_heads, length, source)
            elif allowed.shape != (length, source):
                raise ValueError(
                    f"attn_mask must be (L, S) = ({length}, {source}), got {tuple(allowed.shape)}"
                )
            attn = allowed if attn is None else attn & allowed
        padding = None
        if key_padding_mask is not None:
            _masks.check_mask(
                key_padding_mask,
                "key_padding_mask",
                "True = ignore that key (padding), as in nn.MultiheadAttention",
            )
            if key_padding_mask.shape != (n, source):
                raise ValueError(
                    f"key_padding_mask must be (N, S) = ({n}, {source}), got {tuple(key_padding_mask.shape)}"
                )
            padding = _masks.from_torch_mha(key_padding_mask)
        return _masks.combine(attn, padding)

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
        impl: str | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Attend from ``query`` (N, L, E) over ``key`` (N, S, E) and ``value`` (N, S, E).

        Args:
            key_padding_mask: (N, S) bool, True = ignore that key (padding).
            need_weights: return the attention weights (forces the scratch path, which forms them).
            attn_mask: (L, S) or (N*H, L, S) bool, True = ignore.
            average_attn_weights: average the returned weights over heads: (N, L, S); else
                (N, H, L, S).
            is_causal: add a causal mask (query i sees keys j <= i).
            impl: ``"scratch"`` or ``"torch"``; None uses the module's default.

        Returns:
            ``(out, weights)``: out (N, L, E); weights as above, or None if not ``need_weights``.
        """
        dtype = self.in_proj_weight.dtype
        for name, t in (("query", query), ("key", key), ("value", value)):
            if not isinstance(t, torch.Tensor):
                raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
            if t.dtype != dtype:
                raise TypeError(
                    f"{name} has dtype {t.dtype} but the module's parameters are {dtype}: "
                    f"convert one of them (e.g. {name}.to({dtype}) or module.to({t.dtype}))"
                )
            if t.dim() != 3 or t.shape[-1] != self.embed_dim:
                raise ValueError(f"{name} must be (N, T, E) with E={self.embed_dim}, got {tuple(t.shape)}")
        if key.shape[:2] != value.shape[:2] or query.shape[0] != key.shape[0]:
            raise ValueError(
                f"query, key, value must share N and key/value must share S: got {tuple(query.shape)}, "
                f"{tuple(key.shape)}, {tuple(value.shape)}"
            )
        n, length, _ = query.shape
        source = key.shape[1]
        w, b = self.in_proj_weight, self.in_proj_bias  # W_q; W_k; W_v
        if query is key and key is value:  # self-attention: one packed projection
            q, k, v = F.linear(query, w, b).chunk(3, dim=-1)
        else:
            w_q, w_k, w_v = w.chunk(3)
            b_q, b_k, b_v = b.chunk(3) if b is not None else (None,) * 3
            q = F.linear(query, w_q, b_q)  # (N, L, E)
            k = F.linear(key, w_k, b_k)  # (N, S, E)
            v = F.linear(value, w_v, b_v)  # (N, S, E)
        q = split_heads(q, self.num_heads)  # (N, H, L, D)
        k = split_heads(k, self.num_heads)  # (N, H, S, D)
        v = split_heads(v, self.num_heads)  # (N, H, S, D)
        mask = self._mask(attn_mask, key_padding_mask, n, length, source, is_causal)
        # only the scratch path forms the weights
        impl = "scratch" if need_weights else (impl or self.impl)
        kwargs = dict(impl=impl, return_weights=need_weights)
        result = scaled_dot_product_attention(q, k, v, mask, **kwargs)  # all heads
        heads, weights = result if need_weights else (result, None)
        out = self.out_proj(merge_heads(heads))  # concatenate, then W_o: (N, L, E)
        if weights is not None and average_attn_weights:
            weights = weights.mean(dim=1)  # (N, L, S)
        return out, weights

    @classmethod
    def from_torch(cls, mha: nn.MultiheadAttention, impl: str = "scratch") -> MultiheadAttention:
        """A copy of a batch-first ``nn.MultiheadAttention`` (same E for query, key and value)."""
        if not mha.batch_first or not mha._qkv_same_embed_dim or mha.bias_k is not None or mha.add_zero_attn:
            raise ValueError(
                "from_torch needs nn.MultiheadAttention(batch_first=True) with kdim = vdim = embed_dim, "
                "no add_bias_kv and no add_zero_attn"
            )
        new = cls(mha.embed_dim, mha.num_heads, bias=mha.in_proj_bias is not None, impl=impl)
        new.to(device=mha.in_proj_weight.device, dtype=mha.in_proj_weight.dtype)
        new.load_state_dict(mha.state_dict())
        return new


class AttentionPooling(nn.Module):
    """Attention with a learnable query: pool a sequence (N, S, E) into one vector (N, E).

    One trained query vector q scores every position, ``weights = softmax(x W_k^T q / sqrt(E))``,
    and the output is the weighted average of the values ``x W_v^T``. Useful to turn a sequence
    into a fixed-size representation for a classifier.
    """

    def __init__(self, embed_dim: int) -> None:
        super().__init__()
        self.query = nn.Parameter(torch.randn(embed_dim) / math.sqrt(embed_dim))
        self.key = nn.Linear(embed_dim, embed_dim)
        self.value = nn.Linear(embed_dim, embed_dim)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """``x`` (N, S, E); ``mask`` (N, S) bool, True = may attend.

        Returns ``(pooled, weights)``: (N, E) and (N, S).
        """
        _check_input("x", x, self.query.shape[0], self.query.dtype)
        q = self.query.expand(x.shape[0], 1, -1)  # (N, 1, E)
        m = None if mask is None else _masks.check_mask(mask)[:, None, :]  # (N, 1, S)
        out, weights = scaled_dot_product_attention(q, self.key(x), self.value(x), m, return_weights=True)
        return out[:, 0], weights[:, 0]


class UnequalHeadsAttention(nn.Module):
    """Multi-head attention whose heads have their own widths (scratch path only).

    Head i has query/key width ``qk_dims[i]`` and value width ``v_dims[i]``; the heads' outputs,
    of total width ``sum(v_dims)``, are concatenated and projected back to E by W_o.
    """

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
        """``x_q`` (N, L, E), ``x_kv`` (N, S, E), mask bool (True = attend) broadcastable to (N, L, S).

        Returns the output (N, L, E) and each head's weights, a list of H tensors (N, L, S).
        """
        for name, t in (("x_q", x_q), ("x_kv", x_kv)):
            _check_input(name, t, self.out.out_features, self.out.weight.dtype)
        heads, all_weights = [], []
        for wq, wk, wv in zip(self.q, self.k, self.v, strict=True):
            out, weights = scaled_dot_product_attention(
                wq(x_q), wk(x_kv), wv(x_kv), mask, return_weights=True
            )
            heads.append(out)
            all_weights.append(weights)
        return self.out(torch.cat(heads, dim=-1)), all_weights


# ------------------------------------------------------------------------ the key/value cache
# Used by seqlab.transformer. A decoder that writes one token at a time attends from the new
# position over every earlier one; their keys and values do not change, so they are kept (the
# *KV cache*) and each step projects only the new token. The memory's keys and values for
# cross-attention are projected once per input.


def project_kv(mha: MultiheadAttention, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The keys and values of ``x`` (N, S, E) under ``mha``'s W_k and W_v: two (N, H, S, D)."""
    _, w_k, w_v = mha.in_proj_weight.chunk(3)
    _, b_k, b_v = mha.in_proj_bias.chunk(3) if mha.in_proj_bias is not None else (None,) * 3
    keys, values = F.linear(x, w_k, b_k), F.linear(x, w_v, b_v)  # (N, S, E) each
    return split_heads(keys, mha.num_heads), split_heads(values, mha.num_heads)


def cached_attention(
    mha: MultiheadAttention,
    query: torch.Tensor,
    source: torch.Tensor | None,
    allowed: torch.Tensor | None = None,
    cache: tuple[torch.Tensor, torch.Tensor] | None = None,
    need_weights: bool = False,
    dropout_p: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor | None, tuple[torch.Tensor, torch.Tensor]]:
    """``mha``'s attention from ``query`` (N, L, E), masks in seqlab's meaning, with a KV cache.

    Args:
        source: (N, S', E), the positions whose keys and values are projected now and appended
            to ``cache`` (for self-attention pass ``query`` itself: one packed projection); None
            attends over ``cache`` alone (cross-attention over a memory projected by
            ``project_kv``).
        allowed: bool, True = may attend, broadcastable to (N, H, L, S) with S = S_old + S'.
        cache: (keys, values), each (N, H, S_old, D), or None for an empty cache.
        need_weights: also return the weights (N, H, L, S).
        dropout_p: dropout on the attention weights (as ``nn.MultiheadAttention(dropout=p)``
            in training); pass 0 in evaluation.

    Returns:
        ``(out, weights, (keys, values))``: out (N, L, E); weights or None; the cache extended
        by the S' new positions, each (N, H, S, D).
    """
    if source is None and cache is None:
        raise ValueError("cached_attention needs a source, a cache, or both")
    heads = mha.num_heads
    if source is query:  # self-attention: q, k, v in one product
        q, k, v = F.linear(query, mha.in_proj_weight, mha.in_proj_bias).chunk(3, dim=-1)
        k, v = split_heads(k, heads), split_heads(v, heads)
    else:
        b_q = mha.in_proj_bias.chunk(3)[0] if mha.in_proj_bias is not None else None
        q = F.linear(query, mha.in_proj_weight.chunk(3)[0], b_q)
        k, v = project_kv(mha, source) if source is not None else (None, None)
    q = split_heads(q, heads)  # (N, H, L, D)
    if cache is not None:
        k = cache[0] if k is None else torch.cat([cache[0], k], dim=2)  # (N, H, S, D)
        v = cache[1] if v is None else torch.cat([cache[1], v], dim=2)
    if need_weights:
        out, weights = scaled_dot_product_attention(
            q, k, v, allowed, return_weights=True, dropout_p=dropout_p
        )
    else:
        out, weights = scaled_dot_product_attention(q, k, v, allowed, impl="torch", dropout_p=dropout_p), None
    return mha.out_proj(merge_heads(out)), weights, (k, v)
