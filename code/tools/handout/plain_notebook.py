"""The student notebook in plain Jupyter Markdown: what the book's MyST markup means, without MyST.

A chapter is written for myst-nb (roles, directives, glued numbers, ``literalinclude``); JupyterLab,
Notebook 7, VS Code and Colab render none of it. :func:`plain` rewrites a notebook so that it reads
like the page, from the notebook file alone:

- ``{glue:text}`name:fmt``` becomes the book's value, in bold (a note at the top says so), taken
  from the notebook the book build executed (``_build/jupyter_execute``); without a build, the
  name in code font, which the student can print after running the notebook;
- ``{figure}`` (the SVG diagrams) and ``{glue:figure}`` (the book's plots) become images embedded
  as cell attachments (PNG, which every renderer shows), with their caption; the diagrams are drawn
  again by ``code/tools/diagrams``, the plots come from the executed notebook;
- ``{literalinclude}`` of ``seqlab`` becomes the code it includes, as a Python block;
- every named figure is numbered as the book numbers it ("Figure 20": one count over the pages in
  the order of ``_toc.yml``) and carries an HTML anchor (``<a id="fig-...">``), so ``{numref}``
  to a figure of the same chapter becomes a link to it in the notebook, with the plain text
  "Figure 20"; ``{doc}`` and references to other pages become links to the book's pages on the
  site that ``repository.url`` implies (``https://OWNER.github.io/REPO/``);
- the book's plots are labelled as the book's run: the cell that glues a figure draws it when the
  student runs the notebook, and every cell that glues values prints them ("name = value"). A
  collapsed cell inserted after the one that imports ``myst_nb.glue`` wraps it (see
  :func:`glue_shows_cell`);
- ``{cite:t}`` / ``{cite:p}`` become author-year text, with a reference list at the end;
- ``{exercise}`` / ``{solution}`` and admonitions become plain Markdown (``<details>`` for a
  dropdown);
- code cells the page hides (``remove-cell``, ``remove-input``, ``hide-input``) are collapsed
  (``jupyter.source_hidden`` for JupyterLab and Notebook, ``cellView: form`` for Colab) and start
  with a one-line ``# @title`` comment saying what they do.

It works on JSON (dicts), so it runs on the output of ``otter assign`` as well as on a source.
"""

from __future__ import annotations

import ast
import base64
import copy
import functools
import io
import json
import os
import re
import threading
from pathlib import Path

from tools.book.bib_style import who
from tools.course import ROOT, read, repository_url, tags, toc_docs

GLUE_PREFIX = "application/papermill.record/"
ADMONITIONS = ("note", "tip", "warning", "important", "caution", "hint", "seealso", "admonition", "attention")
HIDDEN_TAGS = ("remove-cell", "remove-input", "hide-input")
# an inline role: {name}`content`
ROLE = re.compile(r"\{(glue:text|glue|doc|numref|ref|cite:t|cite:p|cite:ps|cite:ts|cite|eq|math)\}`([^`]*)`")
# a fenced directive: ```{name} argument ... ``` or :::{name} ... :::
DIRECTIVE = re.compile(
    r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[a-z:\-]+)\}[ \t]*(?P<arg>[^\n]*)\n"
    r"(?P<body>[\s\S]*?)^(?P=fence)[ \t]*$",
    re.M,
)
MYST_LEFT = re.compile(r"\{[a-z:\-]+\}`|^(`{3,}|:{3,})\{[a-z:\-]+\}", re.M)


def myst_markup(text: str) -> list[str]:
    """The MyST roles and directives left in ``text`` (what no plain renderer shows)."""
    return [m.group(0) for m in MYST_LEFT.finditer(text)]


# ---------------------------------------------------------------------------------------------
# the site, the pages and their titles, the references


def site_url(root: Path = ROOT) -> str:
    """The book's address on GitHub Pages, from ``repository.url`` (github.com/OWNER/REPO)."""
    url = repository_url(root)
    m = re.match(r"https?://github\.com/([^/]+)/([^/]+?)(\.git)?$", url)
    if not m:
        return url.rstrip("/") + "/"
    return f"https://{m.group(1).lower()}.github.io/{m.group(2)}/"


