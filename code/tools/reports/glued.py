"""The numbers a built book states: every glued value on every chapter page, in page order.

    python -m tools.reports.glued [_build/html]                  one "chapter: value (context)" line each
    python -m tools.reports.glued BUILD_A --compare BUILD_B      the values that differ between two builds

Comparing a build on an idle machine with one on a loaded machine shows whether anything but
wall-clock times depends on the load (each value is printed with the words before it).
"""

import argparse
import html
import re
import sys
from pathlib import Path

PASTED = re.compile(r'<span class="pasted-text">(.*?)</span>', re.S)
TAG = re.compile(r"<[^>]+>")
# words that, shortly before a value, say it is a wall-clock measurement or a ratio of two: a time,
# how much longer something took, what a core speeds up, the exponent k of a time that grows as T^k
TIMING = re.compile(
    r"\b(ms|s|seconds?|wall|time|times differ|per step|tokens per second|faster|slower"
    r"|took|as long|speeds?|k \\approx)\b",
    re.I,
)


def glued(site: Path) -> dict[str, list[tuple[str, str]]]:
    """{chapter: [(value, the 80 characters of page text before it)]} in page order."""
    found = {}
    for page in sorted((site / "chapters").glob("*.html")):
        text = page.read_text(encoding="utf-8")
        values = []
        for match in PASTED.finditer(text):
            before = html.unescape(TAG.sub("", text[max(0, match.start() - 600) : match.start()]))
            values.append((html.unescape(TAG.sub("", match.group(1))), " ".join(before.split())[-80:]))
        if values:
            found[page.stem] = values
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("site", nargs="?", default="_build/html", type=Path)
    ap.add_argument("--compare", type=Path, help="another built site to compare with")
    args = ap.parse_args(argv)
    if not (a := glued(args.site)):
        sys.exit(f"no glued values under {args.site}/chapters: build the book first")
    if args.compare is None:
        for chapter, values in a.items():
            for value, before in values:
                print(f"{chapter}: {value}    ({before[-50:]})")
        return 0
    b = glued(args.compare)
    timing, other = [], []
    for chapter in sorted(set(a) | set(b)):
        va, vb = a.get(chapter, []), b.get(chapter, [])
        if len(va) != len(vb):
            other.append(f"{chapter}: {len(va)} vs {len(vb)} glued values")
            continue
        for (x, before), (y, _) in zip(va, vb):
            if x != y:
                line = f"{chapter}: {x!r} vs {y!r}    (...{before[-60:]})"
                (timing if TIMING.search(before[-40:] + " " + x) else other).append(line)
    total = sum(len(v) for v in a.values())
    print(f"{total} glued values; {len(other)} differ outside timings, {len(timing)} timings differ")
    for kind, lines in (("DIFFERS", other), ("timing ", timing)):
        print("".join(f"  {kind} {line}\n" for line in lines), end="")
    return 1 if other else 0


if __name__ == "__main__":
    sys.exit(main())
