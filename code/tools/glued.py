"""The numbers a built book states: every glued value of every executed chapter.

    python code/tools/glued.py [_build]                  one "chapter name value" line each
    python code/tools/glued.py BUILD_A --compare BUILD_B the values that differ between two builds

A chapter's prose takes its numbers from ``glue`` (myst-nb); the executed notebooks the build
keeps (``_build/jupyter_execute/chapters/*.ipynb``) hold each glued value. Comparing two builds,
say one made on an idle machine and one made while another process kept a core busy, shows
whether anything but wall-clock measurements depends on the machine's load: names that measure
time (``seconds``, ``ms``, ``time``, ``speed``, ``per_s``...) are listed apart.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

TIMING = re.compile(r"(second|_ms|ms_|time|speed|per_s|tok_s|tokens_per|throughput|wall|_s$|ratio)", re.I)


def glued(build: Path) -> dict[tuple[str, str], str]:
    """{(chapter, glue name): value as text} from the executed notebooks under ``build``."""
    found = {}
    for path in sorted((build / "jupyter_execute" / "chapters").glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            for out in cell.get("outputs", []):
                name = (out.get("metadata") or {}).get("scrapbook", {}).get("name")
                if name:
                    text = out.get("data", {}).get("text/plain", "")
                    found[(path.stem, name)] = "".join(text) if isinstance(text, list) else text
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build", nargs="?", default="_build", type=Path)
    ap.add_argument("--compare", type=Path, help="another build folder to compare with")
    args = ap.parse_args(argv)
    a = glued(args.build)
    if not a:
        sys.exit(f"no glued values under {args.build}/jupyter_execute/chapters: build the book first")
    if args.compare is None:
        for (chapter, name), value in a.items():
            print(chapter, name, value[:80])
        return 0
    b = glued(args.compare)
    timing_diffs, other_diffs = [], []
    for key in sorted(set(a) | set(b)):
        if a.get(key) != b.get(key):
            (timing_diffs if TIMING.search(key[1]) else other_diffs).append(key)
    print(
        f"{len(a)} and {len(b)} glued values; {len(other_diffs)} differ (timings aside), "
        f"{len(timing_diffs)} timings differ"
    )
    for chapter, name in other_diffs:
        print(f"  DIFFERS {chapter} {name}: {a.get((chapter, name))!r} vs {b.get((chapter, name))!r}")
    for chapter, name in timing_diffs:
        print(f"  timing  {chapter} {name}: {a.get((chapter, name))!r} vs {b.get((chapter, name))!r}")
    return 1 if other_diffs else 0


if __name__ == "__main__":
    sys.exit(main())
