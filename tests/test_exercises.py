"""The graded exercises: built with otter, safe to hand out, and able to tell right from wrong.

For every chapter with exercises: `otter assign` builds it, the reference solutions pass every
test case and grade in full, the student notebook holds no solution and no hidden test, every
test case of every question rejects at least one plausible wrong answer, every plausible wrong
answer fails at least one public test case (the student sees those), and grading a correct, a partly wrong, an
untouched and a broken submission gives full, partial, zero and a clear rejection.
"""

import csv
import importlib
import json
from pathlib import Path

import pytest
import torch
from otter.test_files import OKTestFile

from tools.checks import leak_check
from tools.course import ROOT, chapters, write
from tools.grading import grade
from tools.otter_format import fill as _fill
from tools.otter_format import has_exercises, questions
from tools.otter_format import solutions as _solutions

EXERCISE_CHAPTERS = [nb for nb in chapters() if has_exercises(nb)]

# Plausible wrong answers (WRONG: every test case must reject at least one) and answers that
# delegate to the implementation the question asks for (DELEGATING: a hidden test must fail
# them), one file per chapter: tests/exercise_answers/<chapter>.py.
ANSWERS = {nb.stem: importlib.import_module(f"exercise_answers.{nb.stem}") for nb in EXERCISE_CHAPTERS}
WRONG = {ch: answers.WRONG for ch, answers in ANSWERS.items()}
DELEGATING = {ch: answers.DELEGATING for ch, answers in ANSWERS.items()}
# Plausible wrong answers written to measure the tests before they were strengthened (WRONG_NEW):
# each must now fail a test case, and a public one unless it only delegates.
WRONG_NEW = {ch: getattr(answers, "WRONG_NEW", {}) for ch, answers in ANSWERS.items()}
# Wrong answers that only the hidden test can tell (the public one may accept them): each must
# fail a hidden test case, and so earn nothing (docs/instructors.md, "Scoring").
WRONG_HIDDEN = {ch: getattr(answers, "WRONG_HIDDEN", {}) for ch, answers in ANSWERS.items()}


def _source(cell):
    return "".join(cell["source"])


def _cells(path):
    return json.loads(Path(path).read_text())["cells"]


def _setup_source(notebook):
    """The exercises' import cell: the last code cell before the first question."""
    cells = _cells(notebook)
    first = next(i for i, c in enumerate(cells) if _source(c).startswith("# BEGIN QUESTION"))
    return next(_source(c) for c in reversed(cells[:first]) if c["cell_type"] == "code")


def _test_file(dist, chapter, question, tmp_path):
    zip_path = next((dist / chapter / "autograder").glob("*.zip"))
    import zipfile

    with zipfile.ZipFile(zip_path) as archive:
        target = tmp_path / f"{question}.py"
        target.write_bytes(archive.read(f"tests/{question}.py"))
    return target


def _run_cases(test_path, setup, answer):
    env = {}
    exec(setup, env)
    exec(answer, env)
    test = OKTestFile.from_file(str(test_path))
    test.run(env)
    return [
        (case.name, case.hidden, result.passed)
        for case, result in zip(test.test_cases, test.test_case_results)
    ]


def _public_checks_format_only(test_path, setup, answer):
    """Whether the public test cases, run on ``answer``, check the format of something only
    (they call ``seqlab.exercises.format_only``, as ``check_choice`` and ``check_integer`` do)."""
    import seqlab.exercises

    names = []
    original = seqlab.exercises.format_only
    seqlab.exercises.format_only = names.append
    try:
        env = {}
        exec(setup, env)
        exec(answer, env)
        test = OKTestFile.from_file(str(test_path))
        test.test_cases = [case for case in test.test_cases if not case.hidden]
        test.run(env)
    finally:
        seqlab.exercises.format_only = original
    return bool(names)


def test_every_chapter_with_exercises_has_wrong_answers():
    assert EXERCISE_CHAPTERS
    for notebook in EXERCISE_CHAPTERS:
        assert set(WRONG.get(notebook.stem, {})) == {q for q, _ in questions(notebook)}, notebook.stem


