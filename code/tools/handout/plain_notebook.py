"""The student notebook in plain Jupyter Markdown: what the book's MyST markup means, without MyST.

JupyterLab, Notebook 7, VS Code and Colab render no MyST: :func:`plain` rewrites a chapter (JSON, so
also the output of ``otter assign``) to read like the page, offline (what that takes: the list in
docs/instructors.md, "What students get"), with the values and figures of the book build's executed
notebook (``_build/jupyter_execute``; without one, a glued value is named in code font).
"""

import ast
import base64
import contextlib
import copy
import functools
import json
import os
import posixpath
import pprint
import re
import threading
from pathlib import Path
from types import SimpleNamespace

from tools.book.bib_style import AuthorYearStyle, backend, surnames, who
from tools.course import ROOT, collapsed_cell, read, repository_url, tags, toc_docs

HIDDEN_TAGS = {"remove-cell", "remove-input", "hide-input"}
# an inline role the chapters use (chapters/README.md): {name}`content`
ROLE = re.compile(r"\{(glue:text|doc|numref|cite:t|cite:p|cite)\}`([^`]*)`")
# a fenced directive: ```{name} argument ... ``` or :::{name} ... :::
DIRECTIVE = re.compile(
    r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[a-z:\-]+)\}[ \t]*(?P<arg>[^\n]*)\n"
    r"(?P<body>[\s\S]*?)^(?P=fence)[ \t]*$",
    re.M,
)
MYST_LEFT = re.compile(r"\{[a-z:\-]+\}`|^(`{3,}|:{3,})\{[a-z:\-]+\}", re.M)
GLUE_IMPORT = re.compile(r"^from myst_nb import [^\n]*\bglue\b", re.M)


def myst_markup(text: str) -> list[str]:
    """The MyST roles and directives left in ``text`` (what no plain renderer shows)."""
    return [m.group(0) for m in MYST_LEFT.finditer(text)]


def glued_names(source: str) -> list[str]:
    """The names a code cell's ``glue("name", ...)`` calls record, in order."""
    return re.findall(r"\bglue\(\s*[\"']([^\"']+)[\"']", source)


def _options(body: str) -> tuple[dict[str, str], str]:
    """(``:key: value`` options at the top of a directive's body, the rest)."""
    head = re.match(r"(:[a-zA-Z\-]+:.*(\n|$))*", body).group(0)
    options = dict(re.findall(r"^:([a-zA-Z\-]+):[ \t]*(.*?)\s*$", head, re.M))
    return options, body[len(head) :].strip("\n")


# ---------------------------------------------------------------------------------------------
# the site, the pages and their titles, the figures, the references


def site_url(root: Path = ROOT) -> str:
    """The book's address on GitHub Pages, from ``repository.url`` (github.com/OWNER/REPO)."""
    url = repository_url(root)
    m = re.match(r"https?://github\.com/([^/]+)/([^/]+?)(\.git)?$", url)
    return f"https://{m.group(1).lower()}.github.io/{m.group(2)}/" if m else url.rstrip("/") + "/"


def _markdown(root: Path, doc: str) -> str:
    """The Markdown of a page: a notebook's Markdown cells, or a ``.md`` file ("" if neither)."""
    if (root / f"{doc}.ipynb").is_file():
        return "\n\n".join(c.source for c in read(root / f"{doc}.ipynb").cells if c.cell_type == "markdown")
    return (root / f"{doc}.md").read_text(encoding="utf-8") if (root / f"{doc}.md").is_file() else ""


@functools.cache
def titles(root: Path = ROOT) -> dict[str, str]:
    """{doc name relative to the root, e.g. "chapters/lstm" or "intro": its first heading}."""
    found = {doc: re.search(r"^# (.+)$", _markdown(root, doc), re.M) for doc in toc_docs(root)}
    return {doc: m.group(1).strip() for doc, m in found.items() if m}


