"""Sphinx extension: a ``public-test`` cell's toggle reads "Show the public test" (and a
``solution`` cell's "Show the reference solution") unless the cell sets its own
``mystnb.code_prompt_show`` / ``code_prompt_hide``; myst-nb's default says nothing to a student.
"""

from docutils import nodes

# {tag: (the toggle's text while collapsed, while open)}
PROMPTS = {
    "public-test": ("Show the public test", "Hide the test"),
    "solution": ("Show the reference solution", "Hide the solution"),
}


def set_course_prompts(app, doctree: nodes.Node) -> None:
    """Give each hidden cell container tagged as in ``PROMPTS`` the course's prompts where its
    metadata sets none."""
    for node in doctree.findall(nodes.container):
        metadata = node.get("cell_metadata") or {}
        tags = [t for t in metadata.get("tags", []) if t in PROMPTS]
        if node.get("nb_element") == "cell_code" and node.get("hide_mode") and tags:
            own = metadata.get("mystnb", {})
            for key, prompt in zip(("prompt_show", "prompt_hide"), PROMPTS[tags[0]], strict=True):
                if f"code_{key}" not in own:
                    node[key] = prompt


def setup(app):
    # doctree-read comes after myst-nb has made the cell containers and before its HideInputCells
    # post-transform turns "prompt_show" into the toggle's text
    app.connect("doctree-read", set_course_prompts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
