"""Sphinx extension of the course book: the site's ``index.html``, a redirect to the first page
that is also a valid, accessible page.

The book's root page is ``intro``, so the HTML build has no ``index.html``; sphinx-external-toc
writes one after the build, a bare ``<meta http-equiv="Refresh">`` with no ``<html lang>`` and no
``<title>`` (axe-core: ``html-has-lang``, ``document-title``). This writes it first, as a whole
page: the language and title of the book, the same immediate redirect, and a link for a reader
whose browser does not follow it. sphinx-external-toc leaves an existing ``index.html`` alone.
"""

import html
from pathlib import Path

PAGE = """<!DOCTYPE html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta http-equiv="Refresh" content="0; url={target}">
<title>{title}</title>
<link rel="canonical" href="{target}">
</head>
<body>
<main>
<h1>{title}</h1>
<p>The book starts at <a href="{target}">its introduction</a>.</p>
</main>
</body>
</html>
"""


def redirect_page(target: str, title: str, lang: str | None) -> str:
    """The text of an ``index.html`` that sends the reader to ``target`` at once."""
    if not target or "\n" in target or '"' in target:
        raise ValueError(f"target: a page's relative address is needed, got {target!r}")
    title, lang = html.escape(title or "Home"), html.escape(lang or "en")
    return PAGE.format(target=html.escape(target), title=title, lang=lang)


def write_index(app, exception) -> None:
    root = app.config.root_doc
    if exception is not None or "html" not in app.builder.format or root == "index":
        return
    target = f"{root}/index.html" if app.builder.name == "dirhtml" else f"{root}.html"
    page = redirect_page(target, app.config.html_title or app.config.project, app.config.language)
    Path(app.outdir, "index.html").write_text(page, encoding="utf-8")


def setup(app):
    # before sphinx-external-toc's own build-finished handler (priority 500), which then keeps it
    app.connect("build-finished", write_index, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
