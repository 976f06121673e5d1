"""Encoder-decoder networks with and without attention (chapters on seq2seq, Bahdanau, Luong).

The encoder is a GRU over the source; the decoder a GRU that generates the target one token at
a time. Without attention the decoder sees the source only through the encoder's last state
(the bottleneck). With attention, at every step it scores the encoder states with an
``AttentionScore`` (dot, general, concat or additive), takes the weighted average (the context
c_t), and uses it:

- ``style="bahdanau"``: the context is computed from the previous decoder state s_{t-1} and fed
  into the GRU together with the input token: s_t = GRU([y_{t-1}; c_t], s_{t-1}).
- ``style="luong"``: the GRU runs first, the context is computed from s_t, and the attentional
  state h~_t = tanh(W_c [c_t; s_t]) makes the prediction; with input feeding, h~_{t-1} is also
  fed into the next step's input.

``window=("local-m", D)`` or ``("local-p", D)`` restricts Luong attention to 2D + 1 source
positions around p_t = t (monotonic) or a predicted p_t = S sigmoid(v_p^T tanh(W_p s_t)), the
latter weighted by a Gaussian with sigma = D / 2. Padded source positions never get weight.

Shapes: src (N, S), tgt_in / tgt_out (N, L) token ids; logits (N, L, V); attention (N, L, S).
"""

from __future__ import annotations

import torch
from torch import nn

from .attention import AttentionScore, masked_softmax
from .masks import gaussian_window, local_window
from .text import PAD

__all__ = ["Seq2Seq"]


