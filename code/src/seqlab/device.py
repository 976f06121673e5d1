"""Where tensors live and how runs are made repeatable.

``get_device()`` picks CUDA, then Apple's MPS, then the CPU, so the same notebook runs unchanged
on a laptop and on a GPU. ``seed_everything(seed)`` seeds Python, NumPy and PyTorch (all
devices); the environment variable ``SEQLAB_SEED_OFFSET`` adds to every seed, to rerun a chapter
with other seeds (``make robustness``).
"""

from __future__ import annotations

import os
import random

import numpy as np
import torch

__all__ = ["get_device", "seed_everything"]


def get_device(prefer: str | torch.device | None = None) -> torch.device:
    """Return the device to compute on.

    Args:
        prefer: ``None`` picks the best available device (cuda, then mps, then cpu); a string such
            as ``"cpu"`` or ``"cuda:1"``, or a ``torch.device``, is checked and returned. The
            environment variable ``SEQLAB_DEVICE`` overrides the automatic choice.

    Raises:
        ValueError: if the preferred device is not available on this machine.
    """
    if prefer is None:
        prefer = os.environ.get("SEQLAB_DEVICE") or None
    if prefer is None:
        if torch.cuda.is_available():
            return torch.device("cuda")
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    device = torch.device(prefer)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {str(device)!r} was asked for, but CUDA is not available here")
    if device.type == "mps":
        mps = getattr(torch.backends, "mps", None)
        if mps is None or not mps.is_available():
            raise ValueError("device 'mps' was asked for, but MPS is not available here")
    return device


def seed_everything(seed: int) -> torch.Generator:
    """Seed Python's ``random``, NumPy and PyTorch (CPU and every GPU) with ``seed``.

    ``SEQLAB_SEED_OFFSET=k`` in the environment seeds with ``seed + k`` instead (unset: 0).
    Returns a CPU ``torch.Generator`` seeded the same way, for code that wants its own stream.
    """
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    offset = os.environ.get("SEQLAB_SEED_OFFSET", "0")
    if not offset.lstrip("-").isdigit():
        raise ValueError(f"SEQLAB_SEED_OFFSET must be an integer, got {offset!r}")
    seed += int(offset)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed)
