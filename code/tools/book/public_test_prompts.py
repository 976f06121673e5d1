"""Sphinx extension: a ``public-test`` cell's toggle reads "Show the public test" (and a
``solution`` cell's "Show the reference solution") unless the cell sets its own
``mystnb.code_prompt_show`` / ``code_prompt_hide``; myst-nb's default says nothing to a student.
"""

from __future__ import annotations

from docutils import nodes

# {tag: (the toggle's text while collapsed, while open)}
PROMPTS = {
    "public-test": ("Show the public test", "Hide the test"),
    "solution": ("Show the reference solution", "Hide the solution"),
}
PROMPT_SHOW, PROMPT_HIDE = PROMPTS["public-test"]


def set_course_prompts(doctree: nodes.Node) -> int:
    """Give each hidden cell container in ``doctree`` tagged as in ``PROMPTS`` the course's prompts
    where its metadata sets none; returns how many cells it changed."""
    changed = 0
    for node in doctree.findall(nodes.container):
        if node.get("nb_element") != "cell_code" or not node.get("hide_mode"):
            continue
        metadata = node.get("cell_metadata") or {}
        tags = [t for t in metadata.get("tags", []) if t in PROMPTS]
        if not tags:
            continue
        show, hide = PROMPTS[tags[0]]
        own = metadata.get("mystnb", {})
        before = (node.get("prompt_show"), node.get("prompt_hide"))
        if "code_prompt_show" not in own:
            node["prompt_show"] = show
        if "code_prompt_hide" not in own:
            node["prompt_hide"] = hide
        changed += before != (node.get("prompt_show"), node.get("prompt_hide"))
    return changed


def _on_doctree_read(app, doctree) -> None:
    set_course_prompts(doctree)


def setup(app):
    # doctree-read comes after myst-nb has made the cell containers and before its HideInputCells
    # post-transform turns "prompt_show" into the toggle's text
    app.connect("doctree-read", _on_doctree_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
