"""Grade every submitted notebook under a folder: ``grades.csv`` and one feedback file each.

    python -m tools.grading.grade SUBMISSIONS [--dist dist] [--out grades.csv] [--jobs N]
        [--chapter NAME] [--timeout 300] [--cell-timeout 60] [--test-timeout 60] [--memory-gb 4]

Each ``.ipynb`` under SUBMISSIONS is matched to its chapter (by the assignment name otter stores
in the student notebook's metadata; a chapter name in the file name must not contradict it), then
run by ``sandbox.py`` in a process of its own, with a memory limit, a time limit per cell and per
question and a hard limit for the whole submission, against every test (hidden ones included) of
that chapter's autograder zip from ``make student``. Up to ``--jobs`` run at once.

Every submission gets a row in ``grades.csv``: file, chapter, one column per question, total,
possible, status and error; and a feedback file under ``feedback/`` (next to the CSV) that shows
the public tests in full and the hidden ones by name and score only. Statuses:

- ``graded``: the tests ran (``error`` lists the cells of the submission that raised);
- ``timeout`` / ``memory``: a cell or a question ran past its limit; what finished is scored, the
  rest gets zero;
- ``tampering``: the submission replaced a grader function or tried something refused (reading
  outside its folder, exiting the process, ...); it was undone or refused, and the tests ran on
  the real functions: the score is what the code earns, the status tells the instructor;
- ``crashed``: the process died before the tests finished; unfinished questions get zero;
- ``rejected``: not a notebook (empty, not JSON, no cells); ``wrong_chapter``: a notebook that is
  not one of the chapters (or not the one asked for with ``--chapter``).

Resumable: each result is stored under ``.grade-cache/`` (next to the CSV), keyed by the hash of
the submission, the autograder zips, the grader's own code and the limits; a second run grades
only what is missing. The CSV is rebuilt from those results in file order and written to a
temporary file then renamed, so it is never half written, and a resumed run writes the same bytes
as a clean one.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from argparse import RawDescriptionHelpFormatter as RAW
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from tools.course import ROOT, chapters
from tools.otter_format import has_exercises, questions

HERE = Path(__file__).resolve().parent
SANDBOX = HERE / "sandbox.py"
STATUS_ORDER = ("graded", "tampering", "memory", "timeout", "crashed", "wrong_chapter", "rejected")


@dataclass
class Chapter:
    name: str
    zip_path: Path
    tests: list[tuple[str, str]]  # (question, OK-format test file source), in notebook order
    points: dict[str, float]  # question -> points
    public: dict[str, str]  # "question/case name" -> the code of each public test case


@dataclass
class Settings:
    timeout: float = 300.0
    cell_timeout: float = 60.0
    test_timeout: float = 60.0
    memory_gb: float = 4.0
    file_mb: float = 64.0

    def key(self) -> str:
        return json.dumps(self.__dict__, sort_keys=True)


def load_chapters(dist: Path) -> dict[str, Chapter]:
    """Every chapter with exercises and its autograder zip under ``dist`` (from ``make student``)."""
    found = {}
    for notebook in chapters(ROOT):
        if not has_exercises(notebook):
            continue
        zips = sorted((dist / notebook.stem / "autograder").glob("*.zip"))
        if not zips:
            raise SystemExit(f"no autograder zip for {notebook.stem} under {dist}; run `make student` first")
        tests, points, public = [], {}, {}
        with zipfile.ZipFile(zips[-1]) as archive:
            for question, _ in questions(notebook):
                source = archive.read(f"tests/{question}.py").decode()
                spec: dict = {}
                exec(source, spec)  # the course's own test file
                tests.append((question, source))
                points[question] = float(spec["test"].get("points") or 0)
                for i, case in enumerate(spec["test"]["suites"][0]["cases"]):
                    if not case.get("hidden", True):
                        name = case.get("name", f"{spec['test']['name']} - {i + 1}")
                        code = case["code"].splitlines()
                        public[f"{question}/{name}"] = "\n".join(
                            x[4:] for x in code if x[:4] in (">>> ", "... ")
                        )
        found[notebook.stem] = Chapter(notebook.stem, zips[-1], tests, points, public)
    return found


def match_chapter(
    path: Path, known: dict[str, Chapter], only: str | None = None
) -> tuple[str | None, str, str]:
    """(chapter or None, status if rejected, reason) for one submission file."""
    raw = path.read_bytes()
    if not raw.strip():
        return None, "rejected", "empty file"
    try:
        notebook = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return None, "rejected", f"not a notebook (invalid JSON: {exc.__class__.__name__})"
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        return None, "rejected", "not a notebook (no list of cells)"
    metadata = notebook.get("metadata") if isinstance(notebook.get("metadata"), dict) else {}
    otter = metadata.get("otter") if isinstance(metadata.get("otter"), dict) else {}
    by_metadata = otter.get("assignment_name")
    by_name = [c for c in known if c in path.stem]
    by_name = [max(by_name, key=len)] if by_name else []  # "lstm" is inside "lstmn"
    if by_metadata in known and by_name and by_name[0] != by_metadata:
        why = f"the file name says {by_name[0]!r} but the notebook is chapter {by_metadata!r}"
    elif by_metadata and by_metadata not in known:
        why = f"the notebook is {by_metadata!r}, which has no graded exercises"
    elif not by_metadata and not by_name:
        why = "cannot tell the chapter: no otter metadata and no chapter name in the file name"
    elif only is not None and (by_metadata or by_name[0]) != only:
        why = f"a notebook for chapter {by_metadata or by_name[0]!r}, not {only!r}"
    else:
        return by_metadata or by_name[0], "", ""
    return None, "wrong_chapter", why


def _clean(text: str, workdir: Path) -> str:
    """``text`` without run-specific folders and addresses: grading twice gives the same bytes."""
    text = text.replace(str(workdir.resolve()), "<submission folder>")
    text = text.replace(str(workdir.resolve().parent), "<grader folder>")
    return re.sub(r"0x[0-9a-fA-F]{6,}", "0x…", text)


def run_sandbox(path: Path, chapter: Chapter, settings: Settings) -> dict:
    """Run one submission in its own process; the result dict (scores, status, error, feedback)."""
    token = secrets.token_hex(16)
    with tempfile.TemporaryDirectory(prefix="seqlab-grade-") as tmp:
        tmp_path = Path(tmp)
        workdir = tmp_path / "work"
        workdir.mkdir()
        results = tmp_path / "results.jsonl"
        request = dict(notebook=str(path), tests=chapter.tests, results=str(results), workdir=str(workdir),
                       cell_timeout=settings.cell_timeout, test_timeout=settings.test_timeout,
                       memory_bytes=int(settings.memory_gb * 2**30),
                       file_bytes=int(settings.file_mb * 2**20))  # fmt: skip
        (tmp_path / "request.json").write_text(json.dumps(request))
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", str(workdir)),
               "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1",
               "MKL_NUM_THREADS": "1", "MPLBACKEND": "Agg", "SEQLAB_PROGRESS": "0",
               "PYDEVD_DISABLE_FILE_VALIDATION": "1"}  # fmt: skip
        with open(tmp_path / "stderr.txt", "wb") as err:
            command = [sys.executable, str(SANDBOX), str(tmp_path / "request.json")]
            process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=err,
                                       cwd=workdir, env=env, start_new_session=True)  # fmt: skip
            killed = False
            try:
                process.stdin.write((token + "\n").encode())
                process.stdin.close()
            except BrokenPipeError:
                pass
            try:
                process.wait(timeout=settings.timeout)
            except subprocess.TimeoutExpired:
                killed = True
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        frames = []
        if results.exists():
            for line in results.read_text(encoding="utf-8", errors="replace").splitlines():
                head, _, body = line.partition(" ")
                if head == token:
                    try:
                        frames.append(json.loads(body))
                    except json.JSONDecodeError:
                        pass
        stderr_tail = (tmp_path / "stderr.txt").read_bytes()[-2000:].decode(errors="replace")
        result = _interpret(frames, chapter, settings, killed, process.returncode, stderr_tail)
        result["error"] = _clean(result["error"], workdir)
        result["feedback"] = _clean(result["feedback"], workdir)
        return result


def _interpret(
    frames: list[dict], chapter: Chapter, settings: Settings, killed: bool, code: int, stderr: str
) -> dict:
    """Scores, status, error and the feedback text from the child's frames."""
    cells = next((f for f in frames if f["kind"] == "cells"), None)
    graded_questions = {f["name"]: f for f in frames if f["kind"] == "question"}
    done = any(f["kind"] == "done" for f in frames)
    last = frames[-1] if frames else {}
    refused, replaced = last.get("refused", []), last.get("replaced", [])
    problems = [tuple(p) for p in (cells or {}).get("problems", [])]
    scores = {
        q: float(graded_questions[q]["score"]) if q in graded_questions else 0.0 for q, _ in chapter.tests
    }
    errors, kinds = [], set()
    for kind, index, message in problems:
        kinds.add(kind)
        errors.append(f"cell {index}: {message}")
    for q, frame in graded_questions.items():
        for case in frame["cases"]:
            if not case["passed"] and case["kind"] in ("timeout", "memory"):
                kinds.add(case["kind"])
                what = "ran past the time limit" if case["kind"] == "timeout" else "ran out of memory"
                errors.append(f"{q}: a test case {what}")
    if refused:
        errors.append("refused: " + "; ".join(refused))
    if replaced:
        errors.append("undone: the submission replaced " + ", ".join(replaced))
    if not done:
        unfinished = [q for q, _ in chapter.tests if q not in graded_questions]
        where = "its cells" if cells is None else f"the tests of {unfinished[0]}" if unfinished else "the end"
        status = "timeout" if killed else "crashed"
        what = f"killed after {settings.timeout:g} s" if killed else f"the process ended (exit code {code})"
        reason = f"{what} in {where}; unfinished graded_questions get 0"
        if stderr.strip() and not killed:
            reason += f" [{stderr.strip().splitlines()[-1][:200]}]"
        errors.append(reason)
    elif refused or replaced or "exit" in kinds:
        status = "tampering"
    elif "timeout" in kinds:
        status = "timeout"
    elif "memory" in kinds:
        status = "memory"
    else:
        status = "graded"
    return {
        "chapter": chapter.name,
        "scores": scores,
        "possible": sum(chapter.points.values()),
        "status": status,
        "error": " | ".join(errors)[:2000],
        "feedback": _feedback(chapter, scores, status, errors, graded_questions),
    }


