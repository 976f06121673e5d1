"""The course on a GPU: the package's unit tests on CUDA, then every chapter executed with
``SEQLAB_DEVICE=cuda`` and again on the CPU, one table of cells run, claims and seconds
(``make gpu-check``; docs/contributors.md, "On a GPU").

    python -m tools.reports.gpu_check [--device cuda] [--compare cpu] [--chapters stem ...]

Written for a GPU machine that has PyTorch (CUDA build), numpy, matplotlib, tqdm, pytest,
pytest-xdist and hypothesis, and no network: it needs neither Jupyter nor the book's packages. A
chapter runs in a fresh interpreter, its code cells in order in one namespace, as a kernel runs
them (``myst_nb.glue`` records, IPython's ``display`` draws nothing where IPython is missing); its
claims are logged (``SEQLAB_CLAIMS_LOG``), not raised, so one missed bar does not hide the rest.
``--jobs`` chapters run at a time, on either device, each with ``--threads`` CPU threads (and the
unit tests beside them), so the seconds are those of a shared machine.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import traceback
import types
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
# the unit tests of the package: those that import seqlab and none of the course's tools (which need
# Jupyter, otter, git or a browser, and run them in subprocesses)
SEQLAB = re.compile(r"^\s*(from|import)\s+seqlab\b", re.M)
TOOLS = re.compile(r"^\s*(from|import)\s+(tools|otter|nbformat|nbclient|playwright|yaml|subprocess)\b", re.M)


def chapter_paths(root: Path = ROOT) -> list[Path]:
    """The chapter notebooks in the order of ``_toc.yml``."""
    toc = (root / "_toc.yml").read_text(encoding="utf-8")
    docs = re.findall(r"^[ \t-]*file:\s*(chapters/\S+)", toc, re.M)
    return [root / f"{doc}.ipynb" for doc in docs if (root / f"{doc}.ipynb").is_file()]


def package_tests(root: Path = ROOT) -> list[Path]:
    """The test files that import seqlab and no course tool: the package's own unit tests."""
    texts = {f: f.read_text(encoding="utf-8") for f in sorted((root / "tests").glob("test_*.py"))}
    return [f for f, text in texts.items() if SEQLAB.search(text) and not TOOLS.search(text)]


def _stub_modules(glued: dict) -> None:
    """``myst_nb.glue`` that records; ``IPython.display`` stand-ins where IPython is missing."""
    myst_nb = types.ModuleType("myst_nb")
    myst_nb.glue = lambda name, value, display=True: glued.__setitem__(name, value)
    sys.modules["myst_nb"] = myst_nb
    try:
        import IPython.display  # noqa: F401
    except ImportError:
        ipython = types.ModuleType("IPython")
        display = types.ModuleType("IPython.display")
        display.display = lambda *objects, **kwargs: None
        display.Markdown = display.HTML = lambda data=None, **kwargs: data
        ipython.get_ipython = lambda: None
        ipython.version_info = (9, 0)  # matplotlib asks; a current IPython needs none of its patches
        ipython.display = display
        sys.modules |= {"IPython": ipython, "IPython.display": display}


