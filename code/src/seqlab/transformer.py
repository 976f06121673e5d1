"""The Transformer (Vaswani et al. 2017), assembled from the parts of the earlier chapters.

An encoder layer is self-attention and a feed-forward network (FFN), each wrapped in a residual
connection and a LayerNorm; a decoder layer adds cross-attention between the two, with queries
from the decoder and keys and values from the encoder's output (the *memory*)::

    post-norm (the paper):  x = norm(x + sublayer(x))
    pre-norm (an option):   x = x + sublayer(norm(x))      (and one final norm per stack)

``residual=False`` drops the ``x +`` and ``layer_norm=False`` drops the norms, to see what they
do. The layers keep ``nn.TransformerEncoderLayer``'s and ``nn.TransformerDecoderLayer``'s
parameter names (ReLU FFN, batch first), so ``from_torch`` copies one exactly.

``Transformer`` is the encoder-decoder for token sequences: embeddings scaled by sqrt(E),
sinusoidal positions, the two stacks, and an output projection; with ``tie_weights`` the
source embedding, target embedding and output projection share one (V, E) matrix (a shared
vocabulary). Decoding (``encode`` + ``step``, used by ``seqlab.decoding``) caches each decoder
layer's past keys and values, so step t projects only the new token instead of all t tokens.

Masks follow ``nn.MultiheadAttention`` at the layer level (True = ignore); the model takes
lengths. Shapes: src (N, S), tgt_in (N, L) token ids; activations (N, T, E); logits (N, L, V).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .attention import scaled_dot_product_attention
from .masks import padding_mask
from .multihead import MultiheadAttention, merge_heads, split_heads
from .positional import sinusoidal_encoding

__all__ = ["EncoderLayer", "DecoderLayer", "Transformer", "count_parameters"]


def count_parameters(module: nn.Module) -> int:
    """Number of distinct trainable parameters (a tied matrix counts once)."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


class _Block(nn.Module):
    """What encoder and decoder layers share: the FFN, the norms, and the residual wiring."""

    def __init__(
        self,
        d_model: int,
        dim_feedforward: int,
        dropout: float,
        norm_first: bool,
        residual: bool,
        layer_norm: bool,
        norms: int,
    ) -> None:
        super().__init__()
        self.norm_first, self.residual = norm_first, residual
        self.linear1 = nn.Linear(d_model, dim_feedforward)
        self.linear2 = nn.Linear(dim_feedforward, d_model)
        self.dropout = nn.Dropout(dropout)
        for i in range(1, norms + 1):
            setattr(self, f"norm{i}", nn.LayerNorm(d_model) if layer_norm else nn.Identity())

    def _ff(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear2(self.dropout(F.relu(self.linear1(x))))

    @classmethod
    def from_torch(cls, layer: nn.Module):
        """A copy of a batch-first, ReLU ``nn.TransformerEncoderLayer`` (for ``EncoderLayer``) or
        ``nn.TransformerDecoderLayer`` (for ``DecoderLayer``): same sizes, same weights, same device."""
        _check_torch_layer(layer)
        new = cls(
            layer.linear1.in_features, layer.self_attn.num_heads, layer.linear1.out_features,
            layer.dropout.p, layer.norm_first,
        )  # fmt: skip
        new.load_state_dict(layer.state_dict())
        return new.to(layer.linear1.weight.device)

    def _wrap(self, x: torch.Tensor, sublayer, norm: nn.Module) -> torch.Tensor:
        """One residual sub-layer, post-norm or pre-norm."""
        if self.norm_first:
            out = self.dropout(sublayer(norm(x)))
            return x + out if self.residual else out
        out = self.dropout(sublayer(x))
        return norm(x + out if self.residual else out)


def _check_input(x: torch.Tensor, d_model: int, name: str = "x") -> None:
    if x.dim() != 3 or x.shape[-1] != d_model:
        raise ValueError(f"{name} must be (N, T, E) with E={d_model}, got {tuple(x.shape)}")


class EncoderLayer(_Block):
    """Self-attention, then the FFN. Same parameters as ``nn.TransformerEncoderLayer``.

    Args:
        d_model: E.  nhead: H.  dim_feedforward: the FFN's hidden width.
        dropout: after attention, inside and after the FFN (as torch does).
        norm_first: pre-norm instead of the paper's post-norm.
        residual, layer_norm: set False to remove the residual connections or the LayerNorms.
    """

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 256,
        dropout: float = 0.0,
        norm_first: bool = False,
        residual: bool = True,
        layer_norm: bool = True,
    ) -> None:
        super().__init__(d_model, dim_feedforward, dropout, norm_first, residual, layer_norm, norms=2)
        self.self_attn = MultiheadAttention(d_model, nhead, impl="torch")
        self.weights: torch.Tensor | None = None  # (N, H, S, S) after a call with keep_weights

    def forward(
        self, src: torch.Tensor, src_key_padding_mask: torch.Tensor | None = None, keep_weights: bool = False
    ) -> torch.Tensor:
        """``src`` (N, S, E); ``src_key_padding_mask`` (N, S) bool, True = padding. Returns (N, S, E).

        With ``keep_weights``, the attention weights of every head are left in ``self.weights``.
        """
        _check_input(src, self.linear1.in_features, "src")

        def attend(x):
            out, w = self.self_attn(
                x, x, x, key_padding_mask=src_key_padding_mask, need_weights=keep_weights,
                average_attn_weights=False,
            )  # fmt: skip
            self.weights = w
            return out

        x = self._wrap(src, attend, self.norm1)
        return self._wrap(x, self._ff, self.norm2)