@pytest.mark.parametrize("notebook", EXERCISE_CHAPTERS, ids=lambda p: p.stem)
def test_student_notebook_holds_no_solution_and_no_hidden_test(notebook, dist):
    files = sorted(p for p in (dist / notebook.stem / "student").rglob("*") if p.is_file())
    assert dist / notebook.stem / "student" / f"{notebook.stem}.ipynb" in files
    text = "\n".join(p.read_text(errors="replace") for p in files)  # every student-facing file
    assert "BEGIN SOLUTION" not in text and "hidden: true" not in text
    # the student notebook shows the seqlab code the page shows: a solution line that is also a line of
    # the package is no leak alone, unless the notebook shows half or more of the solution's lines
    shared = leak_check.package_lines()
    for reference in _solutions(notebook).values():
        body = [line.strip() for line in reference.splitlines()[1:] if len(line.strip()) > 20]
        shown = [line for line in body if json.dumps(line)[1:-1] in text]
        own = [line for line in shown if leak_check.squash(line) not in shared]
        assert not own and not (shown and 2 * len(shown) >= len(body)), f"solution leaked: {shown}"
    cells = [_source(c) for c in _cells(notebook) if c["cell_type"] == "code"]
    public = {line.strip() for c in cells if "hidden: true" not in c for line in c.splitlines()}
    for source in (c for c in cells if "hidden: true" in c):
        lines = [line.strip() for line in source.splitlines()[3:] if len(line.strip()) > 30]
        leaked = [
            line for line in lines if line not in public and (line in text or json.dumps(line)[1:-1] in text)
        ]
        assert not leaked, f"hidden test lines in a student-facing file: {leaked}"


@pytest.mark.parametrize("notebook", EXERCISE_CHAPTERS, ids=lambda p: p.stem)
def test_each_test_case_passes_the_reference_and_rejects_a_wrong_answer(notebook, dist, tmp_path):
    setup, solutions = _setup_source(notebook), _solutions(notebook)
    for question, _ in questions(notebook):
        test_path = _test_file(dist, notebook.stem, question, tmp_path)
        reference = _run_cases(test_path, setup, solutions[question])
        assert reference and all(passed for *_, passed in reference), (question, reference)
        assert any(hidden for _, hidden, _ in reference) and not all(hidden for _, hidden, _ in reference), (
            f"{question} needs at least one public and one hidden test case"
        )
        rejected = {name: False for name, _, _ in reference}
        publicly_accepted = []
        for i, wrong in enumerate(WRONG[notebook.stem][question]):
            results = _run_cases(test_path, setup, wrong)
            for name, _, passed in results:
                rejected[name] = rejected[name] or not passed
            if all(passed for _, hidden, passed in results if not hidden):
                publicly_accepted.append(i)
        assert all(rejected.values()), f"{question}: cases that accept every wrong answer: {rejected}"
        # a student sees only the public tests: each wrong answer must fail one of them, unless the
        # public test checks only the answer's format (a letter, an integer read off a table) and
        # says so ("format accepted; the value is graded by hidden tests"); then a hidden case
        # rejects it (every wrong answer fails some case: checked above per case, here per answer)
        if publicly_accepted and _public_checks_format_only(test_path, setup, solutions[question]):
            for i in publicly_accepted:
                results = _run_cases(test_path, setup, WRONG[notebook.stem][question][i])
                assert not all(passed for *_, passed in results), f"{question}: wrong answer {i} passes"
            publicly_accepted = []
        assert not publicly_accepted, (
            f"{question}: wrong answers (by index in WRONG) that pass every public test case: "
            f"{publicly_accepted}"
        )