@functools.cache
def titles(root: Path = ROOT) -> dict[str, str]:
    """{doc name relative to the root, e.g. "chapters/lstm": its first heading}."""
    found = {}
    for path in sorted((root / "chapters").glob("*.ipynb")):
        for cell in read(path).cells:
            m = re.search(r"^# (.+)$", cell["source"], re.M) if cell["cell_type"] == "markdown" else None
            if m:
                found[f"chapters/{path.stem}"] = m.group(1).strip()
                break
    intro = root / "intro.md"
    if intro.exists():
        m = re.search(r"^# (.+)$", intro.read_text(encoding="utf-8"), re.M)
        found["intro"] = m.group(1).strip() if m else "Introduction"
    return found


@functools.cache
def figure_labels(root: Path = ROOT) -> dict[str, tuple[str, str]]:
    """{figure name: (doc, caption)} over every chapter."""
    found = {}
    for path in sorted((root / "chapters").glob("*.ipynb")):
        for cell in read(path).cells:
            if cell["cell_type"] != "markdown":
                continue
            for m in DIRECTIVE.finditer(cell["source"]):
                options, body = _options(m.group("body"))
                if "name" in options:
                    found[options["name"]] = (f"chapters/{path.stem}", body.strip())
    return found


def _doc_markdown(root: Path, doc: str) -> list[str]:
    if (root / f"{doc}.ipynb").is_file():
        return [c["source"] for c in read(root / f"{doc}.ipynb").cells if c["cell_type"] == "markdown"]
    if (root / f"{doc}.md").is_file():
        return [(root / f"{doc}.md").read_text(encoding="utf-8")]
    return []


@functools.cache
def figure_numbers(root: Path = ROOT) -> dict[str, int]:
    """{figure name: its number in the book}: Sphinx numbers every named figure (``figure`` and
    ``glue:figure``) with one count over the pages, in the order of ``_toc.yml``."""
    found, n = {}, 0
    for doc in toc_docs(root):
        for text in _doc_markdown(root, doc):
            for m in DIRECTIVE.finditer(text):
                if m.group("name") in ("figure", "glue:figure"):
                    options, _ = _options(m.group("body"))
                    if options.get("name"):
                        n += 1
                        found[options["name"]] = n
    return found


def glued_names(source: str) -> list[str]:
    """The names a code cell's ``glue("name", ...)`` calls record, in order."""
    return re.findall(r"\bglue\(\s*[\"']([^\"']+)[\"']", source)


GLUE_IMPORT = re.compile(r"^from myst_nb import [^\n]*\bglue\b", re.M)


@functools.cache
def bibliography(root: Path = ROOT) -> dict[str, dict]:
    """{key: {"authors": [last names], "year", "title", "venue"}} from ``references.bib``."""
    from pybtex.database import parse_file

    if not (root / "references.bib").is_file():
        return {}
    data = parse_file(str(root / "references.bib"))
    found = {}
    for key, entry in data.entries.items():
        people = entry.persons.get("author", [])
        f = entry.fields
        venue = f.get("journal") or f.get("booktitle") or f.get("publisher") or f.get("howpublished") or ""
        found[key] = {
            "authors": [_latex_free(" ".join(p.last_names)) for p in people],
            "full": [
                _latex_free(" ".join(p.first_names + p.middle_names + p.prelast_names + p.last_names))
                for p in people
            ],
            "year": f.get("year", "n.d."),
            "title": _latex_free(f.get("title", "")),
            "venue": _latex_free(venue),
            "url": f.get("url", "") or (f"https://doi.org/{f['doi']}" if f.get("doi") else ""),
        }
    return found


def _latex_free(text: str) -> str:
    import codecs

    import latexcodec  # noqa: F401  (registers the "ulatex" codec; pybtex depends on it)

    text = re.sub(r"\\L(?=[a-z])", "Ł", re.sub(r"\\l(?=[a-z])", "ł", text))
    try:
        text = codecs.decode(text, "ulatex")
    except ValueError:
        pass
    text = re.sub(r"\\[a-zA-Z]+\{([^}]*)\}", r"\1", text)
    return re.sub(r"[{}]", "", text).replace("\\&", "&").replace("--", "–").strip()


