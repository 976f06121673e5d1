"""`make grade` against broken and hostile submissions: every one gets a row, a score it earned,
a status that says what happened, and a feedback file; the batch never crashes; a resumed run
writes the same CSV as a clean one.

The fixture notebooks are made from the student notebook of the first chapter (as `make student`
builds it) by filling its answer cells, so they always match the current exercises.
"""

import csv
import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from test_exercises import WRONG, _fill, _solutions

from tools.course import chapters
from tools.grading import grade
from tools.otter_format import has_exercises, questions

CHAPTER = next(nb for nb in chapters() if has_exercises(nb))
NAMES = [q for q, _ in questions(CHAPTER)]
POSSIBLE = sum(points for _, points in questions(CHAPTER))
# The limits the fixtures are graded under, from what they need (measured with each phase of
# sandbox.py timed, on the 2-core machine at load average 10-11, other work running): the slowest
# cell of a submission took 0.04 s (limit 4 s); the slowest test case line 3.6 s, the first of the
# run (limit 15 s, 4x); a whole submission 37 s, 19 s of them imports, which grade.py's server now
# does once before any submission's clock starts (limit 120 s: the slowest fixture, slow_function,
# runs two test cases to their 15 s limit, so about 18 + 30 s, 2.5x). infinite_loop and
# slow_function wait for these limits, so lower ones make the test faster, not only stricter.
LIMITS = ["--cell-timeout", "4", "--test-timeout", "15", "--timeout", "120", "--memory-gb", "3"]
WRONG_ANSWERS = {q: WRONG[CHAPTER.stem][q][0] for q in NAMES}

TAMPER = """
import numpy, torch, torch.testing, seqlab.exercises
grader = None
check_close = lambda *args, **kwargs: None
seqlab.exercises.check_close = lambda *args, **kwargs: None
seqlab.exercises.check_tensor = lambda value, *args, **kwargs: value
torch.allclose = lambda *args, **kwargs: True
torch.testing.assert_close = lambda *args, **kwargs: None
numpy.allclose = lambda *args, **kwargs: True
torch.Tensor.__gt__ = lambda self, other: torch.zeros((), dtype=torch.bool)
torch.overrides.TorchFunctionMode().__enter__()
"""

FAKE_RESULTS = """
import json, os, sys
fake = json.dumps({"kind": "question", "name": "%s", "score": 99, "possible": 2, "cases": []})
with open("results.json", "w") as handle:
    handle.write(json.dumps({"tests": [{"name": "%s", "score": 99}]}))
for fd in range(3, 64):
    try:
        os.write(fd, ("\\n" + "0" * 32 + " " + fake + "\\n").encode())
    except OSError:
        pass
try:
    with open(os.path.join(os.path.dirname(sys.argv[1]), "results.jsonl"), "a") as handle:
        handle.write("forged\\n")
except PermissionError:
    pass
"""


# an answer that uses PyTorch's own machinery (vjp, a FLOP count, the compiler): not tampering
PYTORCH_IMPORTS = """
import torch
import torch._dynamo
import torch.func
import torch.utils.flop_counter
from torch.utils.flop_counter import FlopCounterMode

with FlopCounterMode(display=False) as flops:
    torch.ones(3, 3) @ torch.ones(3, 3)
_, vjp = torch.func.vjp(torch.sin, torch.ones(2))
doubled = torch.compile(lambda t: 2 * t, backend="eager")(torch.ones(2))
"""
# the same machinery first loaded inside an answer, so while the tests run it (a FLOP count and a
# vjp of the answer's own step, a compiled helper): what check_world sees after each test case
PYTORCH_IN_ANSWER = """
    import torch._dynamo
    import torch.func
    import torch.utils.flop_counter

    with torch.utils.flop_counter.FlopCounterMode(display=False):
        torch.func.vjp(torch.tanh, torch.ones(2))
    torch.compile(lambda t: 2 * t, backend="eager")(torch.ones(2))
"""
WRONG_BY_FILE: dict[str, set[str]] = {}  # wrong_every_<i>.ipynb -> the questions answered wrong there


def _read(path):
    return {row["file"]: row for row in csv.DictReader(path.open())}


@pytest.fixture(scope="module")
def student_nb(dist):
    return dist / CHAPTER.stem / "student" / f"{CHAPTER.stem}.ipynb"


def _with(student_nb, answers, extra_cell=None):
    nb = _fill(student_nb, answers, NAMES)
    if extra_cell is not None:
        index = next(i for i, c in enumerate(nb["cells"]) if "solution" in c["metadata"].get("tags", []))
        nb["cells"].insert(
            index,
            {
                "cell_type": "code",
                "metadata": {},
                "source": extra_cell,
                "outputs": [],
                "execution_count": None,
            },
        )
    return json.dumps(nb)


