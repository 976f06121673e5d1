"""Grade every submitted notebook under a folder: ``grades.csv`` and one feedback file each.

    python -m tools.grading.grade SUBMISSIONS [--dist dist] [--out grades.csv] [--jobs N]
        [--chapter NAME] [--timeout 300] [--cell-timeout 60] [--test-timeout 60] [--memory-gb 4]

Each ``.ipynb`` under SUBMISSIONS is matched to its chapter (by the assignment name otter stores
in its metadata; a chapter name in the file name must not contradict it), then run by
``sandbox.py`` in a process of its own (memory limit, time limits per cell, per question and per
submission) against every test, hidden ones included, of the chapter's autograder zip from
``make student``; up to ``--jobs`` at once. Each job's processes are forked from one
``sandbox.py --server`` that imported torch, seqlab and the rest once (``Servers``).

Every submission gets a row in ``grades.csv`` (file, chapter, one column per question, total,
possible, status, error) and a feedback file under ``feedback/`` (next to the CSV): public tests
in full, hidden ones by name and score. Statuses:

- ``graded``: the tests ran (``error`` lists the cells of the submission that raised);
- ``timeout`` / ``memory``: a cell or a question ran past its limit; what finished is scored;
- ``tampering``: the submission replaced a grader function or tried something refused; it was
  undone or refused, and the score is what the code earns on the real functions;
- ``crashed``: the process died before the tests finished; unfinished questions get zero;
- ``rejected``: not a notebook; ``wrong_chapter``: not one of the chapters (or not ``--chapter``).

Resumable: each result is stored under ``.grade-cache/`` (next to the CSV), keyed by the hash of
the submission, the tests, the grader's code and the limits; a second run grades only what is
missing, and the CSV (rebuilt in file order, written atomically) has the same bytes as a clean run's.
"""

import argparse
import contextlib
import csv
import dataclasses
import hashlib
import io
import json
import os
import re
import secrets
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from argparse import RawDescriptionHelpFormatter as RAW
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from tqdm.auto import tqdm

from tools.course import ROOT, chapters
from tools.otter_format import has_exercises, questions

SANDBOX = Path(__file__).resolve().parent / "sandbox.py"
CHILD_ENV = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1",
             "MKL_NUM_THREADS": "1", "MPLBACKEND": "Agg", "SEQLAB_PROGRESS": "0",
             "PYDEVD_DISABLE_FILE_VALIDATION": "1"}  # fmt: skip
FILE_MB = 64  # the largest file a submission may write


@dataclasses.dataclass
class Chapter:
    name: str
    tests: list[tuple[str, str]]  # (question, OK-format test file source), in notebook order
    points: dict[str, float]  # question -> points
    hidden: dict[str, str] = dataclasses.field(default_factory=dict)  # seqlab_hidden's modules: source


def load_chapters(dist: Path, only: str | None = None) -> dict[str, Chapter]:
    """Every chapter with exercises and its autograder zip under ``dist`` (from ``make student``).
    With ``only``, the other chapters need no zip: they are known by name, to refuse their notebooks."""
    found = {}
    for notebook in filter(has_exercises, chapters(ROOT)):
        if not (zips := sorted((dist / notebook.stem / "autograder").glob("*.zip"))):
            if only is not None and notebook.stem != only:
                found[notebook.stem] = Chapter(notebook.stem, [], {})
                continue
            raise SystemExit(f"no autograder zip for {notebook.stem} under {dist}; run `make student` first")
        points = dict(questions(notebook))  # {question: points}, in notebook order
        with zipfile.ZipFile(zips[-1]) as archive:
            tests = [(question, archive.read(f"tests/{question}.py").decode()) for question in points]
            hidden = hidden_modules(archive)
        found[notebook.stem] = Chapter(notebook.stem, tests, points, hidden)
    return found


def hidden_modules(archive: zipfile.ZipFile) -> dict[str, str]:
    """{module name: source} of the ``seqlab_hidden`` wheel an autograder zip carries (none: {})."""
    wheels = [n for n in archive.namelist() if re.search(r"(^|/)seqlab_hidden-[^/]*\.whl$", n)]
    if not wheels:
        return {}
    with zipfile.ZipFile(io.BytesIO(archive.read(wheels[-1]))) as wheel:
        names = [n for n in wheel.namelist() if n.startswith("seqlab_hidden/") and n.endswith(".py")]
        return {n[:-3].replace("/", ".").removesuffix(".__init__"): wheel.read(n).decode() for n in names}


