"""Attention as a weighted average: scores, softmax over the keys, and a sum of values.

Scaled dot-product attention (chapter "Self-attention and multi-head attention")::

    scores  = q k^T / sqrt(D)              # (..., L, S)
    weights = softmax(scores over S)       # each row sums to 1 over the keys it may see
    out     = weights v                    # (..., L, D_v)

``impl="scratch"`` computes these lines, ``impl="torch"`` calls ``F.scaled_dot_product_attention``;
masks are bool, True = may attend. A query that may attend to no key gets zeros, never NaN.

The RNN attention chapters score a decoder state s against encoder states h_j in four ways
(Luong et al. 2015; Bahdanau et al. 2015), all in ``AttentionScore``::

    dot       e_j = s . h_j
    general   e_j = s^T W h_j
    concat    e_j = v^T tanh(W [s; h_j])          (Luong)
    additive  e_j = v^T tanh(W s + U h_j)         (Bahdanau)

and ``seqlab.masks.local_window`` / ``gaussian_window`` restrict them to a window of 2D + 1
source positions around an aligned position p (Luong's local-m and local-p attention).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .checks import check_choice, check_probability, check_tensor
from .masks import check_mask

IMPLS = ("scratch", "torch")  # the readable equations, or PyTorch's fused kernel

__all__ = ["scaled_dot_product_attention", "masked_softmax", "AttentionScore"]


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Softmax over the last axis restricted to ``mask`` (True = may attend, broadcastable to
    ``scores``); a row with no allowed entry gets zeros (and a finite gradient), never NaN."""
    if not isinstance(scores, torch.Tensor) or not scores.is_floating_point():
        raise TypeError(
            f"scores must be a floating-point tensor, got {getattr(scores, 'dtype', type(scores))}"
        )
    if mask is not None:
        _check_mask_shape(check_mask(mask), tuple(scores.shape), "scores")
    return _masked_softmax(scores, mask)


