"""Build one chapter's page (with the intro and references) into _build/page/<chapter>/html.

python -m tools.book.page lstm [more chapters]      (or: make page CHAPTER=lstm)
"""

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tools.course import ROOT, chapters


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("chapters", nargs="+", choices=[p.stem for p in chapters()], help="e.g. lstm")
    args = ap.parse_args(argv)
    out = ROOT / "_build" / "page" / "-".join(args.chapters)
    with tempfile.TemporaryDirectory(prefix="seqlab-page-") as tmp:
        book = Path(tmp)
        for item in ("_config.yml", "references.bib", "intro.md", "code"):  # what every page needs
            (book / item).symlink_to(ROOT / item)
        (book / "chapters").mkdir()
        for path in (ROOT / "chapters").iterdir():
            if path.suffix != ".ipynb" or path.stem in args.chapters:
                (book / "chapters" / path.name).symlink_to(path)
        files = "".join(f"  - file: chapters/{name}\n" for name in args.chapters)
        (book / "_toc.yml").write_text(
            f"format: jb-book\nroot: intro\nchapters:\n{files}  - file: chapters/references\n"
        )
        jb = Path(sys.executable).parent / "jupyter-book"
        done = subprocess.run([str(jb), "build", str(book), "--all", "--keep-going"])
        shutil.rmtree(out, ignore_errors=True)
        for part in ("html", "jupyter_execute"):  # the pages; the executed notebooks and glued values
            if (book / "_build" / part).exists():
                shutil.copytree(book / "_build" / part, out / part)
    if (out / "html").exists():
        print(f"\npage built: {out / 'html' / 'chapters'}")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