def _author_text(key: str, bib: dict) -> tuple[str, str]:
    entry = bib.get(key)
    if entry is None:
        return key, ""
    return who(entry["authors"]) or key, entry["year"]


def reference_entry(key: str, bib: dict) -> str:
    e = bib[key]
    authors = ", ".join(e["full"])
    title = f"[{e['title']}]({e['url']})" if e["url"] else e["title"]
    venue = f" *{e['venue']}*." if e["venue"] else ""
    return f"- {authors} ({e['year']}). {title}.{venue}"


# ---------------------------------------------------------------------------------------------
# what the book's build computed: glued values and figures


def glued_outputs(executed: Path | None) -> dict[str, dict]:
    """{glue name: its mime bundle} from a notebook the book build executed (empty if none): from
    the ``.glue.json`` myst-nb writes beside it, or from the notebook's own outputs."""
    if executed is None or not executed.is_file():
        return {}
    found = {}
    # myst-nb moves the glued outputs out of the executed notebook into <name>.glue.json
    store = executed.with_name(executed.stem + ".glue.json")
    if store.is_file():
        for name, output in json.loads(store.read_text(encoding="utf-8")).items():
            found[name] = output.get("data", {})
    for cell in read(executed).cells:
        for out in cell.get("outputs", []):
            meta = out.get("metadata", {}).get("scrapbook")
            if not meta:
                continue
            prefix = meta.get("mime_prefix", GLUE_PREFIX)
            found[meta["name"]] = {
                k[len(prefix) :]: v for k, v in out.get("data", {}).items() if k.startswith(prefix)
            }
    return found


def glue_text(name_spec: str, glued: dict[str, dict]) -> str:
    """The text ``{glue:text}`name:spec``` shows, or None without the value."""
    name, _, spec = name_spec.partition(":")
    bundle = glued.get(name.strip())
    if not bundle or "text/plain" not in bundle:
        return None
    plain = bundle["text/plain"]
    plain = "".join(plain) if isinstance(plain, list) else plain
    if not spec:
        return plain.strip("'\"")
    try:
        value = ast.literal_eval(plain.strip())  # an int stays an int, as in myst-nb
    except (ValueError, SyntaxError):
        try:
            value = float(plain)
        except ValueError:
            return plain.strip("'\"")
    try:
        return format(value, spec)
    except (ValueError, TypeError):
        return plain.strip("'\"")


# ---------------------------------------------------------------------------------------------
# figures: the diagrams drawn again as PNG

_DRAW_LOCK = threading.Lock()


@functools.cache
def diagram_png(stem: str) -> bytes | None:
    """The PNG of the concept diagram ``chapters/images/<stem>.svg``, drawn by its code."""
    import matplotlib.pyplot as plt

    from tools.diagrams import build

    with _DRAW_LOCK:  # pyplot draws one figure at a time
        draw = build.diagrams().get(stem)
        if draw is None:
            return None
        fig = draw()
        buf = io.BytesIO()
        with plt.rc_context(build.SVG_RC):
            fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
        plt.close(fig)
        return buf.getvalue()


# ---------------------------------------------------------------------------------------------
# literalinclude


def _options(body: str) -> tuple[dict[str, str], str]:
    """(``:key: value`` options at the top of a directive's body, the rest)."""
    options, lines = {}, body.split("\n")
    i = 0
    while i < len(lines) and (m := re.match(r"^:([a-zA-Z\-]+):\s*(.*)$", lines[i])):
        options[m.group(1)] = m.group(2).strip()
        i += 1
    return options, "\n".join(lines[i:]).strip("\n")


