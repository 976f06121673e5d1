"""A decoder-only language model whose every part is a choice: from a GPT-2 block to Llama's.

``Decoder`` is the GPT of ``seqlab.gpt`` with four parts made configurable, the four that open
models changed after GPT-2 (``DecoderConfig``):

====================  ==========================================  ===========================
part                  GPT-2                                       Llama
====================  ==========================================  ===========================
``norm``              ``"layer"``: LayerNorm                      ``"rms"``: ``RMSNorm``
``ffn``               ``"gelu"`` (or ``"relu"``): ``FeedForward``  ``"swiglu"``: ``SwiGLU``
``positions``         ``"learned"`` (or ``"sinusoidal"``), added   ``"rope"`` (or ``"alibi"``), in
                      to the token embeddings                     the attention
``n_kv_heads``        = ``n_heads``: multi-head                   < ``n_heads``: grouped-query
====================  ==========================================  ===========================

::

    x_0    = W_tok[tokens] (+ W_pos[positions] or PE[positions])        (N, T, E)
    x_l    = Block_l(x_{l-1})     x + attn(norm(x)), then x + ffn(norm(x)), causal mask    (N, T, E)
    logits = norm(x_L) W_out^T    W_out = W_tok when tied                                   (N, T, V)

Learned positions exist for positions 0 .. ``context`` - 1 only, and the model refuses longer
input; the other kinds run at any length. ``start`` / ``extend`` decode with one ``KVCache`` per
block (what ``seqlab.sampling.generate`` calls). ``load_llama_weights`` copies a Hugging Face
``LlamaForCausalLM`` into a Decoder of the same shape (``Decoder.from_llama`` builds that
Decoder); nothing here imports ``transformers``.

Shapes: N batch, T / L tokens, E width, H query heads, G key/value heads, D = E / H, V vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from .attention import IMPLS
from .block import Block, DecodeState
from .checks import check_choice, check_int, check_probability
from .ffn import FeedForward, SwiGLU
from .gpt import shifted_causal_mask
from .gqa import GroupedQueryAttention
from .norms import RMSNorm
from .positional import sinusoidal_encoding
from .rope import rope_angles
from .transformer import _check_tokens

__all__ = ["DecoderConfig", "Decoder", "load_llama_weights"]

NORMS = ("layer", "rms")
FFNS = ("gelu", "relu", "swiglu")
POSITIONS = ("learned", "sinusoidal", "rope", "alibi")


@dataclass
class DecoderConfig:
    """A decoder's shape and its four choices (module docstring). ``n_kv_heads`` None: =
    ``n_heads``; ``ffn_hidden`` None: 4E for ``"gelu"`` / ``"relu"``, round(8E/3) for ``"swiglu"``
    (the same parameters); ``eps`` the norms'; ``bias``: biases in the attention's projections and
    in the GELU/ReLU FFN (SwiGLU and RMSNorm never have any; LayerNorm always has its own);
    ``tie``: the output matrix is the token embedding; ``impl``: the attention's path."""

    vocab_size: int
    d_model: int = 64
    n_heads: int = 4
    n_kv_heads: int | None = None
    n_layers: int = 2
    ffn_hidden: int | None = None
    norm: str = "layer"
    ffn: str = "gelu"
    positions: str = "learned"
    context: int = 64
    rope_base: float = 10000.0
    rope_scale: float = 1.0
    tie: bool = True
    eps: float = 1e-5
    dropout: float = 0.0
    impl: str = "scratch"
    bias: bool = True

    def __post_init__(self) -> None:
        for name in ("vocab_size", "d_model", "n_heads", "n_layers", "context"):
            check_int(name, getattr(self, name))
        if self.n_kv_heads is None:
            self.n_kv_heads = self.n_heads
        check_int("n_kv_heads", self.n_kv_heads)
        if self.ffn_hidden is not None:
            check_int("ffn_hidden", self.ffn_hidden)
        check_choice("norm", self.norm, NORMS)
        check_choice("ffn", self.ffn, FFNS)
        check_choice("positions", self.positions, POSITIONS)
        check_choice("impl", self.impl, IMPLS)
        check_probability("dropout", self.dropout)
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model = {self.d_model} must be divisible by n_heads = {self.n_heads}")
        if self.n_heads % self.n_kv_heads:
            raise ValueError(f"n_heads = {self.n_heads} must be divisible by n_kv_heads = {self.n_kv_heads}")
        if self.positions == "sinusoidal" and self.d_model % 2:
            raise ValueError(f"sinusoidal positions need an even d_model, got {self.d_model}")
        if self.positions == "rope":
            if (self.d_model // self.n_heads) % 2:
                raise ValueError(
                    f"RoPE needs an even head width d_model / n_heads, got {self.d_model // self.n_heads}"
                )
            rope_angles(torch.zeros(1), 2, self.rope_base, self.rope_scale)  # refuses a bad base or scale

    @property
    def hidden(self) -> int:
        """The FFN's hidden width."""
        if self.ffn_hidden is not None:
            return self.ffn_hidden
        return round(8 * self.d_model / 3) if self.ffn == "swiglu" else 4 * self.d_model


class Decoder(nn.Module):
    """A decoder-only language model built from ``config`` (a ``DecoderConfig``): tokens (N, T)
    -> next-token logits (N, T, V)."""

    def __init__(self, config: DecoderConfig) -> None:
        super().__init__()
        if not isinstance(config, DecoderConfig):
            raise TypeError(f"config must be a DecoderConfig, got {type(config).__name__}")
        self.config = c = config
        self.vocab_size = c.vocab_size
        self.context = c.context if c.positions == "learned" else None  # None: any length
        self.tok_embed = nn.Embedding(c.vocab_size, c.d_model)  # W_tok (V, E)
        self.pos_embed = nn.Embedding(c.context, c.d_model) if c.positions == "learned" else None
        self.dropout = nn.Dropout(c.dropout)
        self.layers = nn.ModuleList(self._block() for _ in range(c.n_layers))
        self.norm = self._norm()  # the final norm of a pre-norm stack
        self.lm_head = None if c.tie else nn.Linear(c.d_model, c.vocab_size, bias=False)  # W_out (V, E)
        for embed in (self.tok_embed, self.pos_embed):
            if embed is not None:
                nn.init.normal_(embed.weight, std=0.02)  # GPT-2's initialisation

    def _norm(self) -> nn.Module:
        c = self.config
        return nn.LayerNorm(c.d_model, eps=c.eps) if c.norm == "layer" else RMSNorm(c.d_model, eps=c.eps)

    def _block(self) -> Block:
        c = self.config
        inside = c.positions if c.positions in ("rope", "alibi") else "none"  # in the attention, or not
        attn = GroupedQueryAttention(
            c.d_model, c.n_heads, c.n_kv_heads, inside, c.rope_base, c.rope_scale, bias=c.bias,
            impl=c.impl, dropout=c.dropout,
        )  # fmt: skip
        if c.ffn == "swiglu":
            ffn = SwiGLU(c.d_model, c.hidden, c.dropout)
        else:
            ffn = FeedForward(c.d_model, c.hidden, c.ffn, c.dropout, bias=c.bias)
        return Block(self._norm(), attn, self._norm(), ffn, c.dropout)

    # ------------------------------------------------------------------ the model
    def _check(self, tokens: torch.Tensor, state: DecodeState) -> None:
        _check_tokens(tokens, self.vocab_size, "tokens")
        if not isinstance(state, DecodeState):
            raise TypeError(f"state must be the DecodeState of start or extend, got {type(state).__name__}")
        if len(state.caches) != len(self.layers):
            raise ValueError(f"state holds {len(state.caches)} caches for {len(self.layers)} blocks")
        state.check(tokens)
        start = state.t
        if self.context is not None and start + tokens.shape[1] > self.context:
            raise ValueError(
                f"positions {start} .. {start + tokens.shape[1] - 1} exceed the {self.context} learned "
                f"positions (tokens {tuple(tokens.shape)} after {start} held): a learned position "
                "table has no row past its context"
            )

    def _embed(self, tokens: torch.Tensor, start: int) -> torch.Tensor:
        """Token embeddings of ``tokens`` (N, L) at positions start .., plus the learned or sinusoidal
        position's: (N, L, E)."""
        x = self.tok_embed(tokens)
        if self.config.positions == "learned":
            x = x + self.pos_embed(torch.arange(start, start + tokens.shape[1], device=tokens.device))
        elif self.config.positions == "sinusoidal":
            x = x + sinusoidal_encoding(
                tokens.shape[1], self.config.d_model, start=start, dtype=x.dtype, device=x.device
            )
        return self.dropout(x)

    def forward(
        self, tokens: torch.Tensor, need_weights: bool = False
    ) -> torch.Tensor | tuple[torch.Tensor, list[torch.Tensor]]:
        """``tokens`` (N, T) -> next-token logits (N, T, V), row t predicting token t + 1 from tokens
        0 .. t; with ``need_weights`` also every block's weights (N, H, T, T)."""
        _check_tokens(tokens, self.vocab_size, "tokens")
        out = self.extend(tokens, self.start(tokens.shape[0]), need_weights)
        return (out[0], out[2]) if need_weights else out[0]

    def start(self, batch_size: int) -> DecodeState:
        """The state before any token: empty caches, position 0."""
        return DecodeState.empty(len(self.layers), batch_size)

    def extend(self, tokens: torch.Tensor, state: DecodeState, need_weights: bool = False):
        """Feed ``tokens`` (N, L) after the ``state``'s t tokens: their logits (N, L, V) and the
        state with every block's cache extended, each (N, G, t + L, D); with ``need_weights`` also
        every block's weights (N, H, L, t + L)."""
        self._check(tokens, state)
        x = self._embed(tokens, state.t)
        mask = shifted_causal_mask(tokens.shape[1], state.t, device=tokens.device)  # (L, t + L)
        weights, caches = [], []
        for block, cache in zip(self.layers, state.caches):
            x, w, cache = block(x, mask, cache, start=state.t, need_weights=need_weights)
            weights.append(w)
            caches.append(cache)
        x = self.norm(x)
        logits = x @ self.tok_embed.weight.T if self.lm_head is None else self.lm_head(x)  # (N, L, V)
        state = DecodeState(caches, state.t + tokens.shape[1], state.n)
        return (logits, state, weights) if need_weights else (logits, state)

    def kv_cache_bytes_per_token(self, dtype: torch.dtype = torch.float32) -> int:
        """Bytes the KV cache grows by per token of one sequence: keys and values, G heads of width
        D, in every block: 2 * layers * G * D * (bytes of ``dtype``)."""
        if not isinstance(dtype, torch.dtype):
            raise TypeError(f"dtype must be a torch.dtype, got {type(dtype).__name__}")
        c = self.config
        return 2 * c.n_layers * c.n_kv_heads * (c.d_model // c.n_heads) * dtype.itemsize

    @classmethod
    def from_llama(cls, hf_model: nn.Module, impl: str = "scratch") -> Decoder:
        """A Decoder equal to Hugging Face's ``LlamaForCausalLM`` ``hf_model``: the config read from
        ``hf_model.config``, the weights copied (``load_llama_weights``), in its dtype and on its device."""
        hf = hf_model.config
        rope = getattr(hf, "rope_parameters", None) or {
            "rope_type": "default",
            "rope_theta": getattr(hf, "rope_theta", 10000.0),
        }
        head_dim = getattr(hf, "head_dim", None) or hf.hidden_size // hf.num_attention_heads
        problems = {
            "hidden_act": (hf.hidden_act, "silu"),
            "rope_type": (rope.get("rope_type", "default"), "default"),
            "attention_bias": (getattr(hf, "attention_bias", False), False),
            "mlp_bias": (getattr(hf, "mlp_bias", False), False),
            "head_dim": (head_dim, hf.hidden_size // hf.num_attention_heads),
        }
        for name, (got, needed) in problems.items():
            if got != needed:
                raise ValueError(
                    f"from_llama copies Llama's plain shape only: needs {name}={needed!r}, got {got!r}"
                )
        config = DecoderConfig(
            vocab_size=hf.vocab_size, d_model=hf.hidden_size, n_heads=hf.num_attention_heads,
            n_kv_heads=hf.num_key_value_heads, n_layers=hf.num_hidden_layers, ffn_hidden=hf.intermediate_size,
            norm="rms", ffn="swiglu", positions="rope", context=hf.max_position_embeddings,
            rope_base=float(rope["rope_theta"]), tie=bool(hf.tie_word_embeddings), eps=hf.rms_norm_eps,
            bias=False, impl=impl,
        )  # fmt: skip
        weight = hf_model.model.embed_tokens.weight
        model = cls(config).to(device=weight.device, dtype=weight.dtype)
        return load_llama_weights(model, hf_model)


_LLAMA_LAYER = {  # Hugging Face's LlamaDecoderLayer -> a Llama Block
    "input_layernorm": "norm1",
    "self_attn.q_proj": "attn.q_proj",
    "self_attn.k_proj": "attn.k_proj",
    "self_attn.v_proj": "attn.v_proj",
    "self_attn.o_proj": "attn.o_proj",
    "post_attention_layernorm": "norm2",
    "mlp.gate_proj": "ffn.gate_proj",
    "mlp.up_proj": "ffn.up_proj",
    "mlp.down_proj": "ffn.down_proj",
}


def load_llama_weights(decoder: Decoder, hf_model: nn.Module) -> Decoder:
    """Copy every weight of Hugging Face's ``LlamaForCausalLM`` ``hf_model`` into ``decoder`` (a
    ``Decoder`` with norm ``"rms"``, ffn ``"swiglu"``, positions ``"rope"``, no biases and the same
    shapes and tying); returns ``decoder``. A shape that differs raises a ValueError naming it."""
    c = decoder.config
    if (c.norm, c.ffn, c.positions, c.bias) != ("rms", "swiglu", "rope", False):
        raise ValueError(
            "load_llama_weights needs a Decoder with norm='rms', ffn='swiglu', positions='rope', "
            f"bias=False, got {c.norm!r}, {c.ffn!r}, {c.positions!r}, bias={c.bias}"
        )
    if c.tie != (hf_model.lm_head.weight is hf_model.model.embed_tokens.weight):
        raise ValueError(
            f"the decoder's tie={c.tie} but the Llama model's output is{'' if not c.tie else ' not'} tied"
        )
    pairs = [(decoder.tok_embed, hf_model.model.embed_tokens), (decoder.norm, hf_model.model.norm)]
    if len(decoder.layers) != len(hf_model.model.layers):
        raise ValueError(
            f"the decoder has {len(decoder.layers)} blocks, the Llama model {len(hf_model.model.layers)}"
        )
    for block, layer in zip(decoder.layers, hf_model.model.layers):
        pairs += [
            (block.get_submodule(ours), layer.get_submodule(theirs)) for theirs, ours in _LLAMA_LAYER.items()
        ]
    if not c.tie:
        pairs.append((decoder.lm_head, hf_model.lm_head))
    with torch.no_grad():
        for ours, theirs in pairs:
            if ours.weight.shape != theirs.weight.shape:
                raise ValueError(
                    f"{type(ours).__name__} weight {tuple(ours.weight.shape)} cannot take "
                    f"{tuple(theirs.weight.shape)}"
                )
            ours.weight.copy_(theirs.weight)
    return decoder