def _named_figures(root: Path, docs: list[str], kinds=None):
    """(doc, name, body) of every named directive of ``docs`` (of the ``kinds`` given)."""
    for doc in docs:
        for m in DIRECTIVE.finditer(_markdown(root, doc)):
            options, body = _options(m.group("body"))
            if options.get("name") and (kinds is None or m.group("name") in kinds):
                yield doc, options["name"], body


@functools.cache
def figure_labels(root: Path = ROOT) -> dict[str, str]:
    """{figure name: the page it is on} over every page."""
    return {name: doc for doc, name, _ in _named_figures(root, toc_docs(root))}


@functools.cache
def figure_numbers(root: Path = ROOT) -> dict[str, int]:
    """{figure name: its number in the book}: Sphinx numbers every named ``figure`` and
    ``glue:figure`` with one count over the pages, in the order of ``_toc.yml``."""
    names = [name for _, name, _ in _named_figures(root, toc_docs(root), ("figure", "glue:figure"))]
    return {name: n for n, name in enumerate(names, 1)}


@functools.cache
def bibliography(root: Path = ROOT) -> dict[str, tuple[str, str, str]]:
    """{key: (authors as the text names them, year, the reference in Markdown)} from
    ``references.bib``, formatted by the book's own style (``bib_style``)."""
    from pybtex.database import parse_file

    if not (root / "references.bib").is_file():
        return {}
    found, database = {}, parse_file(str(root / "references.bib"))
    for formatted in AuthorYearStyle().format_entries(database.entries.values()):
        entry = database.entries[formatted.key]
        found[formatted.key] = (who(surnames(entry)) or formatted.key, entry.fields.get("year", "n.d."),
                                formatted.text.render(backend("markdown")).replace("\n", " "))  # fmt: skip
    return found


# ---------------------------------------------------------------------------------------------
# what the book's build computed: glued values and figures; the diagrams; literalinclude


def glued_outputs(executed: Path | None) -> dict[str, dict]:
    """{glue name: its mime bundle} for a notebook the book build executed (empty if none), from
    ``<name>.glue.json`` beside it, where myst-nb moves the glued outputs."""
    store = executed.with_name(executed.stem + ".glue.json") if executed else None
    if store is None or not store.is_file():
        return {}
    return {name: out.get("data", {}) for name, out in json.loads(store.read_text(encoding="utf-8")).items()}


