"""No built file of the book holds a hidden test, nor, built with SOLUTIONS=remove, a solution.

Building the whole book takes minutes, so this builds a tiny book with the course's extensions and
one notebook shaped like a chapter (assignment config, a question, a tagged solution, a public and a
hidden test) both ways, and scans everything under its _build/html. `make book` runs the same scan
(code/tools/checks/leak_check.py) on the real build.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools.book import student_downloads
from tools.checks import leak_check
from tools.course import read, seqlab_version, write
from tools.handout import student

ROOT = Path(__file__).resolve().parents[1]
CODE = ROOT / "code"  # where the package tools is

SOLUTION_LINE = "return torch.flip(x, dims=[-1]) * 1"  # in the solution only
HIDDEN_LINE = "check(reverse_last(torch.arange(6.0).reshape(2, 3)), 'hidden one')"  # in the hidden test


def _cell(kind, source, tags=()):
    cell = {"cell_type": kind, "metadata": {"tags": list(tags)}, "source": source}
    if kind == "code":
        cell.update(outputs=[], execution_count=None)
    return cell


def tiny_chapter() -> dict:
    config = (
        "# ASSIGNMENT CONFIG\nname: tiny\ninit_cell: true\ncheck_all_cell: true\nexport_cell: false\n"
        "solutions_pdf: false\ntemplate_pdf: false\ngenerate: true\nrun_tests: true\ntests:\n  files: false"
    )
    hidden = (
        '""" # BEGIN TEST CONFIG\nhidden: true\n"""  # END TEST CONFIG\n'
        "def check(got, what):\n"
        "    assert torch.equal(got, torch.arange(6.0).reshape(2, 3).flip(-1)), what\n\n"
        f"{HIDDEN_LINE}\n"
    )
    cells = [
        _cell("raw", config, ["remove-cell"]),
        _cell("markdown", "# Tiny\n\nA chapter with one exercise."),
        _cell("code", "import torch\n\nx = torch.arange(3.0)\nx.flip(0)", ["otter_ignore"]),
        _cell("raw", "# BEGIN QUESTION\nname: reverse_last\npoints: 1", ["remove-cell"]),
        _cell("raw", "# BEGIN SOLUTION", ["remove-cell"]),
        _cell(
            "code",
            f"def reverse_last(x):\n    # BEGIN SOLUTION\n    {SOLUTION_LINE}\n    # END SOLUTION",
            ["hide-input", "solution"],
        ),
        _cell("raw", "# END SOLUTION", ["remove-cell"]),
        _cell("raw", "# BEGIN TESTS", ["remove-cell"]),
        _cell("code", "assert reverse_last(torch.arange(3.0)).tolist() == [2.0, 1.0, 0.0]", ["public-test"]),
        _cell("code", hidden, ["remove-cell", "hidden-test"]),
        _cell("raw", "# END TESTS", ["remove-cell"]),
        _cell("raw", "# END QUESTION", ["remove-cell"]),
    ]
    meta = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}}
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": meta, "cells": cells}


