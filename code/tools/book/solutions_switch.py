"""Sphinx extension: solution cells without otter's marker lines, and two switches.

- Every cell tagged ``solution`` loses its ``# BEGIN/END SOLUTION`` lines (comments: the code is the same).
- ``SEQLAB_SOLUTIONS=remove`` removes each solution cell from the page after it is read (the cells
  still run, so the tests after them still check the reference solutions).
- ``SEQLAB_EXECUTION=cache`` runs myst-nb in ``cache`` mode instead of ``force``: CI builds twice
  from one fresh cache (``.ci/run``), so the second build executes nothing. The cache does not know
  about changes to ``seqlab``.
"""

from __future__ import annotations

import os

import nbformat
from docutils import nodes

from tools.course import tags
from tools.otter_format import strip_markers

MODES = ("show", "remove")
EXECUTION = ("force", "cache")


def solutions_mode() -> str:
    mode = os.environ.get("SEQLAB_SOLUTIONS", "show")
    if mode not in MODES:
        raise ValueError(f"SEQLAB_SOLUTIONS must be one of {MODES}, got {mode!r}")
    return mode


def execution_mode() -> str | None:
    """``SEQLAB_EXECUTION`` if set (checked), else None: the book's own setting."""
    mode = os.environ.get("SEQLAB_EXECUTION", "")
    if mode and mode not in EXECUTION:
        raise ValueError(f"SEQLAB_EXECUTION must be one of {EXECUTION}, got {mode!r}")
    return mode or None


def as_the_book_reads(notebook_text: str) -> str:
    """The notebook text with otter's marker lines removed from its ``solution`` cells."""
    notebook = nbformat.reads(notebook_text, as_version=4)
    for cell in notebook.cells:
        if "solution" in tags(cell):
            cell.source = strip_markers(cell.source)
    return nbformat.writes(notebook)


def _on_source_read(app, docname: str, source: list[str]) -> None:
    if str(app.env.doc2path(docname)).endswith(".ipynb"):
        source[0] = as_the_book_reads(source[0])


def drop_solution_cells(doctree: nodes.Node) -> int:
    """Remove the cell containers tagged ``solution`` from ``doctree``; returns how many."""
    found = [n for n in doctree.findall(nodes.container) if "tag_solution" in n.get("classes", [])]
    for node in found:
        node.parent.remove(node)
    return len(found)


def _on_doctree_read(app, doctree) -> None:
    if solutions_mode() == "remove":
        drop_solution_cells(doctree)


def _on_config_inited(app, config) -> None:
    mode = execution_mode()
    if mode:
        config.nb_execution_mode = mode


def setup(app):
    solutions_mode()  # fail early on a misspelt mode
    execution_mode()
    app.connect("config-inited", _on_config_inited)
    app.connect("source-read", _on_source_read)
    app.connect("doctree-read", _on_doctree_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
