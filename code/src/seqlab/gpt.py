"""Language models: a GPT built from the Transformer's layers, and an LSTM language model.

A language model gives every position t the distribution of the next token,
p(x_{t+1} | x_1 .. x_t), so that p(x) = prod_t p(x_t | x_<t). A GPT (Radford et al. 2018) is the
Transformer's decoder without cross-attention: a stack of pre-norm blocks, each causal
self-attention and a feed-forward network (FFN)::

    x_0 = W_tok[tokens] + W_pos[0 .. T-1]                      # (N, T, E)
    a_l = x_{l-1} + MultiHead(LN(x_{l-1}), causal mask)         # attention: earlier tokens only
    x_l = a_l + FFN(LN(a_l))                                    # l = 1 .. layers
    logits = LN(x_layers) W_tok^T                               # (N, T, V): the tied output

A block is ``seqlab.block.Block``: LayerNorms, ``SelfAttention`` (``seqlab.multihead``'s multi-head
attention, with a causal mask) and a ReLU ``FeedForward``, built as the Transformer's
``EncoderLayer(norm_first=True)`` builds its parts, so the model equals PyTorch's
``nn.TransformerEncoderLayer(norm_first=True)`` stack with copied weights (``torch_names``
translates their parameter names). ``extend`` feeds new tokens after the ones already seen,
keeping every block's keys and values (the KV cache, one ``KVCache`` per block in a
``DecodeState``): generating one token then projects one token and scores one query, instead of
recomputing the whole prefix.

``LSTMLM`` reads the same tokens with an LSTM (``seqlab.lstm.LSTM``), projects its state to the
embedding width and uses the same tied output; its state (h, c) is its whole memory of the past.

Both take tokens (N, T) and return logits (N, T, V); ``start(N)`` and ``extend(tokens, state)``
are what ``seqlab.sampling.generate`` calls. Shapes: N batch, T tokens, E width, H heads, V
vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from .block import Block, DecodeState, KVCache
from .checks import check_int
from .ffn import FeedForward
from .lstm import LSTM
from .multihead import KV, MultiheadAttention
from .transformer import _check_tokens

__all__ = ["GPT", "LSTMLM", "LSTMState", "SelfAttention", "shifted_causal_mask", "torch_names", "lm_loss"]


def shifted_causal_mask(length: int, held: int, device=None) -> torch.Tensor:
    """(L, P + L) bool mask, True = may attend, for ``length`` (L) new queries after ``held`` (P)
    cached keys: the new token i (position P + i) sees the P cached keys and new keys j <= i."""
    return torch.ones(length, held + length, dtype=torch.bool, device=device).tril(held)


class SelfAttention(MultiheadAttention):
    """``seqlab.multihead.MultiheadAttention`` (its parameters, initialisation and ``impl``) as a
    block's self-attention: ``forward(x, mask, cache, start, need_weights)`` attends from ``x``
    (N, L, E) to the ``cache``'s keys and values and x's own, and returns (out (N, L, E), weights
    (N, H, L, P + L) or None, the extended ``KVCache``), as ``seqlab.gqa.GroupedQueryAttention``
    does. ``start`` is unused: a GPT adds positions to its embeddings."""

    def forward(
        self,
        x: torch.Tensor,
        mask: torch.Tensor | None = None,
        cache: KVCache | None = None,
        start: int = 0,
        need_weights: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None, KVCache]:
        """``x`` (N, L, E) after the ``cache``'s P positions (k, v (N, H, P, D)), ``mask`` True = may
        attend, broadcastable to (N, H, L, P + L) -> out (N, L, E), weights or None, the cache
        (N, H, P + L, D)."""
        held = None if cache is None else KV(cache.k, cache.v)
        out, weights, kv = self.attend(
            x, x, x, mask, cache=held, need_weights=need_weights, average_attn_weights=False
        )
        return out, weights, KVCache(kv.keys, kv.values)


# nn.TransformerEncoderLayer's parameter names, and the GPT block's
_TORCH_NAMES = {"self_attn": "attn", "linear1": "ffn.linear1", "linear2": "ffn.linear2"}


def torch_names(named: dict) -> dict:
    """``named`` (a state dict, or any dict keyed by parameter names) with the names of
    ``nn.TransformerEncoderLayer`` (``self_attn.*``, ``linear1.*``, ``linear2.*``; after any prefix
    such as ``0.``) written as those of the GPT's ``Block`` (``attn.*``, ``ffn.linear1.*``, ...)."""
    renamed = {}
    for name, value in named.items():
        *path, leaf = name.split(".")
        renamed[".".join([_TORCH_NAMES.get(part, part) for part in path] + [leaf])] = value
    return renamed