@pytest.mark.parametrize("notebook", EXERCISE_CHAPTERS, ids=lambda p: p.stem)
def test_public_and_hidden_tests_reject_an_answer_that_delegates(notebook, dist, tmp_path):
    """A delegating answer fails the public test, which names the forbidden call in plain words
    (the ban is in the question's text), and the hidden one (where the points are)."""
    setup = _setup_source(notebook)
    for question, answer in DELEGATING.get(notebook.stem, {}).items():
        test_path = _test_file(dist, notebook.stem, question, tmp_path)
        test = OKTestFile.from_file(str(test_path))
        env = {}
        exec(setup, env)
        exec(answer, env)
        test.run(env)
        results = list(zip(test.test_cases, test.test_case_results))
        for hidden in (False, True):
            failed = [r.message for case, r in results if case.hidden == hidden and not r.passed]
            assert failed, f"{question}: delegation not caught by the {'hidden' if hidden else 'public'} test"
            assert any("DelegationError" in m and "this question asks you to write it yourself" in m
                       for m in failed), (question, failed)  # fmt: skip


@pytest.mark.parametrize(
    "notebook", [nb for nb in EXERCISE_CHAPTERS if WRONG_HIDDEN[nb.stem]], ids=lambda p: p.stem
)
def test_wrong_answers_only_the_hidden_test_can_tell_fail_it(notebook, dist, tmp_path):
    setup = _setup_source(notebook)
    for question, answers in WRONG_HIDDEN[notebook.stem].items():
        test_path = _test_file(dist, notebook.stem, question, tmp_path)
        for i, wrong in enumerate(answers):
            results = _run_cases(test_path, setup, wrong)
            assert not all(passed for _, hidden, passed in results if hidden), (
                f"{question}: WRONG_HIDDEN[{i}]"
            )


def _hidden_needles(chapter):
    """What only the hidden tests may know of a chapter converted to exercises as code: the names
    of its hidden edge cases and the distinctive lines of its ``seqlab_hidden`` module."""
    from seqlab.exercises.harness import _hidden_module  # code/tools/grading, in the repository

    try:
        module = _hidden_module(chapter, chapter)
    except AssertionError:  # no hidden module: the chapter is not converted yet
        return []
    edges = [name for fields in module.HIDDEN.values() for name in fields.get("hidden_edges", {})]
    names = [f"{quote}{name}{quote}" for name in edges for quote in "'\""]
    lines = [line.strip() for line in Path(module.__file__).read_text().splitlines()]
    return names + [
        line for line in lines if len(line) > 30 and not line.startswith(("#", '"""', "from", "import"))
    ]


@pytest.mark.parametrize("notebook", EXERCISE_CHAPTERS, ids=lambda p: p.stem)
def test_no_hidden_case_in_the_student_notebook_the_page_or_the_package(notebook, dist):
    """Neither the student notebook, nor the chapter's source (the page shows its public test cells),
    nor any file of the package seqlab holds a hidden edge case or a line of the hidden module."""
    from seqlab.exercises.harness import _declared

    needles = _hidden_needles(notebook.stem)
    if not needles:
        pytest.skip(f"{notebook.stem}: its questions are not declared as code yet")
    student = (dist / notebook.stem / "student" / f"{notebook.stem}.ipynb").read_text()
    public_cells = "\n".join(
        _source(c) for c in _cells(notebook) if "hidden-test" not in c.get("metadata", {}).get("tags", [])
    )
    package = ROOT / "code" / "src" / "seqlab"
    files = {p: p.read_text(errors="replace") for p in package.rglob("*.py")}
    for needle in needles:
        assert needle not in student and json.dumps(needle)[1:-1] not in student, needle
        assert needle not in public_cells and json.dumps(needle)[1:-1] not in public_cells, needle
        assert not [p for p, text in files.items() if needle in text], needle
    # and no declaration of the chapter in the package carries them (an otter question may hold
    # several declared ones: to_heads and from_heads)
    declared = [q for chapter, q in _declared().values() if chapter == notebook.stem]
    for question in declared:
        assert not question.hidden_edges, question.name


