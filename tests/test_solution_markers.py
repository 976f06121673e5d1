"""The book's pages show solution cells without otter's BEGIN/END SOLUTION comments."""

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

from tools.book.solutions_switch import as_the_book_reads


def _notebook(source, tags):
    return nbformat.writes(new_notebook(cells=[new_code_cell(source, metadata={"tags": tags})]))


def test_markers_go_from_solution_cells_only():
    source = "def f(x):\n    # BEGIN SOLUTION\n    return x + 1\n    # END SOLUTION\n"
    out = nbformat.reads(as_the_book_reads(_notebook(source, ["solution", "hide-input"])), as_version=4)
    assert out.cells[0].source == "def f(x):\n    return x + 1\n"
    other = nbformat.reads(as_the_book_reads(_notebook(source, ["otter_ignore"])), as_version=4)
    assert other.cells[0].source == source