def _feedback(chapter: Chapter, scores: dict, status: str, errors: list[str], graded_questions: dict) -> str:
    total, possible = sum(scores.values()), sum(chapter.points.values())
    lines = [f"# Feedback: {chapter.name}", "", f"Score: {total:g} / {possible:g} (status: {status})", ""]
    if errors:
        lines += ["## What went wrong while running the notebook", ""] + [f"- {e}" for e in errors] + [""]
    for question, _ in chapter.tests:
        lines.append(f"## {question}: {scores[question]:g} / {chapter.points[question]:g}")
        frame = graded_questions.get(question)
        if frame is None:
            lines += ["", "Not graded: the run stopped before this question.", ""]
            continue
        lines.append("")
        for case in frame["cases"]:
            mark = "passed" if case["passed"] else "failed"
            label = "hidden test" if case["hidden"] else "public test"
            earned = case["points"] if case["passed"] else 0
            lines.append(f"- {label} {case['name']}: {mark} ({earned:g} / {case['points']:g})")
            if not case["passed"] and not case["hidden"]:
                code = chapter.public.get(f"{question}/{case['name']}", "")
                test = "".join(f"\n  {c}" for c in code.splitlines())
                said = "".join(f"\n  {m}" for m in case["message"].splitlines())
                lines.append(
                    f"\n  The test:\n\n  ```python{test}\n  ```\n\n  What happened:\n\n  ```{said}\n  ```\n"
                )
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _rejected(status: str, reason: str) -> dict:
    """The result of a file that was not graded: no chapter, no scores, the reason."""
    feedback = f"# Feedback\n\nScore: 0 (status: {status})\n\n{reason}\n"
    return dict(chapter="", scores={}, possible=0.0, status=status, error=reason, feedback=feedback)


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", newline="", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)