def included_code(path: Path, options: dict[str, str]) -> str:
    """The lines a ``literalinclude`` with these options shows (pyobject, start-at, end-at,
    start-after, end-before, lines, dedent)."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    if "pyobject" in options:
        node = ast.parse(text)
        for part in options["pyobject"].split("."):
            node = next(
                n
                for n in ast.iter_child_nodes(node)
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == part
            )
        lines = lines[node.lineno - 1 : node.end_lineno]
    if "lines" in options:
        keep = []
        for part in options["lines"].split(","):
            a, _, b = part.strip().partition("-")
            keep += lines[int(a) - 1 : int(b or a)]
        lines = keep
    for key in ("start-at", "start-after"):
        if key in options:
            i = next(i for i, x in enumerate(lines) if options[key] in x)
            lines = lines[i + (key == "start-after") :]
    for key in ("end-at", "end-before"):
        if key in options:
            i = next(i for i, x in enumerate(lines) if options[key] in x)
            lines = lines[: i + (key == "end-at")]
    if "dedent" in options:
        n = (
            int(options["dedent"])
            if options["dedent"]
            else min(len(x) - len(x.lstrip()) for x in lines if x.strip())
        )
        lines = [x[n:] if x[:n].strip() == "" else x.lstrip() for x in lines]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# the conversion


class Converter:
    """Converts the cells of one chapter; collects the citations and attachments it makes."""

    def __init__(self, doc: str, glued: dict[str, dict], root: Path = ROOT):
        self.doc, self.glued, self.root = doc, glued, root
        self.site = site_url(root)
        self.bib = bibliography(root)
        self.cited: list[str] = []
        self.missing_values: list[str] = []
        self.numbers = figure_numbers(root)
        self.cell = 0  # the index of the cell being converted
        self.drawn_at: dict[str, int] = {}  # {glued figure: the index of the code cell that glues it}

    # links -------------------------------------------------------------------------------
    def page_url(self, doc: str, anchor: str = "") -> str:
        return f"{self.site}{doc}.html" + (f"#{anchor}" if anchor else "")

    def doc_link(self, content: str) -> str:
        m = re.match(r"^(.*?)\s*<([^>]+)>$", content)
        text, target = (m.group(1), m.group(2)) if m else (None, content)
        base = self.doc.rsplit("/", 1)[0] if "/" in self.doc else ""
        doc = target.lstrip("/") if target.startswith("/") else "/".join(x for x in (base, target) if x)
        parts = []
        for part in doc.split("/"):
            if part == "..":
                parts.pop()
            elif part and part != ".":
                parts.append(part)
        doc = "/".join(parts)
        title = text or titles(self.root).get(doc, target)
        return f"[{title}]({self.page_url(doc)})"

    def figure_name(self, label: str) -> str:
        """ "Figure 20" (the book's number), or "the figure" for a figure the book does not number."""
        number = self.numbers.get(label)
        return f"Figure {number}" if number else "the figure"

    def figure_link(self, content: str) -> str:
        """A link to a figure: to its anchor in this notebook when the figure is in this chapter,
        else to the book's page. The link text is plain text ("Figure 20" or the role's own text)."""
        m = re.match(r"^(.*?)\s*<([^>]+)>$", content)
        text, label = (m.group(1), m.group(2)) if m else (None, content)
        doc, _ = figure_labels(self.root).get(label, (self.doc, ""))
        number = self.numbers.get(label)
        if text:
            text = re.sub(r"%s|\{number\}", str(number) if number else "", text)
            text = plain_text(self.inline(text)) or self.figure_name(label)
        else:
            text = self.figure_name(label)
        if doc == self.doc:
            return f"[{text}](#{label})"
        return f"[{text} of “{plain_text(titles(self.root).get(doc, doc))}”]({self.page_url(doc, label)})"

    def cite(self, kind: str, content: str) -> str:
        keys = [k.strip() for k in content.split(",") if k.strip()]
        for k in keys:
            if k not in self.cited:
                self.cited.append(k)
        parts = [_author_text(k, self.bib) for k in keys]
        if kind in ("cite:t", "cite:ts"):
            return "; ".join(f"{who} ({year})" for who, year in parts)
        return "(" + "; ".join(f"{who}, {year}" for who, year in parts) + ")"

    def role(self, m: re.Match) -> str:
        kind, content = m.group(1), m.group(2)
        if kind in ("glue:text", "glue"):
            value = glue_text(content, self.glued)
            if value is None:
                self.missing_values.append(content)
                return f"`{content.partition(':')[0]}`"
            return f"**{value}**"
        if kind == "doc":
            return self.doc_link(content)
        if kind in ("numref", "ref"):
            return self.figure_link(content)
        if kind.startswith("cite"):
            return self.cite(kind, content)
        if kind == "math":
            return f"${content}$"
        return content

    # directives --------------------------------------------------------------------------
    def image(self, png: bytes | None, key: str, alt: str, caption: str, attachments: dict,
              label: str = "", heading: str = "", note: str = "") -> str:  # fmt: skip
        """An embedded PNG (or, without one, a note) with its caption, numbered as in the book,
        and an anchor that the notebook's figure links lead to."""
        caption = self.inline(caption.strip())
        number = self.figure_name(label) if label else "Figure"
        number = number[0].upper() + number[1:]
        anchor = f'<a id="{label}"></a>\n\n' if label else ""
        if png is None:
            return f"{anchor}> **{number}** ({note}). {caption}\n"
        attachments[key] = {"image/png": base64.b64encode(png).decode("ascii")}
        alt = alt.replace("[", "(").replace("]", ")")
        heading = f"{heading}\n\n" if heading else ""
        return f"{anchor}{heading}![{alt}](attachment:{key})\n\n*{number}. {caption}*\n"

    def where_drawn(self, glued_figure: str) -> str:
        """Where the cell that draws a glued figure sits, seen from the cell being converted."""
        at = self.drawn_at.get(glued_figure)
        if at is None:
            return "in the output of the cell that draws it"
        return f"in the output of the collapsed cell {'above' if at < self.cell else 'below'}"

    def directive(self, m: re.Match, attachments: dict) -> str:
        name, arg = m.group("name"), m.group("arg").strip()
        options, body = _options(m.group("body"))
        label, alt = options.get("name", ""), options.get("alt", "")
        if name == "figure":
            stem = Path(arg).stem
            return self.image(diagram_png(stem), f"{stem}.png", alt, body, attachments, label,
                              note="a diagram of the book")  # fmt: skip
        if name == "glue:figure":
            bundle = self.glued.get(arg, {})
            png = base64.b64decode(bundle["image/png"]) if "image/png" in bundle else None
            number = self.figure_name(label) if label else "The figure"
            number = number[0].upper() + number[1:]
            where = self.where_drawn(arg)
            heading = f"**{number} as the book's run drew it.** Your run draws its own {where}."
            note = f"your run draws it {where}"
            return self.image(png, f"{arg}.png", alt, body, attachments, label, heading, note)
        if name == "literalinclude":
            # abspath, not resolve: page.py builds from a folder of symlinks
            path = Path(os.path.abspath((self.root / self.doc).parent / arg))
            code = included_code(path, options)
            src = os.path.abspath(self.root / "code" / "src")
            where = os.path.relpath(path, src) if str(path).startswith(src + os.sep) else arg
            what = f", `{options['pyobject']}`" if "pyobject" in options else ""
            return f"*From `{where}`{what}:*\n\n```python\n{code}\n```\n"
        if name == "exercise":
            return (
                f"> **Exercise.** {self.inline(body)}\n".replace("\n\n", "\n>\n> ")
                .replace("\n", "\n> ")
                .rstrip("> ")
            )
        if name == "solution":
            return f"<details><summary>Solution</summary>\n\n{self.inline(body)}\n\n</details>\n"
        if name in ADMONITIONS:
            title = arg if name == "admonition" and arg else name.capitalize()
            quoted = "\n".join(f"> {x}" if x else ">" for x in self.inline(body).split("\n"))
            return f"> **{title}.**\n>\n{quoted}\n"
        if name in ("math",):
            return f"$$\n{body}\n$$\n"
        return self.inline(body) + "\n"

    def inline(self, text: str) -> str:
        return ROLE.sub(self.role, text)

    def markdown(self, text: str, attachments: dict) -> str:
        text = DIRECTIVE.sub(lambda m: self.directive(m, attachments), text)
        return self.inline(text)

    def references(self) -> str | None:
        if not self.cited:
            return None
        lines = [reference_entry(k, self.bib) for k in self.cited if k in self.bib]
        return "## References\n\nThe works cited in this notebook, by author and year:\n\n" + "\n".join(lines)


GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "eta": "η", "theta": "θ",
    "lambda": "λ", "mu": "μ", "nu": "ν", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "phi": "φ",
    "psi": "ψ", "omega": "ω", "Delta": "Δ", "Sigma": "Σ", "Omega": "Ω", "ell": "ℓ", "cdot": "·",
    "times": "×", "le": "≤", "ge": "≥", "leq": "≤", "geq": "≥", "to": "→", "infty": "∞",
}  # fmt: skip


