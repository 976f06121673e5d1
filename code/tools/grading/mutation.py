"""Mutation testing of the exercises: how many of mutmut's mutants of each reference solution the
public tests, and all tests, of its question reject.

    python -m tools.grading.mutation [--chapter NAME ...] [--question NAME ...] [--timeout 10]
        [--survivors]

For each question of each chapter (or those named), the reference solution (the code between the
solution markers) is mutated by mutmut's own operators (``mutmut.mutation.file_mutation``: numbers,
operators, comparisons, names, arguments, ...; one change a mutant), and each mutant runs, in this
process, after the chapter's import cell, against the question's public test cells and then all its
test cells, as ``grader.check`` and the grader run them (for a chapter whose questions are declared
as code, the one-line cells ``check("name", answer)`` and ``check(..., hidden=True)`` run its
declaration in ``seqlab.exercises.questions`` and its hidden fields in ``seqlab_hidden``). A mutant
that raises or runs past ``--timeout`` seconds (at least 10 times the reference's time) is killed.
The table: question, mutants, killed by the public tests, killed by all tests, equivalent mutants
(listed with the reason in ``tests/exercise_answers/equivalent_mutants.yml``), and survivors
(neither killed nor listed). The goals: no survivor; the public tests kill at least 90% of the
non-equivalent mutants.

Exit status 1 when a question has a survivor (``--survivors`` prints their changed lines).
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from tools.course import ROOT, chapters, read, tags
from tools.otter_format import QUESTION_MARK, has_exercises, is_hidden_test, solutions

EQUIVALENT = ROOT / "tests" / "exercise_answers" / "equivalent_mutants.yml"


def _config_header(source: str) -> str:
    """A hidden test cell without its ``""\" # BEGIN TEST CONFIG ... ""\"  # END TEST CONFIG`` lines."""
    if "# END TEST CONFIG" in source:
        return source.split("# END TEST CONFIG", 1)[1].split("\n", 1)[-1]
    return source


def _setup(cells: list[dict]) -> str:
    """The exercises' import cell: the last code cell before the first question."""
    first = next(i for i, c in enumerate(cells) if c["source"].startswith(QUESTION_MARK))
    return next(c["source"] for c in reversed(cells[:first]) if c["cell_type"] == "code")


def test_cells(notebook: Path) -> dict[str, list[tuple[bool, str]]]:
    """{question: [(hidden, source)]}: the test cells of each question, in order."""
    found: dict[str, list[tuple[bool, str]]] = {}
    current = None
    for cell in read(notebook).cells:
        if cell["cell_type"] == "raw" and cell["source"].startswith(QUESTION_MARK):
            current = str(yaml.safe_load(cell["source"][len(QUESTION_MARK) :])["name"])
            found[current] = []
        elif cell["cell_type"] == "code" and current is not None:
            if is_hidden_test(cell):
                found[current].append((True, _config_header(cell["source"])))
            elif "public-test" in tags(cell):
                found[current].append((False, cell["source"]))
    return found


def mutants(source: str) -> list[str]:
    """mutmut's mutants of ``source``: one mutated copy of the source each."""
    from mutmut import configuration
    from mutmut.mutation.file_mutation import create_mutations, deep_replace

    if configuration._config is None:  # mutmut's defaults, read from a folder of its own
        import os
        import tempfile

        here = Path.cwd()
        with tempfile.TemporaryDirectory() as folder:
            Path(folder, "setup.cfg").write_text("[mutmut]\nsource_paths = solution.py\n")
            os.chdir(folder)
            try:
                configuration.config()
            finally:
                os.chdir(here)
    module, mutations, _, _ = create_mutations("solution.py", source)
    out = []
    for mutation in mutations:
        code = deep_replace(module, mutation.original_node, mutation.mutated_node).code
        if code != source:
            out.append(code)
    return out


def change(original: str, mutant: str) -> str:
    """The changed lines of a mutant, ``old line => new line`` (stripped): how a mutant is named."""
    old = [x.strip() for x in original.splitlines()]
    new = [x.strip() for x in mutant.splitlines()]
    removed, added = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag != "equal":
            removed += old[i1:i2]
            added += new[j1:j2]
    return f"{' / '.join(removed)} => {' / '.join(added)}"


class _Timeout(Exception):
    pass


@contextlib.contextmanager
def _time_box(seconds: float):
    def alarm(signum, frame):
        raise _Timeout()

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def passes(setup: str, answer: str, cells: list[tuple[bool, str]], hidden: bool, timeout: float) -> bool:
    """Whether ``answer`` passes the public cells (``hidden=False``) or all cells of a question."""
    import torch

    torch.manual_seed(0)
    env: dict = {"__name__": "__main__"}
    try:
        with _time_box(timeout), open("/dev/null", "w") as sink, contextlib.redirect_stdout(sink):
            exec(setup, env)
            exec(answer, env)
            for is_hidden, source in cells:
                if is_hidden and not hidden:
                    continue
                exec(source, dict(env))  # as otter's doctest: each test case in a copy of the globals
    except (Exception, _Timeout):
        return False
    return True