def match_chapter(path: Path, known: dict[str, Chapter], only: str | None = None) -> tuple[str, str, str]:
    """(chapter, "", "") for one submission file, or ("", status, reason) if it is not graded."""
    raw = path.read_bytes()
    if not raw.strip():
        return "", "rejected", "empty file"
    try:
        notebook = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return "", "rejected", f"not a notebook (invalid JSON: {exc.__class__.__name__})"
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        return "", "rejected", "not a notebook (no list of cells)"
    metadata = notebook.get("metadata") if isinstance(notebook.get("metadata"), dict) else {}
    otter = metadata.get("otter") if isinstance(metadata.get("otter"), dict) else {}
    by_metadata = otter.get("assignment_name")
    by_name = max([c for c in known if c in path.stem], key=len, default=None)  # "lstm" is in "lstmn"
    if by_metadata in known and by_name and by_name != by_metadata:
        why = f"the file name says {by_name!r} but the notebook is chapter {by_metadata!r}"
    elif by_metadata and by_metadata not in known:
        why = f"the notebook is {by_metadata!r}, which has no graded exercises"
    elif not by_metadata and not by_name:
        why = "cannot tell the chapter: no otter metadata and no chapter name in the file name"
    elif only is not None and (by_metadata or by_name) != only:
        why = f"a notebook for chapter {by_metadata or by_name!r}, not {only!r}"
    else:
        return by_metadata or by_name, "", ""
    return "", "wrong_chapter", why


class Servers:
    """One ``sandbox.py --server`` per grading thread, started on its first submission: it imports
    torch, seqlab and the rest once, and forks each submission's process from there (a fresh
    ``sandbox.py`` per submission spent about half of its time importing them). The limits, the
    guards and the session of each submission's process are the same either way."""

    def __init__(self, folder: Path):
        self.folder, self.lock, self.started = folder, threading.Lock(), []
        self.local = threading.local()

    def _start(self) -> subprocess.Popen:
        home = os.environ.get("HOME", str(self.folder))
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "TMPDIR": str(self.folder),
               **CHILD_ENV}  # fmt: skip
        with self.lock:
            log = open(self.folder / f"server-{len(self.started)}.txt", "wb")  # noqa: SIM115 - kept open
            # in the grader's process group: what stops the grader (Ctrl-C, a kill of its group) stops it
            command, pipe = [sys.executable, str(SANDBOX), "--server"], subprocess.PIPE
            server = subprocess.Popen(command, stdin=pipe, stdout=pipe, stderr=log, cwd=self.folder, env=env)
            self.started.append((server, log))
        self.local.buffer = b""
        return server

    def _line(self, server: subprocess.Popen, deadline: float | None) -> str | None:
        """The server's next line; None at the deadline; "" when the server is gone."""
        while b"\n" not in self.local.buffer:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and (left <= 0 or not select.select([server.stdout], [], [], left)[0]):
                return None
            if not (chunk := os.read(server.stdout.fileno(), 4096)):
                return ""
            self.local.buffer += chunk
        line, _, self.local.buffer = self.local.buffer.partition(b"\n")
        return line.decode()

    def run(self, job: dict, timeout: float) -> tuple[bool, int]:
        """Grade one request in a process forked by this thread's server: (killed, exit code)."""
        server = getattr(self.local, "server", None)
        if server is None or server.poll() is not None:
            server = self.local.server = self._start()
        try:
            server.stdin.write((json.dumps(job) + "\n").encode())
            server.stdin.flush()
        except BrokenPipeError:
            self.local.server = None
            return False, -signal.SIGKILL
        started = self._line(server, None) or ""
        if not started.startswith("started "):
            self.local.server = None
            return False, -signal.SIGKILL  # the server is gone: the submission did not run
        pid, deadline = int(started.split()[1]), time.monotonic() + timeout
        ended, killed = self._line(server, deadline), False
        if ended is None:  # past the limit: the submission's session goes, as a fresh process would
            killed = True
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            ended = self._line(server, None)
        if not ended or not ended.startswith(f"ended {pid} "):
            self.local.server = None
            return killed, -signal.SIGKILL
        return killed, int(ended.split()[2])

    def close(self) -> None:
        for server, log in self.started:
            with contextlib.suppress(OSError):
                server.stdin.close()  # the server ends at the end of its requests
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
            log.close()


_SERVERS: Servers | None = None  # set by main(); without it, a fresh sandbox.py per submission