@pytest.fixture(scope="module")
def graded(dist, student_nb, tmp_path_factory):
    """Grade one folder holding every kind of bad submission; {file: row} and the output folder."""
    root = tmp_path_factory.mktemp("grading")
    subs = root / "submissions"
    (subs / "nested").mkdir(parents=True)
    solutions = _solutions(CHAPTER)
    first, second, third = NAMES[0], NAMES[1], NAMES[2]
    other = next(nb for nb in chapters() if has_exercises(nb) and nb != CHAPTER).stem
    files = {
        "correct.ipynb": _with(student_nb, solutions),
        "nested/untouched.ipynb": student_nb.read_text(),
        "empty.ipynb": "",
        "not_json.ipynb": "{ this is not json",
        "not_a_notebook.ipynb": json.dumps({"hello": "world"}),
        f"{CHAPTER.stem}_wrong_chapter.ipynb": (dist / other / "student" / f"{other}.ipynb").read_text(),
        "no_chapter.ipynb": json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}),
        "raises.ipynb": _with(
            student_nb, {**solutions, first: "raise ValueError('not today')\n" + solutions[first]}
        ),
        "syntax.ipynb": _with(student_nb, {**solutions, first: "def oops(:\n    pass"}),
        "missing_import.ipynb": _with(
            student_nb, {**solutions, first: "import no_such_module_xyz\n" + solutions[first]}
        ),
        "infinite_loop.ipynb": _with(
            student_nb,
            {
                **solutions,
                first: "while True:\n    try:\n        pass\n    except BaseException:\n        pass",
            },
        ),
        "slow_function.ipynb": _with(
            student_nb,
            {
                **solutions,
                second: solutions[second].replace("):\n", "):\n    while True:\n        pass\n", 1),
            },
        ),
        "memory.ipynb": _with(student_nb, {**solutions, first: "hog = [0] * (2**29)\n" + solutions[first]}),
        "memory_torch.ipynb": _with(
            student_nb, {**solutions, first: "import torch\nhog = torch.ones(2**30)\n" + solutions[first]}
        ),
        "prints.ipynb": _with(student_nb, solutions, "for _ in range(400):\n    print('x' * 100_000)"),
        "wrong.ipynb": _with(student_nb, WRONG_ANSWERS),
        "tamper.ipynb": _with(student_nb, WRONG_ANSWERS, TAMPER),
        "fake_results.ipynb": _with(student_nb, WRONG_ANSWERS, FAKE_RESULTS % (first, first)),
        "reads_outside.ipynb": _with(student_nb, solutions, f"secret = open({str(CHAPTER)!r}).read()"),
        "lists_outside.ipynb": _with(
            student_nb, solutions, f"import os\nos.listdir({str(CHAPTER.parent)!r})"
        ),
        "exits.ipynb": _with(
            student_nb,
            {
                **solutions,
                first: solutions[first] + "\nimport sys\nsys.exit(0)",
                third: solutions[third] + "\nimport os\nos._exit(0)",
            },
        ),
        "frames.ipynb": _with(student_nb, solutions, "import sys\nsys._getframe(0).f_back"),
        "subprocess.ipynb": _with(student_nb, solutions, "import subprocess\nsubprocess.run(['true'])"),
        "threads.ipynb": _with(
            student_nb, solutions, "import threading\nthreading.Thread(target=print).start()"
        ),
    }
    from test_exercises import DELEGATING, WRONG_HIDDEN, WRONG_NEW

    files["delegates.ipynb"] = _with(student_nb, {**solutions, **DELEGATING[CHAPTER.stem]})
    # every wrong answer of the chapter's tests, a submission per index: the scoring's test
    wrong = {q: [*WRONG[CHAPTER.stem][q], *WRONG_NEW[CHAPTER.stem].get(q, []),
                 *WRONG_HIDDEN[CHAPTER.stem].get(q, [])] for q in NAMES}  # fmt: skip
    for i in range(max(map(len, wrong.values()))):
        answers = {q: found[i] for q, found in wrong.items() if i < len(found)}
        files[f"wrong_every_{i}.ipynb"] = _with(student_nb, {**solutions, **answers})
        WRONG_BY_FILE[f"wrong_every_{i}.ipynb"] = set(answers)
    for name, text in files.items():
        (subs / name).write_text(text)
    (subs / "notes.txt").write_text("not a notebook file: ignored")
    out = root / "grades.csv"
    args = [str(subs), "--dist", str(dist), "--out", str(out), "--jobs", "2", *LIMITS]
    assert grade.main(args) == 0
    return _read(out), root, args