def plain_text(text: str) -> str:
    """``text`` (Markdown with inline math) as plain words, for a link's text: no ``$``, no
    backslash command, no braces, no emphasis marks or code ticks."""
    text = re.sub(r"\\([A-Za-z]+)", lambda m: GREEK.get(m.group(1), m.group(1)), text)
    text = re.sub(r"[_^]\{([^{}]*)\}", r"\1", text)
    text = re.sub(r"[$`*{}\\]|(?<=[\w)])[_^](?=\w)", "", text)
    text = text.replace("[", "(").replace("]", ")")
    return re.sub(r"\s+", " ", text).strip()


def what_it_does(source: str) -> str:
    """A one-line description of a cell the page hides, for its ``# @title`` comment."""
    if re.search(r"^# claim\b", source, re.M):
        return "Checks the chapter's claims with assert"
    if re.search(r"glue\([^)]*fig", source) or "plt." in source or ".plot(" in source or "subplots" in source:
        return "Draws a figure of the text"
    if "results_table" in source:
        return "Builds a table of the text"
    if "glue(" in source:
        return "Computes numbers quoted in the text"
    if "assert" in source:
        return "Checks a result with assert"
    if re.match(r"(from \S+ )?import ", source.lstrip()):
        return "Imports and settings"
    defined = re.findall(r"^(?:def|class) (\w+)", source, re.M)
    if defined:
        more = ", ..." if len(defined) > 3 else ""
        return f"Defines {', '.join(defined[:3])}{more}, used below"
    return "Plumbing for what follows"