@dataclass
class Row:
    chapter: str
    question: str
    mutants: int = 0
    public: int = 0
    killed: int = 0
    equivalent: int = 0
    survivors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def public_share(self) -> float:
        return self.public / max(1, self.mutants - self.equivalent)


def equivalent_mutants() -> dict:
    """{chapter: {question: {change: reason}}} from ``EQUIVALENT``."""
    if not EQUIVALENT.exists():
        return {}
    data = yaml.safe_load(EQUIVALENT.read_text()) or {}
    return {
        chapter: {q: {e["change"]: e["reason"] for e in entries or []} for q, entries in qs.items()}
        for chapter, qs in data.items()
    }


def measure(notebook: Path, only: set[str] | None = None, timeout: float = 10.0) -> list[Row]:
    cells = [dict(c) for c in read(notebook).cells]
    setup, refs, tests = _setup(cells), solutions(notebook), test_cells(notebook)
    known = equivalent_mutants().get(notebook.stem, {})
    rows = []
    for question, reference in refs.items():
        if only and question not in only:
            continue
        start = time.perf_counter()
        row = Row(notebook.stem, question)
        if not passes(setup, reference, tests[question], True, 600):
            raise RuntimeError(f"{notebook.stem}/{question}: the reference solution fails its tests")
        # a mutant may take 10 times as long as the reference (a slow machine must not kill it)
        limit = max(timeout, 10 * (time.perf_counter() - start))
        listed = known.get(question, {})
        for mutant in mutants(reference):
            row.mutants += 1
            name = change(reference, mutant)
            if not passes(setup, mutant, tests[question], False, limit):
                row.public += 1
                row.killed += 1
            elif not passes(setup, mutant, tests[question], True, limit):
                row.killed += 1
            elif name in listed:
                row.equivalent += 1
            else:
                row.survivors.append(name)
        row.seconds = time.perf_counter() - start
        rows.append(row)
    return rows


def wrong_answers(notebook: Path, timeout: float = 10.0) -> list[tuple[str, int, int, int]]:
    """``(question, answers, accepted by the public tests, accepted by all tests)`` for the
    plausible wrong answers ``WRONG_NEW`` of ``tests/exercise_answers/<chapter>.py``."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "answers", ROOT / "tests" / "exercise_answers" / f"{notebook.stem}.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    cells = [dict(c) for c in read(notebook).cells]
    setup, tests = _setup(cells), test_cells(notebook)
    out = []
    timeout = max(timeout, 120.0)  # a wrong answer is judged by its result, never by a slow machine
    for question, answers in getattr(module, "WRONG_NEW", {}).items():
        public = [a for a in answers if passes(setup, a, tests[question], False, timeout)]
        hidden = [a for a in public if passes(setup, a, tests[question], True, timeout)]
        out.append((question, len(answers), len(public), len(hidden)))
    return out


def table(rows: list[Row]) -> str:
    head = ("chapter", "question", "mutants", "public", "all", "equivalent", "survivors", "public %", "s")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = (r.chapter, r.question, r.mutants, r.public, r.killed, r.equivalent, len(r.survivors),
                 f"{100 * r.public_share:.0f}", f"{r.seconds:.1f}")  # fmt: skip
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chapter", action="append", help="a chapter's file stem (repeatable)")
    parser.add_argument("--question", action="append", help="a question's name (repeatable)")
    parser.add_argument("--timeout", type=float, default=3.0, help="seconds a mutant may run")
    parser.add_argument("--survivors", action="store_true", help="print each survivor's change")
    parser.add_argument(
        "--wrong-new", action="store_true", help="count the WRONG_NEW answers the tests accept"
    )
    args = parser.parse_args(argv)
    notebooks = [
        nb for nb in chapters() if has_exercises(nb) and (not args.chapter or nb.stem in args.chapter)
    ]
    if not notebooks:
        parser.error(f"no chapter with exercises named {args.chapter}")
    if args.wrong_new:
        print("| chapter | question | wrong answers | accepted by public | accepted by all |")
        print("|---|---|---|---|---|")
        for notebook in notebooks:
            for question, n, public, hidden in wrong_answers(notebook, args.timeout):
                print(f"| {notebook.stem} | {question} | {n} | {public} | {hidden} |")
        return 0
    rows = []
    for notebook in notebooks:
        rows += measure(notebook, set(args.question or ()), args.timeout)
    print(table(rows))
    if args.survivors:
        for r in rows:
            for name in r.survivors:
                print(f"{r.chapter}/{r.question}: {name}")
    sys.stdout.flush()
    return 1 if any(r.survivors for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
