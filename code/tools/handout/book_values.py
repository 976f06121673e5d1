"""The book's values of a chapter, for its student notebook: what each glued name showed in the book's run.

    python -m tools.handout.book_values [CHAPTER ...] [--build DIR] [--cache DIR]    (PYTHONPATH=code)

The student notebook prints each number the text quotes as the student's run computes it, beside
the book's value where the two differ (``plain_notebook.GLUE_SHOWS``). ``make student`` must not
need a built book, so the book's values come from the first of:

1. the book build's executed notebook (``_build/jupyter_execute/<page>.glue.json``): what the page shows;
2. the book's execution cache (``_build/.jupyter_cache``), where ``make test`` stores each chapter's
   nbval run, the run that CI's ``make book EXECUTION=cache`` renders (``tools.book.nbval_cache``);
   the entry is the one whose code is the chapter's code now, as the book itself matches it;
3. the values stored with the repository (``code/tools/handout/book_values/<chapter>.json``), used
   only while the cells that compute them (every code cell up to the last that glues) are the ones
   they were stored from (``computation``): a changed cell makes them stale, and they are ignored.

This command stores (3) for each chapter from (1) or (2), where either holds a run of the chapter's
current code (after ``make test`` or ``make book``), or with ``--run`` from a run of the chapter's
cells up to the last that glues, made here as ``make test`` makes it: for the chapters whose stored
values are stale or missing (``make student`` names those).
Figures are stored only by (1) and (2); (3) keeps the values the text quotes.
"""

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path

import nbformat

from tools.course import ROOT, chapters, read

EXECUTED = ROOT / "_build" / "jupyter_execute"  # the book build's run
CACHE = ROOT / "_build" / ".jupyter_cache"  # make test's nbval runs, which CI's book renders
STORE = Path(__file__).resolve().parent / "book_values"
GLUE_CALL = re.compile(r"\bglue\(")


def computation(notebook: dict) -> str:
    """The hash of what the glued values depend on in the notebook: the source of every code cell up
    to the last that calls ``glue`` (the exercises after it do not change them)."""
    code = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in notebook["cells"] if c["cell_type"] == "code"]  # fmt: skip
    last = max((i for i, src in enumerate(code) if GLUE_CALL.search(src)), default=-1)
    return hashlib.sha256(json.dumps(code[: last + 1]).encode()).hexdigest()


def from_build(executed: Path, source: Path) -> dict[str, dict]:
    """{glue name: mime bundle} from the book build's store beside ``executed``, the build's copy of
    ``source`` (empty if none, or if the build ran other code than ``source``'s now)."""
    store = executed.with_name(executed.stem + ".glue.json")
    if not store.is_file() or computation(read(executed)) != computation(read(source)):
        return {}
    return {name: out.get("data", {}) for name, out in json.loads(store.read_text(encoding="utf-8")).items()}


def glued_in(notebook) -> dict[str, dict]:
    """{glue name: mime bundle} of an executed notebook's outputs (myst-nb's ``scrapbook`` marks)."""
    found = {}
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []) if cell.get("cell_type") == "code" else ():
            mark = (output.get("metadata") or {}).get("scrapbook")
            if mark and "name" in mark:
                prefix = len(mark.get("mime_prefix", ""))
                found[mark["name"]] = {k[prefix:]: v for k, v in output.get("data", {}).items()}
    return found


def from_cache(cache: Path, source: Path) -> dict[str, dict]:
    """{glue name: mime bundle} of the cached run of ``source``'s current code (empty if none)."""
    if not (cache / "global.db").is_file():
        return {}
    from jupyter_cache import get_cache
    from jupyter_cache.base import CachingError

    from tools.book.solutions_switch import as_the_book_reads

    nb = nbformat.reads(as_the_book_reads(source.read_text(encoding="utf-8")), as_version=4)
    try:
        jupyter_cache = get_cache(str(cache))
        bundle = jupyter_cache.get_cache_bundle(jupyter_cache.match_cache_notebook(nb).pk)
    except (KeyError, CachingError, OSError):
        return {}
    return glued_in(bundle.nb)