def run_sandbox(path: Path, chapter: Chapter, settings: argparse.Namespace) -> dict:
    """Run one submission in its own process under the limits of ``settings`` (the command line's);
    the result dict (scores, status, error, feedback)."""
    token = secrets.token_hex(16)
    with tempfile.TemporaryDirectory(prefix="seqlab-grade-") as tmp:
        tmp_path = Path(tmp)
        workdir, results = tmp_path / "work", tmp_path / "results.jsonl"
        workdir.mkdir()
        request = dict(notebook=str(path), tests=chapter.tests, hidden=chapter.hidden, results=str(results),
                       workdir=str(workdir),
                       cell_timeout=settings.cell_timeout, test_timeout=settings.test_timeout,
                       memory_bytes=int(settings.memory_gb * 2**30),
                       file_bytes=FILE_MB * 2**20)  # fmt: skip
        (tmp_path / "request.json").write_text(json.dumps(request))
        # PyTorch's compiler keeps a cache folder under the temporary folder: the submission's own
        (workdir / "tmp").mkdir()
        if _SERVERS is not None:
            job = {"request": str(tmp_path / "request.json"), "token": token,
                   "stderr": str(tmp_path / "stderr.txt"), "tmpdir": str(workdir / "tmp")}  # fmt: skip
            killed, returncode = _SERVERS.run(job, settings.timeout)
        else:
            killed, returncode = _fresh_process(tmp_path, workdir, token, settings.timeout)
        text = results.read_text(encoding="utf-8", errors="replace") if results.exists() else ""
        frames = []
        for body in re.findall(rf"^{token} (.*)$", text, re.M):  # the lines signed with the token
            with contextlib.suppress(json.JSONDecodeError):
                frames.append(json.loads(body))
        stderr_file = tmp_path / "stderr.txt"
        stderr_tail = (
            stderr_file.read_bytes()[-2000:].decode(errors="replace") if stderr_file.exists() else ""
        )
        result = _interpret(frames, chapter, settings.timeout, killed, returncode, stderr_tail)
        # without run-specific folders and addresses: grading twice gives the same bytes
        for key in ("error", "feedback"):
            text = result[key].replace(str(workdir.resolve()), "<submission folder>")
            text = text.replace(str(workdir.resolve().parent), "<grader folder>")
            result[key] = re.sub(r"0x[0-9a-fA-F]{6,}", "0x…", text)
        return result


def _fresh_process(tmp_path: Path, workdir: Path, token: str, timeout: float) -> tuple[bool, int]:
    """Grade the request in ``tmp_path`` with a fresh ``sandbox.py``: (killed, exit code)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", str(workdir)),
           "TMPDIR": str(workdir / "tmp"), **CHILD_ENV}  # fmt: skip
    with open(tmp_path / "stderr.txt", "wb") as err:
        command = [sys.executable, str(SANDBOX), str(tmp_path / "request.json")]
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=err,
                                   cwd=workdir, env=env, start_new_session=True)  # fmt: skip
        try:
            process.communicate((token + "\n").encode(), timeout=timeout)
            return False, process.returncode
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return True, process.returncode


def _interpret(frames: list[dict], chapter: Chapter, timeout: float, killed: bool, code: int,
               stderr: str) -> dict:  # fmt: skip
    """Scores, status, error and the feedback text from the child's frames."""
    cells = next((f for f in frames if f["kind"] == "cells"), None)
    graded = {f["name"]: f for f in frames if f["kind"] == "question"}
    done = any(f["kind"] == "done" for f in frames)
    last = frames[-1] if frames else {}
    refused, replaced = last.get("refused", []), last.get("replaced", [])
    scores = {q: float(graded[q]["score"]) if q in graded else 0.0 for q, _ in chapter.tests}
    problems = (cells or {}).get("problems", [])
    kinds = {kind for kind, _, _ in problems}
    errors = [f"cell {index}: {message}" for _, index, message in problems]
    for q, frame in graded.items():
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
        unfinished = [q for q, _ in chapter.tests if q not in graded]
        where = "its cells" if cells is None else f"the tests of {unfinished[0]}" if unfinished else "the end"
        status = "timeout" if killed else "crashed"
        what = f"killed after {timeout:g} s" if killed else f"the process ended (exit code {code})"
        reason = f"{what} in {where}; unfinished questions get 0"
        if stderr.strip() and not killed:
            reason += f" [{stderr.strip().splitlines()[-1][:200]}]"
        errors.append(reason)
    elif refused or replaced or "exit" in kinds:
        status = "tampering"
    else:
        status = next((k for k in ("timeout", "memory") if k in kinds), "graded")
    feedback = _feedback(chapter, scores, status, errors, graded)
    return dict(chapter=chapter.name, scores=scores, possible=sum(chapter.points.values()), status=status,
                error=" | ".join(errors)[:2000], feedback=feedback)  # fmt: skip


