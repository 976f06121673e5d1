"""On the page, every public test's toggle reads "Show the public test" and every reference solution's
"Show the reference solution" (code/tools/book/public_test_prompts.py), whether or not the cell sets the
prompt itself; a cell's own prompt wins; other hidden cells keep the book's default."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

CODE = Path(__file__).resolve().parents[1] / "code"


def _code(source, tags, **metadata):
    meta = {"tags": tags, **metadata}
    return {"cell_type": "code", "metadata": meta, "source": source, "outputs": [], "execution_count": None}


def test_every_public_test_toggle_reads_show_the_public_test(tmp_path):
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": "# Tiny"},
        _code("assert 1 + 1 == 2  # no prompt of its own", ["hide-input", "public-test"]),
        _code(
            "assert 2 + 2 == 4  # its own prompt",
            ["hide-input", "public-test"],
            mystnb={"code_prompt_show": "Show this check", "code_prompt_hide": "Hide this check"},
        ),
        _code("x = 3  # hidden, not a test", ["hide-input"]),
        _code("def f():\n    return 1", ["hide-input", "solution"]),
    ]
    meta = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}}
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": meta, "cells": cells}
    (tmp_path / "index.ipynb").write_text(json.dumps(nb))
    (tmp_path / "conf.py").write_text(
        "extensions = ['myst_nb', 'tools.book.public_test_prompts']\nnb_execution_mode = 'off'\n"
    )
    out = tmp_path / "_build"
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-W", str(tmp_path), str(out)]
    result = subprocess.run(cmd, capture_output=True, text=True, env=os.environ | {"PYTHONPATH": str(CODE)})
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    html = (out / "index.html").read_text()
    shown = re.findall(r'<p class="collapsed admonition-title">([^<]*)</p>', html)
    hidden = re.findall(r'<p class="expanded admonition-title">([^<]*)</p>', html)
    assert shown == [
        "Show the public test",
        "Show this check",
        "Show code cell source",
        "Show the reference solution",
    ]
    assert hidden == ["Hide the test", "Hide this check", "Hide code cell source", "Hide the solution"]
