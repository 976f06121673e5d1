"""Build what students and graders get: ``otter assign`` for every chapter with exercises.

For a chapter ``chapters/NAME.ipynb`` this writes ``OUT/NAME/student/NAME.ipynb`` (solutions and
hidden tests removed, public tests kept for ``grader.check``) and
``OUT/NAME/autograder/NAME-autograder_*.zip`` (every test, for ``otter run`` or Gradescope).
``otter assign`` also runs all tests against the reference solutions and fails if one fails.

    python code/tools/student.py --out dist [--only NAME ...]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from course import assignment_name, chapters, has_exercises  # noqa: E402


def assign(notebook: Path, out: Path) -> Path:
    """Run ``otter assign`` on one chapter into ``out/<name>``; returns that folder."""
    name = assignment_name(notebook)
    if name != notebook.stem:
        raise ValueError(f"{notebook}: assignment name {name!r} must equal the file name {notebook.stem!r}")
    target = out / name
    if target.exists():
        shutil.rmtree(target)
    cmd = [sys.executable, "-m", "otter", "assign", "--no-pdfs", str(notebook), str(target)]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"otter assign failed for {notebook}:\n{result.stdout}\n{result.stderr}")
    zips = list((target / "autograder").glob("*.zip"))
    if len(zips) != 1:
        raise RuntimeError(f"expected one autograder zip in {target / 'autograder'}, found {zips}")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=Path("dist"))
    parser.add_argument("--only", nargs="*", help="chapter names (file stems) to build; default all")
    args = parser.parse_args(argv)
    todo = [nb for nb in chapters() if has_exercises(nb) and (not args.only or nb.stem in args.only)]
    if args.only and len(todo) != len(args.only):
        parser.error(f"unknown chapter among {args.only}; chapters with exercises: "
                     f"{[nb.stem for nb in chapters() if has_exercises(nb)]}")  # fmt: skip
    for notebook in todo:
        start = time.perf_counter()
        target = assign(notebook, args.out)
        print(f"{notebook.stem}: {target}/student, {target}/autograder ({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