def grader_fingerprint(known: dict[str, Chapter], settings: Settings) -> str:
    """What a cached result depends on besides the submission: tests, grader code, limits."""
    digest = hashlib.sha256()
    for name in sorted(known):
        digest.update(name.encode())
        for question, source in known[name].tests:
            digest.update(question.encode() + source.encode())
    for tool in (HERE / "grade.py", SANDBOX):
        digest.update(tool.read_bytes())
    digest.update(settings.key().encode())
    return digest.hexdigest()


def grade_file(path: Path, known: dict[str, Chapter], settings: Settings, only: str | None) -> dict:
    chapter, status, reason = match_chapter(path, known, only)
    if chapter is None:
        return _rejected(status, reason)
    return run_sandbox(path, known[chapter], settings)


def csv_text(rows: list[tuple[str, dict]], known: dict[str, Chapter]) -> str:
    columns = [q for chapter in known.values() for q, _ in chapter.tests]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["file", "chapter", *columns, "total", "possible", "status", "error"])
    for file, result in rows:
        scores = result["scores"]
        cells = [f"{scores[c]:g}" if c in scores else "" for c in columns]
        total, possible = f"{sum(scores.values()):g}", f"{result['possible']:g}"
        writer.writerow([file, result["chapter"], *cells, total, possible, result["status"], result["error"]])
    return buffer.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=RAW)
    parser.add_argument("submissions", type=Path)
    parser.add_argument("--dist", type=Path, default=Path("dist"))
    parser.add_argument("--out", type=Path, default=Path("grades.csv"))
    parser.add_argument("--feedback", type=Path, help="feedback files' folder (default: next to --out)")
    parser.add_argument("--chapter", help="grade only submissions of this chapter; others are wrong_chapter")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=300.0, help="hard limit per submission, seconds")
    parser.add_argument("--cell-timeout", type=float, default=60.0, help="limit per notebook cell, seconds")
    parser.add_argument("--test-timeout", type=float, default=60.0, help="limit per test case line, seconds")
    parser.add_argument("--memory-gb", type=float, default=4.0, help="address-space limit per submission")
    args = parser.parse_args(argv)
    if not args.submissions.is_dir():
        parser.error(f"{args.submissions} is not a folder")
    known = load_chapters(args.dist.resolve())
    if args.chapter is not None and args.chapter not in known:
        parser.error(f"unknown chapter {args.chapter!r}; chapters with exercises: {sorted(known)}")
    settings = Settings(args.timeout, args.cell_timeout, args.test_timeout, args.memory_gb)
    out = args.out.resolve()
    feedback_dir = (args.feedback or out.parent / "feedback").resolve()
    cache = out.parent / ".grade-cache"
    cache.mkdir(parents=True, exist_ok=True)
    fingerprint = grader_fingerprint(known, settings)
    root = args.submissions.resolve()
    paths = sorted(p for p in root.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts and p.is_file())
    keys = {}
    for p in paths:
        digest = hashlib.sha256(fingerprint.encode() + (args.chapter or "").encode() + p.read_bytes())
        keys[p] = cache / f"{digest.hexdigest()}.json"
    todo = [p for p in paths if not keys[p].exists()]
    from tqdm.auto import tqdm

    quiet = os.environ.get("SEQLAB_PROGRESS", "1") == "0" or not todo
    bar = tqdm(total=len(todo), unit="notebook", desc="grading", dynamic_ncols=True, disable=quiet)
    lock, failed = threading.Lock(), [0]
    start = time.perf_counter()

    def one(path: Path) -> None:
        result = grade_file(path, known, settings, args.chapter)
        _write_atomic(keys[path], json.dumps(result, sort_keys=True))
        with lock:
            failed[0] += result["status"] != "graded"
            bar.set_postfix(failed=failed[0], refresh=False)
            bar.update(1)

    try:
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            for future in as_completed([pool.submit(one, p) for p in todo]):
                future.result()
    finally:
        bar.close()
    rows = []
    for p in paths:
        result = json.loads(keys[p].read_text())
        file = p.relative_to(root).as_posix()
        rows.append((file, result))
        _write_atomic(feedback_dir / Path(file).with_suffix(".md"), result["feedback"])
    _write_atomic(out, csv_text(rows, known))
    seconds = time.perf_counter() - start
    not_graded = sum(r["status"] != "graded" for _, r in rows)
    print(
        f"{len(rows)} submissions -> {out} ({len(todo)} graded now, {len(rows) - len(todo)} from the cache; "
        f"{not_graded} with a status other than graded; {seconds:.1f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
