"""Execute every chapter notebook once and print a table of seconds per notebook.

A report, not a test: the budget is 90 s per chapter on a 2-core CPU, and timings on a shared
machine are noisy, so nothing fails here; read the table.

    python code/tools/timings.py [chapter-stem ...]
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
from course import chapters  # noqa: E402

BUDGET_S = 90


def run(notebook: Path) -> float:
    nb = nbformat.read(notebook, as_version=4)
    client = NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(notebook.parent)}}
    )
    start = time.perf_counter()
    client.execute()
    return time.perf_counter() - start


def main(argv: list[str]) -> int:
    os.environ.setdefault("SEQLAB_PROGRESS", "0")
    todo = [nb for nb in chapters() if not argv or nb.stem in argv]
    rows = []
    for notebook in todo:
        seconds = run(notebook)
        rows.append((notebook.stem, seconds))
        print(f"  ran {notebook.stem} in {seconds:.1f} s", file=sys.stderr)
    width = max([len(name) for name, _ in rows] + [7])
    print(f"| {'chapter':<{width}} | seconds | within {BUDGET_S} s |")
    print(f"|{'-' * (width + 2)}|---------|-------------|")
    for name, seconds in rows:
        print(f"| {name:<{width}} | {seconds:7.1f} | {'yes' if seconds <= BUDGET_S else 'NO':<11} |")
    print(f"cores: {os.cpu_count()}; total {sum(s for _, s in rows):.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
