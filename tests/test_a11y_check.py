"""code/tools/checks/a11y_check.py on tiny generated sites: it must fail on a known violation, including
one only dark mode shows and one inside a folded block, and pass a clean page."""

from pathlib import Path

import pytest

a11y_check = pytest.importorskip("tools.checks.a11y_check")
pytest.importorskip("axe_playwright_python")
pytest.importorskip("playwright")
if not Path(a11y_check.CHROMIUM).exists():
    pytest.skip(f"{a11y_check.CHROMIUM} is missing (apt-get install -y chromium)", allow_module_level=True)

# A page with a theme toggle like the book's: it cycles data-theme light -> dark -> auto.
PAGE = """<!DOCTYPE html>
<html lang="en" data-theme="light"><head><meta charset="utf-8"><title>{title}</title>
<style>
  body {{ color: #000; background: #fff; }}
  html[data-theme="dark"] body {{ color: #eee; background: #111; }}
  {style}
</style></head>
<body><header><button class="theme-switch-button" aria-label="Color mode" onclick="
  const next = {{light: 'dark', dark: 'auto', auto: 'light'}};
  document.documentElement.dataset.theme = next[document.documentElement.dataset.theme];
">mode</button></header>
<main><h1>{title}</h1><p class="note">Some text to read.</p>
<details><summary>More</summary>{folded}</details></main></body></html>
"""
CLEAN = PAGE.format(title="Clean", style="", folded='<img src="x.png" alt="a described picture">')
# dark mode gives the paragraph grey text on a dark grey background: too little contrast
DARK_ONLY = PAGE.format(
    title="Dark only", style='html[data-theme="dark"] p.note { color: #444; background: #333; }', folded=""
)
# an image without a text alternative, inside a collapsed <details>
FOLDED = PAGE.format(title="Folded", style="", folded='<img src="x.png">')


def _site(root: Path, pages: dict[str, str]) -> Path:
    for name, html in pages.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(html)
    return root


def test_finds_violations_in_dark_mode_and_in_folded_blocks(tmp_path):
    site = _site(tmp_path / "site", {"clean.html": CLEAN, "dark.html": DARK_ONLY, "folded.html": FOLDED})
    report = a11y_check.check_site(site, widths=(720,))
    assert set(report) == {"clean.html", "dark.html", "folded.html"}
    assert report["clean.html"]["violations"] == {}
    assert report["clean.html"]["states"] == ["720px", "720px dark"]
    dark = list(report["dark.html"]["violations"].values())
    assert [v["rule"] for v in dark] == ["color-contrast"]
    assert dark[0]["states"] == ["720px dark"]
    folded = list(report["folded.html"]["violations"].values())
    assert [v["rule"] for v in folded] == ["image-alt"]
    assert folded[0]["states"] == ["720px", "720px dark"]


def test_exit_status(tmp_path, capsys):
    assert a11y_check.main([str(_site(tmp_path / "clean", {"index.html": CLEAN}))]) == 0
    assert (
        a11y_check.main([str(_site(tmp_path / "bad", {"index.html": CLEAN, "x/folded.html": FOLDED}))]) == 1
    )
    out = capsys.readouterr().out
    assert "x/folded.html" in out and "image-alt 1" in out


def test_no_site(tmp_path):
    with pytest.raises(ValueError, match="site: no .html page"):
        a11y_check.pages(tmp_path)
