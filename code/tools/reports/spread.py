"""Store a chapter's spread over seeds and CPU kernels with the package, for its page to show:
``python -m tools.reports.spread CHAPTER`` reads the claims that ``make robustness CHAPTERS=CHAPTER``
logged under ``_build/robustness/`` (``CHAPTER-seed<s>-<kernel>-<content>.claims``: the newest
version of the chapter's content, every seed and kernel run for it) and writes
``code/src/seqlab/spread/CHAPTER.json``: per claim, its value in every run, and the min, median and
max (``seqlab.claims.stored_spread`` reads it). The logs are read, not the cached results, so that a
chapter's first grid counts although its page, which shows the stored spread, could not finish
before the spread was stored."""

import argparse
import json
import statistics
import sys
from pathlib import Path

from tools.course import ROOT
from tools.reports.robustness import OUT

STORE = ROOT / "code" / "src" / "seqlab" / "spread"


def collect(chapter: str, results: Path = OUT) -> dict:
    """The spread of ``chapter``'s claims over the newest content's runs under ``results``."""
    files = sorted(results.glob(f"{chapter}-seed*-*.claims"), key=lambda p: p.stat().st_mtime)
    if not files:
        raise ValueError(f"no robustness results for {chapter!r} under {results}: run make robustness first")
    key = files[-1].stem.rsplit("-", 1)[1]  # the content hash of the newest run
    runs = []
    for path in files:
        _, seed, kernel, content = path.stem.rsplit("-", 3)
        if content == key:
            claims = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
            runs.append({"seed": int(seed.removeprefix("seed")), "kernel": kernel, "claims": claims})
    values: dict[str, list[float]] = {}
    for run in sorted(runs, key=lambda r: (r["seed"], r["kernel"])):
        for claim in run["claims"]:
            values.setdefault(claim["name"], []).append(claim["value"])
    rows = [
        {
            "name": name,
            "runs": len(v),
            "min": min(v),
            "median": statistics.median(v),
            "max": max(v),
            "values": v,
        }
        for name, v in values.items()
    ]
    return {
        "chapter": chapter,
        "seeds": sorted({r["seed"] for r in runs}),
        "kernels": sorted({r["kernel"] for r in runs}),
        "rows": rows,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapter")
    args = parser.parse_args()
    spread = collect(args.chapter)
    STORE.mkdir(parents=True, exist_ok=True)
    target = STORE / f"{args.chapter}.json"
    target.write_text(json.dumps(spread, indent=1) + "\n")
    print(
        f"wrote {target}: {len(spread['rows'])} values, seeds {spread['seeds']}, kernels {spread['kernels']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