# every status grade.py gives (its docstring)
STATUSES = ("graded", "tampering", "memory", "timeout", "crashed", "wrong_chapter", "rejected")


def _total(row):
    return float(row["total"])


def test_every_submission_gets_a_row_and_a_feedback_file(graded):
    rows, root, _ = graded
    assert "notes.txt" not in rows and "nested/untouched.ipynb" in rows
    subs = root / "submissions"
    written = {p.relative_to(subs).as_posix() for p in subs.rglob("*.ipynb")}
    assert set(rows) == written and len(rows) == 25 + len(WRONG_BY_FILE)
    for file, row in rows.items():
        assert row["status"] in STATUSES, row
        feedback = root / "feedback" / Path(file).with_suffix(".md")
        assert feedback.exists(), file
        if row["chapter"]:
            assert float(row["possible"]) == POSSIBLE


def test_correct_and_untouched(graded):
    rows, _, _ = graded
    assert _total(rows["correct.ipynb"]) == POSSIBLE and rows["correct.ipynb"]["status"] == "graded"
    assert rows["correct.ipynb"]["error"] == ""
    untouched = rows["nested/untouched.ipynb"]
    assert _total(untouched) == 0 and untouched["status"] == "graded"


@pytest.mark.parametrize(
    "file, reason",
    [
        ("empty.ipynb", "empty file"),
        ("not_json.ipynb", "invalid JSON"),
        ("not_a_notebook.ipynb", "no list of cells"),
    ],
)
def test_files_that_are_not_notebooks_are_rejected(graded, file, reason):
    row = graded[0][file]
    assert row["status"] == "rejected" and reason in row["error"] and _total(row) == 0


def test_a_notebook_of_another_chapter_is_refused(graded):
    rows = graded[0]
    row = rows[f"{CHAPTER.stem}_wrong_chapter.ipynb"]
    assert row["status"] == "wrong_chapter" and "file name says" in row["error"]
    assert rows["no_chapter.ipynb"]["status"] == "wrong_chapter"
    assert "cannot tell the chapter" in rows["no_chapter.ipynb"]["error"]


def test_chapter_option_refuses_other_chapters(dist, student_nb, tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "mine.ipynb").write_text(student_nb.read_text())
    other = next(nb for nb in chapters() if has_exercises(nb) and nb != CHAPTER).stem
    out = tmp_path / "grades.csv"
    assert grade.main([str(subs), "--dist", str(dist), "--out", str(out), "--chapter", other, *LIMITS]) == 0
    row = _read(out)["mine.ipynb"]
    assert row["status"] == "wrong_chapter" and f"not {other!r}" in row["error"]


@pytest.mark.parametrize(
    "file, what",
    [
        ("raises.ipynb", "ValueError: not today"),
        ("syntax.ipynb", "SyntaxError"),
        ("missing_import.ipynb", "ModuleNotFoundError"),
    ],
)
def test_a_broken_cell_costs_its_question_only(graded, file, what):
    row = graded[0][file]
    assert row["status"] == "graded" and what in row["error"] and "cell " in row["error"]
    assert float(row[NAMES[0]]) == 0
    assert _total(row) == POSSIBLE - dict(questions(CHAPTER))[NAMES[0]]


def test_time_limits(graded):
    rows = graded[0]
    loop = rows["infinite_loop.ipynb"]
    assert loop["status"] == "timeout" and "time limit" in loop["error"]
    assert float(loop[NAMES[0]]) == 0 and _total(loop) == POSSIBLE - dict(questions(CHAPTER))[NAMES[0]]
    slow = rows["slow_function.ipynb"]
    assert slow["status"] == "timeout" and f"{NAMES[1]}: a test case ran past the time limit" in slow["error"]
    assert float(slow[NAMES[1]]) == 0 and float(slow[NAMES[0]]) == dict(questions(CHAPTER))[NAMES[0]]


@pytest.mark.parametrize("file", ["memory.ipynb", "memory_torch.ipynb"])
def test_memory_limit(graded, file):
    row = graded[0][file]
    assert row["status"] == "memory" and "ran out of memory" in row["error"], row
    assert _total(row) == POSSIBLE - dict(questions(CHAPTER))[NAMES[0]]


def test_megabytes_of_output_are_harmless(graded):
    row = graded[0]["prints.ipynb"]
    assert row["status"] == "graded" and _total(row) == POSSIBLE


