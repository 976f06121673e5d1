"""Sphinx extension of the course book: every public test's toggle reads "Show the public test".

A public test (a code cell tagged ``public-test`` and ``hide-input``) is shown on the page
collapsed, under a toggle whose text myst-nb takes from the cell's ``mystnb.code_prompt_show`` /
``code_prompt_hide`` metadata, and otherwise from the book-wide default ("Show code cell source"),
which says nothing to a student. This extension gives every cell tagged ``public-test`` the
course's prompts unless the cell sets its own, so a new question needs no metadata for it.
"""

from __future__ import annotations

from docutils import nodes

TAG = "public-test"
PROMPT_SHOW = "Show the public test"
PROMPT_HIDE = "Hide the test"


def set_public_test_prompts(doctree: nodes.Node) -> int:
    """Give each hidden ``public-test`` cell container in ``doctree`` the course's prompts where
    its metadata sets none; returns how many cells it changed."""
    changed = 0
    for node in doctree.findall(nodes.container):
        if node.get("nb_element") != "cell_code" or not node.get("hide_mode"):
            continue
        metadata = node.get("cell_metadata") or {}
        if TAG not in metadata.get("tags", []):
            continue
        own = metadata.get("mystnb", {})
        before = (node.get("prompt_show"), node.get("prompt_hide"))
        if "code_prompt_show" not in own:
            node["prompt_show"] = PROMPT_SHOW
        if "code_prompt_hide" not in own:
            node["prompt_hide"] = PROMPT_HIDE
        changed += before != (node.get("prompt_show"), node.get("prompt_hide"))
    return changed


def _on_doctree_read(app, doctree) -> None:
    set_public_test_prompts(doctree)


def setup(app):
    # doctree-read comes after myst-nb has made the cell containers and before its HideInputCells
    # post-transform turns "prompt_show" into the toggle's text
    app.connect("doctree-read", _on_doctree_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
