"""Print ``OMP_WAIT_POLICY=PASSIVE`` when other processes keep a core of this machine busy, else nothing.

PyTorch runs its CPU work on a team of OpenMP threads, one per core. At the end of each parallel
region a thread that has finished spins for a while, waiting for the others, instead of sleeping:
on an idle machine that saves the cost of waking it for the next region, which is most of the time
for small models like the course's. On a busy machine the spinning thread takes the core that the
thread it waits for needs, and every region waits for the scheduler. Measured on a 2-core machine
with one core kept busy by another process, the Bahdanau chapter ran in over 11 minutes with the
default policy and in 85 s with ``OMP_WAIT_POLICY=PASSIVE`` (idle: 50 s and 65 s).

The policy changes how a thread waits, not what any thread computes: every result is bit for bit
the same under either. So the Makefile asks this script once per command and passes its answer to
the notebooks' kernels:

    env $(python -m tools.reports.wait_policy) jupyter-book build .

An ``OMP_WAIT_POLICY`` already set in the environment is left alone (and this prints nothing).
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
        print(
            f"wait_policy: {busy:.1f} of {os.cpu_count()} cores busy, so PyTorch's threads will "
            "sleep while they wait (same results, no spinning against the other processes)",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