def glue_text(name_spec: str, glued: dict[str, dict]) -> str | None:
    """The text ``{glue:text}`name:spec``` shows, or None without the value."""
    name, _, spec = name_spec.partition(":")
    if "text/plain" not in (bundle := glued.get(name.strip(), {})):
        return None
    plain = "".join(bundle["text/plain"]).strip()  # a string, or its lines
    for parse in (ast.literal_eval, float) if spec else ():  # an int stays an int, as in myst-nb
        with contextlib.suppress(ValueError, TypeError, SyntaxError):
            return format(parse(plain), spec)
    with contextlib.suppress(ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        if isinstance(value := ast.literal_eval(plain), str):  # a string's repr: the string itself
            return value
    return plain


_DRAW_LOCK = threading.Lock()


@functools.cache
def diagram_png(stem: str) -> bytes | None:
    """The PNG of the concept diagram ``chapters/images/<stem>.svg``, drawn by its code."""
    from tools.diagrams import build

    with _DRAW_LOCK:  # pyplot draws one figure at a time
        draw = build.diagrams().get(stem)  # None: no such diagram
        return draw and build.render(draw, "png", dpi=110, bbox_inches="tight", metadata={"Software": None})


def included_code(path: Path, options: dict[str, str]) -> str:
    """The code a ``literalinclude`` with these (string) options shows, read as Sphinx reads it."""
    from sphinx.directives.code import LiteralIncludeReader

    if "dedent" in options:  # Sphinx's option parser makes it an int, or None for "as far as possible"
        options = {**options, "dedent": int(options["dedent"]) if options["dedent"] else None}
    text, _ = LiteralIncludeReader(str(path), options, SimpleNamespace(source_encoding="utf-8")).read()
    return text.rstrip("\n")


# ---------------------------------------------------------------------------------------------
# the conversion


def _split_target(content: str) -> tuple[str | None, str]:
    """("text", "target") of a role's ``text <target>``, or (None, content)."""
    m = re.match(r"^(.*?)\s*<([^>]+)>$", content)
    return (m.group(1), m.group(2)) if m else (None, content)


class Converter:
    """Converts the cells of one chapter; collects the citations and attachments it makes."""

    def __init__(self, doc: str, glued: dict[str, dict], root: Path = ROOT):
        self.doc, self.glued, self.root = doc, glued, root
        self.site, self.bib, self.numbers = site_url(root), bibliography(root), figure_numbers(root)
        self.cited: list[str] = []
        self.missing_values: list[str] = []
        self.formats: dict[str, str] = {}  # {glued value: the format of the first {glue:text} that shows it}
        self.cell = 0  # the index of the cell being converted
        self.drawn_at: dict[str, int] = {}  # {glued figure: the index of the code cell that glues it}

    def page_url(self, doc: str, anchor: str = "") -> str:
        return f"{self.site}{doc}.html" + (f"#{anchor}" if anchor else "")

    def doc_link(self, content: str) -> str:
        text, target = _split_target(content)
        doc = posixpath.normpath(posixpath.join(posixpath.dirname(self.doc), target)).lstrip("/")
        return f"[{text or titles(self.root).get(doc, target)}]({self.page_url(doc)})"

    def figure_name(self, label: str, capital: bool = False) -> str:
        """ "Figure 20" (the book's number), or "the figure" for a figure the book does not number."""
        number = self.numbers.get(label)
        return f"Figure {number}" if number else "The figure" if capital else "the figure"

    def figure_link(self, content: str) -> str:
        """A link to a figure's anchor in this notebook, or to the book's page of another chapter; its
        text is the figure's number (a text the role gives is the book's, with the book's number)."""
        label = _split_target(content)[1]
        text, doc = self.figure_name(label), figure_labels(self.root).get(label, self.doc)
        if doc == self.doc:
            return f"[{text}](#{label})"
        return f"[{text} of “{titles(self.root).get(doc, doc)}”]({self.page_url(doc, label)})"

    def cite(self, kind: str, content: str) -> str:
        keys = [k.strip() for k in content.split(",") if k.strip()]
        self.cited += [k for k in dict.fromkeys(keys) if k not in self.cited]
        parts = [self.bib.get(k, (k, ""))[:2] for k in keys]
        if kind == "cite:t":
            return "; ".join(f"{name} ({year})" for name, year in parts)
        return "(" + "; ".join(f"{name}, {year}" for name, year in parts) + ")"

    def role(self, m: re.Match) -> str:
        kind, content = m.group(1), m.group(2)
        if kind == "glue:text":
            self.formats.setdefault(content.partition(":")[0].strip(), content.partition(":")[2])
            value = glue_text(content, self.glued)
            if value is None:
                self.missing_values.append(content)
                return f"`{content.partition(':')[0]}`"
            return f"**{value}**"
        if kind == "doc":
            return self.doc_link(content)
        if kind == "numref":
            return self.figure_link(content)
        return self.cite(kind, content)

    def image(self, png: bytes | None, key: str, alt: str, caption: str, attachments: dict,
              label: str = "", heading: str = "", note: str = "") -> str:  # fmt: skip
        """An embedded PNG (or, without one, a note) with its caption, numbered as in the book,
        and an anchor that the notebook's figure links lead to."""
        caption = self.inline(caption.strip())
        number = self.figure_name(label, capital=True) if label else "Figure"
        anchor = f'<a id="{label}"></a>\n\n' if label else ""
        if png is None:
            return f"{anchor}> **{number}** ({note}). {caption}\n"
        attachments[key] = {"image/png": base64.b64encode(png).decode("ascii")}
        alt = alt.replace("[", "(").replace("]", ")")
        heading = f"{heading}\n\n" if heading else ""
        return f"{anchor}{heading}![{alt}](attachment:{key})\n\n*{number}. {caption}*\n"

    def directive(self, m: re.Match, attachments: dict) -> str:
        name, arg = m.group("name"), m.group("arg").strip()
        options, body = _options(m.group("body"))
        label, alt = options.get("name", ""), options.get("alt", "")
        if name == "figure":
            stem = Path(arg).stem
            return self.image(diagram_png(stem), f"{stem}.png", alt, body, attachments, label,
                              note="a diagram of the book")  # fmt: skip
        if name == "glue:figure":
            bundle, at = self.glued.get(arg, {}), self.drawn_at.get(arg)
            png = base64.b64decode(bundle["image/png"]) if "image/png" in bundle else None
            where = "in the output of the cell that draws it"
            if at is not None:
                where = f"in the output of the collapsed cell {'above' if at < self.cell else 'below'}"
            heading = f"**{self.figure_name(label, True)} as the book's run drew it.** Your run draws its own"
            return self.image(png, f"{arg}.png", alt, body, attachments, label, f"{heading} {where}.",
                              f"your run draws it {where}")  # fmt: skip
        if name == "literalinclude":
            # abspath, not resolve: page.py builds from a folder of symlinks
            path = Path(os.path.abspath((self.root / self.doc).parent / arg))
            src = os.path.abspath(self.root / "code" / "src")
            where = os.path.relpath(path, src) if str(path).startswith(src + os.sep) else arg
            what = f", `{options['pyobject']}`" if "pyobject" in options else ""
            return f"*From `{where}`{what}:*\n\n```python\n{included_code(path, options)}\n```\n"
        if name == "exercise":
            quoted = f"> **Exercise.** {self.inline(body)}\n".replace("\n\n", "\n>\n> ").replace("\n", "\n> ")
            return quoted.rstrip("> ")
        if name == "solution":
            return f"<details><summary>Solution</summary>\n\n{self.inline(body)}\n\n</details>\n"
        # an admonition ({note}, {admonition} with its title, ...): a quote under its title
        quoted = "\n".join(f"> {x}" if x else ">" for x in self.inline(body).split("\n"))
        return f"> **{arg or name.capitalize()}.**\n>\n{quoted}\n"

    def inline(self, text: str) -> str:
        return ROLE.sub(self.role, text)

    def markdown(self, text: str, attachments: dict) -> str:
        return self.inline(DIRECTIVE.sub(lambda m: self.directive(m, attachments), text))

    def references(self) -> str | None:
        if not self.cited:
            return None
        lines = [f"- {self.bib[key][2]}" for key in self.cited if key in self.bib]
        return "## References\n\nThe works cited in this notebook:\n\n" + "\n".join(lines)


def what_it_does(source: str) -> str:
    """A one-line description of a cell the page hides, for its ``# @title`` comment."""
    if re.search(r"^# claim\b", source, re.M):
        return "Checks the chapter's claims with assert"
    if re.search(r"glue\([^)]*fig", source) or any(s in source for s in ("plt.", ".plot(", "subplots")):
        return "Draws a figure of the text"
    for needle, what in (
        ("results_table", "Builds a table of the text"),
        ("glue(", "Computes numbers quoted in the text"),
        ("assert", "Checks a result with assert"),
    ):
        if needle in source:
            return what
    if re.match(r"(from \S+ )?import ", source.lstrip()):
        return "Imports and settings"
    if defined := re.findall(r"^(?:def|class) (\w+)", source, re.M):
        return f"Defines {', '.join(defined[:3])}{', ...' if len(defined) > 3 else ''}, used below"
    return "Plumbing for what follows"


NOTE = "*Read offline: this notebook is the book's chapter without the book's extensions. "
VALUES_NOTE = NOTE + (
    "Numbers in **bold** in the text are the values of the book's run; your run computes them again in the "
    'cells, which print each number the text quotes ("name = value") and draw each figure, so you '
    "can compare your run with the book's (collapsed cells hold the plumbing: click the dots to "
    "open one). Figure links lead to the figure in this notebook, other links to the book's pages.*"
)
NAMES_NOTE = NOTE + (
    "A name in code font in the text (like `name`) stands for a number the cells compute: when you run the "
    'notebook, the cell that computes it prints it ("name = value"), and each figure is drawn '
    "under the cell that computes it. Collapsed cells hold the plumbing: click the dots to open "
    "one. Figure links lead to the figure in this notebook, other links to the book's pages.*"
)


GLUE_SHOWS_TAG = "seqlab-glue-shows"
GLUE_SHOWS = """\
# @title Shows your run: each figure and each number the text quotes, as the cells compute them
# For the book, glue() records a value for the text and shows nothing. In this notebook it shows
# it instead: a figure is drawn under the cell that computes it, a number is printed as
# "name = value" (formatted as the text formats it, beside the book's value where they differ,
# with the bar the chapter claims for it if any), so you can compare your run with the book's.

from IPython.display import display as _show
from seqlab import claims as _claims

# {{glued figure: the line above it}}
_FIGURES = {figures}
# {{glued value: (the format the text uses, the value in the book's run)}}
_TEXT = {text}


def _number(text):
    # a printed number as a float ("1,012", "98.8%", "4", "4.0"), or None for any other text
    try:
        return float(text.replace(",", "").removesuffix("%"))
    except ValueError:
        return None


def _differs(shown, book):
    # two printed numbers are compared as numbers, rounded to the digits this run prints ("4" and
    # "4.0" are the same value); other text as it reads
    if not book or book == shown:
        return False
    mine, theirs = _number(shown), _number(book)
    if mine is None or theirs is None:
        return True
    mantissa, _, exponent = shown.lower().removesuffix("%").partition("e")
    places = len(mantissa.partition(".")[2]) - int(exponent or 0)
    return round(mine, places) != round(theirs, places)


def _format(value, spec):
    try:
        return format(value, spec or (".6g" if isinstance(value, float) else ""))
    except (TypeError, ValueError):
        return repr(value)


# the claims this run checked, {{value: (at least / at most, bar)}}, and the glued values shown
# beside a differing book's value before their claim was checked, {{value: [(name, spec)]}}
_BARS, _WAITING = {{}}, {{}}


def _bar(value, spec):
    try:
        words, bar = _BARS[value]
    except (KeyError, TypeError):
        return ""
    return f"; the chapter claims {{words}} {{_format(bar, spec)}}"


def _as_text(name, value):
    spec, book = _TEXT.get(name, ("", ""))
    shown = _format(value, spec)
    if not _differs(shown, book):
        return f"{{name}} = {{shown}}"
    if not _bar(value, spec):
        try:
            _WAITING.setdefault(value, []).append((name, spec))
        except TypeError:  # not a number the chapter can claim anything about
            pass
    return f"{{name}} = {{shown}}   (book: {{book}}{{_bar(value, spec)}})"


def _claiming(check, words):
    # the chapter's claims.at_least / at_most, which also note the bar of the value they check
    def claiming(name, value, bar, what, n=None):
        _BARS[value] = (words, bar)
        for glued, spec in _WAITING.pop(value, []):
            print(f"{{glued}}: the chapter claims {{words}} {{_format(bar, spec)}} (your run: "
                  f"{{_format(value, spec)}})")
        return check(name, value, bar, what, n)

    claiming.__wrapped__ = check
    return claiming


_claims.at_least = _claiming(getattr(_claims.at_least, "__wrapped__", _claims.at_least), "at least")
_claims.at_most = _claiming(getattr(_claims.at_most, "__wrapped__", _claims.at_most), "at most")


def glue(name, value, display=False):
    \"\"\"Shows what the book's glue records (always: the display argument is the book's).\"\"\"
    if hasattr(value, "savefig"):  # a matplotlib figure
        import matplotlib.pyplot as plt

        print(_FIGURES.get(name, f"{{name}}, drawn by your run:"))
        _show(value)
        plt.close(value)  # shown once, as it was when glued
    else:
        print(_as_text(name, value))
"""


def glue_shows_cell(figures: dict[str, str], text: dict[str, tuple[str, str]]) -> dict:
    """The collapsed cell that makes ``glue`` show what it records (see ``GLUE_SHOWS``):
    ``figures`` {glued figure: the line printed above it}, ``text`` {glued value: (the format the
    text uses, the book's value or "")}."""
    source = GLUE_SHOWS.format(figures=pprint.pformat(figures, width=100, sort_dicts=False),
                               text=pprint.pformat(text, width=100, sort_dicts=False))  # fmt: skip
    return collapsed_cell(source, GLUE_SHOWS_TAG, "otter_ignore")


def plain(notebook: dict, doc: str, executed: Path | None = None, root: Path = ROOT,
          glued: dict[str, dict] | None = None) -> dict:  # fmt: skip
    """``notebook`` (JSON) in plain Markdown; ``doc``: its page, e.g. ``"chapters/lstm"``; ``executed``:
    the notebook as the book build executed it (for the glued values and figures), if there is one;
    ``glued``: the book's values ({glue name: mime bundle}) instead (``tools.handout.book_values``)."""
    nb = copy.deepcopy(notebook)
    cells = nb["cells"]
    conv = Converter(doc, glued if glued is not None else glued_outputs(executed), root)
    markdown = [c["source"] for c in cells if c["cell_type"] == "markdown"]
    code = [(i, c["source"]) for i, c in enumerate(cells) if c["cell_type"] == "code"]
    # the glued figures ({glue:figure} name: its label) and the first cell that glues each
    figures = (m for text in markdown for m in DIRECTIVE.finditer(text) if m.group("name") == "glue:figure")
    shown_figures = {m.group("arg").strip(): _options(m.group("body"))[0].get("name", "") for m in figures}
    conv.drawn_at = {n: i for i, src in reversed(code) for n in glued_names(src) if n in shown_figures}
    first_heading = None
    for i, cell in enumerate(cells):
        conv.cell = i
        src = cell["source"]
        if cell["cell_type"] == "markdown":
            attachments = dict(cell.get("attachments", {}))
            cell["source"] = conv.markdown(src, attachments)
            if attachments:
                cell["attachments"] = attachments
            if first_heading is None and re.search(r"^# ", src, re.M):
                first_heading = i
        elif cell["cell_type"] == "code" and HIDDEN_TAGS & set(tags(cell)) and "solution" not in tags(cell):
            meta = cell.setdefault("metadata", {})
            meta.setdefault("jupyter", {})["source_hidden"] = True
            meta["cellView"] = "form"  # Colab shows the title line only
            if not src.lstrip().startswith("# @title"):
                drawn = [conv.figure_name(shown_figures[n]) for n in glued_names(src) if n in shown_figures]
                title = (f"Draws {' and '.join(drawn)} of the text (under this cell when you run it)" if drawn
                         else what_it_does(src))  # fmt: skip
                cell["source"] = f"# @title {title}\n{src}"
    # glue() shows what it records, from the cell after the one that imports it
    if imports := [i for i, src in code if GLUE_IMPORT.search(src)]:
        values, formats = {}, conv.formats
        for name in dict.fromkeys(n for _, src in code for n in glued_names(src) if n not in shown_figures):
            spec = formats.get(name, "")
            book = glue_text(f"{name}:{spec}" if spec else name, conv.glued) or ""
            if spec or book:  # the others print as they are
                values[name] = (spec, book)
        figures = {name: f"{conv.figure_name(label, True)} of the text, drawn by your run "
                   "(the text shows the book's run):" for name, label in shown_figures.items()}  # fmt: skip
        cells.insert(imports[0] + 1, glue_shows_cell(figures, values))
    note = VALUES_NOTE if conv.glued and not conv.missing_values else NAMES_NOTE
    cells.insert(first_heading + 1 if first_heading is not None else 0,
                 {"cell_type": "markdown", "metadata": {}, "source": note})  # fmt: skip
    if refs := conv.references():
        cells.append({"cell_type": "markdown", "metadata": {}, "source": refs})
    if nb.get("nbformat", 4) == 4 and nb.get("nbformat_minor", 0) >= 5:
        for j, cell in enumerate(cells):
            cell.setdefault("id", f"plain-{j}")
    return nb
