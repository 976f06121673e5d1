"""Execute every chapter notebook once and print seconds per notebook and its slowest cells.

A report, not a test (budget: 45 s per chapter on a 2-core CPU; shared machines are noisy).

    python -m tools.reports.timings [--cells N] [chapter-stem ...]
"""

import argparse
import os
import statistics
import sys
from datetime import datetime

from tools.course import chapters, execute

BUDGET_S = 45
MEDIAN_BUDGET_S = 25
BOOK_BUDGET_S = 300


def cell_seconds(cell) -> float:
    """Seconds a cell ran, from the timestamps nbclient records in its metadata."""
    timing = cell.get("metadata", {}).get("execution", {})
    start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
    if not (start and end):
        return 0.0
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


def first_line(cell) -> str:
    """The cell's first line that is not a comment or blank, cut to 60 characters."""
    lines = [ln.strip() for ln in cell.source.splitlines()]
    code = [ln for ln in lines if ln and not ln.startswith("#")] or lines or [""]
    return code[0][:60]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapters", nargs="*", help="chapter stems (default: all)")
    parser.add_argument("--cells", type=int, default=5, help="slowest cells to list per chapter")
    args = parser.parse_args(argv)
    os.environ.setdefault("SEQLAB_PROGRESS", "0")
    rows = []
    for notebook in (nb for nb in chapters() if not args.chapters or nb.stem in args.chapters):
        nb, seconds = execute(notebook)
        rows.append((notebook.stem, seconds))
        cells = [(cell_seconds(c), i, first_line(c)) for i, c in enumerate(nb.cells) if c.cell_type == "code"]
        print(f"  ran {notebook.stem} in {seconds:.1f} s; slowest cells:", file=sys.stderr)
        for s, i, text in sorted(cells, reverse=True)[: args.cells]:
            print(f"    {s:6.1f} s  cell {i:3d}  {text}", file=sys.stderr)
    width = max([len(name) for name, _ in rows] + [7])
    print(f"| {'chapter':<{width}} | seconds | within {BUDGET_S} s |")
    print(f"|{'-' * (width + 2)}|---------|-------------|")
    for name, seconds in rows:
        print(f"| {name:<{width}} | {seconds:7.1f} | {'yes' if seconds <= BUDGET_S else 'NO':<11} |")
    times = [s for _, s in rows]
    print(
        f"cores: {os.cpu_count()}; median {statistics.median(times):.1f} s (budget {MEDIAN_BUDGET_S}); "
        f"total {sum(times):.1f} s (budget {BOOK_BUDGET_S})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
