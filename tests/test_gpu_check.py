"""make gpu-check's runner: a chapter's code cells run in order without Jupyter, claims logged, the
first failing cell reported; the table says what ran and what held on each device."""

import json

from tools.reports import gpu_check


def _notebook(path, *sources):
    cells = [{"cell_type": "code", "metadata": {}, "source": s, "outputs": [], "execution_count": None}
             for s in sources]  # fmt: skip
    cells.insert(1, {"cell_type": "raw", "metadata": {}, "source": "# BEGIN QUESTION"})
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


def test_a_chapter_runs_its_cells_in_one_namespace_with_glue_and_claims(tmp_path):
    nb = _notebook(
        tmp_path / "tiny.ipynb",
        "from myst_nb import glue\nfrom seqlab import claims\nfrom seqlab.device import get_device\nx = 2",
        "glue('x', x, display=False)\nassert get_device().type == 'cpu'\nopen('here', 'w').close()",
        "claims.at_least('tiny_x', x, 1.5, 'x')\nclaims.at_most('tiny_miss', x, 1, 'x')",
    )
    result = gpu_check.execute(nb, "cpu", threads=1)
    assert result["error"] is None and (result["ran"], result["cells"], result["glued"]) == (3, 3, 1)
    assert (tmp_path / "here").exists()  # run in the notebook's folder, as a kernel is
    assert [(c["name"], c["value"], c["held"]) for c in result["claims"]] == [
        ("tiny_x", 2, True),
        ("tiny_miss", 2, False),
    ]


def test_the_first_failing_cell_stops_the_chapter_and_is_named(tmp_path):
    nb = _notebook(tmp_path / "broken.ipynb", "x = 1", "y = 1 / 0", "z = 3")
    result = gpu_check.execute(nb, "cpu", threads=1)
    assert result["ran"] == 1 and result["cells"] == 3
    assert result["error"].startswith("code cell 1 (broken.ipynb, code cell 1:1): ZeroDivisionError")


def test_report_tables_flag_a_missed_claim_and_an_error():
    claim = {"name": "acc", "value": 0.99, "bar": 0.95, "op": ">=", "held": True}
    results = [
        {
            "chapter": "a",
            "device": "cuda",
            "cells": 4,
            "ran": 4,
            "seconds": 2.0,
            "error": None,
            "claims": [claim],
        },  # fmt: skip
        {
            "chapter": "a",
            "device": "cpu",
            "cells": 4,
            "ran": 2,
            "seconds": 5.0,
            "error": "code cell 2: boom",
            "claims": [claim | {"value": 0.9, "held": False}],
        },  # fmt: skip
    ]
    text, ok = gpu_check.report(results, ["cuda", "cpu"])
    assert not ok
    assert "| a | 4/4 | 1/1 | 2.0 | 2/4 | 0/1 | 5.0 |" in text
    assert "| a | acc | >= 0.95 | 0.99 | 0.9 (missed) |" in text
    assert "a on cpu: code cell 2: boom" in text
    assert gpu_check.report(results[:1], ["cuda"])[1]


def test_the_package_tests_are_those_that_need_no_course_tool():
    names = {f.name for f in gpu_check.package_tests()}
    assert {"test_cuda.py", "test_lstm.py", "test_attention.py"} <= names
    assert not names & {"test_gpu_check.py", "test_exercises.py", "test_notebooks.py", "test_student.py"}
    assert [nb.stem for nb in gpu_check.chapter_paths()][:2] == ["rnn_gradients", "lstm"]
