"""What students get and what graders install: the set-up cell, the one repository URL, the zips.

All offline: the set-up cell runs against a fake pip, and the zips are checked statically (their
environment, their wheel). `make check-autograder` is the slow proof that they grade from a fresh
environment.
"""

import importlib.util
import io
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from tools.course import chapters, read, repository_url, seqlab_version
from tools.handout import student
from tools.otter_format import has_exercises, is_hidden_test

ROOT = Path(__file__).resolve().parents[1]


def run_setup_cell(monkeypatch, missing=()):
    """Run the set-up cell's code with pip replaced by a recorder; returns the pip commands."""
    calls = []
    real_find_spec = importlib.util.find_spec

    def find_spec(name, *args, **kwargs):
        return None if name in missing else real_find_spec(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    monkeypatch.setattr(subprocess, "check_call", lambda cmd, *a, **k: calls.append(cmd) or 0)
    from otter.test_files import ok_test

    monkeypatch.setattr(ok_test, "run_doctest", ok_test.run_doctest)  # the cell's readable_feedback()
    exec(compile(student.setup_source(), "<set-up cell>", "exec"), {})
    return calls


def test_setup_cell_does_nothing_where_seqlab_is_installed(monkeypatch):
    assert run_setup_cell(monkeypatch) == []


def test_setup_cell_installs_the_books_seqlab_where_it_is_missing(monkeypatch, capsys):
    calls = run_setup_cell(monkeypatch, missing={"seqlab"})
    assert len(calls) == 1
    cmd = calls[0]
    assert cmd[:4] == [sys.executable, "-m", "pip", "install"]
    url = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]
    version = re.search(r'^version\s*=\s*"([^"]+)"', (ROOT / "code/pyproject.toml").read_text(), re.M)[1]
    assert f"seqlab[text] @ git+{url}@v{version}#subdirectory=code" in cmd
    assert not any(x.startswith(("otter", "myst")) for x in cmd)  # only what is missing


def test_setup_cell_installs_otter_and_myst_nb_too_where_they_are_missing(monkeypatch):
    (cmd,) = run_setup_cell(monkeypatch, missing={"otter", "myst_nb"})
    assert any(x.startswith("otter-grader==") for x in cmd) and any(x.startswith("myst-nb==") for x in cmd)
    assert not any(x.startswith("seqlab") for x in cmd)


