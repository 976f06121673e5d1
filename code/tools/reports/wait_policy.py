"""Print ``OMP_WAIT_POLICY=PASSIVE`` when other processes keep a core of this machine busy, else nothing
(why: docs/contributors.md, "The same numbers on every run"). The Makefile passes the answer on:

    env $(python -m tools.reports.wait_policy) jupyter-book build .

An ``OMP_WAIT_POLICY`` already set is left alone (and this prints nothing).
"""

import os
import sys

import psutil

BUSY_CORES = 0.5  # other processes' use, in cores, from which threads should sleep, not spin


def busy_cores(seconds: float = 0.5) -> float:
    """How many cores' worth of CPU time this machine spent working over ``seconds`` (this process
    sleeps meanwhile, so the work is other processes')."""
    return psutil.cpu_percent(interval=seconds) / 100 * (os.cpu_count() or 1)


def main() -> int:
    if "OMP_WAIT_POLICY" not in os.environ and (busy := busy_cores()) >= BUSY_CORES:
        print("OMP_WAIT_POLICY=PASSIVE")
        why = f"{busy:.1f} of {os.cpu_count()} cores busy, so PyTorch's threads will sleep while they wait"
        print(f"wait_policy: {why} (same results, no spinning against the other processes)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
