"""The Transformer (Vaswani et al. 2017), assembled from the parts of the earlier chapters.

An encoder layer is self-attention and a feed-forward network (FFN), each wrapped in a residual
connection and a LayerNorm; a decoder layer adds cross-attention over the encoder's output (the
*memory*)::

    post-norm (the paper):  x = norm(x + dropout(sublayer(x)))
    pre-norm (an option):   x = x + dropout(sublayer(norm(x)))      (one final norm per stack)

``encode`` / ``decode`` read as these equations, one method per sub-layer as in
``nn.TransformerEncoderLayer`` (``_sa_block``, ``_mha_block``, ``_ff_block``). The layers are
drop-ins for ``nn.TransformerEncoderLayer`` / ``nn.TransformerDecoderLayer`` (ReLU, batch first):
same parameter names (``load_state_dict`` both ways, ``from_torch``), ``forward`` arguments and
mask meanings (bool True = ignore, or float -inf), converted once by
``seqlab.masks.from_torch_args`` to seqlab's True = may attend. ``residual=False`` /
``layer_norm=False`` drop the ``x +`` / the norms. ``Transformer`` adds embeddings scaled by
sqrt(E), sinusoidal positions and an output projection (one shared (V, E) matrix with
``tie_weights``); decoding (``encode`` + ``step``) keeps a KV cache per decoder layer.

Shapes: src (N, S), tgt_in (N, L) token ids; activations (N, T, E); logits (N, L, V).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from . import masks
from .checks import check_probability, check_tensor
from .decoding import decoder_step
from .multihead import KV, MultiheadAttention
from .positional import sinusoidal_encoding
from .utils import eval_mode

__all__ = ["EncoderLayer", "DecoderLayer", "Transformer"]


class _Layer(nn.Module):
    """What encoder and decoder layers share. ``d_model`` E, ``nhead`` H, ``dim_feedforward``
    the FFN's width; ``dropout`` where torch's acts; ``impl`` the attentions' path."""

    sublayers = 2  # self-attention and the FFN; a decoder layer adds cross-attention

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 256,
        dropout: float = 0.0,
        norm_first: bool = False,
        residual: bool = True,
        layer_norm: bool = True,
        layer_norm_eps: float = 1e-5,
        impl: str = "scratch",
    ) -> None:
        super().__init__()
        check_probability("dropout", dropout)
        self.norm_first, self.residual = norm_first, residual
        self.linear1 = nn.Linear(d_model, dim_feedforward)  # W_1, b_1
        self.linear2 = nn.Linear(dim_feedforward, d_model)  # W_2, b_2
        self.dropout = nn.Dropout(dropout)
        norms = [
            nn.LayerNorm(d_model, eps=layer_norm_eps) if layer_norm else nn.Identity()
            for _ in range(self.sublayers)
        ]
        self.norm1, self.norm2 = norms[:2]
        if self.sublayers == 3:  # a decoder layer: a third norm (registered here, before the
            self.norm3 = norms[2]  # attentions, in torch's order of parameters), cross-attention
        self.self_attn = MultiheadAttention(d_model, nhead, dropout, impl=impl)
        if self.sublayers == 3:
            self.multihead_attn = MultiheadAttention(d_model, nhead, dropout, impl=impl)

    def _ff_block(self, x: torch.Tensor) -> torch.Tensor:
        """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2 at every position: (N, T, E) -> (N, T, E)."""
        return self.dropout(self.linear2(self.dropout(F.relu(self.linear1(x)))))

    def _check(self, x: torch.Tensor, name: str) -> None:
        check_tensor(name, x, "(N, T, E)", dim=3, last=self.linear1.in_features)

    @classmethod
    def from_torch(cls, layer: nn.Module):
        """A copy of a batch-first, ReLU ``nn.Transformer{Encoder,Decoder}Layer``."""
        if not layer.self_attn.batch_first or layer.activation is not F.relu:
            raise ValueError("from_torch needs a layer built with batch_first=True and activation='relu'")
        if layer.norm1.bias is None or layer.linear1.bias is None:
            raise ValueError("from_torch needs a layer with biases (bias=True)")
        if layer.self_attn.dropout != layer.dropout.p:
            raise ValueError(
                f"from_torch needs one dropout rate, got {layer.self_attn.dropout} on the attention "
                f"weights and {layer.dropout.p} elsewhere"
            )
        new = cls(
            layer.linear1.in_features, layer.self_attn.num_heads, layer.linear1.out_features,
            dropout=layer.dropout.p, norm_first=layer.norm_first, layer_norm_eps=layer.norm1.eps,
        )  # fmt: skip
        weight = layer.linear1.weight
        new.to(device=weight.device, dtype=weight.dtype)
        new.load_state_dict(layer.state_dict())
        return new