VALUES_NOTE = (
    "*Read offline: this notebook is the book's chapter without the book's extensions. Numbers in "
    "**bold** in the text are the values of the book's run; your run computes them again in the "
    'cells, which print each number the text quotes ("name = value") and draw each figure, so you '
    "can compare your run with the book's (collapsed cells hold the plumbing: click the dots to "
    "open one). Figure links lead to the figure in this notebook, other links to the book's pages.*"
)
NAMES_NOTE = (
    "*Read offline: this notebook is the book's chapter without the book's extensions. A name in "
    "code font in the text (like `name`) stands for a number the cells compute: when you run the "
    'notebook, the cell that computes it prints it ("name = value"), and each figure is drawn '
    "under the cell that computes it. Collapsed cells hold the plumbing: click the dots to open "
    "one. Figure links lead to the figure in this notebook, other links to the book's pages.*"
)


GLUE_SHOWS_TAG = "seqlab-glue-shows"
GLUE_SHOWS = """\
# @title Shows your run: each figure and each number the text quotes, as the cells compute them
# For the book, glue() records a value for the text and shows nothing. In this notebook it shows
# it instead: a figure is drawn under the cell that computes it, a number is printed as
# "name = value" (formatted as the text formats it, beside the book's value where they differ),
# so you can compare your run with the book's.

from IPython.display import display as _show

# {{glued figure: the line above it}}
_FIGURES = {figures}
# {{glued value: (the format the text uses, the value in the book's run)}}
_TEXT = {text}


def _as_text(name, value):
    spec, book = _TEXT.get(name, ("", ""))
    try:
        shown = format(value, spec) if spec else None
    except (TypeError, ValueError):
        shown = None
    if shown is None and isinstance(value, float):
        shown = f"{{value:.6g}}"
    elif shown is None:
        shown = value if isinstance(value, str) else repr(value)
    return f"{{name}} = {{shown}}" + (f"   (book: {{book}})" if book and book != shown else "")


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
    source = GLUE_SHOWS.format(figures=_dict_source(figures), text=_dict_source(text))
    return {
        "cell_type": "code",
        "execution_count": None,
        "metadata": {
            "tags": [GLUE_SHOWS_TAG, "otter_ignore"],
            "jupyter": {"source_hidden": True},
            "cellView": "form",
        },
        "outputs": [],
        "source": source,
    }


def _dict_source(d: dict) -> str:
    if not d:
        return "{}"
    return "{\n" + "".join(f"    {k!r}: {v!r},\n" for k, v in d.items()) + "}"


def text_formats(texts: list[str]) -> dict[str, str]:
    """{glued name: the format spec of its first ``{glue:text}`` in ``texts``} ("" for none)."""
    found = {}
    for text in texts:
        for m in ROLE.finditer(text):
            if m.group(1) in ("glue:text", "glue"):
                name, _, spec = m.group(2).partition(":")
                found.setdefault(name.strip(), spec)
    return found


def plain(notebook: dict, doc: str, executed: Path | None = None, root: Path = ROOT) -> dict:
    """``notebook`` (JSON) with its MyST markup turned into plain Markdown (see the module's doc).

    ``doc``: the notebook's page, e.g. ``"chapters/lstm"``; ``executed``: the notebook as the
    book build executed it (for the glued values and figures), if there is one.
    """
    nb = copy.deepcopy(notebook)
    conv = Converter(doc, glued_outputs(executed), root)
    markdown = [c["source"] for c in nb["cells"] if c["cell_type"] == "markdown"]
    # the glued figures ({glue:figure} name: its label) and the cells that glue them
    shown_figures = {}
    for text in markdown:
        for m in DIRECTIVE.finditer(text):
            if m.group("name") == "glue:figure":
                shown_figures[m.group("arg").strip()] = _options(m.group("body"))[0].get("name", "")
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            for name in glued_names(cell["source"]):
                if name in shown_figures:
                    conv.drawn_at.setdefault(name, i)
    first_heading = None
    for i, cell in enumerate(nb["cells"]):
        src = cell["source"]
        conv.cell = i
        if cell["cell_type"] == "markdown":
            attachments = dict(cell.get("attachments", {}))
            cell["source"] = conv.markdown(src, attachments)
            if attachments:
                cell["attachments"] = attachments
            if first_heading is None and re.search(r"^# ", src, re.M):
                first_heading = i
        elif cell["cell_type"] == "code":
            if any(t in tags(cell) for t in HIDDEN_TAGS) and "solution" not in tags(cell):
                meta = cell.setdefault("metadata", {})
                meta.setdefault("jupyter", {})["source_hidden"] = True
                meta["cellView"] = "form"  # Colab shows the title line only
                if not src.lstrip().startswith("# @title"):
                    drawn = [
                        conv.figure_name(shown_figures[n]) for n in glued_names(src) if n in shown_figures
                    ]
                    title = (
                        f"Draws {' and '.join(drawn)} of the text (under this cell when you run it)"
                        if drawn
                        else what_it_does(src)
                    )
                    cell["source"] = f"# @title {title}\n{src}"
    # glue() shows what it records, from the cell after the one that imports it
    imports = [
        i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code" and GLUE_IMPORT.search(c["source"])
    ]
    if imports:
        formats = text_formats(markdown)
        values, seen = {}, set(shown_figures)
        for cell in nb["cells"]:
            for name in glued_names(cell["source"]) if cell["cell_type"] == "code" else []:
                if name in seen:
                    continue
                seen.add(name)
                spec = formats.get(name, "")
                book = glue_text(f"{name}:{spec}" if spec else name, conv.glued) or ""
                if spec or book:  # the others print as they are
                    values[name] = (spec, book)
        figures = {}
        for name, label in shown_figures.items():
            figure = conv.figure_name(label) if label else "The figure"
            figure = figure[0].upper() + figure[1:]
            figures[name] = f"{figure} of the text, drawn by your run (the text shows the book's run):"
        nb["cells"].insert(imports[0] + 1, glue_shows_cell(figures, values))
    note = VALUES_NOTE if conv.glued and not conv.missing_values else NAMES_NOTE
    note_cell = {"cell_type": "markdown", "metadata": {}, "source": note}
    refs = conv.references()
    cells = nb["cells"]
    at = (first_heading + 1) if first_heading is not None else 0
    cells.insert(at, note_cell)
    if refs:
        cells.append({"cell_type": "markdown", "metadata": {}, "source": refs})
    if nb.get("nbformat", 4) == 4 and nb.get("nbformat_minor", 0) >= 5:
        for j, cell in enumerate(cells):
            cell.setdefault("id", f"plain-{j}")
    return nb
