"""Build what students and graders get: ``otter assign`` for every chapter with exercises.

    python -m tools.handout.student --out dist [--only NAME ...]      (PYTHONPATH=code)

Writes ``OUT/NAME/student/NAME.ipynb`` (no solution, no hidden test, a set-up cell first) and
``OUT/NAME/autograder/NAME-autograder_*.zip``. The zips grade anywhere: a temporary copy of the
assignment config gets ``requirements:`` (CPU torch, the runtime pinned as in ``requirements.txt``,
the ``seqlab`` wheel and the chapter's hidden cases, ``seqlab_hidden``, as a wheel of their own) and
``autograder_files:`` (those wheels, at ``files/wheels/`` in the zip), which otter 7 writes into the
zip's ``environment.yml``. The hidden cases are in no other file a student gets.
"""

import argparse
import base64
import copy
import functools
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from argparse import RawDescriptionHelpFormatter as RAW
from importlib import metadata
from pathlib import Path

from tools.course import ROOT, chapters, collapsed_cell, read, repository_url, seqlab_version, tags, write
from tools.handout import book_values, plain_notebook
from tools.otter_format import (
    amend_config,
    assignment_name,
    has_exercises,
    is_hidden_test,
    is_marker_cell,
    stub,
)

TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
# what the tests of the exercises import, directly or through seqlab; pinned as in requirements.txt
RUNTIME = ("torch", "numpy", "matplotlib", "tqdm", "babel", "num2words", "sacrebleu", "regex", "tokenizers")
SETUP_TAG = "seqlab-setup"
EXECUTED = ROOT / "_build" / "jupyter_execute"  # the book build's run: the values the text quotes
SETUP_TEMPLATE = """\
# @title Set-up: installs seqlab, otter-grader and myst-nb where they are missing
# Set-up for Colab, Binder or a fresh Python: installs what this notebook needs where it is missing
# (the course package seqlab {version}, otter-grader, myst-nb); where it is installed, does nothing.
import importlib.util
import subprocess
import sys

_needed = {{"seqlab": "{seqlab}", "myst_nb": "{myst_nb}", "otter": "{otter}"}}
_missing = [spec for module, spec in _needed.items() if importlib.util.find_spec(module) is None]
if _missing:
    subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet", *_missing])
    importlib.invalidate_caches()

# grader.check shows the message written for you first, not doctest's trace
from seqlab.exercises import readable_feedback

readable_feedback()
"""


def pinned(names: tuple[str, ...] = RUNTIME, root: Path = ROOT) -> list[str]:
    """The lines of ``requirements.txt`` that pin ``names`` (in that order)."""
    text = (root / "requirements.txt").read_text()
    pins = {m.group(1).lower(): m.group(0).strip() for m in re.finditer(r"^\s*([\w.-]+)==\S+", text, re.M)}
    if missing := [n for n in names if n.lower() not in pins]:
        raise ValueError(f"requirements.txt pins none of {missing}")
    return [pins[n.lower()] for n in names]


def setup_source(root: Path = ROOT) -> str:
    """The set-up cell: seqlab from the release tag ``v<version>`` of the repository, the pinned
    otter-grader, and myst-nb (the chapters glue computed numbers into the prose with its ``glue``)."""
    version = seqlab_version(root)
    seqlab = f"seqlab[text] @ git+{repository_url(root)}@v{version}#subdirectory=code"
    myst_nb, otter = f"myst-nb=={metadata.version('myst-nb')}", pinned(("otter-grader",), root)[0]
    return SETUP_TEMPLATE.format(version=version, seqlab=seqlab, myst_nb=myst_nb, otter=otter)


def with_setup_cell(notebook: dict, root: Path = ROOT) -> dict:
    """The notebook with the set-up cell first (replacing an older one), collapsed so that the chapter
    opens on its title; ``otter_ignore``: the graders (otter run, Gradescope, make grade) skip it."""
    nb = copy.deepcopy(notebook)
    ids = {"id": SETUP_TAG} if nb.get("nbformat_minor", 5) >= 5 else {}  # cell ids: nbformat 4.5 on
    cell = collapsed_cell(setup_source(root), SETUP_TAG, "otter_ignore", **ids)
    nb["cells"] = [cell, *(c for c in nb["cells"] if SETUP_TAG not in tags(c))]
    return nb


def studentize(notebook: dict) -> dict:
    """A student copy of any notebook without otter: hidden tests and otter's raw marker cells dropped,
    each ``# BEGIN SOLUTION`` ... ``# END SOLUTION`` block replaced by ``...``, outputs cleared."""
    nb = copy.deepcopy(notebook)
    nb["cells"] = [c for c in nb["cells"] if not (is_hidden_test(c) or is_marker_cell(c))]
    for cell in nb["cells"]:
        cell["source"] = stub(cell["source"])
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
    return nb


@functools.cache
def seqlab_wheel() -> Path:
    """``seqlab`` built as a wheel (once per process), in a temporary folder."""
    out = Path(tempfile.mkdtemp(prefix="seqlab-wheel-"))
    # built from a clean copy: setuptools leaves build/ in the folder it builds, and reuses it
    ignore = shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "*.pyc")
    source = shutil.copytree(ROOT / "code", out / "code", ignore=ignore)
    cmd = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
           str(source), "-w", str(out)]  # fmt: skip
    result = subprocess.run(cmd, capture_output=True, text=True)
    wheels = list(out.glob("seqlab-*.whl"))
    if result.returncode != 0 or len(wheels) != 1:
        raise RuntimeError(f"building the seqlab wheel failed:\n{result.stdout}\n{result.stderr}")
    return wheels[0]