class EncoderLayer(_Layer):
    """Self-attention, then the FFN (``nn.TransformerEncoderLayer``'s parameters)."""

    def forward(
        self,
        src: torch.Tensor,
        src_mask: torch.Tensor | None = None,
        src_key_padding_mask: torch.Tensor | None = None,
        is_causal: bool = False,
        need_weights: bool = False,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """``src`` (N, S, E), ``src_mask`` (S, S), ``src_key_padding_mask`` (N, S) -> (N, S, E),
        and with ``need_weights`` every head's weights (N, H, S, S)."""
        self._check(src, "src")
        n, s = src.shape[:2]
        names = ("src_mask", "src_key_padding_mask")
        mask = masks.from_torch_args(
            src_mask, src_key_padding_mask, is_causal, (n, s, s), names=names, device=src.device
        )
        x, weights = self.encode(src, mask, need_weights)
        return (x, weights) if need_weights else x

    def encode(
        self, x: torch.Tensor, mask: torch.Tensor | None, need_weights: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The encoder layer's equations on ``x`` (N, S, E); ``mask`` True = may attend."""
        if self.norm_first:
            h, weights = self._sa_block(self.norm1(x), mask, need_weights)
            x = x + h if self.residual else h
            h = self._ff_block(self.norm2(x))
            x = x + h if self.residual else h
        else:
            h, weights = self._sa_block(x, mask, need_weights)
            x = self.norm1(x + h if self.residual else h)
            h = self._ff_block(x)
            x = self.norm2(x + h if self.residual else h)
        return x, weights

    def _sa_block(
        self, x: torch.Tensor, mask: torch.Tensor | None, need_weights: bool
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """MultiHead(x, x, x), then dropout: (N, S, E), and the weights (N, H, S, S) or None."""
        h, weights, _ = self.self_attn.attend(
            x, x, x, mask, need_weights=need_weights, average_attn_weights=False
        )
        return self.dropout(h), weights


class DecoderLayer(_Layer):
    """Masked self-attention, cross-attention, the FFN (``nn.TransformerDecoderLayer``'s parameters)."""

    sublayers = 3

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
        need_weights: bool = False,
    ) -> torch.Tensor | tuple[torch.Tensor, dict]:
        """``tgt`` (N, L, E) over ``memory`` (N, S, E) -> (N, L, E); masks (L, L), (L, S), (N, L),
        (N, S). With ``need_weights`` also ``{"self": (N, H, L, L), "cross": (N, H, L, S)}``."""
        self._check(tgt, "tgt")
        self._check(memory, "memory")
        if memory.shape[0] != tgt.shape[0]:
            raise ValueError(f"tgt and memory must share N, got {tuple(tgt.shape)} and {tuple(memory.shape)}")
        n, length, source = tgt.shape[0], tgt.shape[1], memory.shape[1]
        self_mask = masks.from_torch_args(
            tgt_mask, tgt_key_padding_mask, tgt_is_causal, (n, length, length),
            names=("tgt_mask", "tgt_key_padding_mask"), device=tgt.device,
        )  # fmt: skip
        memory_mask = masks.from_torch_args(
            memory_mask, memory_key_padding_mask, memory_is_causal, (n, length, source),
            names=("memory_mask", "memory_key_padding_mask"), device=tgt.device,
        )  # fmt: skip
        memory_kv = self.multihead_attn.project_kv(memory)  # the memory's keys and values
        x, weights, _ = self.decode(tgt, memory_kv, self_mask, memory_mask, None, need_weights)
        return (x, weights) if need_weights else x

    def decode(
        self,
        x: torch.Tensor,
        memory_kv: KV,
        self_mask: torch.Tensor | None,
        memory_mask: torch.Tensor | None,
        cache: KV | None = None,
        need_weights: bool = False,
    ) -> tuple[torch.Tensor, dict, KV]:
        """The decoder layer's equations on ``x`` (N, L, E), masks True = may attend; ``cache``:
        earlier positions' keys and values. Returns (N, L, E), the weights ({} unless
        ``need_weights``) and the cache extended by x."""
        if self.norm_first:
            h, w_self, cache = self._sa_block(self.norm1(x), self_mask, cache, need_weights)
            x = x + h if self.residual else h
            h, w_cross = self._mha_block(self.norm2(x), memory_kv, memory_mask, need_weights)
            x = x + h if self.residual else h
            h = self._ff_block(self.norm3(x))
            x = x + h if self.residual else h
        else:
            h, w_self, cache = self._sa_block(x, self_mask, cache, need_weights)
            x = self.norm1(x + h if self.residual else h)
            h, w_cross = self._mha_block(x, memory_kv, memory_mask, need_weights)
            x = self.norm2(x + h if self.residual else h)
            h = self._ff_block(x)
            x = self.norm3(x + h if self.residual else h)
        weights = {"self": w_self, "cross": w_cross} if need_weights else {}
        return x, weights, cache

    def _sa_block(
        self, x: torch.Tensor, mask: torch.Tensor | None, cache: KV | None, need_weights: bool
    ) -> tuple[torch.Tensor, torch.Tensor | None, KV]:
        """Masked MultiHead(x, x, x) over the cached positions and x itself, then dropout."""
        h, weights, cache = self.self_attn.attend(
            x, x, x, mask, cache=cache, need_weights=need_weights, average_attn_weights=False
        )
        return self.dropout(h), weights, cache

    def _mha_block(
        self, x: torch.Tensor, memory_kv: KV, mask: torch.Tensor | None, need_weights: bool
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Cross-attention MultiHead(x, memory, memory) (``memory_kv`` projected once), then dropout."""
        h, weights, _ = self.multihead_attn.attend(
            x, None, None, mask, memory_kv=memory_kv, need_weights=need_weights, average_attn_weights=False
        )
        return self.dropout(h), weights


def _check_tokens(tokens: torch.Tensor, vocab: int, name: str) -> None:
    if not isinstance(tokens, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor of token ids, got {type(tokens).__name__}")
    if tokens.dtype not in (torch.long, torch.int, torch.int16, torch.int8, torch.uint8):
        raise TypeError(f"{name} must hold integer token ids, got dtype {tokens.dtype}")
    if tokens.dim() != 2 or tokens.shape[1] == 0:
        raise ValueError(f"{name} must be (N, T) with T >= 1, got {tuple(tokens.shape)}")
    if tokens.numel() and (tokens.min() < 0 or tokens.max() >= vocab):
        raise ValueError(
            f"{name} holds token ids outside 0..{vocab - 1} (the vocabulary): "
            f"min {int(tokens.min())}, max {int(tokens.max())}"
        )


class Transformer(nn.Module):
    """The encoder-decoder Transformer for token sequences; ``embedding_dropout`` (None:
    ``dropout``) acts on each stack's input, the other arguments as for the layers."""

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
        embedding_dropout: float | None = None,
        impl: str = "scratch",
    ) -> None:
        super().__init__()
        embedding_dropout = dropout if embedding_dropout is None else embedding_dropout
        check_probability("embedding_dropout", embedding_dropout)
        if tie_weights and src_vocab != tgt_vocab:
            raise ValueError(f"tie_weights needs one shared vocabulary, got {src_vocab=} and {tgt_vocab=}")
        if d_model % nhead or d_model % 2:
            raise ValueError(f"d_model = {d_model} must be even and divisible by nhead = {nhead}")
        self.d_model, self.tie_weights = d_model, tie_weights
        self.src_vocab, self.tgt_vocab = src_vocab, tgt_vocab
        options = dict(
            dim_feedforward=dim_feedforward, dropout=dropout, norm_first=norm_first, residual=residual,
            layer_norm=layer_norm, impl=impl,
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
        self.dropout = nn.Dropout(embedding_dropout)
        self.out = nn.Linear(d_model, tgt_vocab)
        for embed in dict.fromkeys([self.src_embed, self.tgt_embed]):  # in a fixed order (a set's is not)
            nn.init.normal_(embed.weight, std=d_model**-0.5)  # so that sqrt(E) * embedding has unit scale
        if tie_weights:
            self.out.weight = self.src_embed.weight

    def _embed(self, embed: nn.Embedding, tokens: torch.Tensor, start: int = 0) -> torch.Tensor:
        """sqrt(E) * embedding + sinusoidal position (positions start .. start + T - 1): (N, T, E)."""
        positions = sinusoidal_encoding(tokens.shape[1], self.d_model, start=start).to(self.out.weight.device)
        return self.dropout(embed(tokens) * math.sqrt(self.d_model) + positions)

    def _source_mask(self, src: torch.Tensor, src_len: torch.Tensor) -> torch.Tensor:
        """Check ``src`` and ``src_len``; return the source mask (N, S), True = a real token."""
        _check_tokens(src, self.src_vocab, "src")
        if not isinstance(src_len, torch.Tensor):
            raise TypeError(f"src_len must be a torch.Tensor (N,) of lengths, got {type(src_len).__name__}")
        if src_len.dtype.is_floating_point or src_len.dtype == torch.bool:
            raise TypeError(f"src_len must hold integer lengths, got dtype {src_len.dtype}")
        if src_len.shape != (src.shape[0],):
            raise ValueError(f"src_len must be (N,) = ({src.shape[0]},), got {tuple(src_len.shape)}")
        if (src_len < 1).any() or (src_len > src.shape[1]).any():
            raise ValueError(f"src_len must lie in 1..{src.shape[1]}, got {src_len.tolist()}")
        return masks.padding_mask(src_len.to(src.device), src.shape[1])

    def _memory(
        self, src: torch.Tensor, keys: torch.Tensor, need_weights: bool = False
    ) -> tuple[torch.Tensor, list[torch.Tensor | None]]:
        """The memory (N, S, E) and each layer's weights (N, H, S, S) or None; ``keys`` (N, 1, 1, S)."""
        x, weights = self._embed(self.src_embed, src), []
        for layer in self.encoder:
            x, w = layer.encode(x, keys, need_weights)
            weights.append(w)
        return self.encoder_norm(x), weights

    def forward(
        self, src: torch.Tensor, src_len: torch.Tensor, tgt_in: torch.Tensor, need_weights: bool = False
    ) -> torch.Tensor | tuple[torch.Tensor, dict]:
        """Teacher-forced logits (N, L, V) for ``tgt_in`` (N, L), and the weights with ``need_weights``."""
        keys = masks.combine(None, self._source_mask(src, src_len))  # (N, 1, 1, S): real tokens
        _check_tokens(tgt_in, self.tgt_vocab, "tgt_in")
        if tgt_in.shape[0] != src.shape[0]:
            raise ValueError(f"tgt_in must be (N, L) with N={src.shape[0]}, got {tuple(tgt_in.shape)}")
        memory, encoder_weights = self._memory(src, keys, need_weights)
        weights = {"encoder": encoder_weights, "decoder": [], "cross": []}
        causal = masks.combine(masks.causal_mask(tgt_in.shape[1], device=src.device), None)  # (1, 1, L, L)
        y = self._embed(self.tgt_embed, tgt_in)
        for layer in self.decoder:
            y, w, _ = layer.decode(
                y, layer.multihead_attn.project_kv(memory), causal, keys, None, need_weights
            )
            weights["decoder"].append(w.get("self"))
            weights["cross"].append(w.get("cross"))
        logits = self.out(self.decoder_norm(y))
        return (logits, weights) if need_weights else logits

    def attention_weights(self, src: torch.Tensor, src_len: torch.Tensor, tgt_in: torch.Tensor) -> dict:
        """Every head's weights, per layer: ``{"encoder": [(N, H, S, S)], "decoder": [(N, H, L, L)],
        "cross": [(N, H, L, S)]}``, computed in evaluation mode without gradients."""
        with eval_mode(self), torch.no_grad():
            return self.forward(src, src_len, tgt_in, need_weights=True)[1]

    # ---------------------------------------------------------------- decoding
    def encode(self, src: torch.Tensor, src_len: torch.Tensor) -> dict:
        """The decoding state: source mask, memory keys and values per layer, empty caches."""
        source_mask = self._source_mask(src, src_len)  # (N, S), True = a real token
        memory = self._memory(src, masks.combine(None, source_mask))[0]
        return {
            "source_mask": source_mask,
            "memory_kv": [layer.multihead_attn.project_kv(memory) for layer in self.decoder],
            "caches": [None] * len(self.decoder),
            "t": torch.zeros(src.shape[0], dtype=torch.long, device=src.device),  # (N,) positions
        }

    def step(self, tokens: torch.Tensor, state: dict) -> tuple[torch.Tensor, dict]:
        """One decoder position: ``tokens`` (N,) -> logits (N, V), state (``forward``'s, incrementally)."""
        if tokens.dim() != 1:
            raise ValueError(f"tokens must be (N,), got {tuple(tokens.shape)}")
        _check_tokens(tokens.unsqueeze(1), self.tgt_vocab, "tokens")
        start = int(state["t"][0]) if state["t"].numel() else 0  # every row is at the same position
        keys = masks.combine(None, state["source_mask"])  # (N, 1, 1, S)
        y = self._embed(self.tgt_embed, tokens.to(keys.device).unsqueeze(1), start=start)  # (N, 1, E)
        caches = []
        for layer, memory_kv, cache in zip(self.decoder, state["memory_kv"], state["caches"]):
            y, _, cache = layer.decode(y, memory_kv, None, keys, cache)  # the past is all visible
            caches.append(cache)
        logits = self.out(self.decoder_norm(y)).squeeze(1)
        return logits, {**state, "caches": caches, "t": state["t"] + 1}

    decoder_step = decoder_step  # step(tokens, state) -> (log_probs, state), for seqlab.decoding
