"""Speed of seqlab's paths against PyTorch's built-ins: a report, not a test.

For each size, forward + backward of the same layer with copied weights, best of several runs:
seqlab's ``impl="scratch"`` and ``impl="torch"`` paths against ``nn.RNN`` / ``nn.GRU`` /
``nn.LSTM``. The ratio is seqlab's time over the built-in's (1.00 = as fast).

    python code/tools/bench.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import sys

import torch
from torch import nn

from seqlab.lstm import GRU, LSTM
from seqlab.rnn import RNN
from seqlab.timing import time_fn

SIZES = [(32, 50, 32), (64, 50, 64), (64, 100, 64), (128, 50, 128)]  # (N, T, E)
LAYERS = [("RNN", nn.RNN, RNN), ("GRU", nn.GRU, GRU), ("LSTM", nn.LSTM, LSTM)]


def fwd_bwd(module: nn.Module, x: torch.Tensor, **kwargs) -> None:
    module(x, **kwargs)[0].sum().backward()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    threads = torch.get_num_threads()
    print(f"torch {torch.__version__}, {threads} threads, CPU; forward + backward, best of {args.repeats}")
    print("| layer | N, T, E | built-in ms | scratch ms | scratch ratio | torch path ms | torch-path ratio |")
    print("|---|---|---|---|---|---|---|")
    for name, builtin_class, ours_class in LAYERS:
        for n, t, e in SIZES:
            builtin = builtin_class(e, e, batch_first=True)
            ours = ours_class.from_torch(builtin)
            x = torch.randn(n, t, e)
            base = time_fn(lambda b=builtin, x=x: fwd_bwd(b, x), repeats=args.repeats)
            scratch = time_fn(lambda o=ours, x=x: fwd_bwd(o, x, impl="scratch"), repeats=args.repeats)
            fast = time_fn(lambda o=ours, x=x: fwd_bwd(o, x, impl="torch"), repeats=args.repeats)
            print(f"| {name} | {n}, {t}, {e} | {1e3 * base:.2f} | {1e3 * scratch:.2f} | {scratch / base:.2f} "
                  f"| {1e3 * fast:.2f} | {fast / base:.2f} |")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