class GPT(nn.Module):
    """A decoder-only Transformer language model with learned positions and a tied output.

    ``vocab_size`` V, ``d_model`` E, ``nhead`` H, ``num_layers`` blocks, ``dim_feedforward`` the
    FFN width, ``context`` the longest sequence (positions 0 .. context - 1), ``impl`` the
    attention's path (``"scratch"`` or ``"torch"``)."""

    def __init__(
        self,
        vocab_size: int,
        d_model: int = 64,
        nhead: int = 4,
        num_layers: int = 2,
        dim_feedforward: int = 256,
        context: int = 64,
        dropout: float = 0.0,
        impl: str = "scratch",
    ) -> None:
        super().__init__()
        for name, value in (("vocab_size", vocab_size), ("num_layers", num_layers), ("context", context)):
            check_int(name, value)
        self.vocab_size, self.context = vocab_size, context
        self.tok_embed = nn.Embedding(vocab_size, d_model)  # W_tok (V, E)
        self.pos_embed = nn.Embedding(context, d_model)  # W_pos (context, E)
        self.dropout = nn.Dropout(dropout)
        self.layers = nn.ModuleList(
            self._block(d_model, nhead, dim_feedforward, dropout, impl) for _ in range(num_layers)
        )
        self.norm = nn.LayerNorm(d_model)  # the final LayerNorm of a pre-norm stack
        for embed in (self.tok_embed, self.pos_embed):
            nn.init.normal_(embed.weight, std=0.02)  # GPT-2's initialisation

    def _check(self, tokens: torch.Tensor, state: DecodeState) -> None:
        _check_tokens(tokens, self.vocab_size, "tokens")
        if not isinstance(state, DecodeState):
            raise TypeError(f"state must be the DecodeState of start or extend, got {type(state).__name__}")
        state.check(tokens)
        start = state.t
        if start + tokens.shape[1] > self.context:
            raise ValueError(
                f"positions {start} .. {start + tokens.shape[1] - 1} exceed the context of "
                f"{self.context} tokens (tokens {tuple(tokens.shape)} after {start} held)"
            )

    def _embed(self, tokens: torch.Tensor, start: int) -> torch.Tensor:
        """Token plus position embeddings of ``tokens`` (N, T) at positions start ..: (N, T, E)."""
        positions = torch.arange(start, start + tokens.shape[1], device=tokens.device)
        return self.dropout(self.tok_embed(tokens) + self.pos_embed(positions))

    @staticmethod
    def _block(d_model: int, nhead: int, dim_feedforward: int, dropout: float, impl: str) -> Block:
        """A pre-norm block, its parts made in the order of ``seqlab.transformer.EncoderLayer``'s
        (the FFN's weights are drawn first), so that a seed gives the same model."""
        ffn = FeedForward(d_model, dim_feedforward, "relu", dropout)
        norm1, norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        attn = SelfAttention(d_model, nhead, dropout, impl=impl)
        return Block(norm1, attn, norm2, ffn, dropout)

    def forward(
        self, tokens: torch.Tensor, need_weights: bool = False
    ) -> torch.Tensor | tuple[torch.Tensor, list[torch.Tensor]]:
        """``tokens`` (N, T), T <= context -> next-token logits (N, T, V): row t predicts token
        t + 1 from tokens 0 .. t. With ``need_weights`` also every block's weights (N, H, T, T)."""
        _check_tokens(tokens, self.vocab_size, "tokens")
        out = self.extend(tokens, self.start(tokens.shape[0]), need_weights)
        return (out[0], out[2]) if need_weights else out[0]

    def start(self, batch_size: int) -> DecodeState:
        """The state before any token: empty caches, position 0."""
        return DecodeState.empty(len(self.layers), batch_size)

    def extend(self, tokens: torch.Tensor, state: DecodeState, need_weights: bool = False):
        """Feed ``tokens`` (N, L) after the ``state``'s t tokens: their logits (N, L, V) and the
        state with every block's keys and values extended (the KV cache), each (N, H, t + L, D);
        with ``need_weights`` also every block's weights (N, H, L, t + L)."""
        self._check(tokens, state)
        x = self._embed(tokens, state.t)
        mask = shifted_causal_mask(tokens.shape[1], state.t, device=tokens.device)  # (L, t + L)
        weights, caches = [], []
        for block, cache in zip(self.layers, state.caches):
            x, w, cache = block(x, mask, cache, start=state.t, need_weights=need_weights)
            weights.append(w)
            caches.append(cache)
        logits = self.norm(x) @ self.tok_embed.weight.T  # the tied output: (N, L, V)
        state = DecodeState(caches, state.t + tokens.shape[1], state.n)
        return (logits, state, weights) if need_weights else (logits, state)


