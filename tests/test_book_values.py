"""The book's values in the student notebook (code/tools/handout/book_values.py): where they come from
without a built book, and what a student sees when running the notebook, checked by executing one."""

import json
import os
import re
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from tools.course import read, write
from tools.handout import book_values, student
from tools.handout import plain_notebook as pn

ROOT = Path(__file__).resolve().parents[1]
SMALL = ROOT / "chapters" / "positional_encoding.ipynb"  # its numbers before the training are cheap


def _chapter(tmp_path: Path, glue_value: str = "1.5") -> Path:
    """A chapter notebook in a folder of its own: a cell that glues, then an exercise cell."""
    cells = [
        nbformat.v4.new_code_cell("from myst_nb import glue"),
        nbformat.v4.new_code_cell(f'glue("x", {glue_value}, display=False)'),
        nbformat.v4.new_markdown_cell("It is {glue:text}`x:.2f`."),
        nbformat.v4.new_code_cell("def answer():\n    return 1"),
    ]
    path = tmp_path / "chapters" / "tiny.ipynb"
    write(nbformat.v4.new_notebook(cells=cells), path)
    return path


def test_the_computation_is_the_code_up_to_the_last_glue(tmp_path):
    nb = read(_chapter(tmp_path))
    before = book_values.computation(nb)
    nb["cells"][3]["source"] = "def answer():\n    return 2"  # an exercise changes: the same values
    assert book_values.computation(nb) == before
    nb["cells"][1]["source"] = 'glue("x", 2.5, display=False)'
    assert book_values.computation(nb) != before


def test_a_build_then_the_store_and_never_a_stale_one(tmp_path, monkeypatch):
    source = _chapter(tmp_path)
    monkeypatch.setattr(book_values, "STORE", tmp_path / "store")
    found = book_values.book_values(source, tmp_path / "none", tmp_path / "no-cache", tmp_path)
    assert found == ({}, "")
    # a build of the current code: its glue store
    executed = tmp_path / "build" / "chapters" / "tiny.ipynb"
    write(read(source), executed)
    glue = {"x": {"output_type": "display_data", "metadata": {}, "data": {"text/plain": "1.5"}}}
    executed.with_name("tiny.glue.json").write_text(json.dumps(glue))
    glued, origin = book_values.book_values(source, tmp_path / "build", tmp_path / "no-cache", tmp_path)
    assert glued == {"x": {"text/plain": "1.5"}} and origin == "the book build"
    # stored from it: found without the build
    book_values.store(source, glued, "the book build")
    glued, origin = book_values.book_values(source, None, tmp_path / "no-cache", tmp_path)
    assert glued == {"x": {"text/plain": "1.5"}} and origin.endswith("tiny.json")
    # the chapter's computation changes: neither the old build nor the stored values are its values
    nb = read(source)
    nb["cells"][1]["source"] = 'glue("x", 2.5, display=False)'
    write(nb, source)
    assert book_values.book_values(source, tmp_path / "build", tmp_path / "no-cache", tmp_path) == ({}, "")


def test_values_are_read_from_an_executed_notebooks_outputs():
    prefix = "application/papermill.record/"
    mark = {"scrapbook": {"name": "x", "mime_prefix": prefix}}
    outputs = [
        nbformat.v4.new_output("display_data", {prefix + "text/plain": "0.25"}, metadata=mark),
        nbformat.v4.new_output("stream", text="hello\n"),
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("glue('x', 0.25)", outputs=outputs)])
    assert book_values.glued_in(nb) == {"x": {"text/plain": "0.25"}}


def test_every_chapter_with_stored_values_stored_every_value_its_text_quotes():
    """Where a chapter stored its values for its current code, every number its text quotes is there."""
    for path in sorted(book_values.STORE.glob("*.json")):
        source = ROOT / "chapters" / f"{path.stem}.ipynb"
        stored = json.loads(path.read_text())
        if stored["computation"] != book_values.computation(read(source)):
            continue  # stale: make student ignores it and says so
        text = "\n".join("".join(c["source"]) for c in read(source)["cells"] if c["cell_type"] == "markdown")
        quoted = {m.split(":")[0].strip() for m in re.findall(r"\{glue:text\}`([^`]+)`", text)}
        assert quoted <= set(stored["values"]), (path.stem, quoted - set(stored["values"]))


