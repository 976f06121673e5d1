"""Scan a built site for what students must not get: hidden tests always, solutions on request.

    python -m tools.checks.leak_check _build/html [--no-solutions]

Every file is read as text and searched for otter's hidden-test marker and each distinctive line of
a hidden test, in a hidden test cell or in the chapter's ``seqlab_hidden`` module (and, with
``--no-solutions``, of a solution). A solution line the package ``seqlab`` also holds (a page may
``literalinclude`` it) leaks only when the page shows half or more of the solution's distinctive
lines.
"""

import argparse
import contextlib
import html
import json
import re
import sys
from pathlib import Path

from tools.course import ROOT, read
from tools.otter_format import HIDDEN_MARK, SOLUTION, answers, is_hidden_test

HIDDEN_MODULES = ROOT / "code" / "tools" / "grading" / "seqlab_hidden"
MIN_LEN = 20  # shorter lines ("return x", "...") prove nothing
# a line that opens or closes a bracket is layout, which otter's reformatting of tests changes
FRAGMENT = re.compile(r"[(\[{,]$|^[)\]}]")


def squash(text: str) -> str:
    return " ".join(text.split())


def package_lines(package: Path = ROOT / "code" / "src" / "seqlab") -> set[str]:
    """Every line of the package's source, squashed: what a page may show with literalinclude."""
    lines = (x for p in sorted(package.rglob("*.py")) for x in p.read_text(encoding="utf-8").splitlines())
    return {squash(x) for x in lines}


def needles(notebooks: list[Path]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(where, line) for each distinctive line of a hidden test, and of a solution."""
    hidden, solutions, public = [], [], set()
    for path in notebooks:
        for i, cell in enumerate(read(path).cells):
            src = cell.source
            where = f"{path.name} cell {i}"
            if cell["cell_type"] == "code" and is_hidden_test(cell):
                hidden += [(where, squash(x)) for x in HIDDEN_MARK.sub("", src).splitlines()]
                continue
            for block in answers(src):
                solutions += [(where, squash(x)) for x in block.splitlines()]
            public.update(squash(x) for x in SOLUTION.sub("", src).splitlines())
        # the chapter's hidden cases declared as code (docs/contributors.md, "Exercises as code")
        module = HIDDEN_MODULES / f"{path.stem}.py"
        if module.is_file():
            lines = module.read_text(encoding="utf-8").splitlines()
            hidden += [
                (module.name, squash(x))
                for x in lines
                if not x.lstrip().startswith(("#", "from ", "import "))
            ]

    shown = "\n".join(public)  # a line inside a longer public line is not distinctive either

    def distinctive(items):
        return [(where, x) for where, x in items if len(x) >= MIN_LEN and x not in shown
                and "TEST CONFIG" not in x and not FRAGMENT.search(x)]  # fmt: skip

    return distinctive(hidden), distinctive(solutions)


def built_text(path: Path) -> str | None:
    """The readable text of a built file; None for a binary one."""
    data = path.read_bytes()
    if b"\0" in data[:2048]:
        return None
    text = data.decode("utf-8", errors="replace")
    if path.suffix in (".html", ".htm"):
        return html.unescape(re.sub(r"<[^>]+>", "", text))
    if path.suffix in (".ipynb", ".json"):  # the strings, unescaped (or, if it is no JSON, the text)
        with contextlib.suppress(ValueError):
            return "\n".join(_strings(json.loads(text)))
    return text


def _strings(x) -> list[str]:
    if isinstance(x, (list, dict)):
        return [s for item in (x.values() if isinstance(x, dict) else x) for s in _strings(item)]
    return [x] if isinstance(x, str) else []


def leaked_solutions(flat: str, solution_lines: list[tuple[str, str]], shared: set[str]) -> set[str]:
    """The solutions (by ``where``) that the squashed text ``flat`` shows: a line of one that is not
    ``shared`` package code, or shared lines making up half or more of its distinctive lines."""
    by_solution: dict[str, list[str]] = {}
    for where, line in solution_lines:
        by_solution.setdefault(where, []).append(line)
    leaked = set()
    for where, lines in by_solution.items():
        shown = [x for x in lines if x in flat]
        if any(x not in shared for x in shown) or (shown and 2 * len(shown) >= len(lines)):
            leaked.add(where)
    return leaked


def scan(site: Path, notebooks: list[Path], solutions: bool = False) -> dict:
    """{file under ``site``: what it leaks}."""
    (hidden, solution_lines), shared = needles(notebooks), package_lines()
    leaks: dict[str, list[str]] = {}
    for path in sorted(p for p in site.rglob("*") if p.is_file()):
        text = built_text(path)
        if text is None:
            continue
        flat = squash(text)
        found = ["hidden-test marker"] if HIDDEN_MARK.search(text) else []
        found += sorted({f"hidden test ({where})" for where, line in hidden if line in flat})
        if solutions:
            found += sorted(f"solution ({where})" for where in leaked_solutions(flat, solution_lines, shared))
        if found:
            leaks[path.relative_to(site).as_posix()] = found
    return leaks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, nargs="?", default=ROOT / "_build" / "html")
    parser.add_argument("--no-solutions", action="store_true", help="solution lines are leaks too")
    args = parser.parse_args(argv)
    if not args.site.is_dir():
        parser.error(f"no built site at {args.site}: build the book first (make book)")
    notebooks = sorted((ROOT / "chapters").glob("*.ipynb"))
    hidden, solution_lines = needles(notebooks)
    leaks = scan(args.site, notebooks, solutions=args.no_solutions)
    what = "hidden tests" + (" and solutions" if args.no_solutions else "")
    print(f"leak check of {args.site}: {len(hidden)} hidden-test lines"
          + (f", {len(solution_lines)} solution lines" if args.no_solutions else "")
          + f" from {len(notebooks)} notebooks")  # fmt: skip
    for rel, found in leaks.items():
        print(f"  LEAK {rel}: {', '.join(found[:5])}{' ...' if len(found) > 5 else ''}")
    print(f"{len(leaks)} built files with {what}" if leaks else f"no built file holds {what}")
    return 1 if leaks else 0


if __name__ == "__main__":
    sys.exit(main())