def make_book(where: Path) -> Path:
    (where / "chapters").mkdir(parents=True)
    (where / "chapters" / "tiny.ipynb").write_text(json.dumps(tiny_chapter(), indent=1))
    (where / "intro.md").write_text("# Tiny book\n")
    (where / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n- file: chapters/tiny\n")
    (where / "binder").mkdir()
    (where / "binder" / "requirements.txt").write_text("numpy\n./code\n")
    (where / "_config.yml").write_text(
        "title: tiny\nonly_build_toc_files: true\nexecute:\n  execute_notebooks: force\n"
        "repository:\n  url: https://github.com/example/tiny\n  branch: gh-pages\n"
        "launch_buttons:\n  binderhub_url: https://mybinder.org\n  colab_url: https://colab.research.google.com\n"
        f"sphinx:\n  local_extensions:\n    tools.book.solutions_switch: {CODE}\n"
        f"    tools.book.student_downloads: {CODE}\n"
    )
    return where


def build(book: Path, solutions: str) -> Path:
    shutil.rmtree(book / "_build", ignore_errors=True)
    env = {**os.environ, "SEQLAB_SOLUTIONS": solutions}
    jb = Path(sys.executable).parent / "jupyter-book"
    result = subprocess.run([str(jb), "build", str(book), "-W"], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return book / "_build" / "html"


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    return make_book(tmp_path_factory.mktemp("tinybook"))


def _all_text(site: Path) -> str:
    return "\n".join(t for p in site.rglob("*") if p.is_file() and (t := leak_check.built_text(p)))


@pytest.mark.parametrize("solutions", ["show", "remove"])
def test_built_book_leaks_nothing(book, solutions):
    site = build(book, solutions)
    chapters = [book / "chapters" / "tiny.ipynb"]
    assert leak_check.scan(site, chapters, solutions=solutions == "remove") == {}
    text = leak_check.built_text  # the scan's needles are the lines the test wrote
    assert HIDDEN_LINE not in _all_text(site)
    if solutions == "remove":
        assert SOLUTION_LINE not in _all_text(site)
    else:  # the page shows the solution (collapsed), the downloads do not
        assert SOLUTION_LINE in text(site / "chapters" / "tiny.html")
    for served in (site / "_sources" / "chapters" / "tiny.ipynb", site / "chapters" / "tiny.ipynb"):
        nb = read(served)
        assert student.SETUP_TAG in nb["cells"][0]["metadata"]["tags"]
        assert SOLUTION_LINE not in text(served)
        assert any("grader.check" in c["source"] for c in nb["cells"])
    binder = (site / "binder" / "requirements.txt").read_text().split()
    wheel = f"seqlab-{seqlab_version()}-py3-none-any.whl"
    assert "./code" not in binder and f"./binder/{wheel}" in binder and (site / "binder" / wheel).is_file()
    page = (site / "chapters" / "tiny.html").read_text()
    assert 'href="../_sources/chapters/tiny.ipynb"' in page  # what the download button serves
    assert "colab.research.google.com/github/example/tiny/blob/gh-pages/chapters/tiny.ipynb" in page


def test_scan_finds_a_source_notebook_left_in_the_site(tmp_path, book):
    """The check itself: the raw chapter (what Sphinx copies) is caught, the student one is not."""
    site = tmp_path / "html"
    (site / "_sources" / "chapters").mkdir(parents=True)
    raw = book / "chapters" / "tiny.ipynb"
    shutil.copy(raw, site / "_sources" / "chapters" / "tiny.ipynb")
    (site / "page.html").write_text(f"<pre><span>{SOLUTION_LINE}</span></pre>")
    leaks = leak_check.scan(site, [raw], solutions=True)
    assert set(leaks) == {"_sources/chapters/tiny.ipynb", "page.html"}
    assert any("hidden" in x for x in leaks["_sources/chapters/tiny.ipynb"])
    assert leak_check.scan(site, [raw], solutions=False).keys() == {"_sources/chapters/tiny.ipynb"}


def test_every_stray_notebook_copy_is_cleaned(tmp_path, book):
    """A copy Sphinx or a theme puts elsewhere (``_downloads/<hash>/``) is cleaned too."""
    site = tmp_path / "html"
    stray = site / "_downloads" / "abc123" / "tiny.ipynb"
    stray.parent.mkdir(parents=True)
    shutil.copy(book / "chapters" / "tiny.ipynb", stray)
    student_downloads.publish_student_notebooks(book, site, [book / "chapters" / "tiny.ipynb"])
    raw = [book / "chapters" / "tiny.ipynb"]
    assert leak_check.scan(site, raw, solutions=True) == {}
    assert (site / "_sources" / "chapters" / "tiny.ipynb").is_file()


def test_real_chapters_studentize_without_leaks(tmp_path):
    """The otter-free cleaning on every real chapter: no hidden test, no solution line survives."""
    from tools.course import chapters

    site = tmp_path / "html"
    site.mkdir()
    for nb in chapters():
        write(student.studentize(read(nb)), site / nb.name)
    assert leak_check.scan(site, chapters(), solutions=True) == {}


def test_a_shared_package_line_is_not_a_leak_but_most_of_a_solution_is():
    """A solution that shares one line with the package (shown on a page by literalinclude) does not
    leak through it; a page showing half of a solution's lines or one line of its own does."""
    lines = [
        "for t in range(x.shape[1]):",
        "h = torch.tanh(x[:, t] @ w + h @ u)",
        "outputs.append(h.unsqueeze(1))",
    ]
    solution = [("ch cell 1", line) for line in lines]
    shared = {"for t in range(x.shape[1]):", "outputs.append(h.unsqueeze(1))"}
    assert (
        leak_check.leaked_solutions("def f(x): for t in range(x.shape[1]): pass", solution, shared) == set()
    )
    page = "for t in range(x.shape[1]): ... outputs.append(h.unsqueeze(1))"
    assert leak_check.leaked_solutions(page, solution, shared) == {"ch cell 1"}
    assert leak_check.leaked_solutions("h = torch.tanh(x[:, t] @ w + h @ u)", solution, shared) == {
        "ch cell 1"
    }


def test_no_exercise_answer_is_printed_by_the_package_code_a_page_can_show():
    """The whole package, as a page could show it with literalinclude, prints no chapter's
    reference solution (`make book SOLUTIONS=remove` scans the real pages the same way)."""
    from tools.course import chapters

    shared = leak_check.package_lines()
    _, solutions = leak_check.needles(chapters())
    assert leak_check.leaked_solutions(leak_check.squash("\n".join(shared)), solutions, shared) == set()
