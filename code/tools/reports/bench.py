"""Speed of seqlab's paths against PyTorch's built-ins: a report, not a test.

Forward + backward with copied weights, best of several runs, ``impl="scratch"`` / ``"fast"`` (LSTM) /
``"torch"`` against ``nn.RNN`` / ``nn.GRU`` / ``nn.LSTM`` (ratio 1.00 = as fast); "oneDNN off" times
``nn.LSTM`` with ``torch.backends.mkldnn.enabled = False``, PyTorch's step-by-step path.

    python -m tools.reports.bench [--repeats 7]
"""

from __future__ import annotations

import argparse
import sys
from argparse import RawDescriptionHelpFormatter as RAW

import torch
import torch.nn.functional as F
from torch import nn

from seqlab.attention import scaled_dot_product_attention
from seqlab.lstm import GRU, LSTM
from seqlab.multihead import MultiheadAttention
from seqlab.rnn import RNN
from seqlab.timing import time_fn

# (N, T, E_in, E_h); the first is the LSTM chapter's lag sweep at lag 40 (batch 64, inputs 16, width 32)
SIZES = [(64, 42, 16, 32), (32, 50, 32, 32), (64, 50, 64, 64), (64, 100, 64, 64), (128, 50, 128, 128)]
ATTENTION_SIZES = [(8, 4, 64, 32), (8, 8, 256, 64), (4, 8, 512, 64)]  # (N, H, T, D), self-attention
LAYERS = [("RNN", nn.RNN, RNN), ("GRU", nn.GRU, GRU), ("LSTM", nn.LSTM, LSTM)]


def fwd_bwd(module: nn.Module, x: torch.Tensor, **kwargs) -> None:
    module(x, **kwargs)[0].sum().backward()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=RAW)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    threads = torch.get_num_threads()
    print(f"torch {torch.__version__}, {threads} threads, CPU; forward + backward, best of {args.repeats}")
    print("| layer | N, T, E_in, E_h | built-in ms | built-in, oneDNN off ms | scratch ms | scratch ratio "
          "| fast ms | fast ratio | torch path ms | torch-path ratio |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, builtin_class, ours_class in LAYERS:
        for n, t, e_in, e in SIZES:
            builtin = builtin_class(e_in, e, batch_first=True)
            ours = ours_class.from_torch(builtin)
            x = torch.randn(n, t, e_in)
            base = time_fn(lambda b=builtin, x=x: fwd_bwd(b, x), repeats=args.repeats)
            unfused = time_unfused(lambda b=builtin, x=x: fwd_bwd(b, x), repeats=args.repeats)
            paths = {}
            for impl in ("scratch", "fast", "torch"):  # "fast" (hand-written BPTT): the LSTM only
                if impl in getattr(ours_class, "impls", ("scratch", "torch")):
                    paths[impl] = time_fn(
                        lambda o=ours, x=x, i=impl: fwd_bwd(o, x, impl=i), repeats=args.repeats
                    )
            cells = [f"{n}, {t}, {e_in}, {e}", f"{1e3 * base:.2f}", f"{1e3 * unfused:.2f}"]
            for impl in ("scratch", "fast", "torch"):
                seconds = paths.get(impl)
                cells += ["-", "-"] if seconds is None else [f"{1e3 * seconds:.2f}", f"{seconds / base:.2f}"]
            print(f"| {name} | " + " | ".join(cells) + " |")
    attention(args.repeats)
    return 0


def time_unfused(fn, repeats: int) -> float:
    """``time_fn`` with oneDNN turned off, so recurrent built-ins take PyTorch's step-by-step path."""
    enabled = torch.backends.mkldnn.enabled
    torch.backends.mkldnn.enabled = False
    try:
        return time_fn(fn, repeats=repeats)
    finally:
        torch.backends.mkldnn.enabled = enabled


def attention(repeats: int) -> None:
    """Scaled dot-product and multi-head self-attention, causal mask, forward + backward."""
    print(
        "\n| layer | N, H, T, D | built-in ms | seqlab torch ms | ratio | seqlab scratch ms | scratch ratio |"
    )
    print("|---|---|---|---|---|---|---|")
    for n, h, t, d in ATTENTION_SIZES:
        mask = torch.ones(t, t, dtype=torch.bool).tril()
        q, k, v = (torch.randn(n, h, t, d, requires_grad=True) for _ in range(3))

        def run_sdpa(fn, q=q, k=k, v=v, mask=mask):
            fn(q, k, v, mask).sum().backward()

        base = time_fn(
            lambda: run_sdpa(lambda *a: F.scaled_dot_product_attention(*a[:3], attn_mask=a[3])), repeats
        )
        fast = time_fn(lambda: run_sdpa(lambda *a: scaled_dot_product_attention(*a, impl="torch")), repeats)
        slow = time_fn(lambda: run_sdpa(lambda *a: scaled_dot_product_attention(*a, impl="scratch")), repeats)
        row("SDPA", (n, h, t, d), base, fast, slow)

        builtin = nn.MultiheadAttention(h * d, h, batch_first=True)
        ours = MultiheadAttention.from_torch(builtin)
        x = torch.randn(n, t, h * d, requires_grad=True)
        ignore = ~mask  # nn.MultiheadAttention's meaning: True = ignore

        def run_mha(module, x=x, ignore=ignore, **kwargs):
            module(x, x, x, attn_mask=ignore, need_weights=False, **kwargs)[0].sum().backward()

        base = time_fn(lambda b=builtin: run_mha(b), repeats)
        fast = time_fn(lambda o=ours: run_mha(o, impl="torch"), repeats)
        slow = time_fn(lambda o=ours: run_mha(o, impl="scratch"), repeats)
        row("MHA", (n, h, t, d), base, fast, slow)


def row(name: str, size: tuple, base: float, fast: float, slow: float) -> None:
    cells = f"{1e3 * base:.2f} | {1e3 * fast:.2f} | {fast / base:.2f} | {1e3 * slow:.2f} | {slow / base:.2f}"
    print(f"| {name} | {', '.join(map(str, size))} | {cells} |")


if __name__ == "__main__":
    sys.exit(main())
