"""Print ``OMP_WAIT_POLICY=PASSIVE`` when other processes keep a core of this machine busy, else nothing.

OpenMP threads spin while they wait; on a busy machine the spinning takes the core the awaited thread
needs (Bahdanau on 2 cores, one busy: 11 min by default, 85 s passive). The policy changes how a
thread waits, not what it computes, so the Makefile passes its answer to the kernels:

    env $(python -m tools.reports.wait_policy) jupyter-book build .

An ``OMP_WAIT_POLICY`` already set is left alone (and this prints nothing).
"""

from __future__ import annotations

import os
import sys
import time

BUSY_CORES = 0.5  # other processes' use, in cores, from which threads should sleep, not spin
SAMPLE_S = 0.5


def busy_cores(seconds: float = SAMPLE_S) -> float:
    """How many cores' worth of CPU time this machine spent working over ``seconds``.

    Read from /proc/stat on Linux (this process sleeps meanwhile, so the work is other
    processes'); elsewhere the 1-minute load average, capped at the number of cores.
    """
    cores = os.cpu_count() or 1
    try:
        first = _cpu_times()
        time.sleep(seconds)
        second = _cpu_times()
    except OSError:
        try:
            return min(os.getloadavg()[0], cores)
        except (AttributeError, OSError):  # no load average (Windows): assume idle
            return 0.0
    total = second[0] - first[0]
    idle = second[1] - first[1]
    return cores * (1 - idle / total) if total > 0 else 0.0


def _cpu_times() -> tuple[int, int]:
    """(all jiffies, idle + iowait jiffies) from the first line of /proc/stat."""
    with open("/proc/stat") as stat:
        fields = [int(x) for x in stat.readline().split()[1:]]
    return sum(fields), fields[3] + (fields[4] if len(fields) > 4 else 0)


def main() -> int:
    if "OMP_WAIT_POLICY" in os.environ:
        return 0
    busy = busy_cores()
    if busy >= BUSY_CORES:
        print("OMP_WAIT_POLICY=PASSIVE")
        why = "sleep while they wait (same results, no spinning against the other processes)"
        print(
            f"wait_policy: {busy:.1f} of {os.cpu_count()} cores busy, so PyTorch's threads will {why}",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