def test_tampering_earns_nothing_it_did_not_earn(graded):
    rows = graded[0]
    honest = _total(rows["wrong.ipynb"])
    assert honest < POSSIBLE and rows["wrong.ipynb"]["status"] == "graded"
    tamper = rows["tamper.ipynb"]
    assert tamper["status"] == "tampering" and _total(tamper) == honest, tamper
    for name in (
        "torch.allclose",
        "torch.testing.assert_close",
        "numpy.allclose",
        "seqlab.exercises.check_close",
        "torch.Tensor.__gt__",
        "a torch function mode",
    ):
        assert name in tamper["error"], (name, tamper["error"])
    fake = rows["fake_results.ipynb"]
    assert _total(fake) == honest and fake["status"] == "tampering" and "writing" in fake["error"]


@pytest.mark.parametrize(
    "file, what",
    [
        ("reads_outside.ipynb", "reading"),
        ("lists_outside.ipynb", "listing"),
        ("frames.ipynb", "frames"),
        ("subprocess.ipynb", "subprocess.Popen"),
        ("threads.ipynb", "starting a thread"),
    ],
)
def test_refused_operations(graded, file, what):
    row = graded[0][file]
    assert row["status"] == "tampering" and what in row["error"] and _total(row) == POSSIBLE, row


def test_exiting_does_not_stop_the_grader(graded):
    row = graded[0]["exits.ipynb"]
    assert row["status"] == "tampering" and "sys.exit(0)" in row["error"] and "os._exit(0)" in row["error"]
    assert _total(row) == POSSIBLE


def test_delegation_earns_nothing_and_the_public_test_names_the_call(graded):
    rows, root, _ = graded
    row = rows["delegates.ipynb"]
    from test_exercises import DELEGATING

    for question in DELEGATING[CHAPTER.stem]:
        assert float(row[question]) == 0, question
    feedback = (root / "feedback" / "delegates.md").read_text()
    assert "hidden test" in feedback and "this question asks you to write it yourself" in feedback
    assert "your answer called torch.nn.RNN" in feedback or "your answer called seqlab.rnn" in feedback


def test_pytorch_machinery_is_not_tampering(dist, student_nb, tmp_path):
    """torch.func (vjp), torch.utils.flop_counter, torch._dynamo and torch.compile wrap
    torch.manual_seed, patch nn.Module.__init__, make functions from code objects and a cache folder
    under the temporary folder: PyTorch's doing, not the submission's; the grade is the correct one,
    whether a cell of the notebook loads them or an answer does while the tests run it.
    (Graded apart, with the default limits: importing the compiler takes seconds.)"""
    subs = tmp_path / "submissions"
    subs.mkdir()
    solutions = _solutions(CHAPTER)
    (subs / "pytorch_imports.ipynb").write_text(_with(student_nb, solutions, PYTORCH_IMPORTS))
    first = NAMES[0]
    assert solutions[first].startswith(f"def {first}(") and "):\n" in solutions[first]
    in_answer = solutions[first].replace("):\n", "):" + PYTORCH_IN_ANSWER, 1)
    (subs / "pytorch_in_answer.ipynb").write_text(_with(student_nb, {**solutions, first: in_answer}))
    out = tmp_path / "grades.csv"
    args = [str(subs), "--dist", str(dist), "--out", str(out), "--chapter", CHAPTER.stem, "--jobs", "2"]
    assert grade.main(args) == 0
    for file in ("pytorch_imports.ipynb", "pytorch_in_answer.ipynb"):
        row = _read(out)[file]
        assert row["status"] == "graded" and not row["error"], row
        assert _total(row) == POSSIBLE, row


def test_wrong_answers_earn_nothing(graded):
    """Scoring (docs/instructors.md): the public case pays 0 and the hidden case all of a question's
    points, so a wrong answer keeps none of them, however many public cases it passes. Every wrong
    answer of tests/exercise_answers for the chapter, graded by make grade."""
    rows, _, _ = graded
    points = dict(questions(CHAPTER))
    kept = {}
    for file, wrong in WRONG_BY_FILE.items():
        assert rows[file]["status"] == "graded", rows[file]
        for question in NAMES:
            score = float(rows[file][question])
            if question in wrong:
                kept[(file, question)] = score
            else:
                assert score == points[question], (file, question)  # the right ones: full marks
    assert len(kept) >= 20 and all(score == 0 for score in kept.values()), kept


