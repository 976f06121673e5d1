"""Sphinx extension: every notebook the built site serves is the student version.

After the build, ``_sources/<path>.ipynb`` (the download button) and ``<path>.ipynb`` beside the page
(what Colab and Binder open) become the notebook of ``make student``; any other ``.ipynb`` in the
output is cleaned without otter (``student.studentize``). ``binder/`` is copied into the site.
"""

import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tools.course import read, write
from tools.handout import student


def publish_student_notebooks(
    srcdir: Path, outdir: Path, sources: list[Path], executed_dir=None
) -> list[Path]:
    """Write the student notebook of each source notebook into ``outdir`` (``_sources/`` and beside its
    page) and clean every other notebook there; returns the files written. ``executed_dir``: where
    the build left the executed notebooks (their glued values and figures go into the text)."""
    written: list[Path] = []
    with ThreadPoolExecutor(max_workers=4) as pool:
        notebooks = pool.map(lambda src: student.student_notebook(src, executed_dir, srcdir), sources)
        for src, nb in zip(sources, notebooks, strict=True):
            rel = src.relative_to(srcdir)
            for path in (outdir / "_sources" / rel, outdir / rel):
                write(nb, path)
                written.append(path)
    for path in sorted(outdir.rglob("*.ipynb")):
        if path not in written:
            write(student.with_setup_cell(student.studentize(read(path))), path)
            written.append(path)
    copy_binder(srcdir / "binder", outdir / "binder")
    return written


def copy_binder(binder: Path, target: Path) -> None:
    """``binder/`` into the site, its ``./code`` line (the package beside it on ``main``) replaced by
    the wheel of this build, since the published branch holds the site and not ``code/``."""
    if not binder.is_dir():
        return
    shutil.copytree(binder, target, dirs_exist_ok=True)
    requirements = target / "requirements.txt"
    if requirements.is_file() and "./code" in requirements.read_text().split():
        wheel = student.seqlab_wheel()
        shutil.copy(wheel, target / wheel.name)
        lines = requirements.read_text().splitlines()
        lines = [f"./binder/{wheel.name}" if line.strip() == "./code" else line for line in lines]
        requirements.write_text("\n".join(lines) + "\n")


def _on_build_finished(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    srcdir, outdir = Path(app.srcdir), Path(app.outdir)
    sources = sorted(p for p in map(Path, map(app.env.doc2path, app.env.found_docs)) if p.suffix == ".ipynb")
    written = publish_student_notebooks(srcdir, outdir, sources, outdir.parent / "jupyter_execute")
    print(f"student_downloads: {len(written)} student notebooks written under {outdir}")


def setup(app):
    app.connect("build-finished", _on_build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
