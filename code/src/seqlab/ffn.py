"""The feed-forward network (FFN) of a Transformer block, and Llama's gated one, SwiGLU.

The Transformer's FFN acts on every position alone: widen, a nonlinearity, narrow back. A gated
linear unit (Dauphin et al. 2017; Shazeer 2020) multiplies a second projection by the activated
first one; with the SiLU (Swish) activation it is SwiGLU, the FFN of Llama, without biases::

    FeedForward(x) = act(x W_1^T + b_1) W_2^T + b_2                      act = GELU or ReLU
    SwiGLU(x)      = (silu(x W_gate^T) * (x W_up^T)) W_down^T           silu(z) = z * sigmoid(z)

Shapes: x (..., E); W_1, W_gate, W_up (hidden, E); W_2, W_down (E, hidden); the output (..., E).
SwiGLU has three matrices to the FFN's two, so a hidden width of 8E/3 gives it the parameters of
an FFN of width 4E.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .checks import check_choice, check_int, check_probability, check_tensor

__all__ = ["FeedForward", "SwiGLU", "ACTIVATIONS"]

ACTIVATIONS = {"gelu": F.gelu, "relu": F.relu}


class FeedForward(nn.Module):
    """``linear2(dropout(act(linear1(x))))``, width ``E`` -> ``hidden`` -> ``E``; ``activation``
    ``"gelu"`` (GPT-2's, the exact erf form) or ``"relu"`` (the Transformer's); ``bias`` on both
    linear maps. The parameters are named as in ``nn.TransformerEncoderLayer``."""

    def __init__(
        self, E: int, hidden: int, activation: str = "gelu", dropout: float = 0.0, bias: bool = True
    ) -> None:
        super().__init__()
        check_int("E", E), check_int("hidden", hidden)
        self.activation = check_choice("activation", activation, tuple(ACTIVATIONS))
        self.linear1 = nn.Linear(E, hidden, bias=bias)  # W_1 (hidden, E), b_1
        self.linear2 = nn.Linear(hidden, E, bias=bias)  # W_2 (E, hidden), b_2
        self.dropout = nn.Dropout(check_probability("dropout", dropout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x`` (..., E) -> (..., E)."""
        check_tensor("x", x, "(..., E)", last=self.linear1.in_features, dtype=self.linear1.weight.dtype)
        return self.linear2(self.dropout(ACTIVATIONS[self.activation](self.linear1(x))))


class SwiGLU(nn.Module):
    """``down_proj(silu(gate_proj(x)) * up_proj(x))``, no biases: Llama's MLP (``LlamaMLP``), its
    parameter names too; width ``E`` -> ``hidden`` -> ``E``, ``dropout`` on the gated product."""

    def __init__(self, E: int, hidden: int, dropout: float = 0.0) -> None:
        super().__init__()
        check_int("E", E), check_int("hidden", hidden)
        self.gate_proj = nn.Linear(E, hidden, bias=False)  # W_gate (hidden, E)
        self.up_proj = nn.Linear(E, hidden, bias=False)  # W_up (hidden, E)
        self.down_proj = nn.Linear(hidden, E, bias=False)  # W_down (E, hidden)
        self.dropout = nn.Dropout(check_probability("dropout", dropout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x`` (..., E) -> (..., E)."""
        check_tensor("x", x, "(..., E)", last=self.gate_proj.in_features, dtype=self.gate_proj.weight.dtype)
        gated = F.silu(self.gate_proj(x)) * self.up_proj(x)  # (..., hidden)
        return self.down_proj(self.dropout(gated))