def test_feedback_shows_public_tests_in_full_and_hidden_ones_by_name(graded):
    rows, root, _ = graded
    feedback = (root / "feedback" / "wrong.md").read_text()
    assert f"Score: {_total(rows['wrong.ipynb']):g} / {POSSIBLE:g}" in feedback
    assert "public test" in feedback and "hidden test" in feedback and "The test:" in feedback
    assert "check('rnn_forward', rnn_forward)" in feedback  # its public test, one line
    assert "is wrong at" in feedback or "AssertionError" in feedback
    hidden_source = (CHAPTER.parent / CHAPTER.name).read_text()
    hidden_line = 'check(\\"rnn_forward\\", rnn_forward, hidden=True)'
    assert hidden_line in hidden_source and "hidden=True" not in feedback


def test_a_second_run_grades_nothing_and_writes_the_same_bytes(graded, capsys):
    rows, root, args = graded
    before = (root / "grades.csv").read_bytes()
    assert grade.main(args) == 0
    assert "0 graded now" in capsys.readouterr().out
    assert (root / "grades.csv").read_bytes() == before


def test_interrupted_run_resumes_to_the_same_csv(dist, student_nb, tmp_path):
    solutions = _solutions(CHAPTER)
    subs = tmp_path / "subs"
    subs.mkdir()
    for i in range(4):
        answers = {q: solutions[q] if j <= i else WRONG_ANSWERS[q] for j, q in enumerate(NAMES)}
        (subs / f"s{i}.ipynb").write_text(_with(student_nb, answers))
    clean, resumed = tmp_path / "clean" / "grades.csv", tmp_path / "resumed" / "grades.csv"
    command = [
        sys.executable,
        "-m",
        "tools.grading.grade",
        str(subs),
        "--dist",
        str(dist),
        "--jobs",
        "1",
        *LIMITS,
    ]
    env = {**os.environ, "SEQLAB_PROGRESS": "0", "PYTHONPATH": str(Path(grade.__file__).parents[2])}
    subprocess.run([*command, "--out", str(clean)], check=True, env=env, capture_output=True)
    process = subprocess.Popen(
        [*command, "--out", str(resumed)],
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    cache = resumed.parent / ".grade-cache"
    deadline = time.time() + 120
    while time.time() < deadline and len(list(cache.glob("*.json"))) < 2:
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGKILL)  # as hard as an interruption gets
    process.wait()
    done_before = len(list(cache.glob("*.json")))
    assert 2 <= done_before < 4 and not resumed.exists()
    result = subprocess.run(
        [*command, "--out", str(resumed)], check=True, env=env, capture_output=True, text=True
    )
    assert f"{4 - done_before} graded now" in result.stdout
    assert resumed.read_bytes() == clean.read_bytes()
    assert not list(resumed.parent.glob(".grades.csv.*.tmp"))


def test_hostile_submissions_grade_to_the_same_bytes_twice(dist, student_nb, tmp_path):
    """Two clean runs (no cache) agree to the byte, temporary folders and addresses included."""
    subs = tmp_path / "subs"
    subs.mkdir()
    solutions = _solutions(CHAPTER)
    (subs / "fake.ipynb").write_text(_with(student_nb, WRONG_ANSWERS, FAKE_RESULTS % (NAMES[0], NAMES[0])))
    (subs / "tamper.ipynb").write_text(_with(student_nb, WRONG_ANSWERS, TAMPER))
    (subs / "reads.ipynb").write_text(_with(student_nb, solutions, "open('../request.json').read()"))
    outputs = []
    for run in ("first", "second"):
        out = tmp_path / run / "grades.csv"
        assert grade.main([str(subs), "--dist", str(dist), "--out", str(out), "--jobs", "2", *LIMITS]) == 0
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    text = outputs[0].decode()
    assert "seqlab-grade-" not in text and "<grader folder>/request.json" in text


def test_grading_one_chapter_needs_only_its_own_zip(tmp_path):
    """`make grade CHAPTER=x` after `make student CHAPTER=x`: the other chapters have no zip yet."""
    folder = tmp_path / "dist" / CHAPTER.stem / "autograder"
    folder.mkdir(parents=True)
    with zipfile.ZipFile(folder / f"{CHAPTER.stem}-autograder.zip", "w") as archive:
        for name in NAMES:
            archive.writestr(f"tests/{name}.py", "test = {}\n")
    known = grade.load_chapters(tmp_path / "dist", CHAPTER.stem)
    assert [q for q, _ in known[CHAPTER.stem].tests] == NAMES
    others = [c for c in known.values() if c.name != CHAPTER.stem]
    assert others and all(c.tests == [] for c in others)  # known by name only, to refuse their notebooks
    with pytest.raises(SystemExit, match="no autograder zip for"):
        grade.load_chapters(tmp_path / "dist")
