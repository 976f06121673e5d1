"""Language models: a GPT built from the Transformer's layers, and an LSTM language model.

A language model gives every position t the distribution of the next token,
p(x_{t+1} | x_1 .. x_t), so that p(x) = prod_t p(x_t | x_<t). A GPT (Radford et al. 2018) is the
Transformer's decoder without cross-attention: a stack of pre-norm blocks, each causal
self-attention and a feed-forward network (FFN)::

    x_0 = W_tok[tokens] + W_pos[0 .. T-1]                      # (N, T, E)
    a_l = x_{l-1} + MultiHead(LN(x_{l-1}), causal mask)         # attention: earlier tokens only
    x_l = a_l + FFN(LN(a_l))                                    # l = 1 .. layers
    logits = LN(x_layers) W_tok^T                               # (N, T, V): the tied output

A block is ``seqlab.transformer.EncoderLayer(norm_first=True)`` with a causal mask, so the model
equals PyTorch's ``nn.TransformerEncoderLayer(norm_first=True)`` stack with copied weights.
``extend`` feeds new tokens after the ones already seen, keeping every block's keys and values
(the KV cache of ``MultiheadAttention.attend``): generating one token then projects one token and
scores one query, instead of recomputing the whole prefix.

``LSTMLM`` reads the same tokens with an LSTM (``seqlab.lstm.LSTM``), projects its state to the
embedding width and uses the same tied output; its state (h, c) is its whole memory of the past.

Both take tokens (N, T) and return logits (N, T, V); ``start(N)`` and ``extend(tokens, state)``
are what ``seqlab.sampling.generate`` calls. Shapes: N batch, T tokens, E width, H heads, V
vocabulary.
"""

from __future__ import annotations

import torch
from torch import nn

from .checks import check_int
from .lstm import LSTM
from .transformer import EncoderLayer, _check_tokens

__all__ = ["GPT", "LSTMLM", "shifted_causal_mask", "lm_loss"]


def shifted_causal_mask(length: int, held: int, device=None) -> torch.Tensor:
    """(L, P + L) bool mask, True = may attend, for ``length`` (L) new queries after ``held`` (P)
    cached keys: the new token i (position P + i) sees the P cached keys and new keys j <= i."""
    return torch.ones(length, held + length, dtype=torch.bool, device=device).tril(held)


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
            EncoderLayer(d_model, nhead, dim_feedforward, dropout, norm_first=True, impl=impl)
            for _ in range(num_layers)
        )
        self.norm = nn.LayerNorm(d_model)  # the final LayerNorm of a pre-norm stack
        for embed in (self.tok_embed, self.pos_embed):
            nn.init.normal_(embed.weight, std=0.02)  # GPT-2's initialisation

    def _check(self, tokens: torch.Tensor, start: int) -> None:
        _check_tokens(tokens, self.vocab_size, "tokens")
        if start + tokens.shape[1] > self.context:
            raise ValueError(
                f"positions {start} .. {start + tokens.shape[1] - 1} exceed the context of "
                f"{self.context} tokens (tokens {tuple(tokens.shape)} after {start} held)"
            )

    def _embed(self, tokens: torch.Tensor, start: int) -> torch.Tensor:
        """Token plus position embeddings of ``tokens`` (N, T) at positions start ..: (N, T, E)."""
        positions = torch.arange(start, start + tokens.shape[1], device=tokens.device)
        return self.dropout(self.tok_embed(tokens) + self.pos_embed(positions))

    def _block(self, layer: EncoderLayer, x, mask, cache, need_weights):
        """One pre-norm block on ``x`` (N, L, E) after the ``cache``'s keys and values: x + attention,
        then x + FFN. Returns (N, L, E), the weights (N, H, L, P + L) or None, and the new cache."""
        h = layer.norm1(x)
        h, weights, cache = layer.self_attn.attend(
            h, h, h, mask, cache=cache, need_weights=need_weights, average_attn_weights=False
        )
        x = x + layer.dropout(h)
        x = x + layer._ff_block(layer.norm2(x))
        return x, weights, cache

    def _run(self, tokens, caches, start, need_weights):
        x = self._embed(tokens, start)
        mask = shifted_causal_mask(tokens.shape[1], start, device=tokens.device)
        weights, new_caches = [], []
        for layer, cache in zip(self.layers, caches):
            x, w, cache = self._block(layer, x, mask, cache, need_weights)
            weights.append(w)
            new_caches.append(cache)
        logits = self.norm(x) @ self.tok_embed.weight.T  # the tied output: (N, L, V)
        return logits, weights, new_caches

    def forward(
        self, tokens: torch.Tensor, need_weights: bool = False
    ) -> torch.Tensor | tuple[torch.Tensor, list[torch.Tensor]]:
        """``tokens`` (N, T), T <= context -> next-token logits (N, T, V): row t predicts token
        t + 1 from tokens 0 .. t. With ``need_weights`` also every block's weights (N, H, T, T)."""
        self._check(tokens, 0)
        logits, weights, _ = self._run(tokens, [None] * len(self.layers), 0, need_weights)
        return (logits, weights) if need_weights else logits

    def start(self, batch_size: int) -> dict:
        """The state before any token: empty caches, position 0."""
        check_int("batch_size", batch_size)
        return {"caches": [None] * len(self.layers), "t": 0, "n": batch_size}

    def extend(self, tokens: torch.Tensor, state: dict) -> tuple[torch.Tensor, dict]:
        """Feed ``tokens`` (N, L) after the ``state``'s tokens: their logits (N, L, V) and the state
        with every block's keys and values extended (the KV cache), each (N, H, t + L, D)."""
        self._check(tokens, state["t"])
        if tokens.shape[0] != state["n"]:
            raise ValueError(f"tokens must be (N, L) with N = {state['n']}, got {tuple(tokens.shape)}")
        logits, _, caches = self._run(tokens, state["caches"], state["t"], False)
        return logits, {**state, "caches": caches, "t": state["t"] + tokens.shape[1]}


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

    def _run(self, tokens, state):
        h, state = self.lstm(self.tok_embed(tokens), state)  # (N, T, E_h), (h_T, c_T)
        return self.proj(h) @ self.tok_embed.weight.T, state  # (N, T, V)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """``tokens`` (N, T) -> next-token logits (N, T, V), from a zero state."""
        _check_tokens(tokens, self.vocab_size, "tokens")
        return self._run(tokens, None)[0]

    def start(self, batch_size: int) -> dict:
        """The state before any token: (h, c) = None (zeros)."""
        check_int("batch_size", batch_size)
        return {"hc": None, "t": 0, "n": batch_size}

    def extend(self, tokens: torch.Tensor, state: dict) -> tuple[torch.Tensor, dict]:
        """Feed ``tokens`` (N, L) after the state's tokens: logits (N, L, V) and the new (h, c)."""
        _check_tokens(tokens, self.vocab_size, "tokens")
        if tokens.shape[0] != state["n"]:
            raise ValueError(f"tokens must be (N, L) with N = {state['n']}, got {tuple(tokens.shape)}")
        logits, hc = self._run(tokens, state["hc"])
        return logits, {**state, "hc": hc, "t": state["t"] + tokens.shape[1]}


def lm_loss(model: nn.Module, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
    """Mean next-token cross-entropy (nats) of ``model`` on ``batch[0]`` (N, T + 1): inputs are
    tokens 0 .. T - 1, targets tokens 1 .. T. For ``seqlab.train.fit``."""
    tokens = batch[0]
    logits = model(tokens[:, :-1])
    return nn.functional.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten())
