"""A pytest plugin: the chapters nbval runs become the book's executed notebooks (why: docs/contributors.md,
"CI runs each chapter once").

With ``-p tools.book.nbval_cache`` and ``SEQLAB_NB_CACHE`` set to the book's jupyter-cache folder, each
notebook whose cells all passed under `pytest --nbval-lax` is stored there as myst-nb stores one (a
failed, skipped or timed-out cell: not stored), and each notebook's seconds are printed. The cache is
keyed on the notebook's code, not on ``seqlab``: start from an empty cache after changing the package.
"""

import os
from pathlib import Path

import nbformat
import pytest

from tools.book.solutions_switch import as_the_book_reads

CACHE_ENV = "SEQLAB_NB_CACHE"


def _is_nbval_cell(item) -> bool:
    return type(item).__name__ == "IPyNbCell" and hasattr(item, "cell")


_SECONDS: dict[str, float] = {}  # notebook name -> seconds its cells ran


def pytest_runtest_logreport(report):
    if report.when == "call" and ".ipynb::" in report.nodeid:  # a cell of a notebook nbval runs
        name = Path(report.nodeid.split("::")[0]).stem
        _SECONDS[name] = _SECONDS.get(name, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter):
    if not _SECONDS:
        return
    terminalreporter.section("seconds per notebook (cells run, kernel start excluded)")
    for name, seconds in _SECONDS.items():
        terminalreporter.write_line(f"{name:<24} {seconds:7.1f} s")
    terminalreporter.write_line(f"{'total':<24} {sum(_SECONDS.values()):7.1f} s")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if not (os.environ.get(CACHE_ENV) and _is_nbval_cell(item)):
        return
    report = outcome.get_result()
    notebook = item.parent
    notebook._seqlab_failed = getattr(notebook, "_seqlab_failed", False) or report.failed or report.skipped
    if call.when == "call" and report.passed:
        notebook._seqlab_count = count = getattr(notebook, "_seqlab_count", 0) + 1
        item.cell.outputs = [nbformat.from_dict(dict(o)) for o in (item.test_outputs or [])]
        item.cell.execution_count = count
        for output in item.cell.outputs:
            if output.output_type == "execute_result":
                output.execution_count = count


def pytest_runtest_teardown(item, nextitem):
    path = os.environ.get(CACHE_ENV)
    if not (path and _is_nbval_cell(item)):
        return
    notebook = item.parent
    if nextitem is not None and nextitem.parent is notebook:
        return  # more cells of this notebook to come
    cells = [c for c in notebook.nb.cells if c.cell_type == "code"]
    if not getattr(notebook, "_seqlab_failed", False) and getattr(notebook, "_seqlab_count", 0) == len(cells):
        store(notebook.nb, Path(str(notebook.fspath)), path)


def store(nb: nbformat.NotebookNode, source: Path, cache_path: str) -> None:
    """Put the executed notebook ``nb`` (read from ``source``) into the jupyter-cache at
    ``cache_path`` as myst-nb's cache mode would have, replacing an earlier entry."""
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    # the book reads each notebook without otter's marker lines in its solution cells
    # (solutions_switch) and finds its cache entry by the hash of that text: store the same text
    nb = nbformat.reads(as_the_book_reads(nbformat.writes(nb)), as_version=4)
    cache = get_cache(cache_path)
    record = cache.add_nb_to_project(str(source.resolve()))
    bundle = CacheBundleIn(nb, record.uri, data={"executed_by": "nbval"})
    cache.cache_notebook_bundle(bundle, check_validity=False, overwrite=True)
