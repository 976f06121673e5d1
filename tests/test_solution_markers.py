"""The book's pages show solution cells without otter's BEGIN/END SOLUTION comments."""

import json

from solution_markers import strip_markers


def _notebook(source, tags):
    return json.dumps({"cells": [{"cell_type": "code", "metadata": {"tags": tags}, "source": source}]})


def test_markers_go_from_solution_cells_only():
    source = ["def f(x):\n", "    # BEGIN SOLUTION\n", "    return x + 1\n", "    # END SOLUTION\n"]
    out = json.loads(strip_markers(_notebook(source, ["solution", "hide-input"])))
    assert out["cells"][0]["source"] == "def f(x):\n    return x + 1\n"
    other = json.loads(strip_markers(_notebook(source, ["otter_ignore"])))
    assert other["cells"][0]["source"] == source
