"""Sphinx extension of the course book: one switch to build the book without solutions.

Solution cells of the chapter notebooks carry the tag ``solution`` (and ``hide-input``, so by
default the book shows them collapsed behind a toggle). With the environment variable
``SEQLAB_SOLUTIONS=remove`` this extension adds ``remove-cell`` to each of them as the notebook
is read, so the built pages hold no solution code at all. The cells still run, so the exercise
tests that follow them still check the reference solutions during the build.
"""

from __future__ import annotations

import json
import os

MODES = ("show", "remove")


def solutions_mode() -> str:
    mode = os.environ.get("SEQLAB_SOLUTIONS", "show")
    if mode not in MODES:
        raise ValueError(f"SEQLAB_SOLUTIONS must be one of {MODES}, got {mode!r}")
    return mode


def remove_solutions(notebook_json: str) -> str:
    """The notebook text with every cell tagged ``solution`` also tagged ``remove-cell``."""
    notebook = json.loads(notebook_json)
    for cell in notebook.get("cells", []):
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if "solution" in tags and "remove-cell" not in tags:
            tags.append("remove-cell")
    return json.dumps(notebook)


def _on_source_read(app, docname: str, source: list[str]) -> None:
    if solutions_mode() == "remove" and str(app.env.doc2path(docname)).endswith(".ipynb"):
        source[0] = remove_solutions(source[0])


def setup(app):
    solutions_mode()  # fail early on a misspelt mode
    app.connect("source-read", _on_source_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