def run_chapter(notebook: Path) -> dict:
    """Execute ``notebook``'s code cells in order in this interpreter, in its folder; stops at the
    first cell that raises. Returns the cells run, the cells in all, the seconds and the error."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    glued: dict = {}
    _stub_modules(glued)
    cells = [c for c in json.loads(notebook.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
    os.chdir(notebook.parent)
    namespace = {"__name__": "__main__", "display": lambda *objects, **kwargs: None}
    ran, error, start = 0, None, time.perf_counter()
    for index, cell in enumerate(cells):
        source = "".join(cell["source"])
        try:
            exec(compile(source, f"{notebook.name}, code cell {index}", "exec"), namespace)
        except BaseException as exc:  # a cell failed: report it, run no further (as a kernel would)
            last = traceback.extract_tb(exc.__traceback__)[-1]
            error = f"code cell {index} ({last.filename}:{last.lineno}): {type(exc).__name__}: {exc}"
            break
        ran += 1
        plt.close("all")
    return {"cells": len(cells), "ran": ran, "seconds": time.perf_counter() - start, "error": error,
            "glued": len(glued)}  # fmt: skip


def execute(notebook: Path, device: str, threads: int, timeout: float = 600) -> dict:
    """``run_chapter`` in a fresh interpreter with ``SEQLAB_DEVICE=device``, stopped after
    ``timeout`` seconds; adds its claims, and prints a line when it is done."""
    with tempfile.TemporaryDirectory() as tmp:
        log, result = Path(tmp) / "claims.jsonl", Path(tmp) / "result.json"
        path = os.pathsep.join(
            [str(ROOT / "code" / "src"), str(ROOT / "code"), os.environ.get("PYTHONPATH", "")]
        )
        env = os.environ | {"SEQLAB_DEVICE": device, "SEQLAB_CLAIMS_LOG": str(log), "SEQLAB_PROGRESS": "0"}
        env |= {"MPLBACKEND": "Agg", "PYTHONPATH": path}
        env.pop("SEQLAB_STRICT_CLAIMS", None)
        # several chapters share the machine: a fixed number of threads each, sleeping while they wait
        env |= {
            "OMP_NUM_THREADS": str(threads),
            "MKL_NUM_THREADS": str(threads),
            "OMP_WAIT_POLICY": "PASSIVE",
        }
        command = [sys.executable, "-m", "tools.reports.gpu_check", "--run-one", str(notebook),
                   "--result", str(result)]  # fmt: skip
        try:
            done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            failure = f"exit {done.returncode}: {' | '.join(tail)}"
        except subprocess.TimeoutExpired:
            failure = f"stopped after {timeout:g} s"
        # no result: the interpreter died (a crash in a kernel, out of memory) or was stopped
        out = json.loads(result.read_text()) if result.exists() else \
            {"cells": 0, "ran": 0, "seconds": 0.0, "error": failure, "glued": 0}  # fmt: skip
        out["claims"] = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    print(f"  {notebook.stem} on {device}: {out['ran']}/{out['cells']} cells, {out['seconds']:.1f} s, "
          f"{sum(c['held'] for c in out['claims'])}/{len(out['claims'])} claims held"
          + (f"; {out['error']}" if out["error"] else ""), flush=True)  # fmt: skip
    return out | {"chapter": notebook.stem, "device": device}


def run_tests(device: str, jobs: int) -> tuple[int, str]:
    """The package's unit tests with ``SEQLAB_DEVICE=device``; pytest's exit code and last line."""
    path = os.pathsep.join([str(ROOT / "code" / "src"), os.environ.get("PYTHONPATH", "")])
    env = os.environ | {"SEQLAB_DEVICE": device, "PYTHONPATH": path, "OMP_NUM_THREADS": "1"}
    files = [str(f.relative_to(ROOT)) for f in package_tests()]
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
               "-n", str(jobs), "--rootdir", "tests", *files]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    lines = [ln for ln in done.stdout.splitlines() if ln.strip()]
    failures = [ln for ln in lines if ln.startswith(("FAILED", "ERROR"))]
    return done.returncode, "\n".join([*failures, lines[-1] if lines else done.stderr.strip()[-500:]])


def report(results: list[dict], devices: list[str]) -> tuple[str, bool]:
    """Two Markdown tables (chapters; claims), and whether every chapter ran and every claim held."""
    by = {(r["chapter"], r["device"]): r for r in results}
    stems = list(dict.fromkeys(r["chapter"] for r in results))
    head = " | ".join(f"{d}: cells run | {d}: claims held | {d}: seconds" for d in devices)
    lines = [f"| chapter | {head} |", "|---" * (1 + 3 * len(devices)) + "|"]
    ok = True
    for stem in stems:
        row = []
        for d in devices:
            r = by[(stem, d)]
            held = sum(c["held"] for c in r["claims"])
            ok &= r["error"] is None and held == len(r["claims"])
            row.append(f"{r['ran']}/{r['cells']} | {held}/{len(r['claims'])} | {r['seconds']:.1f}")
        lines.append(f"| {stem} | {' | '.join(row)} |")
    totals = " | ".join(f" | | {sum(by[(s, d)]['seconds'] for s in stems):.1f}" for d in devices)
    lines += [f"| all |{totals} |", ""]
    lines += [f"| chapter | claim | bar | {' | '.join(devices)} |", "|---" * (3 + len(devices)) + "|"]
    for stem in stems:
        claims = {d: {c["name"]: c for c in by[(stem, d)]["claims"]} for d in devices}
        for name in dict.fromkeys(n for d in devices for n in claims[d]):
            first = next(claims[d][name] for d in devices if name in claims[d])
            values = [_value(claims[d].get(name)) for d in devices]
            lines.append(f"| {stem} | {name} | {first['op']} {first['bar']:g} | {' | '.join(values)} |")
    errors = [f"{r['chapter']} on {r['device']}: {r['error']}" for r in results if r["error"]]
    if errors:
        lines += ["", "errors:", *(f"  {e}" for e in errors)]
    return "\n".join(lines), ok


def _value(claim: dict | None) -> str:
    if claim is None:
        return "not reached"
    return f"{claim['value']:.4g}" + ("" if claim["held"] else " (missed)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda", help="the device under test (default cuda)")
    parser.add_argument("--compare", default="cpu", help="the device to compare with ('' for none)")
    parser.add_argument("--chapters", nargs="*", help="chapter stems (default: all)")
    parser.add_argument("--no-tests", action="store_true", help="skip the unit tests")
    parser.add_argument("--jobs", type=int, default=6, help="chapters run at a time")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads of each chapter")
    parser.add_argument("--timeout", type=float, default=600, help="seconds a chapter may run")
    parser.add_argument("--out", type=Path, help="also write the report to this file")
    parser.add_argument("--run-one", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run_one:
        args.result.write_text(json.dumps(run_chapter(args.run_one.resolve())))
        return 0

    import torch

    devices = [args.device, *([args.compare] if args.compare else [])]
    name = torch.cuda.get_device_name() if torch.cuda.is_available() else "no CUDA device"
    print(f"# gpu-check {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: torch {torch.__version__}, "
          f"{name}, {os.cpu_count()} CPU cores; devices {', '.join(devices)}", flush=True)  # fmt: skip
    notebooks = [nb for nb in chapter_paths() if not args.chapters or nb.stem in args.chapters]
    start = time.perf_counter()
    with ThreadPoolExecutor(1) as tests_pool, ThreadPoolExecutor(args.jobs) as pool:
        tests = None if args.no_tests else tests_pool.submit(run_tests, args.device, 4)
        runs = [(nb, device) for device in devices for nb in notebooks]
        results = list(pool.map(lambda run: execute(*run, args.threads, args.timeout), runs))
        text, ok = report(results, devices)
        text += f"\n\n{args.jobs} chapters at a time, {args.threads} threads each"
        if tests is not None:
            code, summary = tests.result()
            ok &= code == 0
            text = f"unit tests on {args.device} ({len(package_tests())} files): {summary}\n\n{text}"
    text += f"\n\nwall time {time.perf_counter() - start:.0f} s"
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
