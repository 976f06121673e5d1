"""How far each claim of the book sits from its bar, over seeds and CPU kernels: ``make robustness``
(docs/contributors.md, "The same claims on every machine"). Results are kept per (chapter's content,
seed, kernel) under ``_build/robustness/``, so a rerun executes only what is missing."""

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tools.course import ROOT, chapters, execute

OUT = ROOT / "_build" / "robustness"
# each chapter's grid, kept with the package so that a page can show it (seqlab.claims.grid)
GRIDS = ROOT / "code" / "src" / "seqlab" / "grids"


def kernels() -> list[str]:
    """The ATEN_CPU_CAPABILITY values this CPU can run, plainest first."""
    probe = "import torch; print(torch.backends.cpu.get_cpu_capability())"
    env = {k: v for k, v in os.environ.items() if k != "ATEN_CPU_CAPABILITY"}
    best = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    best, levels = best.stdout.strip().lower(), ["default", "avx2", "avx512"]
    return levels[: levels.index(best) + 1] if best in levels else ["default"]


def run_one(notebook: Path, seed: int, kernel: str, threads: int) -> dict:
    """Execute one chapter with a seed offset and a kernel; its claims, time and any error."""
    sources = [notebook, *sorted((ROOT / "code" / "src" / "seqlab").rglob("*.py"))]
    key = hashlib.sha256(b"".join(p.read_bytes() for p in sources)).hexdigest()[:12]
    cached = OUT / f"{notebook.stem}-seed{seed}-{kernel}-{key}.json"
    if cached.exists():
        return json.loads(cached.read_text())
    log = cached.with_suffix(".claims")
    log.unlink(missing_ok=True)
    # OMP_WAIT_POLICY: the same results; threads sleep, not spin, beside other jobs
    env = os.environ | {"ATEN_CPU_CAPABILITY": kernel, "SEQLAB_SEED_OFFSET": str(seed),
                        "SEQLAB_CLAIMS_LOG": str(log), "SEQLAB_PROGRESS": "0",
                        "OMP_NUM_THREADS": str(threads), "OMP_WAIT_POLICY": "PASSIVE"}  # fmt: skip
    env.pop("SEQLAB_STRICT_CLAIMS", None)
    start, error = time.perf_counter(), None
    try:
        execute(notebook, timeout=1800, env=env)
    except Exception as exc:  # a cell failed: the claims logged so far still count
        error = f"{getattr(exc, 'ename', type(exc).__name__)}: {getattr(exc, 'evalue', exc)}"
    seconds = time.perf_counter() - start
    claims = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    result = {"chapter": notebook.stem, "seed": seed, "kernel": kernel, "seconds": round(seconds, 1),
              "claims": claims, "error": error}  # fmt: skip
    if error is None:
        cached.write_text(json.dumps(result))
    return result


def report(results: list[dict]) -> tuple[str, bool]:
    """A Markdown table, one row per claim; and whether every claim held in every run."""
    rows: dict[tuple[str, str], list[dict]] = {}
    for result in results:
        for claim in result["claims"]:
            rows.setdefault((result["chapter"], claim["name"]), []).append(claim)
    lines = [
        "| chapter | claim | bar | n held out | runs | min | median | max | worst margin |",
        "|---" * 9 + "|",
    ]
    all_held = True
    for (chapter, name), claims in rows.items():
        values = [c["value"] for c in claims]
        bar, op = claims[0]["bar"], claims[0]["op"]
        worst = min(values) if op == ">=" else max(values)
        margin = worst - bar if op == ">=" else bar - worst
        all_held &= all(c["held"] for c in claims)
        n = claims[0].get("n") or "-"
        lines.append(
            f"| {chapter} | {name} | {op} {bar:g} | {n} | {len(values)} | {min(values):.4g} | "
            f"{statistics.median(values):.4g} | {max(values):.4g} | {margin:+.4g} |"
        )
    errors = [r for r in results if r["error"]]
    lines += [f"\n{r['chapter']} (seed {r['seed']}, {r['kernel']}) failed: {r['error']}" for r in errors]
    return "\n".join(lines), all_held and not errors


def grid_record(results: list[dict], chapter: str) -> dict | None:
    """One chapter's grid as it is stored with the package: every run's seed, kernel, the claims it
    logged (name, value, bar, op, n) and its error (None, or the failed cell's error: such a run
    holds the claims logged before it); None if the chapter has no run."""
    runs = [r for r in results if r["chapter"] == chapter]
    if not runs:
        return None
    keep = ("name", "value", "bar", "op", "n")
    return {
        "chapter": chapter,
        "seeds": sorted({r["seed"] for r in runs}),
        "kernels": [k for k in ("default", "avx2", "avx512") if any(r["kernel"] == k for r in runs)],
        "runs": [
            {
                "seed": r["seed"],
                "kernel": r["kernel"],
                "claims": [{k: c[k] for k in keep} for c in r["claims"]],
                "error": r["error"],
            }
            for r in sorted(runs, key=lambda r: (r["seed"], r["kernel"]))
        ],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chapters", nargs="*", help="chapter names (default: every chapter)")
    parser.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2], help="seed offsets")
    parser.add_argument("--second-kernel", action="store_true", help="print the kernel below the best; exit")
    args, offered = parser.parse_args(), kernels()
    if args.second_kernel:  # what `make test` runs the thinnest chapters under, a second time
        print(offered[-2] if len(offered) > 1 else "default")
        return 0
    notebooks = [nb for nb in chapters() if not args.chapters or nb.stem in args.chapters]
    # seed by seed, so that an interrupted run has covered every chapter and kernel
    grid = [(nb, s, k) for s in args.seeds for nb in notebooks for k in offered]
    jobs = max(1, (os.cpu_count() or 2) // 2)
    threads = max(1, (os.cpu_count() or 2) // jobs)
    OUT.mkdir(parents=True, exist_ok=True)
    print(f"{len(grid)} executions, {jobs} at a time, {threads} threads each", flush=True)

    def one(job):
        result = run_one(*job, threads)
        status = result["error"] or "ok"
        print(f"  {job[0].stem} seed {job[1]} {job[2]}: {result['seconds']} s, {status}", flush=True)
        return result

    with ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(one, grid))
    table, ok = report(results)
    (OUT / "report.md").write_text(table + "\n")
    GRIDS.mkdir(exist_ok=True)
    for notebook in notebooks:
        if record := grid_record(results, notebook.stem):
            (GRIDS / f"{notebook.stem}.json").write_text(json.dumps(record, indent=1) + "\n")
    print(table)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
