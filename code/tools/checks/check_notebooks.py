"""Open every student notebook in JupyterLab, in a real browser, as a student does (make check-notebooks).

    python -m tools.checks.check_notebooks [--only NAME ...]

The student notebooks (those the book serves from ``_build/html/_sources/chapters`` when built,
else ``student.student_notebook``), the first question's stub filled with its reference solution,
are copied outside the repository. JupyterLab serves them on 127.0.0.1 from a venv holding only
what a student installs (the ``seqlab`` wheel, otter-grader, JupyterLab with ipywidgets, myst-nb;
made once under ``VENVS``), and Playwright, driving Debian's Chromium, opens each, runs all cells
from the menu and saves it. Per notebook it asserts: no error output, no MyST syntax in the
rendered Markdown, every image loaded, a progress-bar widget seen during training, the filled
answer's ``grader.check`` passing, every figure of the text drawn and every glued value printed
("name = value") by the student's run, no link text with markup, and a figure link that brings
its figure into view. It prints one line per notebook and exits 1 on any failure; screenshots
(before and after the run) and a JSON report go to ``OUT``.
"""

import argparse
import hashlib
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from importlib import metadata
from pathlib import Path

from tools.course import ROOT, chapters, read, write
from tools.handout import plain_notebook, student
from tools.otter_format import fill, has_exercises, questions, solutions

CHROMIUM = "/usr/bin/chromium"
VENVS = Path(tempfile.gettempdir()) / "seqlab-check-notebooks"  # the student venvs, outside the repository
OUT = ROOT / "_build" / "check-notebooks"
RUN_ALL_S = 900  # seconds for one notebook's Run All
# chapters whose notebook trains a model with seqlab.train.fit (a tqdm bar is expected)
TRAINS = re.compile(r"\bfit\(")


# every cell in the DOM (no windowing), so the checks see the whole notebook; no news pop-up
NOTIFY = {"fetchNews": "false", "checkForUpdates": False}
OVERRIDES = json.dumps({"@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"},
                        "@jupyterlab/apputils-extension:notification": NOTIFY})  # fmt: skip


def student_venv(where: Path) -> Path:
    """A venv with only what a student installs; made once per requirements and package."""
    paths = [ROOT / "requirements.txt", ROOT / "code/pyproject.toml", *sorted(ROOT.glob("code/src/**/*.py"))]
    venv = where / f"student-venv-{hashlib.sha256(b''.join(p.read_bytes() for p in paths)).hexdigest()[:12]}"
    if (venv / ".ready").exists():
        return venv
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    wheel = student.seqlab_wheel()
    pins = [*student.pinned(), *student.pinned(("otter-grader", "jupyterlab", "ipywidgets"))]
    myst = f"myst-nb=={metadata.version('myst-nb')}"
    cmd = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
           f"{wheel}[text]", *pins, myst]  # fmt: skip
    print(f"check-notebooks: making the student venv {venv} ...", flush=True)
    subprocess.run(cmd, check=True)
    (venv / ".ready").write_text("ok\n")
    return venv


def prepare_notebooks(names: list[str], folder: Path, executed: Path) -> dict[str, str]:
    """Write the student notebook of each chapter into ``folder``, the first question answered;
    returns {chapter: the question answered} (empty string for a chapter without exercises)."""
    site = ROOT / "_build" / "html" / "_sources" / "chapters"
    answered = {}
    for path in (p for p in chapters() if p.stem in names):
        served, target = site / path.name, folder / path.name
        write(read(served) if served.is_file() else student.student_notebook(path, executed), target)
        answered[path.stem] = ""
        if has_exercises(path):
            first = [q for q, _ in questions(path)]
            write(fill(target, {first[0]: solutions(path)[first[0]]}, first), target)
            answered[path.stem] = first[0]
    return answered


def start_lab(venv: Path, folder: Path, port: int, token: str, log) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SEQLAB_", "JUPYTER", "VIRTUAL_ENV"))}
    env.update(JUPYTER_CONFIG_DIR=str(folder.parent / "jupyter-config"),
               JUPYTER_RUNTIME_DIR=str(folder.parent / "run"),
               OMP_WAIT_POLICY="PASSIVE", PATH=f"{venv / 'bin'}:{env.get('PATH', '')}")  # fmt: skip
    cmd = [str(venv / "bin" / "jupyter"), "lab", "--no-browser", "--ServerApp.ip=127.0.0.1",
           f"--ServerApp.port={port}", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={folder}",
           "--ServerApp.port_retries=0"]  # fmt: skip
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    proc = subprocess.Popen(cmd, cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("JupyterLab exited at start; see its log")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}", timeout=2):
                return proc
        except OSError:
            time.sleep(1)
    proc.terminate()
    raise RuntimeError("JupyterLab did not answer within 120 s")


PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"  # the notebook shown, not one left open behind it
ALL = "Array.from(document.querySelectorAll('" + PANEL + " {}'))"
MARKDOWN_TEXT = ALL.format(".jp-RenderedMarkdown") + ".map(e => e.innerText).join('\\n')"
IMAGES = ALL.format(".jp-Notebook img") + ".map(i => ({w: i.naturalWidth, done: i.complete}))"
BUSY = ALL.format(".jp-CodeCell .jp-InputPrompt") + ".filter(p => p.innerText.includes('*')).length"
LINKS = (
    ALL.format(".jp-RenderedMarkdown a[href]")
    + ".map(a => ({text: a.innerText, href: a.getAttribute('href')}))"
)
# JupyterLab's sanitizer renames an HTML id to data-jupyter-id; its notebook scrolls to either
IN_VIEW = (
    'id => { const e = document.querySelector(`[id="${id}"], [data-jupyter-id="${id}"]`);'
    " if (!e) return false;"
    " const r = (e.closest('.jp-Cell') || e).getBoundingClientRect();"
    " return r.bottom > 0 && r.top < window.innerHeight; }"
)
WIDGETS = f"document.querySelectorAll('{PANEL} .widget-progress, {PANEL} .widget-hprogress').length"

# a bar closes when its training ends (tqdm's leave=False): an observer counts every bar that was
# ever rendered, however short its training
WATCH_BARS = (
    "() => { window.seqlabBars = 0; new MutationObserver(() => {"
    f" window.seqlabBars = Math.max(window.seqlabBars, {WIDGETS}); }})"
    ".observe(document.body, {childList: true, subtree: true}); }"
)