def _feedback(chapter: Chapter, scores: dict, status: str, errors: list[str], graded: dict) -> str:
    total, possible = sum(scores.values()), sum(chapter.points.values())
    lines = [f"# Feedback: {chapter.name}", "", f"Score: {total:g} / {possible:g} (status: {status})", ""]
    if errors:
        lines += ["## What went wrong while running the notebook", ""] + [f"- {e}" for e in errors] + [""]
    for question, _ in chapter.tests:
        lines += [f"## {question}: {scores[question]:g} / {chapter.points[question]:g}", ""]
        if question not in graded:
            lines += ["Not graded: the run stopped before this question.", ""]
            continue
        for case in graded[question]["cases"]:
            mark = "passed" if case["passed"] else "failed"
            label = "hidden test" if case["hidden"] else "public test"
            earned = case["points"] if case["passed"] else 0
            lines.append(f"- {label} {case['name']}: {mark} ({earned:g} / {case['points']:g})")
            if not case["passed"] and not case["hidden"]:
                test = "".join(f"\n  {c}" for c in case["code"].splitlines())
                said = "".join(f"\n  {m}" for m in case["message"].splitlines())
                lines.append(
                    f"\n  The test:\n\n  ```python{test}\n  ```\n\n  What happened:\n\n  ```{said}\n  ```\n"
                )
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def grade_file(path: Path, known: dict[str, Chapter], settings: argparse.Namespace) -> dict:
    chapter, status, reason = match_chapter(path, known, settings.chapter)
    if chapter:
        return run_sandbox(path, known[chapter], settings)
    feedback = f"# Feedback\n\nScore: 0 (status: {status})\n\n{reason}\n"
    return dict(chapter="", scores={}, possible=0.0, status=status, error=reason, feedback=feedback)


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")  # one writer per process: the main thread
    tmp.write_text(text, encoding="utf-8", newline="")
    tmp.replace(path)


def grader_fingerprint(known: dict[str, Chapter], settings: argparse.Namespace) -> str:
    """What a cached result depends on besides the submission: tests, grader code, limits, --chapter."""
    limits = {k: v for k, v in vars(settings).items() if k not in ("submissions", "dist", "out", "jobs")}
    tests = sorted((name, chapter.tests, chapter.hidden) for name, chapter in known.items())
    code = b"".join(tool.read_bytes() for tool in (Path(__file__), SANDBOX))
    return hashlib.sha256(json.dumps([tests, limits]).encode() + code).hexdigest()


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
    graded = [nb.stem for nb in chapters() if has_exercises(nb)]
    parser.add_argument("--chapter", choices=graded, help="grade only this chapter's (others: wrong_chapter)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=300.0, help="hard limit per submission, seconds")
    parser.add_argument("--cell-timeout", type=float, default=60.0, help="limit per notebook cell, seconds")
    parser.add_argument("--test-timeout", type=float, default=60.0, help="limit per test case line, seconds")
    parser.add_argument("--memory-gb", type=float, default=4.0, help="address-space limit per submission")
    args = parser.parse_args(argv)
    if not args.submissions.is_dir():
        parser.error(f"{args.submissions} is not a folder")
    known = load_chapters(args.dist.resolve(), args.chapter)
    out = args.out.resolve()
    cache = out.parent / ".grade-cache"
    cache.mkdir(parents=True, exist_ok=True)
    fingerprint = grader_fingerprint(known, args).encode()
    root = args.submissions.resolve()
    paths = sorted(p for p in root.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts and p.is_file())
    keys = {p: cache / f"{hashlib.sha256(fingerprint + p.read_bytes()).hexdigest()}.json" for p in paths}
    todo = [p for p in paths if not keys[p].exists()]
    quiet = os.environ.get("SEQLAB_PROGRESS", "1") == "0" or not todo
    bar = tqdm(total=len(todo), unit="notebook", desc="grading", dynamic_ncols=True, disable=quiet)
    start, failed = time.perf_counter(), 0
    global _SERVERS
    with tempfile.TemporaryDirectory(prefix="seqlab-grade-servers-") as folder:
        _SERVERS = Servers(Path(folder))
        try:
            with bar, ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
                running = {pool.submit(grade_file, path, known, args): path for path in todo}
                for done in as_completed(running):  # each result stored as it comes: a rerun resumes here
                    _write_atomic(keys[running[done]], json.dumps(done.result(), sort_keys=True))
                    failed += done.result()["status"] != "graded"
                    bar.set_postfix(failed=failed, refresh=False)
                    bar.update(1)
        finally:
            _SERVERS.close()
            _SERVERS = None
    rows = [(p.relative_to(root).as_posix(), json.loads(keys[p].read_text())) for p in paths]
    for file, result in rows:
        _write_atomic(out.parent / "feedback" / Path(file).with_suffix(".md"), result["feedback"])
    _write_atomic(out, csv_text(rows, known))
    not_graded = sum(r["status"] != "graded" for _, r in rows)
    seconds = time.perf_counter() - start
    print(f"{len(rows)} submissions -> {out} ({len(todo)} graded now, {len(rows) - len(todo)} from the "
          f"cache; {not_graded} with a status other than graded; {seconds:.1f} s)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
