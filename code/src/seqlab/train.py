"""One training loop for every chapter: device, optimiser, gradient clipping, progress, history.

``fit`` takes ``steps`` optimiser steps on minibatches of tensors in memory and returns a
``History`` of the loss and gradient norm at every step, plus any evaluations; it stops at the
first non-finite loss or gradient (``diverged_at``). ``SEQLAB_PROGRESS=0`` turns the tqdm bars
off. Training is bounded by steps, never by wall time, so a seed gives the same numbers on an idle
or a loaded machine.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
from torch import nn

from .checks import check_int
from .device import get_device
from .utils import eval_mode

__all__ = [
    "History",
    "fit",
    "progress_enabled",
    "clip_grad_norm",
    "warmup_inverse_sqrt",
    "warmup_scheduler",
    "linear_decay",
    "label_smoothed_cross_entropy",
]

log = logging.getLogger(__name__)

Batch = tuple[torch.Tensor, ...]


def progress_enabled(progress: bool | None = None) -> bool:
    """Whether to show progress bars: ``progress`` if given, else ``SEQLAB_PROGRESS != "0"``."""
    if progress is not None:
        return progress
    return os.environ.get("SEQLAB_PROGRESS", "1") not in ("0", "false", "no")


@dataclass
class History:
    """What happened during ``fit``. Lists hold one entry per optimiser step."""

    loss: list[float] = field(default_factory=list)
    grad_norm: list[float] = field(default_factory=list)
    clipped: list[bool] = field(default_factory=list)
    evals: list[tuple[int, dict[str, float]]] = field(default_factory=list)
    eval_at_seconds: list[float] = field(default_factory=list)  # training seconds before each eval
    seconds: float = 0.0
    eval_seconds: float = 0.0
    diverged_at: int | None = None
    stopped_early: bool = False
    label: str = "train"

    @property
    def steps(self) -> int:
        return len(self.loss)

    @property
    def train_seconds(self) -> float:
        """Wall time spent training, evaluations excluded."""
        return self.seconds - self.eval_seconds

    @property
    def diverged(self) -> bool:
        return self.diverged_at is not None

    def train_seconds_at(self, step: int) -> float:
        """Wall time spent training (evaluations excluded) up to the evaluation at ``step``."""
        for (at, _), seconds in zip(self.evals, self.eval_at_seconds):
            if at == step:
                return seconds
        raise ValueError(f"no evaluation at step {step}; evaluated at {[at for at, _ in self.evals]}")

    def eval_curve(self, key: str) -> tuple[list[int], list[float]]:
        """Steps and values of one evaluation metric."""
        pairs = [(s, m[key]) for s, m in self.evals if key in m]
        return [s for s, _ in pairs], [v for _, v in pairs]

    def summary(self) -> str:
        """One line: steps, time, loss (mean of the first and last ten steps), clipping, evals."""
        if not self.loss:
            return f"{self.label}: no steps taken"
        head = min(10, len(self.loss))
        first = sum(self.loss[:head]) / head
        last = sum(self.loss[-head:]) / head
        text = f"{self.label}: {self.steps} steps, {self.seconds:.1f} s"
        if self.eval_seconds:
            text += f" ({self.eval_seconds:.1f} s evaluating)"
        text += f", loss {first:.3g} -> {last:.3g}"
        if any(self.clipped):
            text += f", clipped {100 * sum(self.clipped) / len(self.clipped):.0f}%"
        if self.evals:
            text += ", final " + ", ".join(f"{k} {v:.4g}" for k, v in self.evals[-1][1].items())
        if self.stopped_early:
            text += " (target reached, stopped early)"
        if self.diverged:
            text += f"; DIVERGED at step {self.diverged_at}"
        return text

    def __repr__(self) -> str:
        return self.summary()


def clip_grad_norm(parameters: Sequence[torch.Tensor], max_norm: float) -> float:
    """``g <- g * max_norm / ||g||`` in place when the norm of all gradients together ``||g|| >
    max_norm`` (as ``torch.nn.utils.clip_grad_norm_``); returns ``||g||`` before clipping."""
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return 0.0
    total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
    if not torch.isfinite(total) or total == 0:
        # the squares of gradients near 1e20 overflow float32 (near 1e-25 they underflow to 0):
        # then the norm is taken of the gradients divided by their largest entry, in float64
        peak = max((g.detach().abs().max().double() for g in grads if g.numel()), default=None)
        if peak is not None and torch.isfinite(peak) and peak > 0:
            parts = [torch.linalg.vector_norm(g.detach().double() / peak) for g in grads]
            total = peak * torch.linalg.vector_norm(torch.stack(parts))
    if total > max_norm:
        for g in grads:
            g.mul_(max_norm / total)
    return total.item()


def warmup_inverse_sqrt(step: int, d_model: int, warmup: int, factor: float = 1.0) -> float:
    """The Transformer's learning rate at ``step`` >= 1: ``factor * d_model^-0.5 * min(step^-0.5,
    step * warmup^-1.5)``, rising for ``warmup`` steps, then decaying as 1 / sqrt(step)."""
    if step < 1 or warmup < 1 or d_model < 1:
        raise ValueError(f"step, warmup and d_model must be >= 1, got {step=}, {warmup=}, {d_model=}")
    return factor * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


def warmup_scheduler(d_model: int, warmup: int, factor: float = 1.0):
    """``optimizer -> LambdaLR`` following ``warmup_inverse_sqrt`` (with ``lr=1.0``), for ``fit``."""
    return lambda opt: torch.optim.lr_scheduler.LambdaLR(
        opt, lambda done: warmup_inverse_sqrt(done + 1, d_model, warmup, factor)
    )


def linear_decay(steps: int, warmup: int = 0):
    """``optimizer -> LambdaLR`` for ``fit``: the rate rises linearly from 0 to ``lr`` over ``warmup``
    steps, then falls linearly to 0 at step ``steps``, so that the weights settle."""
    check_int("steps", steps, minimum=None), check_int("warmup", warmup, minimum=None)
    if steps < 1 or not 0 <= warmup < steps:
        raise ValueError(f"need steps >= 1 and 0 <= warmup < steps, got {steps=}, {warmup=}")

    def factor(done: int) -> float:  # ``done`` steps taken; the next step is done + 1
        if done < warmup:
            return (done + 1) / warmup
        return max(0.0, (steps - done) / (steps - warmup))

    return lambda opt: torch.optim.lr_scheduler.LambdaLR(opt, factor)


def label_smoothed_cross_entropy(
    logits: torch.Tensor, target: torch.Tensor, smoothing: float = 0.1, ignore_index: int = -100
) -> torch.Tensor:
    """Cross-entropy of ``logits`` (M, V) against ``(1 - smoothing) * one_hot(target (M,)) +
    smoothing / V``, averaged over the targets other than ``ignore_index`` (= ``F.cross_entropy``'s)."""
    if logits.dim() != 2 or target.shape != logits.shape[:1]:
        raise ValueError(
            f"logits must be (M, V) and target (M,), got {tuple(logits.shape)}, {tuple(target.shape)}"
        )
    if not 0 <= smoothing < 1:
        raise ValueError(f"smoothing must lie in [0, 1), got {smoothing}")
    keep = target != ignore_index
    if not keep.any():
        raise ValueError("every target is ignore_index: the loss is undefined")
    log_p = logits[keep].log_softmax(dim=-1)  # (M', V)
    nll = -log_p.gather(1, target[keep].unsqueeze(1)).squeeze(1)  # -log p(target)
    uniform = -log_p.mean(dim=-1)  # cross-entropy against the uniform distribution
    return ((1 - smoothing) * nll + smoothing * uniform).mean()


def _same_kind(data: Batch, tensors) -> Batch:
    """``tensors`` as the same kind of tuple as ``data`` (a named tuple keeps its field names)."""
    return type(data)(*tensors) if hasattr(data, "_fields") else tuple(tensors)


def _make_optimizer(optimizer, params, lr: float) -> torch.optim.Optimizer:
    if isinstance(optimizer, torch.optim.Optimizer):
        return optimizer
    if callable(optimizer):
        return optimizer(params)
    choices = {"adam": torch.optim.Adam, "adamw": torch.optim.AdamW, "sgd": torch.optim.SGD}
    if optimizer not in choices:
        raise ValueError(f"optimizer must be one of {sorted(choices)} or an optimizer, got {optimizer!r}")
    return choices[optimizer](params, lr=lr)


class _Minibatches:
    """Row indices of minibatches (``next()``: (B,) on ``device``): the N rows are shuffled by a
    generator seeded with ``seed``, cut into batches, and shuffled again when too few are left."""

    def __init__(self, n: int, batch_size: int, seed: int, device: torch.device) -> None:
        self.n, self.batch_size, self.device = n, batch_size, device
        self.generator = torch.Generator().manual_seed(seed)
        self.order, self.pos = torch.randperm(n, generator=self.generator), 0

    def next(self) -> torch.Tensor:
        if self.pos + self.batch_size > self.n:
            self.order, self.pos = torch.randperm(self.n, generator=self.generator), 0
        self.pos += self.batch_size
        return self.order[self.pos - self.batch_size : self.pos].to(self.device)


def _optimizer_step(model, batch, loss_fn, opt, sched, params, clip_norm, history: History) -> bool:
    """One step on ``batch``: loss, gradients, clipping, update; the loss and gradient norm go into
    ``history``. Returns False, without updating, at a non-finite loss or gradient norm."""
    opt.zero_grad(set_to_none=True)
    loss = loss_fn(model, batch)
    if loss.dim() != 0:
        raise ValueError(f"loss_fn must return a scalar, got shape {tuple(loss.shape)}")
    value = loss.item()
    if not math.isfinite(value):
        return False
    history.loss.append(value)
    loss.backward()
    norm = clip_grad_norm(params, math.inf if clip_norm is None else clip_norm)
    history.grad_norm.append(norm)
    history.clipped.append(clip_norm is not None and norm > clip_norm)
    if not math.isfinite(norm):
        return False
    opt.step()
    if sched is not None:
        sched.step()
    return True


def _evaluate(model: nn.Module, eval_fn, step: int, history: History, start: float) -> None:
    """Run ``eval_fn`` in evaluation mode without gradients; record its metrics and time."""
    began = time.perf_counter()
    history.eval_at_seconds.append(began - start - history.eval_seconds)
    with eval_mode(model), torch.no_grad():
        history.evals.append((step, {k: float(v) for k, v in eval_fn(model).items()}))
    history.eval_seconds += time.perf_counter() - began


def fit(
    model: nn.Module,
    data: Batch,
    loss_fn: Callable[[nn.Module, Batch], torch.Tensor],
    *,
    steps: int,
    batch_size: int = 64,
    lr: float = 1e-3,
    optimizer="adam",
    scheduler: Callable[[torch.optim.Optimizer], object] | None = None,
    clip_norm: float | None = None,
    eval_fn: Callable[[nn.Module], dict[str, float]] | None = None,
    eval_every: int | None = None,
    stop_when: Callable[[dict[str, float]], bool] | None = None,
    device: str | torch.device | None = None,
    seed: int = 0,
    progress: bool | None = None,
    label: str = "train",
) -> History:
    """Train ``model`` (moved to ``device``) for ``steps`` optimiser steps on minibatches of
    ``data``, tensors sharing their first dimension N (e.g. ``Example(x, y)``): ``loss_fn(model,
    batch)`` gets ``batch_size`` rows as ``data``'s kind of tuple, in an order seeded by ``seed``.
    ``optimizer``: ``"adam"``, ``"adamw"``, ``"sgd"`` (at ``lr``), an optimiser, or ``params ->
    optimiser``; ``scheduler``: ``optimizer -> scheduler``, stepped after every step;
    ``clip_norm``: the global gradient norm's bound (None: no clipping); ``eval_fn(model) ->
    {metric: value}`` runs without gradients every ``eval_every`` steps and at the end, and
    ``stop_when(metrics)`` True ends training early. Returns a ``History``."""
    if not isinstance(data, (tuple, list)) or not data:
        raise TypeError("data must be a non-empty tuple of tensors sharing their first dimension")
    n = data[0].shape[0]
    bad = [tuple(t.shape) for t in data if t.shape[0] != n]
    if bad:
        raise ValueError(f"all tensors in data must have the same first dimension {n}; got {bad}")
    if steps < 1 or batch_size < 1:
        raise ValueError(f"steps and batch_size must be positive, got {steps=}, {batch_size=}")
    if clip_norm is not None and not clip_norm > 0:
        raise ValueError(f"clip_norm must be positive or None, got {clip_norm!r}")

    from tqdm.auto import tqdm

    device = get_device(device)
    model.to(device)
    data = _same_kind(data, (t.to(device) for t in data))
    params = [p for p in model.parameters() if p.requires_grad]
    opt = _make_optimizer(optimizer, params, lr)
    sched = scheduler(opt) if scheduler is not None else None
    history = History(label=label)
    model.train()
    batches = _Minibatches(n, min(batch_size, n), seed, device)
    start = time.perf_counter()
    bar = tqdm(range(1, steps + 1), desc=label, disable=not progress_enabled(progress), leave=False)
    for step in bar:
        rows = batches.next()  # (B,) row indices
        batch = _same_kind(data, (t[rows] for t in data))
        if not _optimizer_step(model, batch, loss_fn, opt, sched, params, clip_norm, history):
            history.diverged_at = step
            break
        if eval_fn is not None and eval_every and step % eval_every == 0 and step != steps:
            _evaluate(model, eval_fn, step, history, start)
            if stop_when is not None and stop_when(history.evals[-1][1]):
                history.stopped_early = True
                break
        if step % 10 == 0:
            bar.set_postfix(loss=f"{history.loss[-1]:.4g}")
    bar.close()
    if history.diverged:
        log.warning("%s diverged at step %d: non-finite loss or gradient", label, history.diverged_at)
    elif not history.stopped_early and eval_fn is not None:
        _evaluate(model, eval_fn, history.steps, history, start)
    history.seconds = time.perf_counter() - start
    return history