def check_one(page, base: str, token: str, name: str, question: str, out: Path, folder: Path) -> dict:
    report = {"chapter": name, "errors": [], "problems": []}
    # ?reset: a fresh workspace, with no notebook of the one before still open
    page.goto(f"{base}/lab/tree/{name}.ipynb?reset&token={token}")
    page.wait_for_selector(f"{PANEL} .jp-Notebook .jp-Cell", timeout=120_000)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator", state="attached", timeout=120_000)
    time.sleep(3)  # the Markdown renders and the kernel starts
    page.screenshot(path=str(out / f"{name}-first-screen.png"))
    markdown = page.evaluate(MARKDOWN_TEXT)
    links = page.evaluate(LINKS)
    if bad_links := [a["text"] for a in links if re.search(r"[{}$\\]|\b(glue|numref):", a["text"])]:
        report["problems"].append(f"markup in link texts: {bad_links[:3]}")
    figure_links = [a for a in links if a["href"].startswith("#fig-")]
    report["figure_links"] = len(figure_links)
    here = f"/{name}.html#fig-"
    if any(a["href"].startswith("http") and here in a["href"] for a in links):
        report["problems"].append("a link to a figure of this notebook leads to the web book")
    # a figure link whose figure is out of sight, clicked, brings the figure into view
    for a in figure_links:
        target = a["href"][1:]
        link = page.locator(f'{PANEL} .jp-RenderedMarkdown a[href="#{target}"]').first
        link.scroll_into_view_if_needed()
        if page.evaluate(IN_VIEW, target):
            continue
        link.click()
        time.sleep(1)
        report["figure_link_works"] = page.evaluate(IN_VIEW, target)
        if not report["figure_link_works"]:
            report["problems"].append(f"the link to #{target} did not bring its figure into view")
        break
    raw = plain_notebook.myst_markup(markdown) + re.findall(r"\{(?:glue|doc|cite|numref|ref)[:}]", markdown)
    report["raw_markup"] = len(raw)
    if raw:
        report["problems"].append(f"MyST markup in the rendered page: {raw[:5]}")
    # run everything from the menu, as a student would
    page.evaluate(WATCH_BARS)
    page.click("text=Run", timeout=30_000)
    page.click("text=Run All Cells", timeout=30_000)
    start = time.monotonic()
    time.sleep(2)
    while time.monotonic() - start < RUN_ALL_S:
        if page.evaluate(BUSY) == 0:
            time.sleep(2)
            if page.evaluate(BUSY) == 0:
                break
        time.sleep(1)
    else:
        report["problems"].append(f"still running after {RUN_ALL_S} s")
    report["seconds"] = round(time.monotonic() - start, 1)
    report["progress_widgets"] = widgets_seen = page.evaluate("window.seqlabBars")
    page.keyboard.press("Control+s")
    time.sleep(3)
    # images: every one loaded
    for _ in range(20):  # give the last outputs' images a moment
        images = page.evaluate(IMAGES)
        if all(i["done"] for i in images):
            break
        time.sleep(0.5)
    report["images"] = len(images)
    report["images_loaded"] = sum(1 for i in images if i["w"] > 0)
    if report["images_loaded"] != report["images"]:
        report["problems"].append(f"{report['images'] - report['images_loaded']} images not loaded")
    if not page.locator(f"{PANEL} .jp-RenderedMarkdown img").count():
        report["problems"].append("no figure in the Markdown")
    # the saved notebook: error outputs, and the answered question's check
    saved = read(folder / f"{name}.ipynb")
    for cell in saved["cells"]:
        for o in cell.get("outputs", []):
            if o.get("output_type") == "error":
                report["errors"].append(f"{o.get('ename')}: {o.get('evalue', '')[:200]}")
    code = [c for c in saved["cells"] if c["cell_type"] == "code"]
    report["cells_run"] = f"{sum(1 for c in code if c.get('execution_count'))}/{len(code)}"
    if any(not c.get("execution_count") for c in code):
        report["problems"].append(f"only {report['cells_run']} code cells ran")
    if report["errors"]:
        report["problems"].append(f"{len(report['errors'])} error outputs: {report['errors'][:3]}")
    if question:
        cells = [c for c in saved["cells"] if f'grader.check("{question}")' in c["source"]]
        outputs = [o.get("data", o.get("text", "")) for c in cells for o in c.get("outputs", [])]
        text = " ".join(map(json.dumps, outputs))
        report["check_passed"] = bool(cells) and "passed" in text and "failed" not in text.lower()
        if not report["check_passed"]:
            report["problems"].append(f'grader.check("{question}") not shown as passing: {text[:300]}')
    # the student's own run: each cell that computes a figure of the text shows it; each glued value, printed
    figures = set(re.findall(r"```\{glue:figure\} (\w+)", (ROOT / "chapters" / f"{name}.ipynb").read_text()))
    drawn, missing = 0, []
    for cell in code:
        src, outputs = cell["source"], cell.get("outputs", [])
        images = sum(1 for o in outputs if "image/png" in o.get("data", {}))
        printed = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
        for glued in plain_notebook.glued_names(src):
            if glued in figures:
                drawn += images > 0
                if not images:
                    missing.append(glued)
            elif f"{glued} = " not in printed and not (images and f"{glued}, drawn" in printed):
                missing.append(glued)
    report["figures_drawn"] = f"{drawn}/{len(figures)}"
    if drawn < len(figures) or missing:
        report["problems"].append(f"not shown by the run: {missing[:5]} (figures {drawn}/{len(figures)})")
    if TRAINS.search(json.dumps(saved["cells"])) and widgets_seen == 0:
        report["problems"].append("no progress-bar widget seen while the notebook trained")
    page.screenshot(path=str(out / f"{name}-after-run.png"))
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", choices=[p.stem for p in chapters()], help="default: all")
    args = parser.parse_args(argv)
    names = [p.stem for p in chapters() if not args.only or p.stem in args.only]
    if not Path(CHROMIUM).exists():
        parser.error(f"{CHROMIUM} is missing: apt-get install -y chromium")
    from playwright.sync_api import sync_playwright

    OUT.mkdir(parents=True, exist_ok=True)
    venv = student_venv(VENVS)
    settings = venv / "share" / "jupyter" / "lab" / "settings"
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "overrides.json").write_text(OVERRIDES)
    work = Path(tempfile.mkdtemp(prefix="seqlab-student-"))  # outside the repository
    folder = work / "notebooks"  # made by the first notebook written into it
    answered = prepare_notebooks(names, folder, student.EXECUTED)
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port, token = free.getsockname()[1], secrets.token_hex(16)
    base = f"http://127.0.0.1:{port}"
    reports = []
    with open(OUT / "jupyterlab.log", "w") as log:
        lab = start_lab(venv, folder, port, token, log)
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                for name in names:
                    try:
                        report = check_one(page, base, token, name, answered[name], OUT, folder)
                    except Exception as exc:  # noqa: BLE001  (one notebook's failure is reported, the rest run)
                        report = {"chapter": name, "problems": [f"{type(exc).__name__}: {exc}"]}
                    reports.append(report)
                    facts = [f"{k.replace('_', ' ')} {v}" for k, v in report.items() if v != []][1:]
                    print(f"{name}: {', '.join(facts)}", flush=True)  # what was measured, then the problems
                    page.goto("about:blank")  # close the notebook (and its kernel) before the next
                    with urllib.request.urlopen(f"{base}/api/sessions?token={token}") as sessions:
                        for s in json.load(sessions):
                            url = f"{base}/api/sessions/{s['id']}?token={token}"
                            urllib.request.urlopen(urllib.request.Request(url, method="DELETE")).close()
                browser.close()
        finally:
            lab.terminate()
            try:
                lab.wait(timeout=30)
            except subprocess.TimeoutExpired:
                lab.kill()
    (OUT / "report.json").write_text(json.dumps(reports, indent=1))
    shutil.rmtree(work, ignore_errors=True)
    bad = [r["chapter"] for r in reports if r["problems"]]
    print(f"check-notebooks: {len(reports) - len(bad)} of {len(reports)} notebooks pass; see {OUT}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
