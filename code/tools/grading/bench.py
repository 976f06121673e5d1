"""How fast ``make grade`` grades: a folder of submissions made from every chapter's student
notebook, graded with the given jobs, timed (``make grade-bench``).

Per chapter: one submission with every reference solution, and one per question with that
question's first plausible wrong answer (``tests/exercise_answers/<chapter>.py``) in place of its
solution, so the batch mixes full marks, lost points and failing hidden tests, as a class does.
Prints submissions per minute; the CSV and feedback go to ``_build/grade-bench/``."""

import argparse
import importlib
import json
import shutil
import sys
import time
from pathlib import Path

from tools.course import ROOT, chapters
from tools.grading import grade
from tools.otter_format import fill, has_exercises, questions, solutions

OUT = ROOT / "_build" / "grade-bench"


def submissions(dist: Path, folder: Path, only: str | None = None) -> int:
    """Write the submissions into ``folder``; their number."""
    sys.path.insert(0, str(ROOT / "tests"))
    count = 0
    for notebook in chapters():
        if not has_exercises(notebook) or (only and notebook.stem != only):
            continue
        student = dist / notebook.stem / "student" / f"{notebook.stem}.ipynb"
        names = [q for q, _ in questions(notebook)]
        right = solutions(notebook)
        wrong = importlib.import_module(f"exercise_answers.{notebook.stem}").WRONG
        variants = {"correct": right}
        for name in names:
            if wrong.get(name):
                variants[f"wrong_{name}"] = {**right, name: wrong[name][0]}
        for label, answers in variants.items():
            path = folder / f"{notebook.stem}_{label}.ipynb"
            path.write_text(json.dumps(fill(student, answers, names)))
            count += 1
    return count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dist", type=Path, default=ROOT / "dist")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--chapter", default=None)
    args = parser.parse_args(argv)
    if not args.dist.is_dir():
        parser.error(f"--dist {args.dist} does not exist: run `make student` first")
    shutil.rmtree(OUT, ignore_errors=True)
    folder = OUT / "submissions"
    folder.mkdir(parents=True)
    count = submissions(args.dist, folder, args.chapter)
    start = time.perf_counter()
    status = grade.main(
        [str(folder), "--dist", str(args.dist), "--out", str(OUT / "grades.csv"), "--jobs", str(args.jobs)]
        + (["--chapter", args.chapter] if args.chapter else [])
    )
    seconds = time.perf_counter() - start
    print(
        f"graded {count} submissions in {seconds:.0f} s with {args.jobs} jobs: "
        f"{60 * count / seconds:.1f} submissions a minute"
    )
    return status


if __name__ == "__main__":
    raise SystemExit(main())
