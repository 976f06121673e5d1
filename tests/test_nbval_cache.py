"""The notebooks nbval runs are stored in the book's execution cache, as myst-nb would store them.

`make test` runs every chapter once under nbval with code/tools/book/nbval_cache.py, and `make book
EXECUTION=cache` renders what was stored: the book must find each notebook by its code, with the
outputs nbval saw, and must not find a notebook whose run failed.
"""

import os
import subprocess
import sys
from pathlib import Path

import nbformat
from jupyter_cache import get_cache

from tools.book.solutions_switch import as_the_book_reads

CODE = Path(__file__).resolve().parents[1] / "code"


def _notebook(path: Path, *sources: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell("# A page")] + [nbformat.v4.new_code_cell(s) for s in sources]
    nbformat.write(nb, path)
    return nb


def _run_nbval(notebook: Path, cache: Path) -> subprocess.CompletedProcess:
    env = os.environ | {"SEQLAB_NB_CACHE": str(cache), "PYTHONPATH": str(CODE)}
    command = [
        sys.executable,
        "-m",
        "pytest",
        "--nbval-lax",
        "-p",
        "tools.book.nbval_cache",
        "-p",
        "no:randomly",
    ]
    done = subprocess.run(
        [*command, "-p", "no:cacheprovider", "-q", str(notebook)],
        env=env,
        capture_output=True,
        text=True,
        cwd=notebook.parent,
    )
    return done


def test_a_notebook_that_ran_is_found_by_its_code_with_its_outputs(tmp_path):
    path = tmp_path / "page.ipynb"
    shown_cell = "from IPython.display import display; display({'a': 1}, raw=True)"
    _notebook(
        path,
        "print('printed')",
        "6 * 7",
        shown_cell,
        "x = 1  # the answer\n# BEGIN SOLUTION\nx = 2\n# END SOLUTION",
    )
    source = nbformat.read(path, as_version=4)
    source.cells[-1].metadata["tags"] = ["solution"]
    nbformat.write(source, path)
    cache = tmp_path / "cache"
    done = _run_nbval(path, cache)
    assert done.returncode == 0, done.stdout
    assert "seconds per notebook" in done.stdout and "page " in done.stdout  # the timing summary
    # the book reads the notebook without otter's marker lines (solutions_switch), and finds it so
    nb = nbformat.reads(as_the_book_reads(path.read_text()), as_version=4)
    record = get_cache(str(cache)).match_cache_notebook(nb)
    _, merged = get_cache(str(cache)).merge_match_into_notebook(nb)
    printed, result, shown, _ = (c.outputs for c in merged.cells[1:])
    assert printed[0].text == "printed\n"
    assert result[0].output_type == "execute_result" and result[0].data["text/plain"] == "42"
    assert shown and record.data == {"executed_by": "nbval"}


def test_a_notebook_with_a_failing_cell_is_not_stored(tmp_path):
    path = tmp_path / "page.ipynb"
    nb = _notebook(path, "x = 1", "raise ValueError('a claim failed')", "y = 2")
    cache = tmp_path / "cache"
    assert _run_nbval(path, cache).returncode != 0
    try:
        get_cache(str(cache)).match_cache_notebook(nb)
    except KeyError:
        return
    raise AssertionError("a notebook whose run failed was stored in the book's cache")