HIDDEN = ROOT / "code" / "tools" / "grading" / "seqlab_hidden"


def hidden_wheel(chapter: str, out: Path, root: Path = ROOT) -> Path:
    """A wheel of ``seqlab_hidden`` holding only ``chapter``'s hidden cases (and the package's
    ``__init__``), written into ``out``: what the chapter's autograder zip installs beside seqlab."""
    version = seqlab_version(root)
    files = {"seqlab_hidden/__init__.py": (HIDDEN / "__init__.py").read_bytes()}
    if (HIDDEN / f"{chapter}.py").is_file():
        files[f"seqlab_hidden/{chapter}.py"] = (HIDDEN / f"{chapter}.py").read_bytes()
    info = f"seqlab_hidden-{version}.dist-info"
    files[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: seqlab-hidden\nVersion: {version}\n".encode()
    files[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: seqlab\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )

    def digest(data: bytes) -> str:
        return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()

    record = (
        "".join(f"{name},{digest(data)},{len(data)}\n" for name, data in files.items()) + f"{info}/RECORD,,\n"
    )
    wheel = out / f"seqlab_hidden-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in [*files.items(), (f"{info}/RECORD", record.encode())]:
            archive.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data)
    return wheel


def _otter_assign(source: Path, target: Path) -> None:
    cmd = [sys.executable, "-m", "otter", "assign", "--no-pdfs", str(source), str(target)]
    result = subprocess.run(cmd, capture_output=True, text=True, cwd=source.parent)
    if result.returncode != 0:
        raise RuntimeError(f"otter assign failed for {source.name}:\n{result.stdout}\n{result.stderr}")


def assign(notebook: Path, out: Path, executed_dir: Path | None = None, run_tests: bool = True) -> Path:
    """Run ``otter assign`` on one chapter into ``out/<name>``; returns that folder. ``run_tests``:
    otter grades the solutions with the zip it built (the tests check that themselves)."""
    if (name := assignment_name(notebook)) != notebook.stem:
        raise ValueError(f"{notebook}: assignment name {name!r} must equal the file name {notebook.stem!r}")
    target = (out / name).resolve()
    shutil.rmtree(target, ignore_errors=True)
    wheel = seqlab_wheel()
    with tempfile.TemporaryDirectory(prefix=f"assign-{name}-") as tmp:
        (Path(tmp) / "wheels").mkdir()
        shutil.copy(wheel, Path(tmp) / "wheels" / wheel.name)
        hidden = hidden_wheel(name, Path(tmp) / "wheels")
        rels = [f"wheels/{wheel.name}", f"wheels/{hidden.name}"]
        requirements = [f"--extra-index-url {TORCH_INDEX}", *pinned(), *(f"./files/{rel}" for rel in rels)]
        source = Path(tmp) / notebook.name
        config = {"requirements": requirements, "autograder_files": rels, "run_tests": run_tests}
        write(amend_config(read(notebook), **config), source)
        _otter_assign(source, target)
    if len(zips := list((target / "autograder").glob("*.zip"))) != 1:
        raise RuntimeError(f"expected one autograder zip in {target / 'autograder'}, found {zips}")
    handout = target / "student" / notebook.name
    write(for_students(read(handout), notebook, executed_dir), handout)
    return target


def for_students(notebook: dict, source: Path, executed_dir: Path | None = None, root: Path = ROOT) -> dict:
    """The last steps of every student notebook: plain Markdown, with the book's values of ``source``
    (``book_values``: the book build's executed copy under ``executed_dir``, ``_build/jupyter_execute``,
    else the book's execution cache, else the values stored with the repository), and the set-up
    cell first."""
    # not resolved: page.py builds from a folder of symlinks to the chapters
    rel = Path(os.path.abspath(source)).relative_to(os.path.abspath(root))
    glued, _ = book_values.book_values(Path(source), executed_dir, book_values.CACHE, root)
    return with_setup_cell(
        plain_notebook.plain(notebook, rel.with_suffix("").as_posix(), root=root, glued=glued)
    )


def student_notebook(notebook: Path, executed_dir: Path | None = None, root: Path = ROOT) -> dict:
    """What a student downloads for one chapter: the notebook of ``make student`` (``studentize`` for a
    chapter without exercises) in plain Markdown with its set-up cell; otter runs no test here."""
    nb = read(notebook)
    if not has_exercises(notebook):
        return for_students(studentize(nb), notebook, executed_dir, root)
    with tempfile.TemporaryDirectory(prefix=f"student-{notebook.stem}-") as tmp:
        source = Path(tmp) / "src" / notebook.name
        write(amend_config(nb, run_tests=False, generate=False), source)
        _otter_assign(source, Path(tmp) / "out")
        return for_students(read(Path(tmp) / "out" / "student" / notebook.name), notebook, executed_dir, root)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=RAW)
    graded = [nb for nb in chapters() if has_exercises(nb)]
    parser.add_argument("--out", type=Path, default=Path("dist"))
    parser.add_argument("--only", nargs="*", choices=[nb.stem for nb in graded], help="default: all")
    args = parser.parse_args(argv)
    for notebook in (nb for nb in graded if not args.only or nb.stem in args.only):
        start = time.perf_counter()
        target = assign(notebook, args.out, EXECUTED)
        _, origin = book_values.book_values(notebook, EXECUTED)
        values = f"the book's values from {origin}" if origin else (
            "no book's values: none stored for its current code (make test or make book, then "
            f"python -m tools.handout.book_values {notebook.stem})")  # fmt: skip
        print(f"{notebook.stem}: {target}/student, {target}/autograder; {values} "
              f"({time.perf_counter() - start:.0f} s)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
