"""What the course tools share: where the chapters are, and which of them carry exercises."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENT_MARK = "# ASSIGNMENT CONFIG"


def chapters(root: Path = ROOT) -> list[Path]:
    """The chapter notebooks in the order of ``_toc.yml``."""
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    found: list[Path] = []

    def walk(node) -> None:
        if isinstance(node, dict):
            if "file" in node:
                path = root / f"{node['file']}.ipynb"
                if path.exists():
                    found.append(path)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(toc)
    return found


def has_exercises(notebook: Path) -> bool:
    cells = json.loads(notebook.read_text())["cells"]
    return any(c["cell_type"] == "raw" and "".join(c["source"]).startswith(ASSIGNMENT_MARK) for c in cells)


def assignment_name(notebook: Path) -> str:
    """The ``name:`` of a chapter's otter assignment config (the chapter's file stem by convention)."""
    for cell in json.loads(notebook.read_text())["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "raw" and source.startswith(ASSIGNMENT_MARK):
            config = yaml.safe_load(source[len(ASSIGNMENT_MARK) :])
            return str(config["name"])
    raise ValueError(f"{notebook} has no {ASSIGNMENT_MARK} cell")


def questions(notebook: Path) -> list[tuple[str, float]]:
    """``(name, points)`` of every graded question of a chapter, in notebook order."""
    found = []
    for cell in json.loads(notebook.read_text())["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "raw" and source.startswith("# BEGIN QUESTION"):
            config = yaml.safe_load(source[len("# BEGIN QUESTION") :]) or {}
            found.append((str(config["name"]), float(config.get("points", 1))))
    return found


def solutions(notebook: Path) -> dict[str, str]:
    """{question: reference solution source, with the otter markers removed}."""
    found, current = {}, None
    for cell in json.loads(notebook.read_text())["cells"]:
        text = "".join(cell["source"])
        if text.startswith("# BEGIN QUESTION"):
            current = re.search(r"name:\s*(\S+)", text).group(1)
        elif cell["cell_type"] == "code" and "# BEGIN SOLUTION" in text:
            found[current] = re.sub(r"\n?\s*# (BEGIN|END) SOLUTION", "", text)
    return found


def fill(student_notebook: Path, answers: dict[str, str], names: list[str]) -> dict:
    """A copy of a student notebook (as JSON) with the stubs of some questions replaced by ``answers``.

    The student notebook keeps the tag ``solution`` on each question's answer cell, in the order
    of the questions ``names``.
    """
    nb = json.loads(Path(student_notebook).read_text())
    stubs = [c for c in nb["cells"] if "solution" in c.get("metadata", {}).get("tags", [])]
    if len(stubs) != len(names):
        raise ValueError(f"{student_notebook}: {len(stubs)} answer cells for {len(names)} questions")
    for cell, question in zip(stubs, names, strict=True):
        if question in answers:
            cell["source"] = answers[question].strip()
    return nb
