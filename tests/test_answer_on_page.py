"""No exercise is answered on its own page (code/tools/checks/answer_on_page.py): the check fails
on a planted answer (a solution pasted into a listing with renamed names, an answer's value
printed), passes an honest page, and finds on the real chapters only the allow-listed leaks."""

import json

import pytest

from tools.checks import answer_on_page as check
from tools.course import ROOT, chapters
from tools.otter_format import has_exercises

SOLUTION = (
    "def running_max(xs):\n    # BEGIN SOLUTION\n    best, out = None, []\n    for x in xs:\n"
    "        best = x if best is None or x > best else best\n        out.append(best)\n"
    "    return out\n    # END SOLUTION"
)
# the same code, every name changed
COPY = (
    "def prefix_maximum(values):\n    top, result = None, []\n    for v in values:\n"
    "        top = v if top is None or v > top else top\n        result.append(top)\n    return result"
)
HONEST = "def total(values):\n    s = 0\n    for v in values:\n        s += v\n    return s\n\ntotal([1, 2])"
TRIANGLE = "def triangle(n):\n    # BEGIN SOLUTION\n    return n * (n + 1) // 2\n    # END SOLUTION"
TESTS = {
    "running_max": "from seqlab.exercises import Question\n\nQuestion('running_max', oracle=None, "
    "draw=lambda d: (([3, 1, 4],), [3, 3, 4]), draws=(1, 1)).check(running_max, globals())",
    "triangle": "from seqlab.exercises import Question\n\nQuestion('triangle', oracle=None, "
    "draw=lambda d: ((d.index + 2,), (d.index + 2) * (d.index + 3) // 2), draws=(3, 3))"
    ".check(triangle, globals())",
}


def _cell(kind, source, tags=()):
    _cell.count = getattr(_cell, "count", 0) + 1
    cell = {"cell_type": kind, "id": f"c{_cell.count}", "metadata": {"tags": list(tags)}, "source": source}
    if kind == "code":
        cell.update(outputs=[], execution_count=None)
    return cell


def chapter(tmp_path, lesson_code: str, prose: str):
    """A chapter with one lesson cell and two questions: ``running_max`` (code), ``triangle``
    (a count, a function of ``n``)."""
    cells = [
        _cell("raw", "# ASSIGNMENT CONFIG\nname: tiny", ["remove-cell"]),
        _cell("markdown", f"# Tiny\n\n{prose}"),
        _cell("code", lesson_code),
        _cell("markdown", "## Exercises"),
    ]
    for name, solution in (("running_max", SOLUTION), ("triangle", TRIANGLE)):
        cells += [
            _cell("raw", f"# BEGIN QUESTION\nname: {name}\npoints: 1", ["remove-cell"]),
            _cell("markdown", f"**Question.** Write `{name}`."),
            _cell("code", solution, ["hide-input", "solution"]),
            _cell("code", TESTS[name], ["hide-input", "public-test"]),
            _cell("raw", "# END QUESTION", ["remove-cell"]),
        ]
    meta = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}}
    path = tmp_path / "tiny.ipynb"
    path.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": meta, "cells": cells}))
    return path


def found(path):
    report = check.check(path)
    assert report.errors == []
    return {(f.question, f.kind) for f in report.findings}, report


def test_an_honest_page_passes(tmp_path):
    findings, report = found(chapter(tmp_path, HONEST, "With $n = 180$ tokens, a table of sums."))
    assert findings == set()
    assert report.scores["running_max"][0] < check.THRESHOLD


def test_a_solution_pasted_with_renamed_names_is_found(tmp_path):
    findings, report = found(chapter(tmp_path, COPY, "A table of sums."))
    assert findings == {("running_max", "code")}
    assert report.scores["running_max"][0] == 1.0


def test_an_answer_value_printed_on_the_page_is_found(tmp_path):
    """triangle(180) = 16,290, printed at a size the page uses: the reference is run on it."""
    findings, _ = found(chapter(tmp_path, HONEST, "With $n = 180$ there are 16,290 pairs."))
    assert findings == {("triangle", "value")}


def test_a_rule_read_off_a_column_is_found(tmp_path):
    prose = "| n = 9, 27, 81 | pairs |\n|---|---|\n| all | 45, 378, 3321 |"
    findings, _ = found(chapter(tmp_path, HONEST, prose))
    assert ("triangle", "rule") in findings


def test_a_closed_form_computed_inside_a_larger_expression_is_found(tmp_path):
    """The answer's formula, its names replaced by what the page computes in their place."""
    lesson = "import torch\n\nd = (3 * torch.cos(torch.arange(9.0)[:, None] * w / 5) ** 2).sum(-1)"
    findings, _ = found(chapter(tmp_path, lesson, "A table."))
    assert findings == set()
    solution = (
        "def wave(a, b):\n    # BEGIN SOLUTION\n    return float((3 * torch.cos(a * b / 5) ** 2).sum())\n"
    )
    score, largest = check.formula_score(solution, [lesson])
    assert score >= check.FORMULA_THRESHOLD and "cos" in largest
    assert check.formula_score(solution, [HONEST, "y = torch.cos(a / 5)"])[0] == 0.0


def test_tokens_ignore_names_literals_comments_and_layout():
    a = check.normalized_tokens('def f(x):\n    """Doc."""\n    y = x.sum(dim=1)  # c\n    return y * 2')
    b = check.normalized_tokens("def g(t):\n    z = t.sum(\n        dim=7\n    )\n    return z * 3")
    assert a == b and "sum" in a


@pytest.fixture(scope="module")
def reports():
    cache = ROOT / "_build" / ".jupyter_cache"
    return [check.check(nb, cache) for nb in chapters() if check.has_exercises(nb)]


def test_no_question_is_answered_on_its_page(reports):
    """Every question of the book against its page; only the allow-listed leaks are found (each
    with its reason, check.ALLOWED), and the list must shrink as their pages are fixed."""
    assert [e for r in reports for e in r.errors] == []
    found = check.flagged(reports)
    new = {key: [f.detail for f in fs] for key, fs in found.items() if key not in check.ALLOWED}
    assert new == {}, f"answered on their page: {new}"
    assert check.stale(reports) == [], "no longer answered on their page: take them off check.ALLOWED"


def test_the_allow_list_names_real_questions():
    names = {(nb.stem, b.name) for nb in chapters() if has_exercises(nb)
             for b in check.question_blocks(check.read(nb))}  # fmt: skip
    assert set(check.ALLOWED) <= names


def test_a_decimals_trailing_zeros_are_no_significant_digits():
    # "1.00000" is what many results round to: one digit of evidence, not six
    assert check._significant("1.00000") == 1 and check._significant("5.657") == 4
    assert check._significant("16,640") == 5 and check._significant("1.020") == 3
    assert not check.matches(0.9999994, (1.0, 5, "1.00000"))
    assert check.matches(5.65685, (5.657, 3, "5.657"))
