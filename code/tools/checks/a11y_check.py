"""Accessibility check of the built book: axe-core's WCAG 2.1 A and AA rules on every page.

``make check-a11y`` (``python -m tools.checks.a11y_check _build/html``) serves the built site
on 127.0.0.1, and Playwright, driving Debian's Chromium (``/usr/bin/chromium``; ``apt-get
install -y chromium``), opens every ``*.html`` page under it in four states: 1280 and 720 px
wide, each in the theme's light and dark mode (switched with the theme's own toggle button). In
each state, before the check, everything a reader can unfold is unfolded: ``<details>`` blocks
(hidden cells, dropdowns), the toggle buttons of sphinx-togglebutton, the navigation tree's
collapsed sections and the header's dropdown menus, so that hidden content is checked too. Then
axe-core (bundled with ``axe-playwright-python``) runs the rules tagged ``wcag2a``, ``wcag2aa``,
``wcag21a`` and ``wcag21aa``.

It prints one row per page (its violations, counted once per rule and element over the four
states, and their rule ids), then every violation with its element and the states it occurs in,
and exits 1 if any page has one. ``--json FILE`` writes the full results.
"""

from __future__ import annotations

import argparse
import functools
import json
import multiprocessing
import sys
import threading
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
WIDTHS = (1280, 720)
HEIGHT = 900

# Unfold everything a reader can unfold. Returns how many things it opened.
UNFOLD_JS = """() => {
  let opened = 0;
  for (const d of document.querySelectorAll("details:not([open])")) { d.open = true; opened++; }
  for (const b of document.querySelectorAll("button.toggle-button[aria-expanded='false']")) {
    b.click(); opened++;
  }
  for (const c of document.querySelectorAll("input.toctree-checkbox")) {
    if (!c.checked) { c.checked = true; opened++; }
  }
  for (const t of document.querySelectorAll("[data-bs-toggle='dropdown'][aria-expanded='false']")) {
    const menu = t.parentElement && t.parentElement.querySelector(".dropdown-menu");
    if (menu) { menu.classList.add("show"); t.setAttribute("aria-expanded", "true"); opened++; }
  }
  return opened;
}"""

# Wait until MathJax (if the page loads it) has typeset the page.
MATHJAX_JS = """async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
  }
  return true;
}"""

THEME_JS = "() => document.documentElement.dataset.theme || ''"


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        pass


def serve(root: Path) -> tuple[ThreadingHTTPServer, str]:
    """A static file server for ``root`` on a free port of 127.0.0.1, in a daemon thread."""
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def pages(root: Path) -> list[str]:
    """Every HTML page of the site, as paths relative to ``root``."""
    if not root.is_dir():
        raise ValueError(f"site: {root} is not a directory (build the book first: make book)")
    # _static/ holds the theme's Jinja macro files (webpack-macros.html), not pages
    found = sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*.html")
        if p.relative_to(root).parts[0] not in ("_static", "_sources")
    )
    if not found:
        raise ValueError(f"site: no .html page under {root}")
    return found


NO_TRANSITIONS_CSS = "*, *::before, *::after { transition: none !important; animation: none !important; }"


def set_mode(page, mode: str) -> bool:
    """Switch the page to ``mode`` ("light" or "dark") with the theme's own toggle button; False
    if the page has none."""
    if page.locator(".theme-switch-button").count() == 0:
        return False
    button = page.locator(".theme-switch-button").first
    for _ in range(3):  # the toggle cycles light -> dark -> auto (auto: light in this browser)
        if page.evaluate(THEME_JS) == mode:
            return True
        if button.is_visible():
            button.click()
        else:  # at narrow widths the header's copy may be hidden: click it from script
            page.evaluate("() => document.querySelector('.theme-switch-button').click()")
        page.wait_for_timeout(100)
    # the click leaves the pointer and the focus on the button, whose "Color mode" tooltip then
    # fades in: axe would measure its contrast half-transparent, in the middle of the fade
    page.mouse.move(0, 0)
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    page.wait_for_function("() => !document.querySelector('.tooltip')", timeout=5000)
    return page.evaluate(THEME_JS) == mode


def check_page(browser, axe, url: str, widths=WIDTHS) -> list[tuple[str, list[dict]]]:
    """axe's violations on one page in every state: [(state name, violations)]. The page is
    loaded once (and typeset once), then resized and switched between light and dark."""
    context = browser.new_context(viewport={"width": widths[0], "height": HEIGHT}, color_scheme="light")
    results = []
    try:
        page = context.new_page()
        # the page under test stays loaded: a redirect (index.html's meta refresh) is answered
        # "204 No Content", which leaves the browser on the page; its target is a page of its own
        page.route(
            "**/*",
            lambda route: (
                route.fulfill(status=204)
                if route.request.is_navigation_request() and route.request.url != url
                else route.continue_()
            ),
        )
        page.goto(url, wait_until="load")
        # every state is measured at its final colours: no fade (a tooltip, a toggle's opening,
        # the theme's colour switch) is caught half-way
        page.add_style_tag(content=NO_TRANSITIONS_CSS)
        page.evaluate(MATHJAX_JS)
        for width in widths:
            page.set_viewport_size({"width": width, "height": HEIGHT})
            for mode in ("light", "dark"):
                state = f"{width}px" + (" dark" if mode == "dark" else "")
                if not set_mode(page, mode):
                    if mode == "dark":
                        results.append((f"{state} (no theme toggle)", []))
                        continue
                page.evaluate(UNFOLD_JS)
                page.wait_for_timeout(300)  # CSS transitions: opened toggles, the colour switch
                result = axe.run(page, options={"runOnly": {"type": "tag", "values": TAGS}})
                results.append((state, result.response["violations"]))
        return results
    finally:
        context.close()


