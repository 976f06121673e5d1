"""Sphinx extension: solution cells without otter's marker lines, and two switches.

- Every cell tagged ``solution`` loses its ``# BEGIN/END SOLUTION`` lines (comments: the code is the same).
- ``SEQLAB_SOLUTIONS=remove`` removes each solution cell from the page after it is read (the cells
  still run, so the tests after them still check the reference solutions).
- ``SEQLAB_EXECUTION=cache`` runs myst-nb in ``cache`` mode instead of ``force``: CI builds twice
  from one fresh cache (``.ci/run``), so the second build executes nothing. The cache does not know
  about changes to ``seqlab``.
"""

import os

import nbformat
from docutils import nodes

from tools.course import tags
from tools.otter_format import strip_markers


def _switch(name: str, allowed: tuple[str, ...]) -> str:
    """The environment variable ``name`` ("" when unset), checked against ``allowed``."""
    mode = os.environ.get(name, "")
    if mode not in ("", *allowed):
        raise ValueError(f"{name} must be one of {allowed}, got {mode!r}")
    return mode


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


def drop_solution_cells(app, doctree: nodes.Node) -> None:
    """Remove the cell containers tagged ``solution`` from ``doctree``."""
    for node in [n for n in doctree.findall(nodes.container) if "tag_solution" in n.get("classes", [])]:
        node.parent.remove(node)


def setup(app):
    solutions = _switch("SEQLAB_SOLUTIONS", ("show", "remove"))  # read now: a misspelt mode fails early
    if execution := _switch("SEQLAB_EXECUTION", ("force", "cache")):  # unset: the book's own setting
        app.connect("config-inited", lambda app, config: setattr(config, "nb_execution_mode", execution))
    if solutions == "remove":
        app.connect("doctree-read", drop_solution_cells)
    app.connect("source-read", _on_source_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
