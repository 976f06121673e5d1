"""The otter-grader format of the chapters' exercises, in one place.

A raw ``# ASSIGNMENT CONFIG`` cell (``name:`` = the file stem); per question a raw ``# BEGIN QUESTION``
cell (``name:``, ``points:``), a solution cell with its answer between ``# BEGIN SOLUTION`` and
``# END SOLUTION``, and test cells (hidden: ``hidden: true`` in the config, or the tag ``hidden-test``).
"""

import copy
import re
from pathlib import Path

import yaml

from tools.course import read, tags

ASSIGNMENT_MARK = "# ASSIGNMENT CONFIG"
QUESTION_MARK = "# BEGIN QUESTION"
# a marker line, whole: what the book and the reference solutions drop
MARKER = re.compile(r"^[ \t]*# (BEGIN|END) SOLUTION\b[^\n]*(\n|$)", re.M)
# an answer: (indent, body, line end); the student's copy has "..." in its place
SOLUTION = re.compile(r"^([ \t]*)# BEGIN SOLUTION[^\n]*\n([\s\S]*?)^[ \t]*# END SOLUTION[^\n]*(\n|$)", re.M)
HIDDEN_MARK = re.compile(r"BEGIN TEST CONFIG[\s\S]{0,300}?hidden:\s*true|^\s*#\s*HIDDEN\s*$", re.M)
RAW_MARK = re.compile(r"^\s*#\s*(ASSIGNMENT CONFIG|(BEGIN|END) (QUESTION|SOLUTION|TESTS|PROMPT))")


def strip_markers(source: str) -> str:
    """``source`` without its ``# BEGIN/END SOLUTION`` lines (the code that runs is the same)."""
    return MARKER.sub("", source)


def stub(source: str) -> str:
    """``source`` with each answer replaced by ``...`` (what the student notebook holds)."""
    return SOLUTION.sub(lambda m: f"{m.group(1)}...{m.group(3)}", source)


def answers(source: str) -> list[str]:
    """The answers of ``source`` (the lines between the markers)."""
    return [m.group(2) for m in SOLUTION.finditer(source)]


def is_hidden_test(cell: dict) -> bool:
    return "hidden-test" in tags(cell) or bool(HIDDEN_MARK.search(cell["source"]))


def is_marker_cell(cell: dict) -> bool:
    """A raw cell of otter's (assignment config, question, ...): no reader's business."""
    return cell["cell_type"] == "raw" and bool(RAW_MARK.match(cell["source"]))


def _config(cell: dict, mark: str) -> dict | None:
    if cell["cell_type"] == "raw" and cell["source"].startswith(mark):
        return yaml.safe_load(cell["source"][len(mark) :]) or {}
    return None


def has_exercises(notebook: Path) -> bool:
    return any(_config(c, ASSIGNMENT_MARK) is not None for c in read(notebook).cells)


def assignment_name(notebook: Path) -> str:
    """The ``name:`` of a chapter's assignment config (the chapter's file stem by convention)."""
    for cell in read(notebook).cells:
        if (config := _config(cell, ASSIGNMENT_MARK)) is not None:
            return str(config["name"])
    raise ValueError(f"{notebook} has no {ASSIGNMENT_MARK} cell")


def questions(notebook: Path) -> list[tuple[str, float]]:
    """``(name, points)`` of every graded question of a chapter, in notebook order."""
    configs = (_config(cell, QUESTION_MARK) for cell in read(notebook).cells)
    return [(str(c["name"]), points(c.get("points", 1))) for c in configs if c is not None]


def points(value) -> float:
    """A question's ``points:``, one number or one per test case (``[0, 2]``: the public case pays
    nothing, the hidden case 2), as its total."""
    return float(sum(value)) if isinstance(value, list) else float(value)


def solutions(notebook: Path) -> dict[str, str]:
    """{question: reference solution source, with the markers removed}."""
    found, current = {}, None
    for cell in read(notebook).cells:
        if (config := _config(cell, QUESTION_MARK)) is not None:
            current = str(config["name"])
        elif cell["cell_type"] == "code" and SOLUTION.search(cell["source"]):
            found[current] = strip_markers(cell["source"]).strip()
    return found


def amend_config(notebook: dict, **settings) -> dict:
    """The notebook with its ``# ASSIGNMENT CONFIG`` cell updated by ``settings``."""
    nb = copy.deepcopy(notebook)
    for cell in nb["cells"]:
        if (config := _config(cell, ASSIGNMENT_MARK)) is not None:
            config.update(settings)
            cell["source"] = f"{ASSIGNMENT_MARK}\n" + yaml.safe_dump(config, sort_keys=False).rstrip()
            return nb
    raise ValueError(f"no {ASSIGNMENT_MARK} cell")


def fill(student_notebook: Path, answers: dict[str, str], names: list[str]) -> dict:
    """A student notebook with the stubs of some questions replaced by ``answers`` (its answer cells,
    tagged ``solution``, are those of the questions ``names``, in order)."""
    nb = read(student_notebook)
    stubs = [c for c in nb.cells if "solution" in tags(c)]
    if len(stubs) != len(names):
        raise ValueError(f"{student_notebook}: {len(stubs)} answer cells for {len(names)} questions")
    for cell, question in zip(stubs, names, strict=True):
        if question in answers:
            cell["source"] = answers[question].strip()
    return nb