class DecoderLayer(_Block):
    """Masked self-attention, cross-attention over the memory, then the FFN.

    Same parameters as ``nn.TransformerDecoderLayer``; arguments as for ``EncoderLayer``.
    """

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 256,
        dropout: float = 0.0,
        norm_first: bool = False,
        residual: bool = True,
        layer_norm: bool = True,
    ) -> None:
        super().__init__(d_model, dim_feedforward, dropout, norm_first, residual, layer_norm, norms=3)
        self.self_attn = MultiheadAttention(d_model, nhead, impl="torch")
        self.multihead_attn = MultiheadAttention(d_model, nhead, impl="torch")  # cross-attention
        self.self_weights: torch.Tensor | None = None  # (N, H, L, L)
        self.cross_weights: torch.Tensor | None = None  # (N, H, L, S)

    def forward(
        self,
        tgt: torch.Tensor,
        memory: torch.Tensor,
        tgt_mask: torch.Tensor | None = None,
        memory_mask: torch.Tensor | None = None,
        tgt_key_padding_mask: torch.Tensor | None = None,
        memory_key_padding_mask: torch.Tensor | None = None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
        keep_weights: bool = False,
    ) -> torch.Tensor:
        """``tgt`` (N, L, E) over ``memory`` (N, S, E). Returns (N, L, E).

        Masks as in ``nn.TransformerDecoderLayer`` (bool, True = ignore): ``tgt_mask`` (L, L),
        ``memory_mask`` (L, S), key-padding masks (N, L) and (N, S); ``tgt_is_causal`` adds the
        causal mask itself. ``keep_weights`` leaves every head's weights in ``self_weights``
        and ``cross_weights``.
        """
        d_model = self.linear1.in_features
        _check_input(tgt, d_model, "tgt")
        _check_input(memory, d_model, "memory")
        if memory.shape[0] != tgt.shape[0]:
            raise ValueError(f"tgt and memory must share N, got {tuple(tgt.shape)} and {tuple(memory.shape)}")
        causal = tgt_is_causal and tgt_mask is None

        def self_attend(x):
            out, self.self_weights = self.self_attn(
                x, x, x, key_padding_mask=tgt_key_padding_mask, attn_mask=tgt_mask, is_causal=causal,
                need_weights=keep_weights, average_attn_weights=False,
            )  # fmt: skip
            return out

        def cross_attend(x):
            out, self.cross_weights = self.multihead_attn(
                x, memory, memory, key_padding_mask=memory_key_padding_mask, attn_mask=memory_mask,
                need_weights=keep_weights, average_attn_weights=False,
            )  # fmt: skip
            return out

        x = self._wrap(tgt, self_attend, self.norm1)
        x = self._wrap(x, cross_attend, self.norm2)
        return self._wrap(x, self._ff, self.norm3)

    # ---------------------------------------------------------------- incremental decoding
    def memory_cache(self, memory: torch.Tensor) -> dict:
        """Cross-attention keys and values of the memory (N, S, E), computed once per input."""
        w_k, w_v = self.multihead_attn.in_proj_weight.chunk(3)[1:]
        b_k, b_v = self.multihead_attn.in_proj_bias.chunk(3)[1:]
        heads = self.multihead_attn.num_heads
        return {
            "k": split_heads(F.linear(memory, w_k, b_k), heads),  # (N, H, S, D)
            "v": split_heads(F.linear(memory, w_v, b_v), heads),
            "self_k": memory.new_zeros(memory.shape[0], heads, 0, memory.shape[-1] // heads),
            "self_v": memory.new_zeros(memory.shape[0], heads, 0, memory.shape[-1] // heads),
        }

    def step(self, y: torch.Tensor, cache: dict, memory_allowed: torch.Tensor) -> tuple[torch.Tensor, dict]:
        """The layer at one new position: ``y`` (N, 1, E) the input there; ``cache`` from
        ``memory_cache`` or the previous step; ``memory_allowed`` (N, S) bool, True = real token.

        Returns the output (N, 1, E) and the cache with this position's self-attention key and
        value appended. Equal to ``forward`` with a causal mask, one position at a time.
        """
        new = dict(cache)
        mha = self.self_attn

        def self_attend(x):
            q, k, v = (
                split_heads(t, mha.num_heads)
                for t in F.linear(x, mha.in_proj_weight, mha.in_proj_bias).chunk(3, -1)
            )
            new["self_k"] = torch.cat([cache["self_k"], k], dim=2)  # (N, H, t + 1, D)
            new["self_v"] = torch.cat([cache["self_v"], v], dim=2)
            return mha.out_proj(
                merge_heads(scaled_dot_product_attention(q, new["self_k"], new["self_v"], impl="torch"))
            )

        def cross_attend(x):
            cross = self.multihead_attn
            w_q, b_q = cross.in_proj_weight.chunk(3)[0], cross.in_proj_bias.chunk(3)[0]
            q = split_heads(F.linear(x, w_q, b_q), cross.num_heads)  # (N, H, 1, D)
            mask = memory_allowed[:, None, None, :]  # (N, 1, 1, S)
            out = scaled_dot_product_attention(q, cache["k"], cache["v"], mask, impl="torch")
            return cross.out_proj(merge_heads(out))

        x = self._wrap(y, self_attend, self.norm1)
        x = self._wrap(x, cross_attend, self.norm2)
        return self._wrap(x, self._ff, self.norm3), new


def _check_torch_layer(layer: nn.Module) -> None:
    if not layer.self_attn.batch_first or layer.activation is not F.relu:
        raise ValueError("from_torch needs a layer built with batch_first=True and activation='relu'")
    if layer.norm1.bias is None or layer.linear1.bias is None:
        raise ValueError("from_torch needs a layer with biases (bias=True)")


class Transformer(nn.Module):
    """The encoder-decoder Transformer for token sequences.

    Args:
        src_vocab, tgt_vocab: vocabulary sizes (equal when ``tie_weights``: one shared vocabulary).
        d_model: E.  nhead: H.  num_encoder_layers, num_decoder_layers: stack depths.
        dim_feedforward, dropout, norm_first, residual, layer_norm: as for the layers.
        tie_weights: one (V, E) matrix for the source embedding, the target embedding and the
            output projection (the output keeps its own bias).
    """

    def __init__(
        self,
        src_vocab: int,
        tgt_vocab: int,
        d_model: int = 64,
        nhead: int = 4,
        num_encoder_layers: int = 2,
        num_decoder_layers: int = 2,
        dim_feedforward: int = 256,
        dropout: float = 0.0,
        norm_first: bool = False,
        residual: bool = True,
        layer_norm: bool = True,
        tie_weights: bool = False,
    ) -> None:
        super().__init__()
        if tie_weights and src_vocab != tgt_vocab:
            raise ValueError(f"tie_weights needs one shared vocabulary, got {src_vocab=} and {tgt_vocab=}")
        if d_model % nhead or d_model % 2:
            raise ValueError(f"d_model = {d_model} must be even and divisible by nhead = {nhead}")
        self.d_model, self.tie_weights = d_model, tie_weights
        options = dict(
            dim_feedforward=dim_feedforward, dropout=dropout, norm_first=norm_first, residual=residual,
            layer_norm=layer_norm,
        )  # fmt: skip
        self.src_embed = nn.Embedding(src_vocab, d_model)
        self.tgt_embed = self.src_embed if tie_weights else nn.Embedding(tgt_vocab, d_model)
        self.encoder = nn.ModuleList(
            EncoderLayer(d_model, nhead, **options) for _ in range(num_encoder_layers)
        )
        self.decoder = nn.ModuleList(
            DecoderLayer(d_model, nhead, **options) for _ in range(num_decoder_layers)
        )
        final = norm_first and layer_norm  # pre-norm stacks end with a norm
        self.encoder_norm = nn.LayerNorm(d_model) if final else nn.Identity()
        self.decoder_norm = nn.LayerNorm(d_model) if final else nn.Identity()
        self.dropout = nn.Dropout(dropout)
        self.out = nn.Linear(d_model, tgt_vocab)
        for embed in {self.src_embed, self.tgt_embed}:
            nn.init.normal_(embed.weight, std=d_model**-0.5)  # so that sqrt(E) * embedding has unit scale
        if tie_weights:
            self.out.weight = self.src_embed.weight

    def _embed(self, embed: nn.Embedding, tokens: torch.Tensor, start: int = 0) -> torch.Tensor:
        positions = sinusoidal_encoding(tokens.shape[1], self.d_model, start=start).to(self.out.weight.device)
        return self.dropout(embed(tokens) * math.sqrt(self.d_model) + positions)

    def _check(self, src: torch.Tensor, src_len: torch.Tensor) -> None:
        if src.dim() != 2 or src_len.shape != (src.shape[0],):
            raise ValueError(
                f"src must be (N, S) and src_len (N,), got {tuple(src.shape)} and {tuple(src_len.shape)}"
            )
        if (src_len < 1).any() or (src_len > src.shape[1]).any():
            raise ValueError(f"src_len must lie in 1..{src.shape[1]}, got {src_len.tolist()}")

    def memory(self, src: torch.Tensor, src_len: torch.Tensor, keep_weights: bool = False) -> torch.Tensor:
        """The encoder's output (N, S, E) for ``src`` (N, S) with lengths ``src_len`` (N,)."""
        self._check(src, src_len)
        ignore = ~padding_mask(src_len.to(src.device), src.shape[1])
        x = self._embed(self.src_embed, src)
        for layer in self.encoder:
            x = layer(x, src_key_padding_mask=ignore, keep_weights=keep_weights)
        return self.encoder_norm(x)

    def forward(
        self, src: torch.Tensor, src_len: torch.Tensor, tgt_in: torch.Tensor, keep_weights: bool = False
    ) -> torch.Tensor:
        """Teacher-forced logits (N, L, V) for ``tgt_in`` (N, L) (BOS first)."""
        if tgt_in.dim() != 2 or tgt_in.shape[0] != src.shape[0]:
            raise ValueError(f"tgt_in must be (N, L) with N={src.shape[0]}, got {tuple(tgt_in.shape)}")
        memory = self.memory(src, src_len, keep_weights)
        ignore = ~padding_mask(src_len.to(src.device), src.shape[1])
        y = self._embed(self.tgt_embed, tgt_in)
        for layer in self.decoder:
            y = layer(
                y, memory, memory_key_padding_mask=ignore, tgt_is_causal=True, keep_weights=keep_weights
            )
        return self.out(self.decoder_norm(y))

    def attention_weights(self, src: torch.Tensor, src_len: torch.Tensor, tgt_in: torch.Tensor) -> dict:
        """Every head's weights, per layer: ``{"encoder": [(N, H, S, S)], "decoder": [(N, H, L, L)],
        "cross": [(N, H, L, S)]}``."""
        with torch.no_grad():
            self.forward(src, src_len, tgt_in, keep_weights=True)
        return {
            "encoder": [layer.weights for layer in self.encoder],
            "decoder": [layer.self_weights for layer in self.decoder],
            "cross": [layer.cross_weights for layer in self.decoder],
        }

    # ---------------------------------------------------------------- decoding
    def encode(self, src: torch.Tensor, src_len: torch.Tensor) -> dict:
        """The decoding state: the memory's keys and values per decoder layer, empty caches."""
        memory = self.memory(src, src_len)
        return {
            "layers": [layer.memory_cache(memory) for layer in self.decoder],
            "allowed": padding_mask(src_len.to(src.device), src.shape[1]),  # (N, S)
            "t": torch.zeros(src.shape[0], dtype=torch.long, device=src.device),
        }

    def step(self, tokens: torch.Tensor, state: dict) -> tuple[torch.Tensor, dict]:
        """One decoder position: ``tokens`` (N,) the previous output. Returns logits (N, V), state."""
        t = int(state["t"][0]) if state["t"].numel() else 0
        y = self._embed(self.tgt_embed, tokens.to(state["allowed"].device).unsqueeze(1), start=t)  # (N, 1, E)
        caches = []
        for layer, cache in zip(self.decoder, state["layers"]):
            y, cache = layer.step(y, cache, state["allowed"])
            caches.append(cache)
        logits = self.out(self.decoder_norm(y)).squeeze(1)
        return logits, {"layers": caches, "allowed": state["allowed"], "t": state["t"] + 1}

    def decoder_step(self):
        """``step(tokens, state) -> (log_probs, state)`` for ``seqlab.decoding``."""

        def step(tokens: torch.Tensor, state: dict) -> tuple[torch.Tensor, dict]:
            logits, state = self.step(tokens, state)
            return logits.log_softmax(dim=-1), state

        return step
