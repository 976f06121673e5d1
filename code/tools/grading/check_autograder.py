"""Prove each autograder zip grades outside this repository, from nothing but the zip.

Per chapter, in a fresh temporary folder: unpack the zip, install the ``pip:`` list of its
``environment.yml`` (what otter's ``setup.sh`` installs on Gradescope) into a fresh venv of the base
Python, from the zip's folder (so its relative wheel path resolves), then ``otter run`` the student
notebook with every reference solution (must score full marks) and untouched (must score less).

    python -m tools.grading.check_autograder --dist dist [--only NAME ...] [--jobs N]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from argparse import RawDescriptionHelpFormatter as RAW
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

from tools.course import ROOT, chapters, read, write
from tools.otter_format import fill, has_exercises, questions, solutions

# the interpreter this one was made from (a venv's base), so that the new venv shares nothing
BASE_PYTHON = getattr(sys, "_base_executable", None) or sys.executable


def score(results_json: Path) -> tuple[float, float]:
    """(score, possible) from otter's Gradescope-format results.json."""
    results = json.loads(results_json.read_text())
    tests = results.get("tests", [])
    got = results.get("score", sum(t.get("score", 0) or 0 for t in tests))
    return float(got), float(sum(t.get("max_score", 0) or 0 for t in tests))


def run(cmd: list[str], cwd: Path, log: Path) -> None:
    with log.open("a") as out:
        out.write(f"\n$ {' '.join(cmd)}\n")
        out.flush()
        # an index that cannot be reached (PyTorch's, behind a firewall) is skipped after one retry
        env = {**os.environ, "PIP_RETRIES": os.environ.get("PIP_RETRIES", "1")}
        result = subprocess.run(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=env)
    if result.returncode != 0:
        tail = log.read_text()[-4000:]
        raise RuntimeError(f"`{' '.join(cmd[:4])} ...` failed ({result.returncode}); log {log}:\n{tail}")


def check(name: str, dist: Path, work: Path) -> bool:
    """Grade a correct and an untouched notebook with the zip of ``name``; prints and returns the verdict."""
    zips = sorted((dist / name / "autograder").glob("*.zip"))
    handout = dist / name / "student" / f"{name}.ipynb"
    if not zips or not handout.is_file():
        raise FileNotFoundError(f"no autograder zip or student notebook for {name} under {dist}")
    zip_path, log, source = zips[-1], work / "log.txt", work / "source"  # the zip's contents only
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(source)
    environment = yaml.safe_load((source / "environment.yml").read_text())
    (pip_list,) = [
        dep["pip"] for dep in environment["dependencies"] if isinstance(dep, dict) and "pip" in dep
    ]
    requirements = source / "requirements-from-environment.txt"
    requirements.write_text("".join(f"{line}\n" for line in pip_list))
    start, env = time.perf_counter(), work / "env"
    run([BASE_PYTHON, "-m", "venv", str(env)], work, log)
    run([str(env / "bin" / "python"), "-m", "pip", "--disable-pip-version-check", "install", "-r",
         requirements.name], source, log)  # fmt: skip
    install_s = time.perf_counter() - start

    chapter = ROOT / "chapters" / f"{name}.ipynb"
    names = [q for q, _ in questions(chapter)]
    scores = {}
    for kind, nb in (("correct", fill(handout, solutions(chapter), names)), ("untouched", read(handout))):
        folder = work / kind
        write(nb, folder / f"{name}.ipynb")
        run([str(env / "bin" / "otter"), "run", "--no-logo", "-a", str(zip_path.resolve()),
             "-o", str(folder), str(folder / f"{name}.ipynb")], work, log)  # fmt: skip
        scores[kind] = score(folder / "results.json")
    (correct, possible), (untouched, _) = scores["correct"], scores["untouched"]
    ok = possible > 0 and correct == possible and untouched < possible
    wheels = ", ".join(sorted(p.name for p in source.rglob("*.whl")))
    of = f"/{possible:g}"
    print(f"{name}: fresh install {install_s:.0f} s ({wheels}); correct {correct:g}{of}, "
          f"untouched {untouched:g}{of}: {'ok' if ok else 'FAILED'}", flush=True)  # fmt: skip
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=RAW)
    parser.add_argument("--dist", type=Path, default=ROOT / "dist")
    names = [nb.stem for nb in chapters() if has_exercises(nb)]
    parser.add_argument("--only", nargs="*", choices=names, help="default: all with exercises")
    parser.add_argument("--jobs", type=int, default=1, help="zips checked at once (default 1)")
    args = parser.parse_args(argv)
    names = [n for n in names if not args.only or n in args.only]
    dist = args.dist.resolve()
    failed = []
    print(f"base Python {BASE_PYTHON}; each zip gets a fresh venv and its environment.yml's pip list")

    def one(name: str) -> None:
        with tempfile.TemporaryDirectory(prefix=f"check-autograder-{name}-") as work:
            try:
                if not check(name, dist, Path(work)):
                    failed.append(name)
            except Exception as exc:  # one broken zip does not stop the others
                print(f"{name}: FAILED: {exc}", flush=True)
                failed.append(name)

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        list(pool.map(one, names))
    print(f"{len(names) - len(failed)}/{len(names)} zips grade from a fresh environment"
          + (f"; failed: {', '.join(failed)}" if failed else ""))  # fmt: skip
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
