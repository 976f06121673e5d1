"""Grade every submitted notebook under a folder and write one ``grades.csv``.

Each submission is matched to its chapter (by the assignment name otter stores in the student
notebook's metadata, else by a chapter name in its file name), run with ``otter run`` against
that chapter's autograder zip from ``make student`` in a process of its own with a time limit,
and scored per question. A submission that cannot be read, matched or run still gets a row, with
zero for what did not run and the reason in ``status`` and ``error``; it never stops the batch.
The CSV is written to a temporary file and moved into place, so it is never half written.

    python code/tools/grade.py SUBMISSIONS --dist dist --out grades.csv [--jobs 2] [--timeout 300]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from course import ROOT, chapters, has_exercises, questions  # noqa: E402


@dataclass
class Chapter:
    name: str
    zip_path: Path
    questions: list[tuple[str, float]]


@dataclass
class Row:
    file: str
    chapter: str = ""
    scores: dict[str, float] = field(default_factory=dict)
    possible: float = 0.0
    status: str = "graded"
    error: str = ""


def load_chapters(dist: Path) -> dict[str, Chapter]:
    found = {}
    for notebook in chapters(ROOT):
        if not has_exercises(notebook):
            continue
        zips = sorted((dist / notebook.stem / "autograder").glob("*.zip"))
        if not zips:
            raise SystemExit(f"no autograder zip for {notebook.stem} under {dist}; run `make student` first")
        found[notebook.stem] = Chapter(notebook.stem, zips[-1], questions(notebook))
    return found


def match_chapter(path: Path, known: dict[str, Chapter]) -> tuple[str | None, str]:
    """The chapter a submission belongs to, or None and the reason."""
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return None, f"not a notebook (invalid JSON: {exc.__class__.__name__})"
    if not isinstance(notebook, dict) or "cells" not in notebook:
        return None, "not a notebook (no cells)"
    name = (notebook.get("metadata", {}).get("otter") or {}).get("assignment_name")
    if name in known:
        return name, ""
    by_file = [c for c in known if c in path.stem]
    if len(by_file) == 1:
        return by_file[0], ""
    return None, f"cannot tell the chapter: metadata names {name!r}, file name matches {by_file}"


def grade_one(path: Path, root: Path, known: dict[str, Chapter], timeout: float) -> Row:
    row = Row(file=str(path.relative_to(root)))
    chapter, reason = match_chapter(path, known)
    if chapter is None:
        row.status, row.error = "rejected", reason
        return row
    info = known[chapter]
    row.chapter = chapter
    row.possible = sum(points for _, points in info.questions)
    row.scores = {name: 0.0 for name, _ in info.questions}
    with tempfile.TemporaryDirectory() as out:
        cmd = [
            sys.executable,
            "-m",
            "otter",
            "run",
            "--no-logo",
            "-a",
            str(info.zip_path),
            "-o",
            out,
            str(path),
        ]
        try:
            result = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=out)
        except subprocess.TimeoutExpired:
            row.status, row.error = "timeout", f"grading took longer than {timeout:.0f} s"
            return row
        results_file = Path(out) / "results.json"
        if result.returncode != 0 or not results_file.exists():
            row.status = "error"
            row.error = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["otter run failed"]
            row.error = row.error[0][:300]
            return row
        results = json.loads(results_file.read_text())
    for test in results.get("tests", []):
        if test.get("name") in row.scores and test.get("score") is not None:
            row.scores[test["name"]] = float(test["score"])
    return row


def write_csv(rows: list[Row], known: dict[str, Chapter], out: Path) -> None:
    columns = [name for chapter in known.values() for name, _ in chapter.questions]
    header = ["file", "chapter", *columns, "total", "possible", "status", "error"]
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for row in rows:
            cells = [row.scores.get(c, "") for c in columns]
            total = sum(row.scores.values())
            writer.writerow([row.file, row.chapter, *cells, total, row.possible, row.status, row.error])
    os.replace(tmp, out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("submissions", type=Path)
    parser.add_argument("--dist", type=Path, default=Path("dist"))
    parser.add_argument("--out", type=Path, default=Path("grades.csv"))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per submission")
    args = parser.parse_args(argv)
    if not args.submissions.is_dir():
        parser.error(f"{args.submissions} is not a folder")
    known = load_chapters(args.dist.resolve())
    paths = sorted(p for p in args.submissions.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
    root = args.submissions.resolve()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        rows = list(pool.map(lambda p: grade_one(p.resolve(), root, known, args.timeout), paths))
    write_csv(rows, known, args.out)
    failed = sum(r.status != "graded" for r in rows)
    print(f"graded {len(rows) - failed} of {len(rows)} submissions ({failed} not graded) -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
