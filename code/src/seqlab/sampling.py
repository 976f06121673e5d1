"""Generating text from a language model: greedy decoding, temperature, top-k and top-p sampling.

At each step the model gives logits z (N, V) for the next token. ``filter_logits`` reshapes the
distribution, in this order (the order of Hugging Face's ``generate``)::

    temperature tau > 0:  z <- z / tau                (tau < 1 sharpens, tau > 1 flattens)
    top-k:  keep the tokens whose logit is >= the k-th largest (ties with it are all kept)
    top-p:  keep the smallest set of most probable tokens whose probability adds up to >= p
            (nucleus sampling; every token as probable as the least probable kept one is kept)

and every other token gets logit -inf. Ties are kept whole so that the result never depends on
the order a sort happens to give equal values. ``temperature=0`` is greedy decoding (the argmax,
the limit of tau -> 0). ``generate`` samples with a seeded ``torch.Generator``, so a seed gives
the same text on every run, and uses the model's ``start`` / ``extend`` (the KV cache of
``seqlab.gpt.GPT`` and ``seqlab.decoder.Decoder``) or, with ``cache=False``, recomputes the whole
prefix at every step.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .checks import check_int
from .utils import eval_mode

__all__ = ["filter_logits", "sample_next", "generate"]


def _check_options(temperature, top_k, top_p) -> None:
    if (
        isinstance(temperature, bool)
        or not isinstance(temperature, (int, float))
        or not (math.isfinite(temperature) and temperature >= 0)
    ):
        raise ValueError(f"temperature must be a finite number >= 0, got temperature={temperature!r}")
    if top_k is not None:
        check_int("top_k", top_k)
    if top_p is not None and (
        isinstance(top_p, bool) or not isinstance(top_p, (int, float)) or not 0 < top_p <= 1
    ):
        raise ValueError(f"top_p must be a number in (0, 1], got top_p={top_p!r}")


def _check_logits(logits) -> None:
    if not isinstance(logits, torch.Tensor):
        raise TypeError(f"logits must be a torch.Tensor (N, V), got {type(logits).__name__}")
    if not logits.is_floating_point():
        raise TypeError(f"logits must be a floating-point tensor, got dtype {logits.dtype}")
    if logits.dim() != 2 or logits.shape[1] == 0:
        raise ValueError(f"logits must be (N, V) with V >= 1, got {tuple(logits.shape)}")


def filter_logits(
    logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None
) -> torch.Tensor:
    """``logits`` (N, V) divided by ``temperature`` (> 0), with -inf outside the top-k and then the
    top-p set of each row (None: no limit): (N, V). The input is not changed."""
    _check_logits(logits)
    _check_options(temperature, top_k, top_p)
    if temperature == 0:
        raise ValueError("temperature=0 is greedy decoding: there is no distribution to filter")
    z = logits / temperature
    if top_k is not None and top_k < z.shape[1]:
        kth = z.topk(top_k, dim=-1).values[:, -1:]  # the k-th largest logit of each row, (N, 1)
        z = z.masked_fill(z < kth, -math.inf)
    if top_p is not None and top_p < 1:
        p = z.softmax(dim=-1)
        sorted_p = p.sort(dim=-1, descending=True).values  # (N, V)
        before = sorted_p.cumsum(dim=-1) - sorted_p  # probability of the tokens ranked above
        # the least probable token that is still needed: the last one whose predecessors sum < p
        needed = torch.where(before < top_p, sorted_p, torch.ones_like(sorted_p)).amin(dim=-1, keepdim=True)
        z = z.masked_fill(p < needed, -math.inf)
    return z


def sample_next(
    logits: torch.Tensor,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """One token per row of ``logits`` (N, V): the argmax for ``temperature=0``, else a draw from
    ``softmax(filter_logits(...))`` with ``generator``. Returns (N,) token ids."""
    _check_logits(logits)
    _check_options(temperature, top_k, top_p)
    if temperature == 0:
        return logits.argmax(dim=-1)
    probs = filter_logits(logits, temperature, top_k, top_p).softmax(dim=-1)
    if generator is not None and generator.device != probs.device:  # draw on the generator's device
        drawn = torch.multinomial(probs.to(generator.device), 1, generator=generator)
        return drawn.squeeze(1).to(probs.device)
    return torch.multinomial(probs, 1, generator=generator).squeeze(1)


@torch.no_grad()
def generate(
    model: nn.Module,
    prompt: torch.Tensor,
    new_tokens: int,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    generator: torch.Generator | None = None,
    cache: bool = True,
) -> torch.Tensor:
    """``prompt`` (N, P) followed by ``new_tokens`` tokens sampled from ``model`` as ``sample_next``
    says: (N, P + new_tokens). ``cache=True`` feeds each new token through ``model.extend`` (the
    KV cache); ``cache=False`` runs ``model`` on the whole sequence at every step."""
    check_int("new_tokens", new_tokens, minimum=0)
    _check_options(temperature, top_k, top_p)
    if not isinstance(prompt, torch.Tensor) or prompt.dim() != 2 or prompt.shape[1] == 0:
        shape = tuple(prompt.shape) if isinstance(prompt, torch.Tensor) else type(prompt).__name__
        raise ValueError(f"prompt must be (N, P) token ids with P >= 1, got {shape}")
    context = getattr(model, "context", None)
    if context is not None and prompt.shape[1] + new_tokens > context:
        raise ValueError(
            f"prompt of {prompt.shape[1]} tokens + new_tokens={new_tokens} exceeds the model's context "
            f"of {context} tokens"
        )
    tokens, new, state = prompt, prompt, None
    with eval_mode(model):
        if cache:
            state = model.start(prompt.shape[0])
        for _ in range(new_tokens):
            if cache:  # only the tokens not seen yet, after the cached keys and values
                logits, state = model.extend(new, state)
            else:  # the whole sequence again
                logits = model(tokens)
            new = sample_next(logits[:, -1], temperature, top_k, top_p, generator).unsqueeze(1)  # (N, 1)
            tokens = torch.cat([tokens, new], dim=1)
    return tokens