def stored_path(chapter: str) -> Path:
    return STORE / f"{chapter}.json"


def from_store(source: Path) -> dict[str, dict]:
    """{glue name: {"text/plain": ...}} stored for ``source``, if stored from its current code."""
    path = stored_path(source.stem)
    if not path.is_file():
        return {}
    stored = json.loads(path.read_text(encoding="utf-8"))
    if stored.get("computation") != computation(read(source)):
        return {}
    return {name: {"text/plain": text} for name, text in stored["values"].items()}


def book_values(source: Path, executed_dir: Path | None = EXECUTED, cache: Path | None = CACHE,
                root: Path = ROOT) -> tuple[dict[str, dict], str]:  # fmt: skip
    """(``{glue name: mime bundle}``, where they came from) for the chapter notebook ``source``: the
    book build's, else the execution cache's, else the stored ones (see the module's docstring);
    ``({}, "")`` where none holds a run of its current code."""
    rel = Path(*Path(source).absolute().parts[len(Path(root).absolute().parts) :])
    if executed_dir is not None and (found := from_build(executed_dir / rel, Path(source))):
        return found, "the book build"
    if cache is not None and (found := from_cache(Path(cache), Path(source))):
        return found, "the book's execution cache"
    if found := from_store(Path(source)):
        return found, f"the values stored in book_values/{stored_path(Path(source).stem).name}"
    return {}, ""


def store(source: Path, glued: dict[str, dict], origin: str) -> Path:
    """Store the values ``glued`` (text only) of the chapter ``source`` with its computation's hash."""
    values = {name: "".join(b["text/plain"]) for name, b in glued.items()
              if "text/plain" in b and not any(k.startswith("image/") for k in b)}  # fmt: skip
    path = stored_path(source.stem)
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"chapter": source.stem, "computation": computation(read(source)), "from": origin,
              "values": dict(sorted(values.items()))}  # fmt: skip
    path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def run(source: Path, timeout: int = 900) -> dict[str, dict]:
    """{glue name: mime bundle} of a fresh run of ``source``'s cells up to the last that glues (the
    exercises after it change no value), in a kernel as ``make test`` runs a chapter (strict claims)."""
    import os

    from nbclient import NotebookClient

    from tools.book.solutions_switch import as_the_book_reads

    nb = nbformat.reads(as_the_book_reads(source.read_text(encoding="utf-8")), as_version=4)
    glues = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and GLUE_CALL.search(c.source)]
    nb.cells = [c for c in nb.cells[: glues[-1] + 1] if c.cell_type == "code"] if glues else []
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "code"),
        "SEQLAB_STRICT_CLAIMS": "1",
        "SEQLAB_PROGRESS": "0",
    }
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(source.parent)}})  # fmt: skip
    client.execute(env=env)
    return glued_in(nb)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    names = [nb.stem for nb in chapters()]
    parser.add_argument("chapters", nargs="*", choices=[[], *names], help="default: every chapter")
    parser.add_argument("--build", type=Path, default=EXECUTED, help="a book build's jupyter_execute")
    parser.add_argument("--cache", type=Path, default=CACHE, help="the book's execution cache")
    parser.add_argument("--run", action="store_true",
                        help="without a build or a cached run of a chapter's current code, run "
                        "its cells up to the last that glues, as make test does; store them")  # fmt: skip
    args = parser.parse_args(argv)
    missing = []
    for notebook in (nb for nb in chapters() if not args.chapters or nb.stem in args.chapters):
        rel = notebook.relative_to(ROOT)
        if found := from_build(args.build / rel, notebook):
            origin = "the book build"
        elif found := from_cache(args.cache, notebook):
            origin = "make test's run (the book's execution cache)"
        elif args.run:
            found, origin = run(notebook), "python -m tools.handout.book_values --run"
        else:
            missing.append(notebook.stem)
            continue
        print(f"{notebook.stem}: {len(found)} values from {origin} -> {store(notebook, found, origin)}")
    if missing:
        print(f"no run of the current code of {', '.join(missing)} (make book or make test first)")
    return 1 if missing and args.chapters else 0


if __name__ == "__main__":
    sys.exit(main())