@pytest.mark.parametrize(
    "notebook", [nb for nb in EXERCISE_CHAPTERS if WRONG_NEW[nb.stem]], ids=lambda p: p.stem
)
def test_the_new_wrong_answers_fail_a_public_test_case(notebook, dist, tmp_path):
    setup = _setup_source(notebook)
    assert set(WRONG_NEW[notebook.stem]) <= {q for q, _ in questions(notebook)}
    for question, answers in WRONG_NEW[notebook.stem].items():
        test_path = _test_file(dist, notebook.stem, question, tmp_path)
        for i, wrong in enumerate(answers):
            env = {}
            exec(setup, env)
            exec(wrong, env)
            test = OKTestFile.from_file(str(test_path))
            test.run(env)
            results = list(zip(test.test_cases, test.test_case_results))
            delegates = any("DelegationError" in r.message for _, r in results if not r.passed)
            assert not all(r.passed for _, r in results), f"{question}: WRONG_NEW[{i}] passes"
            public = [r.passed for case, r in results if not case.hidden]
            assert delegates or not all(public), f"{question}: WRONG_NEW[{i}] passes the public tests"


def test_forbid_puts_everything_back():
    import seqlab.masks
    from seqlab.exercises import DelegationError, forbid

    original = seqlab.masks.causal_mask

    def make(mask=original):
        return lambda: mask(3)  # its closure holds the function

    closes_over = make()
    namespace = {"mine": original, "closes_over": closes_over}

    with forbid(namespace, "seqlab.masks.causal_mask", "torch.nn.LSTM"):
        assert seqlab.masks.causal_mask is not original and namespace["mine"] is not original
        with pytest.raises(DelegationError, match="seqlab.masks.causal_mask"):
            closes_over()
        with pytest.raises(DelegationError):
            torch.nn.LSTM(2, 3)
    assert seqlab.masks.causal_mask is original and namespace["mine"] is original
    assert closes_over().shape == (3, 3) and "forward" in vars(torch.nn.LSTM)
    assert torch.nn.LSTM(2, 3)(torch.zeros(1, 4, 2))[0].shape == (1, 4, 3)


@pytest.mark.parametrize("notebook", EXERCISE_CHAPTERS, ids=lambda p: p.stem)
def test_grading_gives_full_partial_and_zero_scores(notebook, dist, tmp_path):
    name = notebook.stem
    names = [q for q, _ in questions(notebook)]
    student_nb = dist / name / "student" / f"{name}.ipynb"
    solutions = _solutions(notebook)
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    correct = _fill(student_nb, solutions, names)
    partial = _fill(student_nb, {names[0]: solutions[names[0]], names[1]: WRONG[name][names[1]][0]}, names)
    write(correct, submissions / "correct.ipynb")
    write(partial, submissions / "partial.ipynb")
    (submissions / "untouched.ipynb").write_bytes(student_nb.read_bytes())
    (submissions / "broken.ipynb").write_text("{ this is not json")
    out = tmp_path / "grades.csv"
    assert grade.main([str(submissions), "--dist", str(dist), "--out", str(out), "--jobs", "2"]) == 0

    rows = {row["file"]: row for row in csv.DictReader(out.open())}
    assert set(rows) == {"correct.ipynb", "partial.ipynb", "untouched.ipynb", "broken.ipynb"}
    possible = float(rows["correct.ipynb"]["possible"])
    assert possible == sum(points for _, points in questions(notebook))
    assert float(rows["correct.ipynb"]["total"]) == possible, rows["correct.ipynb"]
    partial_row = rows["partial.ipynb"]
    assert (
        float(partial_row[names[0]]) > 0
        and float(partial_row[names[1]]) < dict(questions(notebook))[names[1]]
    )
    assert 0 < float(partial_row["total"]) < possible
    assert float(rows["untouched.ipynb"]["total"]) == 0
    assert rows["broken.ipynb"]["status"] == "rejected" and "not a notebook" in rows["broken.ipynb"]["error"]
    assert all(rows[f]["status"] == "graded" for f in ("correct.ipynb", "partial.ipynb", "untouched.ipynb"))