@dataclass
class LSTMState:
    """An LSTM language model's decoding state: its (h, c), each (N, E_h) (None before any token:
    zeros), the number of tokens seen ``t`` and the batch size ``n``."""

    hc: tuple[torch.Tensor, torch.Tensor] | None
    t: int = 0
    n: int = 1


class LSTMLM(nn.Module):
    """An LSTM language model: embedding (V, E), an LSTM of width ``hidden_size`` E_h, a projection
    E_h -> E and the tied output (E, V). ``impl``: the LSTM's path (``"scratch"``, ``"fast"``,
    ``"torch"``)."""

    context = None  # no limit: the state carries the past

    def __init__(
        self, vocab_size: int, embed_size: int = 64, hidden_size: int = 128, impl: str = "fast"
    ) -> None:
        super().__init__()
        check_int("vocab_size", vocab_size)
        self.vocab_size = vocab_size
        self.tok_embed = nn.Embedding(vocab_size, embed_size)
        self.lstm = LSTM(embed_size, hidden_size, impl=impl)
        self.proj = nn.Linear(hidden_size, embed_size)
        nn.init.normal_(self.tok_embed.weight, std=0.02)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """``tokens`` (N, T) -> next-token logits (N, T, V), from a zero state."""
        _check_tokens(tokens, self.vocab_size, "tokens")
        return self.extend(tokens, self.start(tokens.shape[0]))[0]

    def start(self, batch_size: int) -> LSTMState:
        """The state before any token: (h, c) = None (zeros)."""
        check_int("batch_size", batch_size)
        return LSTMState(None, 0, batch_size)

    def extend(self, tokens: torch.Tensor, state: LSTMState) -> tuple[torch.Tensor, LSTMState]:
        """Feed ``tokens`` (N, L) after the state's: logits (N, L, V) and the state with the new (h, c)."""
        _check_tokens(tokens, self.vocab_size, "tokens")
        if not isinstance(state, LSTMState):
            raise TypeError(f"state must be the LSTMState of start or extend, got {type(state).__name__}")
        if tokens.shape[0] != state.n:
            raise ValueError(f"tokens must be (N, L) with N = {state.n}, got {tuple(tokens.shape)}")
        h, hc = self.lstm(self.tok_embed(tokens), state.hc)  # (N, L, E_h), (h_L, c_L)
        logits = self.proj(h) @ self.tok_embed.weight.T  # the tied output: (N, L, V)
        return logits, LSTMState(hc, state.t + tokens.shape[1], state.n)


def lm_loss(model: nn.Module, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
    """Mean next-token cross-entropy (nats) of ``model`` on ``batch[0]`` (N, T + 1): inputs are
    tokens 0 .. T - 1, targets tokens 1 .. T. For ``seqlab.train.fit``."""
    tokens = batch[0]
    logits = model(tokens[:, :-1])
    return nn.functional.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten())
