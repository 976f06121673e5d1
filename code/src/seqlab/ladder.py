"""Measuring decoders against each other: the same number of parameters, and the loss at every
position of held-out text (trained short, tested long).

``windows(ids, length)`` cuts a token stream into the rows a language model trains and is
evaluated on; ``position_losses(model, rows)`` is the mean next-token loss at each position, so a
model trained on windows of 64 tokens can be read at positions 64 .. 255 of longer ones;
``equal_parameters(config, target)`` sets the FFN's hidden width so that a ``Decoder`` has the
number of parameters closest to ``target`` (the ladder's rule: what one part saves or costs, the FFN
gives back); ``cache_bytes_per_token(model, tokens)`` measures the KV cache that decoding holds.

Shapes: N windows, T tokens, V vocabulary, M tokens in a stream.
"""

from __future__ import annotations

import dataclasses

import torch
from torch import nn

from .checks import check_int
from .decoder import Decoder, DecoderConfig
from .utils import count_parameters, eval_mode

__all__ = ["windows", "position_losses", "equal_parameters", "cache_bytes_per_token"]


def windows(ids: torch.Tensor, length: int) -> torch.Tensor:
    """The token stream ``ids`` (M,) cut into windows of ``length`` + 1 tokens, each starting where
    the last one ended (its last token is the next one's first): (N, length + 1), N = (M - 1) //
    length. Row n predicts tokens n L + 1 .. n L + L from tokens n L .. n L + L - 1."""
    check_int("length", length)
    if not isinstance(ids, torch.Tensor) or ids.dim() != 1 or ids.dtype != torch.long:
        got = f"{tuple(ids.shape)} {ids.dtype}" if isinstance(ids, torch.Tensor) else type(ids).__name__
        raise ValueError(f"ids must be a 1-D tensor of token ids (M,), torch.long; got {got}")
    if ids.numel() < length + 1:
        raise ValueError(
            f"ids holds {ids.numel()} tokens, fewer than one window of length + 1 = {length + 1}"
        )
    return ids.unfold(0, length + 1, length)


def position_losses(model: nn.Module, rows: torch.Tensor, batch_size: int = 32) -> torch.Tensor:
    """Mean next-token cross-entropy (nats) of ``model`` at each position of ``rows`` (N, T + 1):
    a float64 tensor (T,) whose entry t is the mean over the N rows of -log p(x_{t+1} | x_0 .. x_t).
    Runs in evaluation mode without gradients, ``batch_size`` rows at a time, on the model's device.
    Its mean is the loss over all N T predictions; exp of it, the perplexity."""
    check_int("batch_size", batch_size)
    if not isinstance(rows, torch.Tensor) or rows.dim() != 2 or rows.shape[1] < 2:
        got = tuple(rows.shape) if isinstance(rows, torch.Tensor) else type(rows).__name__
        raise ValueError(f"rows must be (N, T + 1) token ids with T >= 1, got {got}")
    device = next(model.parameters()).device
    total = torch.zeros(rows.shape[1] - 1, dtype=torch.float64)
    with eval_mode(model), torch.no_grad():
        for batch in rows.split(batch_size):
            batch = batch.to(device)
            logits = model(batch[:, :-1])  # (n, T, V)
            nll = nn.functional.cross_entropy(logits.transpose(1, 2), batch[:, 1:], reduction="none")
            total += nll.double().sum(0).cpu()
    return total / rows.shape[0]


def equal_parameters(config: DecoderConfig, target: int) -> DecoderConfig:
    """``config`` with the FFN's hidden width (``ffn_hidden``) for which ``Decoder(config)`` has the
    number of parameters closest to ``target`` (the smaller width where two are as close).

    The count is linear in the width, so two counts give the slope and the width near the target;
    the widths either side of it are counted too, and the closest kept."""
    check_int("target", target)

    def count(hidden: int) -> int:
        return count_parameters(Decoder(dataclasses.replace(config, ffn_hidden=hidden)))

    low, high = count(8), count(9)
    guess = max(1, round(8 + (target - low) / (high - low)))
    best = min(range(max(1, guess - 2), guess + 3), key=lambda h: (abs(count(h) - target), h))
    return dataclasses.replace(config, ffn_hidden=best)


def cache_bytes_per_token(model: nn.Module, tokens: torch.Tensor) -> int:
    """Bytes of keys and values the KV cache holds per token after ``model.extend`` has fed it
    ``tokens`` (N, T): every block's cached k and v (each (N, G, T, D)), summed, over N T. Counted
    from the tensors the cache holds, not from the configuration."""
    if not isinstance(tokens, torch.Tensor) or tokens.dim() != 2:
        got = tuple(tokens.shape) if isinstance(tokens, torch.Tensor) else type(tokens).__name__
        raise ValueError(f"tokens must be (N, T) token ids, got {got}")
    with eval_mode(model), torch.no_grad():
        _, state = model.extend(tokens, model.start(tokens.shape[0]))
    held = sum(c.k.nbytes + c.v.nbytes for c in state.caches if c is not None)
    n_tokens = tokens.numel()
    if held % n_tokens:
        raise ValueError(f"the cache holds {held} bytes, not a whole number per token of {n_tokens}")
    return held // n_tokens
