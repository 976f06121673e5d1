"""The chapter notebooks as files: committed clean, listed in the book, tagged, traced to claims.

That they *run* is checked by `pytest --nbval-lax chapters` (see the Makefile) and by the book
build; here we check what must hold before they run.
"""

import json
import re

import pytest

from tools.course import ROOT, chapters
from tools.otter_format import has_exercises

# Which claims of the course's ledger each chapter asserts (a `# claim ID` comment on the cell).
CLAIMS = {
    "rnn_gradients": ["G1", "G2", "G3", "G4", "G7"],
    "lstm": ["G1", "G2", "G5", "G6"],
    "self_attention": ["S1", "S2", "S4", "S5", "S6", "S7", "S12", "S13", "S14", "S16"],
    "positional_encoding": ["S3", "S8", "S9", "S10", "S11"],
    "lstmn": ["A9"],
    "seq2seq": ["A1", "A2", "A3"],
    "bahdanau": ["A4", "A7", "A8"],
    "luong": ["A5", "A6"],
    "transformer": ["S15", "S17", "S18", "S19", "S20", "G4"],
    "language_models": ["L1", "L2", "L3", "L4", "L5", "L6"],
    "block": ["M1", "M2", "M3", "M4", "M5", "M6"],
}

NOTEBOOKS = sorted((ROOT / "chapters").glob("*.ipynb"))


def _cells(path):
    return json.loads(path.read_text())["cells"]


def _source(cell):
    return "".join(cell["source"])


def test_every_chapter_notebook_is_in_the_table_of_contents():
    assert NOTEBOOKS, "no chapter notebooks found"
    assert sorted(chapters()) == NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_without_outputs(path):
    dirty = [
        i
        for i, c in enumerate(_cells(path))
        if c["cell_type"] == "code" and (c["outputs"] or c["execution_count"])
    ]
    assert not dirty, f"{path.name}: cells {dirty} carry outputs; run `nbstripout --keep-id {path}`"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_claims_are_asserted_where_marked(path):
    marked = {}
    for cell in _cells(path):
        text = _source(cell)
        for group in re.findall(r"#\s*claims?\s+([A-Z]\d+(?:\s*,\s*[A-Z]\d+)*)", text):
            for claim in re.split(r"\s*,\s*", group):
                checked = "assert " in text or "claims.at_" in text
                marked[claim] = marked.get(claim, False) or checked
    expected = CLAIMS.get(path.stem, [])
    missing = [c for c in expected if c not in marked]
    assert not missing, f"{path.name}: no `# claim` cell for {missing}"
    unasserted = [c for c, asserted in marked.items() if not asserted]
    assert not unasserted, f"{path.name}: claim cells without an assert: {unasserted}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_glued_name_is_defined(path):
    cells = _cells(path)
    glued = {
        m for c in cells if c["cell_type"] == "code" for m in re.findall(r"glue\(\s*\"(\w+)\"", _source(c))
    }
    used = {
        m
        for c in cells
        if c["cell_type"] == "markdown"
        for m in re.findall(r"\{glue:\w+\}`(\w+)", _source(c))
    }
    assert not used - glued, f"{path.name}: markdown uses undefined glue names {sorted(used - glued)}"


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if has_exercises(p)], ids=lambda p: p.stem)
def test_exercise_cells_are_tagged_for_book_and_grader(path):
    cells = _cells(path)
    first_question = next(i for i, c in enumerate(cells) if _source(c).startswith("# BEGIN QUESTION"))
    lesson_code = [i for i, c in enumerate(cells[:first_question]) if c["cell_type"] == "code"]
    setup = lesson_code[-1]  # the exercises' own imports: the only lesson-side cell the grader runs
    tags = lambda i: cells[i].get("metadata", {}).get("tags", [])  # noqa: E731
    assert "otter_ignore" not in tags(setup)
    slow = [i for i in lesson_code[:-1] if "otter_ignore" not in tags(i)]
    assert not slow, f"{path.name}: lesson cells {slow} would run at grading time; tag them otter_ignore"
    for i, cell in enumerate(cells):
        text = _source(cell)
        if cell["cell_type"] == "raw":
            assert "remove-cell" in tags(i), f"{path.name}: raw otter cell {i} would show in the book"
        if cell["cell_type"] == "code" and "# BEGIN SOLUTION" in text:
            assert {"solution", "hide-input"} <= set(tags(i)), f"{path.name}: solution cell {i} not tagged"
        if cell["cell_type"] == "code" and "hidden: true" in text:
            assert "remove-cell" in tags(i), f"{path.name}: hidden test cell {i} would show in the book"


# Iterating over a set of strings visits them in an order that changes with every process (hash
# randomisation), so anything drawn from a seeded generator in that loop lands on a different item
# each run: the page would not come out the same twice. dict.fromkeys keeps the order written.
SET_LOOP = re.compile(r"\bfor\s+[\w, ()]+\s+in\s+(set\(|\{[^}:]*\})")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_code_cell_iterates_over_a_set(path):
    loops = [
        line.strip()
        for cell in _cells(path)
        if cell["cell_type"] == "code"
        for line in _source(cell).splitlines()
        if SET_LOOP.search(line)
    ]
    assert not loops, f"{path.name} iterates over a set (order changes run to run): {loops}"
