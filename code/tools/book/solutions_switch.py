"""Sphinx extension of the course book: one switch to build the book without solutions, and one to
reuse the executed notebooks of an earlier build.

Solution cells of the chapter notebooks carry the tag ``solution`` (and ``hide-input``, so by
default the book shows them collapsed behind a toggle). With the environment variable
``SEQLAB_SOLUTIONS=remove`` this extension removes each of them from the page after it is read
(the cell container myst-nb makes for it, class ``tag_solution``), so the built pages hold no
solution code at all. The cells still run, so the exercise tests that follow them still check the
reference solutions during the build. The notebook itself is not changed, so the notebook that
runs is the same in both modes.

``SEQLAB_EXECUTION=cache`` runs myst-nb in ``cache`` mode (``_build/.jupyter_cache``) instead of
the ``force`` of ``_config.yml``: a notebook whose code cells (sources and metadata) are unchanged
since the last cached run is not run again. CI builds the book twice, with and without
solutions, from one fresh cache (``.ci/run``), so the second build executes nothing. The cache
does not know about changes to ``seqlab``, so start from an empty cache after changing it.
"""

from __future__ import annotations

import json
import os

from docutils import nodes

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


def remove_solutions(notebook_json: str) -> str:
    """The notebook text with every cell tagged ``solution`` also tagged ``remove-cell``."""
    notebook = json.loads(notebook_json)
    for cell in notebook.get("cells", []):
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if "solution" in tags and "remove-cell" not in tags:
            tags.append("remove-cell")
    return json.dumps(notebook)


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
    app.connect("doctree-read", _on_doctree_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
