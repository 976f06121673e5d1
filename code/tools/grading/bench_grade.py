"""How many submissions per minute `make grade` gets through here (a report, not a test).

Grades N generated submissions (a quarter each correct, half done, untouched, broken) from an empty
cache and prints the throughput and the status counts.

    python -m tools.grading.bench_grade [--n 40] [--jobs 2] [--dist dist]
"""

from __future__ import annotations

import argparse
import collections
import csv
import os
import sys
import tempfile
import time
from pathlib import Path

from tools.course import chapters, write
from tools.grading import grade
from tools.otter_format import fill, has_exercises, questions, solutions


def make_submissions(dist: Path, out: Path, n: int) -> None:
    """Write ``n`` submissions (correct / half / untouched / broken, in turn) under ``out``."""
    graded = [nb for nb in chapters() if has_exercises(nb)]
    for i in range(n):
        notebook = graded[i % len(graded)]
        names = [q for q, _ in questions(notebook)]
        student = dist / notebook.stem / "student" / f"{notebook.stem}.ipynb"
        reference = solutions(notebook)
        kind = ("correct", "half", "untouched", "broken")[(i // len(graded)) % 4]
        answers = {
            "correct": reference,
            "half": {q: reference[q] for q in names[: len(names) // 2 or 1]},
            "untouched": {},
            "broken": {**reference, names[-1]: "def broken(:\n    pass"},
        }[kind]
        write(fill(student, answers, names), out / f"{i:03d}_{notebook.stem}_{kind}.ipynb")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--dist", type=Path, default=Path("dist"))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="seqlab-bench-grade-") as tmp:
        subs = Path(tmp) / "submissions"
        subs.mkdir()
        make_submissions(args.dist, subs, args.n)
        out = Path(tmp) / "grades.csv"
        start = time.perf_counter()
        grade.main([str(subs), "--dist", str(args.dist), "--out", str(out), "--jobs", str(args.jobs)])
        seconds = time.perf_counter() - start
        rows = list(csv.DictReader(out.open()))
    statuses = collections.Counter(row["status"] for row in rows)
    print(
        f"graded {len(rows)} submissions in {seconds:.1f} s with {args.jobs} jobs on {os.cpu_count()} cores: "
        f"{60 * len(rows) / seconds:.1f} submissions per minute ({dict(sorted(statuses.items()))})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