def test_setup_cell_is_first_and_skipped_by_the_graders():
    nb = student.with_setup_cell({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": []})
    nb = student.with_setup_cell(nb)  # idempotent
    assert len(nb["cells"]) == 1
    assert set(nb["cells"][0]["metadata"]["tags"]) == {student.SETUP_TAG, "otter_ignore"}


def test_the_readme_names_the_repository_of_config_yml():
    url = repository_url()
    readme = (ROOT / "README.md").read_text()
    # any other address of this course's repository (a stale or placeholder one) is a mistake
    repos = set(re.findall(r"https://github\.com/[\w.-]+/seqlab[\w.-]*", readme))
    assert url in readme and repos <= {url}, repos


def test_binder_gets_a_light_environment():
    lines = [x.split("#")[0].strip() for x in (ROOT / "binder" / "requirements.txt").read_text().splitlines()]
    lines = [x for x in lines if x]
    names = {re.split(r"[=<>\[ ]", x)[0].lower() for x in lines if not x.startswith(("-", "."))}
    assert {"torch", "numpy", "matplotlib", "otter-grader"} <= names
    assert not names & {"jupyter-book", "ruff", "pytest", "nbval", "nbstripout", "sphinx", "ghp-import"}
    assert "./code" in lines  # seqlab itself (the wheel of the build, on the published branch)
    for pin in student.pinned(("torch", "numpy", "matplotlib", "otter-grader")):
        assert pin in lines


# ---------------------------------------------------------------------------------------------
# the zips of `make student`

CHAPTERS = [nb.stem for nb in chapters() if has_exercises(nb)]


def environment(zip_path: Path) -> tuple[list[str], zipfile.ZipFile]:
    archive = zipfile.ZipFile(zip_path)
    env = yaml.safe_load(archive.read("environment.yml"))
    (pip,) = [d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d]
    return [str(x) for x in pip], archive


@pytest.mark.parametrize("name", CHAPTERS)
def test_zip_declares_everything_its_tests_import(dist, name):
    (zip_path,) = (dist / name / "autograder").glob("*.zip")
    pip, archive = environment(zip_path)
    assert "torch==2.13.0" in pip and f"--extra-index-url {student.TORCH_INDEX}" in pip
    for pin in student.pinned(student.RUNTIME[1:]):  # all but torch (from its own index, above)
        assert pin in pip
    # the seqlab wheel and the chapter's hidden cases' (seqlab_hidden): paths relative to the zip's
    # folder (where setup.sh's installer runs)
    wheel_line, hidden_line = [x for x in pip if x.endswith(".whl")]
    hidden = zipfile.ZipFile(io.BytesIO(archive.read(hidden_line.removeprefix("./"))))
    assert {"seqlab_hidden/__init__.py", f"seqlab_hidden/{name}.py"} <= set(hidden.namelist()) or not (
        ROOT / "code" / "tools" / "grading" / "seqlab_hidden" / f"{name}.py"
    ).is_file()
    assert not [
        n
        for n in hidden.namelist()
        if n.startswith("seqlab_hidden/") and name not in n and "__init__" not in n
    ]
    member = wheel_line.removeprefix("./")
    assert member in archive.namelist(), (wheel_line, archive.namelist())
    version = seqlab_version()
    assert Path(member).name == f"seqlab-{version}-py3-none-any.whl"
    wheel = zipfile.ZipFile(io.BytesIO(archive.read(member)))
    files = wheel.namelist()
    assert "seqlab/__init__.py" in files and "seqlab/exercises/__init__.py" in files
    meta = wheel.read(f"seqlab-{version}.dist-info/METADATA").decode()
    assert f"Version: {version}" in meta
    # every module the tests import is in the environment
    tests = "\n".join(archive.read(n).decode() for n in archive.namelist() if n.startswith("tests/"))
    for module in set(re.findall(r"^\s*(?:from|import) (\w+)", tests, re.M)) - set(sys.stdlib_module_names):
        assert module in {"torch", "numpy", "seqlab", "otter", "matplotlib", "seqlab_hidden"}, module


def test_zip_wheel_installs(dist, tmp_path):
    """The wheel inside a zip installs (into a folder, without its dependencies: offline)."""
    (zip_path,) = (dist / CHAPTERS[0] / "autograder").glob("*.zip")
    pip, archive = environment(zip_path)
    wheels = [x for x in pip if x.endswith(".whl")]
    archive.extractall(tmp_path / "source")
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
           "--target", str(tmp_path / "site"), *wheels]  # fmt: skip
    result = subprocess.run(cmd, cwd=tmp_path / "source", capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "site" / "seqlab" / "exercises").is_dir()
    assert (tmp_path / "site" / "seqlab_hidden" / f"{CHAPTERS[0]}.py").is_file()


@pytest.mark.parametrize("name", CHAPTERS)
def test_student_notebook_starts_with_the_setup_cell(dist, name):
    nb = read(dist / name / "student" / f"{name}.ipynb")
    first = nb["cells"][0]
    assert student.SETUP_TAG in first["metadata"]["tags"] and "otter_ignore" in first["metadata"]["tags"]
    assert first["source"] == student.setup_source()
    assert not any(is_hidden_test(c) for c in nb["cells"])
    assert any("grader = otter.Notebook" in c["source"] for c in nb["cells"][1:3])


def test_sources_stay_untouched_by_make_student(dist):
    """The requirements and the wheel go into a temporary copy, never into chapters/."""
    for nb in chapters():
        text = nb.read_text()
        assert "autograder_files" not in text and student.SETUP_TAG not in text
