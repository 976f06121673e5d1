"""Accessibility check of the built book (``make check-a11y``): axe-core's WCAG 2.1 A and AA rules.

The site is served on 127.0.0.1 and Playwright, driving Debian's Chromium (``/usr/bin/chromium``),
opens every ``*.html`` page in four states: 1280 and 720 px wide, each in the theme's light and
dark mode (switched with the theme's own toggle), with everything a reader can unfold unfolded
(``UNFOLD_JS``), so that hidden content is checked too. It prints one row per page, then each
violation with its element and states, and exits 1 if any page has one.
"""

import argparse
import functools
import multiprocessing
import sys
import threading
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
WIDTHS = (1280, 720)
HEIGHT = 900

# Unfold everything a reader can unfold: <details>, togglebutton's buttons, the navigation tree,
# the header's dropdown menus.
UNFOLD_JS = """() => {
  for (const d of document.querySelectorAll("details:not([open])")) d.open = true;
  for (const b of document.querySelectorAll("button.toggle-button[aria-expanded='false']")) b.click();
  for (const c of document.querySelectorAll("input.toctree-checkbox")) c.checked = true;
  for (const t of document.querySelectorAll("[data-bs-toggle='dropdown'][aria-expanded='false']")) {
    const menu = t.parentElement && t.parentElement.querySelector(".dropdown-menu");
    if (menu) { menu.classList.add("show"); t.setAttribute("aria-expanded", "true"); }
  }
}"""

# Wait until MathJax (if the page loads it) has typeset the page.
MATHJAX_JS = "async () => { if (window.MathJax?.startup?.promise) await MathJax.startup.promise; }"
THEME_JS = "() => document.documentElement.dataset.theme || ''"


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        pass


def pages(root: Path) -> list[str]:
    """Every HTML page of the site, as paths relative to ``root``."""
    # _static/ holds the theme's Jinja macro files (webpack-macros.html), not pages
    names = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.html"))
    if not (found := [name for name in names if name.split("/")[0] not in ("_static", "_sources")]):
        raise ValueError(f"site: no .html page under {root} (build the book first: make book)")
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
    results, viewport = [], {"width": widths[0], "height": HEIGHT}
    with browser.new_context(viewport=viewport, color_scheme="light") as context:
        page = context.new_page()

        def stay(route):
            """The page under test stays loaded: a redirect (index.html's meta refresh) is answered
            "204 No Content", which leaves the browser on the page; its target is a page of its own."""
            away = route.request.is_navigation_request() and route.request.url != url
            return route.fulfill(status=204) if away else route.continue_()

        page.route("**/*", stay)
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


def check_site(root: Path, widths=WIDTHS, workers: int = 2) -> dict[str, dict]:
    """{page: {"states": [...], "violations": {"rule target": {rule, impact, help, target, html,
    summary, states}}}} over every page; a page that cannot be loaded fails as a "check-error".
    The pages are shared among ``workers`` processes, each driving a browser of its own."""
    if not Path(CHROMIUM).exists():
        raise FileNotFoundError(f"{CHROMIUM} is missing: apt-get install -y chromium")
    names = pages(root)
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    shares = [names[i::workers] for i in range(min(workers, len(names)))]
    try:  # spawned, not forked: a fork would copy this process's server thread
        with ProcessPoolExecutor(len(shares), mp_context=multiprocessing.get_context("spawn")) as pool:
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

    axe, report = Axe(), {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        for name in names:
            try:
                states = check_page(browser, axe, f"{base}/{name}", widths)
            except PlaywrightError as err:
                node = {"target": ["html"], "html": "", "failureSummary": str(err).split("\n")[0]}
                states = [("load", [{"id": "check-error", "impact": "critical", "nodes": [node],
                                     "help": "the page could not be checked"}])]  # fmt: skip
            entry = report[name] = {"states": [state for state, _ in states], "violations": {}}
            for state, v, node in (
                (s, rule, n) for s, found in states for rule in found for n in rule["nodes"]
            ):
                target = " ".join(map(str, node.get("target", [])))
                found = entry["violations"].setdefault(f"{v['id']} {target}", {
                    "rule": v["id"], "impact": v.get("impact"), "help": v.get("help"), "target": target,
                    "html": node.get("html", "")[:200], "summary": node.get("failureSummary", ""),
                    "states": []})  # fmt: skip
                found["states"].append(state)
            print(f"checked {name}: {len(entry['violations'])} violation(s)", file=sys.stderr, flush=True)
        browser.close()
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("site", nargs="?", type=Path, default=Path("_build/html"), help="the built site")
    args = ap.parse_args(argv)
    try:
        report = check_site(args.site.resolve())
    except (ValueError, FileNotFoundError) as err:
        ap.error(str(err))
    width = max(len(name) for name in report)
    for name, entry in report.items():
        rules = Counter(v["rule"] for v in entry["violations"].values())
        by_rule = ", ".join(f"{r} {n}" for r, n in sorted(rules.items())) or "-"
        print(f"{name:<{width}}  {len(entry['violations']):>3}  {by_rule}")
    for name, entry in report.items():
        for v in entry["violations"].values():
            print(f"\n{name}: {v['rule']} ({v['impact']}) {v['target']}\n    {v['help']}; in "
                  f"{', '.join(v['states'])}\n    {v['html']}")  # fmt: skip
            print("".join(f"    | {line}\n" for line in v["summary"].splitlines()), end="")
    states = sorted({s for e in report.values() for s in e["states"]})
    failing = [name for name, entry in report.items() if entry["violations"]]
    total = sum(len(e["violations"]) for e in report.values())
    print(f"\naxe-core, rules tagged {', '.join(TAGS)}: {len(report)} page(s), each in the states "
          f"{', '.join(states)}; {total} violation(s) on {len(failing)} page(s)")  # fmt: skip
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
