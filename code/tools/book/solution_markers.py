"""Sphinx extension of the course book: solution cells without otter's marker comments.

otter-grader needs ``# BEGIN SOLUTION`` / ``# END SOLUTION`` comments around the lines of a
solution cell that the student notebook replaces with ``...``. On the book's page they are noise
(a reader sees only the reference solution behind its toggle), so this extension drops those
comment lines from every cell tagged ``solution`` as the notebook is read. They are comments, so
the code that runs is unchanged.
"""

from __future__ import annotations

import json
import re

MARKER = re.compile(r"^[ \t]*# (BEGIN|END) SOLUTION\b.*$\n?", re.M)


def strip_markers(notebook_json: str) -> str:
    """The notebook text with otter's solution marker lines removed from ``solution`` cells."""
    notebook = json.loads(notebook_json)
    for cell in notebook.get("cells", []):
        if "solution" not in cell.get("metadata", {}).get("tags", []):
            continue
        source = cell["source"]
        text = "".join(source) if isinstance(source, list) else source
        cell["source"] = MARKER.sub("", text)
    return json.dumps(notebook)


def _on_source_read(app, docname: str, source: list[str]) -> None:
    if str(app.env.doc2path(docname)).endswith(".ipynb"):
        source[0] = strip_markers(source[0])


def setup(app):
    app.connect("source-read", _on_source_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