# what the test plants in the book's values, and the claims it adds on two of them, one checked
# before the value is glued and one after (bars this run clears: the notebook runs on either way)
PLANTED = {"pe_slowest": "8000.0", "pe_quiet_feature": "40", "pe_cos_gap": "0.5"}
CLAIM_BEFORE = 'claims.at_least("slowest", 10000 ** ((64 - 2) / 64), 1000, "the slowest turn")'
CLAIM_AFTER = 'claims.at_most("cos_gap", cos_gap, 0.01, "the largest gap of a quiet cosine to 1")'


def test_a_student_run_shows_the_books_value_only_where_it_differs(tmp_path, monkeypatch):
    """The student notebook of a small chapter, as ``make student`` makes it without a built book
    (``for_students``, with the values stored with the repository), with three of the book's values
    planted to differ, run in a kernel up to its first cell that glues numbers (what follows is left
    out, to keep the test short): every value the run agrees on prints as ``name = value``; each
    planted one also shows the book's value, and the bar the chapter claims for it, claimed before
    or after it is glued. (One run covers both: the values the run agrees on are the book's.)"""
    stored = json.loads(book_values.stored_path(SMALL.stem).read_text())
    stale = f"the values stored for {SMALL.stem} are stale: python -m tools.handout.book_values --run"
    assert stored["computation"] == book_values.computation(read(SMALL)), stale
    planted = tmp_path / "store"
    planted.mkdir()
    (planted / f"{SMALL.stem}.json").write_text(
        json.dumps({**stored, "values": {**stored["values"], **PLANTED}})
    )
    monkeypatch.setattr(book_values, "STORE", planted)
    monkeypatch.setattr(book_values, "CACHE", tmp_path / "no-cache")
    # make student's last step (otter assign's part ends before the first exercise: not needed here)
    nb = student.for_students(student.studentize(read(SMALL)), SMALL)
    (glue_shows,) = [c for c in nb["cells"] if pn.GLUE_SHOWS_TAG in c["metadata"].get("tags", [])]
    assert "'pe_slowest': (',.0f', '8,000')" in glue_shows["source"]  # the table holds the book's values

    code = [i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"]
    (table,) = [i for i in code if "pe_slowest" in pn.glued_names(nb["cells"][i]["source"])]
    cells = nb["cells"][: table + 1]
    cells.insert(table, nbformat.v4.new_code_cell(CLAIM_BEFORE))
    cells.append(nbformat.v4.new_code_cell(CLAIM_AFTER))
    run = nbformat.from_dict({**nb, "cells": cells})
    glued = [n for c in cells if c["cell_type"] == "code" for n in pn.glued_names(c["source"])]
    env = {**os.environ, "SEQLAB_PROGRESS": "0", "OMP_NUM_THREADS": "1"}
    write(run, tmp_path / SMALL.name)  # where the student keeps it: otter.Notebook reads it
    where = {"metadata": {"path": str(tmp_path)}}
    client = NotebookClient(run, timeout=600, kernel_name="python3", resources=where)
    client.execute(env=env)
    printed = [
        line
        for c in run.cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.output_type == "stream" and o.name == "stdout"
        for line in o.text.splitlines()
    ]
    values = {line.split(" = ")[0]: line for line in printed if " = " in line}
    figures = {n for n in glued if n.startswith("fig_")}
    assert set(values) == set(glued) - figures, printed  # every number the text quotes, printed
    for name, line in values.items():
        assert ("(book: " in line) == (name in PLANTED), line  # shown only where it differs
    assert values["pe_slowest"] == "pe_slowest = 7,499   (book: 8,000; the chapter claims at least 1,000)"
    assert values["pe_quiet_feature"] == "pe_quiet_feature = 48   (book: 40)"
    assert re.fullmatch(r"pe_cos_gap = (\S+)   \(book: 0\.500\)", values["pe_cos_gap"])
    mine = values["pe_cos_gap"].split()[2]
    assert f"pe_cos_gap: the chapter claims at most 0.010 (your run: {mine})" in printed
