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

``window=("local-m", D)`` or ``("local-p", D)`` restricts Luong attention to the source
positions within D of p_t = r t (monotonic; ``local_m_rate`` r, 1 by default, is the source
positions per target step) or of a predicted p_t = S sigmoid(v_p^T tanh(W_p s_t)), the latter
weighted by a Gaussian with sigma = D / 2. Padded source positions never get weight.

Shapes: src (N, S), tgt_in / tgt_out (N, L) token ids; logits (N, L, V); attention (N, L, S).
"""

from __future__ import annotations

import torch
from torch import nn

from .attention import AttentionScore, masked_softmax
from .checks import check_probability
from .decoding import decoder_step
from .masks import gaussian_window, local_window, padding_mask
from .text import PAD

__all__ = ["Seq2Seq"]


def _flip_index(lengths: torch.Tensor, S: int) -> torch.Tensor:
    """Indices (N, S, 1) that reverse each row's first ``lengths[n]`` positions and keep the
    padding after them in place: gathering with it twice gives the rows back unchanged."""
    j = torch.arange(S, device=lengths.device)
    real = j < lengths.unsqueeze(1)  # (N, S)
    return torch.where(real, lengths.unsqueeze(1) - 1 - j, j).unsqueeze(-1)


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
        dropout: in training, zero this fraction of the embeddings and of the state that makes
            each prediction (Luong et al. used 0.2); 0 turns it off.
        attention_size: A, the width of the hidden layer of the concat and additive scores
            (default: E_h).
        local_m_rate: r in local-m's centre p_t = r t (window ("local-m", D) only): 1 when
            source and target advance together, 1 / k when a source token spans k target tokens.
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
        dropout: float = 0.0,
        attention_size: int | None = None,
        local_m_rate: float = 1.0,
    ) -> None:
        super().__init__()
        check_probability("dropout", dropout)
        if style not in ("bahdanau", "luong"):
            raise ValueError(f"style must be 'bahdanau' or 'luong', got {style!r}")
        if (input_feeding or window is not None) and (style != "luong" or attention is None):
            raise ValueError("input_feeding and window need attention with style='luong'")
        if window is not None and (window[0] not in ("local-m", "local-p") or int(window[1]) < 1):
            raise ValueError(f"window must be ('local-m', D) or ('local-p', D) with D >= 1, got {window!r}")
        if isinstance(local_m_rate, bool) or not isinstance(local_m_rate, (int, float)) or local_m_rate <= 0:
            raise ValueError(f"local_m_rate must be a number > 0, got {local_m_rate!r}")
        if local_m_rate != 1 and (window is None or window[0] != "local-m"):
            raise ValueError(f"local_m_rate needs window=('local-m', D), got window={window!r}")
        self.attention, self.style, self.input_feeding, self.window = attention, style, input_feeding, window
        self.local_m_rate = float(local_m_rate)
        self.hidden_size = hidden_size
        self.src_embed = nn.Embedding(src_vocab, embed_size, padding_idx=PAD)
        self.tgt_embed = nn.Embedding(tgt_vocab, embed_size, padding_idx=PAD)
        self.encoder = nn.GRU(embed_size, hidden_size, batch_first=True)
        self.bidirectional = bidirectional
        if bidirectional:  # a second GRU reads each source from its last real token back to its first
            self.encoder_backward = nn.GRU(embed_size, hidden_size, batch_first=True)
            self.bridge = nn.Linear(2 * hidden_size, hidden_size)  # [h_fwd; h_bwd] -> E_h
        # The decoder GRU reads the context (Bahdanau) or h~_{t-1} (input feeding) at every step;
        # otherwise it reads tokens only, and training runs it over the whole target in one call.
        self.feeds_attention = attention is not None and (style == "bahdanau" or input_feeding)
        if self.feeds_attention:
            self.decoder = nn.GRUCell(embed_size + hidden_size, hidden_size)
        else:
            self.decoder = nn.GRU(embed_size, hidden_size, batch_first=True)
        if attention is not None:
            self.score = AttentionScore(attention, hidden_size, hidden_size, attention_size)
            if style == "luong":
                self.combine = nn.Linear(2 * hidden_size, hidden_size, bias=False)  # W_c [c_t; s_t]
            if window is not None and window[0] == "local-p":
                self.position = nn.Sequential(
                    nn.Linear(hidden_size, hidden_size), nn.Tanh(), nn.Linear(hidden_size, 1)
                )
        self.drop = nn.Dropout(dropout)
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
        x = self.drop(self.src_embed(src))  # (N, S, E_emb)
        enc_out, _ = self.encoder(x)  # (N, S, E_h); states past a row's end are never used
        if self.bidirectional:
            flip = _flip_index(src_len.to(src.device), src.shape[1])  # (N, S, 1)
            backward, _ = self.encoder_backward(x.gather(1, flip.expand_as(x)))  # last token first
            backward = backward.gather(1, flip.expand_as(backward))  # back in source order
            enc_out = self.bridge(torch.cat([enc_out, backward], dim=-1))  # (N, S, 2 E_h) -> (N, S, E_h)
        rows = torch.arange(src.shape[0], device=src.device)
        state = {
            "s": enc_out[rows, src_len.to(src.device) - 1],
            "t": torch.zeros(src.shape[0], device=src.device),
        }
        if self.attention is not None:
            source_mask = padding_mask(src_len.to(src.device), src.shape[1])  # (N, S), True = a real token
            state.update(enc_out=enc_out, source_mask=source_mask, length=src_len.to(src.device).float())
            state["keys"] = self.score.project_keys(enc_out)  # once per source, not per step
            if self.input_feeding:
                state["feed"] = enc_out.new_zeros(src.shape[0], self.hidden_size)
        return state

    # ------------------------------------------------------------------ one decoder step
    def _attend(
        self, query: torch.Tensor, state: dict, t: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Attention of queries (N, L, E_h), at decoder steps ``t`` (N, L), over the encoder
        states: context (N, L, E_h), weights (N, L, S) and window centres p_t (N, L) or None."""
        enc_out = state["enc_out"]
        scores = self.score(query, enc_out, projected=state["keys"], impl="fast")  # (N, L, S)
        allowed = state["source_mask"].unsqueeze(1)  # (N, 1, S): real source positions
        gauss = center = None
        if self.window is not None:
            kind, half = self.window[0], int(self.window[1])
            if kind == "local-m":
                center = self.local_m_rate * t.float()  # p_t = r t
            else:  # p_t = S * sigmoid(v_p^T tanh(W_p s_t)), S the true source length
                center = state["length"].unsqueeze(1) * torch.sigmoid(self.position(query)).squeeze(-1)
                gauss = gaussian_window(center, enc_out.shape[1], half)
            allowed = allowed & local_window(center, enc_out.shape[1], half)
        weights = masked_softmax(scores, allowed)
        if gauss is not None:
            weights = weights * gauss
        context = weights @ enc_out  # (N, L, E_h)
        return context, weights, center

    def _gru(self, x: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        """One step of the decoder GRU: input x (N, E_in), state s (N, E_h) -> new state (N, E_h)."""
        if self.feeds_attention:
            return self.decoder(x, s)  # a GRUCell
        return self.decoder(x.unsqueeze(1), s.unsqueeze(0))[0].squeeze(1)  # a GRU, one position

    def step(self, tokens: torch.Tensor, state: dict) -> tuple[torch.Tensor, dict, torch.Tensor | None]:
        """One decoder step: ``tokens`` (N,) the previous output token y_{t-1}.

        Returns ``(logits (N, V), new_state, attention weights (N, S) or None)``; with a local
        window, the new state's ``"center"`` (N,) is this step's p_t.
        """
        x = self.drop(self.tgt_embed(tokens))  # e_y(y_{t-1}): (N, E_emb)
        hidden, new, weights = self._decode(x, state)  # s_t (Luong: h~_t), the new state
        logits = self.out(self.drop(hidden))  # W_o s_t + b_o: (N, V)
        return logits, {**new, "t": state["t"] + 1}, weights

    def _decode(self, x: torch.Tensor, state: dict) -> tuple[torch.Tensor, dict, torch.Tensor | None]:
        """The step of this model's kind: (s_t or h~_t (N, E_h), new state, weights (N, S) or None)."""
        if self.attention is None:
            return self._plain_step(x, state)
        return self._bahdanau_step(x, state) if self.style == "bahdanau" else self._luong_step(x, state)

    def _plain_step(self, x: torch.Tensor, state: dict) -> tuple[torch.Tensor, dict, None]:
        """No attention: s_t = GRU_dec(e_y(y_{t-1}), s_{t-1})."""
        s = self._gru(x, state["s"])  # s_t: (N, E_h)
        return s, {**state, "s": s}, None

    def _bahdanau_step(self, x: torch.Tensor, state: dict) -> tuple[torch.Tensor, dict, torch.Tensor]:
        """c_t from the previous state s_{t-1}, then s_t = GRU_dec([e_y(y_{t-1}); c_t], s_{t-1})."""
        context, weights, _ = self._attend(state["s"].unsqueeze(1), state, state["t"].unsqueeze(1))
        s = self._gru(torch.cat([x, context.squeeze(1)], dim=-1), state["s"])  # s_t: (N, E_h)
        return s, {**state, "s": s}, weights.squeeze(1)

    def _luong_step(self, x: torch.Tensor, state: dict) -> tuple[torch.Tensor, dict, torch.Tensor]:
        """s_t = GRU_dec(e_y(y_{t-1}) (and h~_{t-1} with input feeding), s_{t-1}); c_t from s_t;
        h~_t = tanh(W_c [c_t; s_t])."""
        inputs = torch.cat([x, state["feed"]], dim=-1) if self.input_feeding else x
        s = self._gru(inputs, state["s"])  # s_t: (N, E_h)
        context, weights, center = self._attend(s.unsqueeze(1), state, state["t"].unsqueeze(1))
        hidden = torch.tanh(self.combine(torch.cat([context.squeeze(1), s], dim=-1)))  # h~_t: (N, E_h)
        new = {**state, "s": s} | ({"feed": hidden} if self.input_feeding else {})
        if center is not None:
            new["center"] = center.squeeze(1)  # p_t, the window's centre: (N,)
        return hidden, new, weights.squeeze(1)

    # ------------------------------------------------------------------ teacher forcing
    def forward(
        self, src: torch.Tensor, src_len: torch.Tensor, tgt_in: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Teacher-forced logits (N, L, V) for ``tgt_in`` (N, L), and attention weights (N, L, S)."""
        state = self.encode(src, src_len)
        if not self.feeds_attention:  # the GRU reads tokens only: every position in one call
            s, _ = self.decoder(self.drop(self.tgt_embed(tgt_in)), state["s"].unsqueeze(0))  # (N, L, E_h)
            if self.attention is None:
                return self.out(self.drop(s)), None
            t = torch.arange(tgt_in.shape[1], device=s.device).expand(tgt_in.shape)  # (N, L)
            context, weights, _ = self._attend(s, state, t)  # all L queries at once
            hidden = torch.tanh(self.combine(torch.cat([context, s], dim=-1)))  # h~_t, (N, L, E_h)
            return self.out(self.drop(hidden)), weights
        logits, weights = [], []
        for t in range(tgt_in.shape[1]):  # each step needs the last step's attention
            step_logits, state, w = self.step(tgt_in[:, t], state)
            logits.append(step_logits)
            weights.append(w)
        return torch.stack(logits, dim=1), torch.stack(weights, dim=1)

    decoder_step = decoder_step  # step(tokens, state) -> (log_probs, state), for seqlab.decoding