class Seq2Seq(nn.Module):
    """A GRU encoder-decoder, with optional attention.

    Args:
        src_vocab, tgt_vocab: vocabulary sizes V_src and V_tgt.
        embed_size: width of the token embeddings.
        hidden_size: E_h, the GRUs' width.
        attention: None (no attention), or a score kind: "dot", "general", "concat", "additive".
        style: "bahdanau" or "luong" (see the module docstring).
        input_feeding: Luong's input feeding (luong style only).
        window: None (global attention), ("local-m", D) or ("local-p", D) (luong style only).
        bidirectional: read the source both ways (as Bahdanau et al. did); a linear layer maps
            each position's two states [forward; backward] (2 E_h) back to E_h.
    """

    def __init__(
        self,
        src_vocab: int,
        tgt_vocab: int,
        embed_size: int = 32,
        hidden_size: int = 64,
        attention: str | None = "additive",
        style: str = "bahdanau",
        input_feeding: bool = False,
        window: tuple[str, int] | None = None,
        bidirectional: bool = False,
    ) -> None:
        super().__init__()
        if style not in ("bahdanau", "luong"):
            raise ValueError(f"style must be 'bahdanau' or 'luong', got {style!r}")
        if (input_feeding or window is not None) and (style != "luong" or attention is None):
            raise ValueError("input_feeding and window need attention with style='luong'")
        if window is not None and (window[0] not in ("local-m", "local-p") or int(window[1]) < 1):
            raise ValueError(f"window must be ('local-m', D) or ('local-p', D) with D >= 1, got {window!r}")
        self.attention, self.style, self.input_feeding, self.window = attention, style, input_feeding, window
        self.hidden_size = hidden_size
        self.src_embed = nn.Embedding(src_vocab, embed_size, padding_idx=PAD)
        self.tgt_embed = nn.Embedding(tgt_vocab, embed_size, padding_idx=PAD)
        self.encoder = nn.GRU(embed_size, hidden_size, batch_first=True, bidirectional=bidirectional)
        self.bidirectional = bidirectional
        if bidirectional:
            self.bridge = nn.Linear(2 * hidden_size, hidden_size)  # [h_fwd; h_bwd] -> E_h
        extra = hidden_size if attention is not None and (style == "bahdanau" or input_feeding) else 0
        self.decoder = nn.GRUCell(embed_size + extra, hidden_size)
        if attention is not None:
            self.score = AttentionScore(attention, hidden_size, hidden_size)
            if style == "luong":
                self.combine = nn.Linear(2 * hidden_size, hidden_size, bias=False)  # W_c [c_t; s_t]
            if window is not None and window[0] == "local-p":
                self.position = nn.Sequential(
                    nn.Linear(hidden_size, hidden_size), nn.Tanh(), nn.Linear(hidden_size, 1)
                )
        self.out = nn.Linear(hidden_size, tgt_vocab)

    # ------------------------------------------------------------------ encoder
    def encode(self, src: torch.Tensor, src_len: torch.Tensor) -> dict:
        """Run the encoder: returns the decoder's initial state (a dict of tensors, batch first)."""
        if src.dim() != 2 or src_len.shape != (src.shape[0],):
            raise ValueError(
                f"src must be (N, S) and src_len (N,), got {tuple(src.shape)} and {tuple(src_len.shape)}"
            )
        if (src_len < 1).any() or (src_len > src.shape[1]).any():
            raise ValueError(f"src_len must lie in 1..{src.shape[1]}, got {src_len.tolist()}")
        if self.bidirectional:  # packed, so the backward pass starts at each row's last real token
            packed = nn.utils.rnn.pack_padded_sequence(
                self.src_embed(src), src_len.cpu(), batch_first=True, enforce_sorted=False
            )
            enc_out, _ = self.encoder(packed)
            S = src.shape[1]
            enc_out, _ = nn.utils.rnn.pad_packed_sequence(enc_out, batch_first=True, total_length=S)
            enc_out = self.bridge(enc_out)  # (N, S, 2 E_h) -> (N, S, E_h)
        else:
            enc_out, _ = self.encoder(self.src_embed(src))  # (N, S, E_h)
        rows = torch.arange(src.shape[0], device=src.device)
        mask = torch.arange(src.shape[1], device=src.device) < src_len.to(src.device).unsqueeze(1)  # (N, S)
        state = {
            "s": enc_out[rows, src_len.to(src.device) - 1],
            "t": torch.zeros(src.shape[0], device=src.device),
        }
        if self.attention is not None:
            state.update(enc_out=enc_out, mask=mask, length=src_len.to(src.device).float())
            if self.input_feeding:
                state["feed"] = enc_out.new_zeros(src.shape[0], self.hidden_size)
        return state

    # ------------------------------------------------------------------ one decoder step
    def _attend(
        self, query: torch.Tensor, state: dict
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Context (N, E_h), weights (N, S) and window centre p_t (N,) or None, of one query
        (N, E_h) over the encoder states."""
        enc_out, mask = state["enc_out"], state["mask"]
        scores = self.score(query.unsqueeze(1), enc_out)  # (N, 1, S)
        allowed = mask.unsqueeze(1)
        gauss = center = None
        if self.window is not None:
            kind, half = self.window[0], int(self.window[1])
            if kind == "local-m":
                center = state["t"].unsqueeze(1)  # p_t = t
            else:  # p_t = S * sigmoid(v_p^T tanh(W_p s_t)), S the true source length
                center = (state["length"] * torch.sigmoid(self.position(query)).squeeze(-1)).unsqueeze(1)
                gauss = gaussian_window(center, enc_out.shape[1], half)
            allowed = allowed & local_window(center, enc_out.shape[1], half)
        weights = masked_softmax(scores, allowed)
        if gauss is not None:
            weights = weights * gauss
        context = (weights @ enc_out).squeeze(1)  # (N, E_h)
        return context, weights.squeeze(1), None if center is None else center.squeeze(1)

    def step(self, tokens: torch.Tensor, state: dict) -> tuple[torch.Tensor, dict, torch.Tensor | None]:
        """One decoder step: ``tokens`` (N,) the previous output token.

        With a local window, the new state's ``"center"`` (N,) is this step's p_t.
        Returns ``(logits (N, V), new_state, attention weights (N, S) or None)``.
        """
        x = self.tgt_embed(tokens)  # (N, E_emb)
        new = dict(state)
        weights = None
        if self.attention is None:
            s = self.decoder(x, state["s"])
            hidden = s
        elif self.style == "bahdanau":
            context, weights, _ = self._attend(state["s"], state)  # from s_{t-1}
            s = self.decoder(torch.cat([x, context], dim=-1), state["s"])
            hidden = s
        else:
            inputs = torch.cat([x, state["feed"]], dim=-1) if self.input_feeding else x
            s = self.decoder(inputs, state["s"])
            context, weights, center = self._attend(s, state)  # from s_t
            if center is not None:
                new["center"] = center  # p_t, the window's centre: (N,)
            hidden = torch.tanh(self.combine(torch.cat([context, s], dim=-1)))  # h~_t
            if self.input_feeding:
                new["feed"] = hidden
        new["s"], new["t"] = s, state["t"] + 1
        return self.out(hidden), new, weights

    # ------------------------------------------------------------------ teacher forcing
    def forward(
        self, src: torch.Tensor, src_len: torch.Tensor, tgt_in: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Teacher-forced logits (N, L, V) for ``tgt_in`` (N, L), and attention weights (N, L, S)."""
        state = self.encode(src, src_len)
        logits, weights = [], []
        for t in range(tgt_in.shape[1]):
            step_logits, state, w = self.step(tgt_in[:, t], state)
            logits.append(step_logits)
            weights.append(w)
        attention = torch.stack(weights, dim=1) if self.attention is not None else None
        return torch.stack(logits, dim=1), attention

    def decoder_step(self):
        """``step(tokens, state) -> (log_probs, state)`` for ``seqlab.decoding``."""

        def step(tokens: torch.Tensor, state: dict) -> tuple[torch.Tensor, dict]:
            logits, state, _ = self.step(tokens.to(state["s"].device), state)
            return logits.log_softmax(dim=-1), state

        return step