def _masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """``masked_softmax`` on checked arguments."""
    if mask is None:
        return scores.softmax(dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    seen = mask.any(dim=-1, keepdim=True)  # rows with at least one allowed key
    # a row of -inf alone would give 0/0 = NaN: give it finite scores, then zeros
    weights = scores.masked_fill(~seen, 0.0).softmax(dim=-1)
    return weights.masked_fill(~seen, 0.0)


def _check_mask_shape(mask: torch.Tensor, target: tuple[int, ...], what: str) -> None:
    try:
        shape = torch.broadcast_shapes(mask.shape, target)
    except RuntimeError:
        shape = None
    if shape != torch.Size(target):
        raise ValueError(
            f"mask of shape {tuple(mask.shape)} does not broadcast to the {what}' shape "
            f"{target} (..., L, S)" + ("" if shape is None else f": it would make them {tuple(shape)}")
        )


def _check_qkv(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Size:
    """Refuse bad q, k, v; return their broadcast batch shape."""
    for name, t, shape in (("q", q, "(..., L, D)"), ("k", k, "(..., S, D)"), ("v", v, "(..., S, D_v)")):
        check_tensor(name, t, shape)
    if not q.dtype == k.dtype == v.dtype:
        raise TypeError(f"q, k, v must share one dtype: got q {q.dtype}, k {k.dtype}, v {v.dtype}")
    if q.dim() < 2 or q.dim() != k.dim() or k.dim() != v.dim():
        raise ValueError(
            "q, k, v must have the same rank (>= 2): "
            f"got {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}"
        )
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must share their last dimension D: got {q.shape[-1]} and {k.shape[-1]}")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k and v must have the same number of keys S: got {k.shape[-2]} and {v.shape[-2]}")
    if q.shape[-1] == 0:
        raise ValueError(
            f"q and k need a width D >= 1 (scores are scaled by 1 / sqrt(D)), got q {tuple(q.shape)}"
        )
    try:
        return torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except RuntimeError:
        raise ValueError(
            "the batch dimensions of q, k, v do not broadcast: "
            f"got {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}"
        ) from None


def scaled_dot_product_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    *,
    scale: float | None = None,
    impl: str = "scratch",
    dropout_p: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Queries ``q`` (..., L, D) over keys ``k`` (..., S, D) and values ``v`` (..., S, D_v), ``mask``
    broadcastable to (..., L, S), ``scale`` (None: 1 / sqrt(D)), ``dropout_p`` on the weights.
    Returns out (..., L, D_v) and the weights before dropout (..., L, S) (None from "torch")."""
    batch = _check_qkv(q, k, v)
    check_choice("impl", impl, IMPLS)
    if mask is not None:
        _check_mask_shape(check_mask(mask), (*batch, q.shape[-2], k.shape[-2]), "scores")
    check_probability("dropout_p", dropout_p)
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    return _attention(q, k, v, mask, scale, impl, dropout_p)


def _attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None, scale: float,
    impl: str, dropout_p: float,
) -> tuple[torch.Tensor, torch.Tensor | None]:  # fmt: skip
    """``scaled_dot_product_attention`` on checked arguments: the fused kernel, or the equations."""
    if impl == "torch":
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale, dropout_p=dropout_p), None
    scores = (q @ k.transpose(-2, -1)) * scale  # (..., L, S)
    weights = _masked_softmax(scores, mask)  # no allowed key: zeros, not NaN
    out = (F.dropout(weights, dropout_p) if dropout_p > 0 else weights) @ v
    return out, weights


SCORES = ("dot", "general", "concat", "additive")


class AttentionScore(torch.nn.Module):
    """Alignment scores e (N, L, S) of queries (N, L, E_q) against keys (N, S, E_k); ``kind`` as in
    the module docstring, ``attention_size`` the hidden width of concat and additive."""

    def __init__(self, kind: str, query_size: int, key_size: int, attention_size: int | None = None) -> None:
        super().__init__()
        check_choice("kind", kind, SCORES)
        if kind == "dot" and query_size != key_size:
            raise ValueError(f"dot scores need query_size == key_size, got {query_size} and {key_size}")
        self.kind = kind
        a = attention_size or key_size
        if kind == "general":
            self.W = torch.nn.Linear(key_size, query_size, bias=False)  # s^T W h = s . (W h)
        elif kind == "concat":
            self.W = torch.nn.Linear(query_size + key_size, a, bias=False)
            self.v = torch.nn.Linear(a, 1, bias=False)
        elif kind == "additive":
            self.W = torch.nn.Linear(query_size, a, bias=False)
            self.U = torch.nn.Linear(key_size, a)
            self.v = torch.nn.Linear(a, 1, bias=False)

    def project_keys(self, keys: torch.Tensor) -> torch.Tensor | None:
        """The part of the score that depends on the keys alone: ``U h_j + b`` (additive) or
        ``W_k h_j`` (concat, where ``W [s; h] = W_q s + W_k h``), (N, S, A); None for dot and
        general. A decoder computes it once per source and passes it to every step as
        ``projected`` (Bahdanau et al. 2015, appendix A.1.2), instead of once per step."""
        if keys.dim() != 3:
            raise ValueError(f"keys must be (N, S, E_k), got {tuple(keys.shape)}")
        if self.kind == "concat":
            return keys @ self.W.weight[:, -keys.shape[-1] :].T  # W_k h_j
        if self.kind == "additive":
            return self.U(keys)
        return None

    def forward(
        self, query: torch.Tensor, keys: torch.Tensor, impl: str = "scratch", projected=None
    ) -> torch.Tensor:
        """Scores (N, L, S): ``impl="scratch"`` one key at a time, as the equations read; ``"fast"``
        all at once, reusing ``projected`` = ``project_keys(keys)`` if given."""
        if query.dim() != 3 or keys.dim() != 3 or query.shape[0] != keys.shape[0]:
            raise ValueError(
                "query must be (N, L, E_q) and keys (N, S, E_k), "
                f"got {tuple(query.shape)}, {tuple(keys.shape)}"
            )
        if check_choice("impl", impl, ("scratch", "fast")) == "scratch":
            return torch.stack([self._score_one(query, keys[:, j]) for j in range(keys.shape[1])], dim=-1)
        if self.kind == "dot":
            return query @ keys.transpose(1, 2)
        if self.kind == "general":  # (s^T W) h: W meets each query once, not each of the S keys
            return (query @ self.W.weight) @ keys.transpose(1, 2)
        if projected is None:
            projected = self.project_keys(keys)
        elif projected.shape[:2] != keys.shape[:2]:
            raise ValueError(
                f"projected must be (N, S, A) with (N, S) = {tuple(keys.shape[:2])}, "
                f"got {tuple(projected.shape)}"
            )
        if self.kind == "concat":  # W [s; h] = W_q s + W_k h
            w_q = self.W.weight[:, : query.shape[-1]]
            hidden = torch.tanh((query @ w_q.T).unsqueeze(2) + projected.unsqueeze(1))  # (N, L, S, A)
        else:
            hidden = torch.tanh(self.W(query).unsqueeze(2) + projected.unsqueeze(1))  # (N, L, S, A)
        return self.v(hidden).squeeze(-1)

    def _score_one(self, s: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """e_j for one key h (N, E_k) and every query s (N, L, E_q): (N, L)."""
        h = h.unsqueeze(1).expand(-1, s.shape[1], -1)  # (N, L, E_k)
        if self.kind == "dot":
            return (s * h).sum(-1)
        if self.kind == "general":
            return (s * self.W(h)).sum(-1)
        if self.kind == "concat":
            return self.v(torch.tanh(self.W(torch.cat([s, h], dim=-1)))).squeeze(-1)
        return self.v(torch.tanh(self.W(s) + self.U(h))).squeeze(-1)