def check_site(root: Path, only: list[str] | None = None, widths=WIDTHS, workers: int = 2) -> dict[str, dict]:
    """{page: {"states": [...], "violations": {(rule, target): {...}}}} over every page, the pages
    shared among ``workers`` processes, each driving a browser of its own."""
    if not Path(CHROMIUM).exists():
        raise FileNotFoundError(f"{CHROMIUM} is missing: apt-get install -y chromium")
    names = [p for p in pages(root) if not only or any(o in p for o in only)]
    server, base = serve(root)
    try:
        shares = [names[i::workers] for i in range(min(workers, len(names)))]
        spawn = multiprocessing.get_context("spawn")  # no fork of this process's server thread
        with ProcessPoolExecutor(len(shares), mp_context=spawn) as pool:
            parts = pool.map(_check_pages, [base] * len(shares), shares, [widths] * len(shares))
            found = {name: entry for part in parts for name, entry in part.items()}
    finally:
        server.shutdown()
    return {name: found[name] for name in names}


def _check_pages(base: str, names: list[str], widths) -> dict[str, dict]:
    """check_site's work on some of the pages, in one browser."""
    from axe_playwright_python.sync_playwright import Axe
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    axe = Axe()
    report: dict[str, dict] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            for name in names:
                entry = {"states": [], "violations": {}}
                try:
                    states = check_page(browser, axe, f"{base}/{name}", widths)
                except PlaywrightError as err:  # reported as a failure, not skipped
                    states = [("load", [_error(err)])]
                for state, violations in states:
                    entry["states"].append(state)
                    for v in violations:
                        for node in v["nodes"]:
                            target = " ".join(map(str, node.get("target", [])))
                            found = entry["violations"].setdefault(
                                f"{v['id']} {target}",
                                {
                                    "rule": v["id"],
                                    "impact": v.get("impact"),
                                    "help": v.get("help"),
                                    "target": target,
                                    "html": node.get("html", "")[:200],
                                    "summary": node.get("failureSummary", ""),
                                    "states": [],
                                },
                            )
                            found["states"].append(state)
                report[name] = entry
                counts = _by_rule(entry)
                print(f"checked {name}: {sum(counts.values())} violation(s)", file=sys.stderr, flush=True)
        finally:
            browser.close()
    return report


def _error(err: Exception) -> dict:
    """A page the check could not run on, as a violation of its own, so that it fails the check."""
    first = str(err).splitlines()[0] if str(err) else type(err).__name__
    return {
        "id": "check-error",
        "impact": "critical",
        "help": "the page could not be checked",
        "nodes": [{"target": ["html"], "html": "", "failureSummary": first}],
    }


def _by_rule(entry: dict) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for v in entry["violations"].values():
        counts[v["rule"]] += 1
    return dict(sorted(counts.items()))


def table(report: dict[str, dict]) -> str:
    """The per-page summary: page, violations, by rule id."""
    rows = [("page", "violations", "by rule id")]
    for name, entry in report.items():
        counts = _by_rule(entry)
        rules = ", ".join(f"{r} {n}" for r, n in counts.items()) or "-"
        rows.append((name, str(sum(counts.values())), rules))
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    lines = [f"{a:<{w0}}  {b:>{w1}}  {c}" for a, b, c in rows]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def details(report: dict[str, dict]) -> str:
    out = []
    for name, entry in report.items():
        for v in entry["violations"].values():
            out.append(
                f"{name}: {v['rule']} ({v['impact']}) {v['target']}\n"
                f"    {v['help']}; in {', '.join(v['states'])}\n    {v['html']}\n"
                + "".join(f"    | {line}\n" for line in v["summary"].splitlines())
            )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("site", nargs="?", type=Path, default=Path("_build/html"), help="the built site")
    ap.add_argument("--only", nargs="*", help="only the pages whose path contains one of these")
    ap.add_argument("--json", type=Path, help="write every violation found to this file")
    ap.add_argument("--workers", type=int, default=2, help="browsers checking pages at once (default 2)")
    args = ap.parse_args(argv)
    try:
        report = check_site(args.site.resolve(), args.only, workers=args.workers)
    except (ValueError, FileNotFoundError) as err:
        ap.error(str(err))
    print(table(report))
    failing = {n: e for n, e in report.items() if e["violations"]}
    if failing:
        print("\n" + details(failing))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    states = sorted({s for e in report.values() for s in e["states"]})
    total = sum(len(e["violations"]) for e in report.values())
    print(
        f"\naxe-core, rules tagged {', '.join(TAGS)}: {len(report)} page(s), each in the states "
        f"{', '.join(states)}; {total} violation(s) on {len(failing)} page(s)"
    )
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
