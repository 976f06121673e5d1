"""Student notebooks read well with no extension: no MyST markup left, figures embedded, the
package code the page shows present, links to the book's site, author-year citations with a
reference list, hidden cells collapsed with a one-line title (code/tools/handout/plain_notebook.py)."""

import base64
import json
import re
from pathlib import Path

import pytest

from tools.course import chapters, read
from tools.handout import plain_notebook as pn
from tools.handout import student

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = chapters()


NB = {"nbformat": 4, "nbformat_minor": 4, "metadata": {}}  # a notebook's header (cells without ids)


def _executed(path: Path, glued: dict[str, dict]) -> Path:
    """A notebook as the book build executed it: myst-nb moves its glued outputs ({name: mime
    bundle}) into ``<name>.glue.json`` beside it."""
    path.write_text(json.dumps({**NB, "cells": []}))
    store = {
        name: {"output_type": "display_data", "metadata": {}, "data": data} for name, data in glued.items()
    }
    path.with_name(path.stem + ".glue.json").write_text(json.dumps(store))
    return path


def _text(cell):
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def link_problems(notebook: dict) -> list[str]:
    """What is wrong with the links of a (student) notebook's Markdown: MyST or LaTeX markup in a
    link's text, a link to a figure of this notebook that leaves it, a link to an anchor that is
    not there. Empty when all is well."""
    cells = [c for c in notebook["cells"] if c["cell_type"] == "markdown"]
    text = "\n".join(_text(c) for c in cells)
    anchors = set(re.findall(r'<a (?:id|name)="([^"]+)"', text))
    anchors |= {m.group(1) for m in re.finditer(r"^#+ (.+)$", text, re.M)}  # headings
    problems = []
    for m in re.finditer(r"(?<!!)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^)\s]+)\)", text):
        words, url = m.group(1), m.group(2)
        if pn.myst_markup(words) or re.search(r"[{}$\\]|`\w+`|\{glue", words):
            problems.append(f"markup in the link text [{words}]")
        if url.startswith("#"):
            if url[1:] not in anchors and url[1:].replace("-", " ") not in anchors:
                problems.append(f"a link to #{url[1:]}, which is not in the notebook")
        elif "#" in url and url.split("#", 1)[1] in anchors:
            problems.append(f"a link to {url}, a figure of this notebook, leaves the notebook")
    return problems


@pytest.fixture(scope="module")
def converted():
    return {nb.stem: pn.plain(student.studentize(read(nb)), f"chapters/{nb.stem}") for nb in CHAPTERS}


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda p: p.stem)
def test_no_myst_markup_is_left(converted, notebook):
    nb = converted[notebook.stem]
    left = [x for c in nb["cells"] if c["cell_type"] == "markdown" for x in pn.myst_markup(_text(c))]
    assert left == []
    text = "\n".join(_text(c) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert "images/" not in text, "a figure still points at a file the notebook does not carry"


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda p: p.stem)
def test_every_diagram_is_embedded_with_its_caption(converted, notebook):
    source = "\n".join(_text(c) for c in read(notebook)["cells"] if c["cell_type"] == "markdown")
    figures = re.findall(r"^```\{figure\} images/(\S+)\.svg", source, re.M)
    assert figures, "every chapter has a concept diagram"
    nb = converted[notebook.stem]
    for stem in figures:
        (cell,) = [c for c in nb["cells"] if f"attachment:{stem}.png" in _text(c)]
        png = base64.b64decode(cell["attachments"][f"{stem}.png"]["image/png"])
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 2000
        after = _text(cell).split(f"attachment:{stem}.png)", 1)[1]
        assert re.search(r"^\*\S", after.strip(), re.M), "the caption follows the image"


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda p: p.stem)
def test_the_package_code_the_page_shows_is_in_the_notebook(converted, notebook):
    source = "\n".join(_text(c) for c in read(notebook)["cells"] if c["cell_type"] == "markdown")
    includes = list(re.finditer(r"^```\{literalinclude\} (\S+)\n((?::[^\n]*\n)*)", source, re.M))
    text = "\n".join(_text(c) for c in converted[notebook.stem]["cells"])
    for m in includes:
        options = dict(re.findall(r"^:([a-z\-]+):\s*(.*)$", m.group(2), re.M))
        path = (notebook.parent / m.group(1)).resolve()
        assert path.is_relative_to(ROOT / "code" / "src" / "seqlab")
        code = pn.included_code(path, options)
        assert len(code.splitlines()) >= 3
        assert f"```python\n{code}\n```" in text
        # the same lines as in the file, in order (a real excerpt, not a rewrite)
        assert code.replace(" ", "") in path.read_text().replace(" ", "") or options.get("dedent")


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda p: p.stem)
def test_links_citations_and_hidden_cells(converted, notebook):
    nb = converted[notebook.stem]
    text = "\n".join(_text(c) for c in nb["cells"] if c["cell_type"] == "markdown")
    site = "https://seqlab-course.github.io/seqlab/"
    links = re.findall(r"\]\((https?://[^)]+)\)", text)
    assert all(
        u.startswith(site) or "doi.org" in u or "arxiv" in u or "aclanthology" in u or "http" in u
        for u in links
    )
    source = read(notebook)["cells"]
    if any("{cite" in _text(c) for c in source):
        assert _text(nb["cells"][-1]).startswith("## References")
        assert re.search(r"\w+( et al\.| and \w+)?,? \(?\d{4}", text)
    for cell in nb["cells"]:
        tags = cell.get("metadata", {}).get("tags", [])
        if cell["cell_type"] == "code" and set(tags) & {"remove-cell", "remove-input", "hide-input"}:
            if "solution" in tags:
                continue
            assert (
                cell["metadata"]["jupyter"]["source_hidden"] is True
                and cell["metadata"]["cellView"] == "form"
            )
            assert _text(cell).startswith("# @title ") and len(_text(cell).splitlines()[0]) < 100


def test_doc_links_point_at_the_pages_of_the_site():
    conv = pn.Converter("chapters/luong", {})
    assert conv.inline("see {doc}`bahdanau`") == (
        f"see [{pn.titles()['chapters/bahdanau']}](https://seqlab-course.github.io/seqlab/chapters/bahdanau.html)"
    )
    assert (
        conv.inline("{doc}`the start <../intro>`")
        == "[the start](https://seqlab-course.github.io/seqlab/intro.html)"
    )
    assert "lstm.html#fig-lstm-cell" in conv.inline("{numref}`fig-lstm-cell`")


def test_citations_are_author_year():
    conv = pn.Converter("chapters/x", {})
    assert conv.inline("{cite:t}`vaswani2017attention`") == "Vaswani et al. (2017)"
    assert (
        conv.inline("{cite:p}`cheng2016long,vaswani2017attention`")
        == "(Cheng et al., 2016; Vaswani et al., 2017)"
    )
    assert conv.references().startswith("## References")
    assert "Łukasz Kaiser" in conv.references()


def test_glued_values_come_from_the_executed_notebook(tmp_path):
    executed = _executed(
        tmp_path / "x.ipynb", {"acc": {"text/plain": "0.98765", "image/png": "iVBORw0KGgo="}}
    )
    md = {"cell_type": "markdown", "metadata": {}, "source": "It reached {glue:text}`acc:.1%`."}
    nb = pn.plain({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [md]}, "chapters/x", executed)
    assert "It reached **98.8%**." in [_text(c) for c in nb["cells"]]
    assert "Numbers in **bold**" in _text(nb["cells"][0])
    nb = pn.plain({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [md]}, "chapters/x", None)
    assert "It reached `acc`." in [_text(c) for c in nb["cells"]]


def test_site_url_follows_the_repository_url(tmp_path):
    (tmp_path / "_config.yml").write_text("repository:\n  url: https://github.com/Some-Org/my-course\n")
    assert pn.site_url(tmp_path) == "https://some-org.github.io/my-course/"


def test_the_downloaded_notebook_is_plain_too():
    """The otter-built student notebook (what the download button serves) goes through the same steps."""
    nb = student.student_notebook(ROOT / "chapters" / "self_attention.ipynb")
    assert student.SETUP_TAG in nb["cells"][0]["metadata"]["tags"]
    left = [x for c in nb["cells"] if c["cell_type"] == "markdown" for x in pn.myst_markup(_text(c))]
    assert left == []
    assert any("wrong_entry = (" in _text(c) for c in nb["cells"])
    assert link_problems(nb) == []


def test_glued_values_from_the_store_myst_nb_writes(tmp_path):
    """myst-nb moves glued outputs out of the executed notebook into ``<name>.glue.json``."""
    executed = _executed(tmp_path / "x.ipynb", {"n": {"text/plain": "1234"}})
    conv = pn.Converter("chapters/x", pn.glued_outputs(executed))
    assert conv.inline("{glue:text}`n:,`, {glue:text}`n`") == "**1,234**, **1234**"


# ---------------------------------------------------------------------------------------------
# the student's own run: every figure drawn, every glued value printed


def _glue_shows(nb):
    (at,) = [i for i, c in enumerate(nb["cells"]) if pn.GLUE_SHOWS_TAG in c["metadata"].get("tags", [])]
    return at, nb["cells"][at]


def _run_glue_shows(cell, monkeypatch):
    """Execute the glue-shows cell; returns its namespace and what it displayed."""
    import IPython.display

    from seqlab import claims

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj))
    for check in ("at_least", "at_most"):  # the cell wraps them: put the package's back afterwards
        monkeypatch.setattr(claims, check, getattr(claims, check))
    namespace = {}
    exec(compile(_text(cell), "<glue-shows cell>", "exec"), namespace)
    return namespace, shown


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda p: p.stem)
def test_the_students_run_shows_every_figure_and_value(converted, notebook, monkeypatch):
    nb = converted[notebook.stem]
    at, cell = _glue_shows(nb)
    assert cell["metadata"]["jupyter"]["source_hidden"] and "otter_ignore" in cell["metadata"]["tags"]
    assert pn.GLUE_IMPORT.search(_text(nb["cells"][at - 1])), "right after the cell that imports glue"
    glued = [
        (i, n)
        for i, c in enumerate(nb["cells"])
        if c["cell_type"] == "code"
        for n in pn.glued_names(_text(c))
    ]
    assert glued and all(i > at for i, _ in glued), "every cell that glues runs after the wrapper"
    namespace, _ = _run_glue_shows(cell, monkeypatch)
    source = "\n".join(_text(c) for c in read(notebook)["cells"] if c["cell_type"] == "markdown")
    figures = re.findall(r"^```\{glue:figure\} (\S+)", source, re.M)
    assert figures and set(figures) <= set(namespace["_FIGURES"])
    numbers = pn.figure_numbers()
    for name in figures:
        label = re.search(rf"^```\{{glue:figure\}} {name}\n:name: (\S+)", source, re.M).group(1)
        assert namespace["_FIGURES"][name].startswith(
            f"Figure {numbers[label]} of the text, drawn by your run"
        )
        # the cell that glues it says so in its title, the figure in the text is labelled the book's
        (drawing,) = [c for c in nb["cells"] if c["cell_type"] == "code" and name in pn.glued_names(_text(c))]
        title = _text(drawing).splitlines()[0]
        assert not title.startswith("# @title") or f"Figure {numbers[label]}" in title
        (md,) = [
            c for c in nb["cells"] if c["cell_type"] == "markdown" and f'<a id="{label}"></a>' in _text(c)
        ]
        assert f"Figure {numbers[label]}" in _text(md)


def test_glue_shows_figures_and_values_in_the_texts_format(monkeypatch, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cells = [
        {
            "cell_type": "code",
            "metadata": {},
            "outputs": [],
            "source": "from myst_nb import glue\nimport torch",
        },
        {
            "cell_type": "code",
            "metadata": {"tags": ["remove-cell"]},
            "outputs": [],
            "source": 'glue("acc", acc, display=False)\nglue("steps", 300, display=False)\n'
            'glue("fig_acc", fig, display=False)\nplt.close(fig)',
        },  # fmt: skip
        {
            "cell_type": "markdown",
            "metadata": {},
            "source": "It reached {glue:text}`acc:.1%` in {glue:text}`steps:,` steps.\n\n"
            "```{glue:figure} fig_acc\n:name: fig-acc\n\nAccuracy.\n```\n\nSee {numref}`fig-acc`.",
        },  # fmt: skip
    ]
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}
    out = pn.plain(nb, "chapters/x", _executed(tmp_path / "x.ipynb", {"acc": {"text/plain": "0.98765"}}))
    at, cell = _glue_shows(out)
    assert at == 2  # after the note and the import
    assert _text(out["cells"][3]).startswith("# @title Draws the figure of the text")
    namespace, shown = _run_glue_shows(cell, monkeypatch)
    glue = namespace["glue"]
    printed = []
    monkeypatch.setattr("builtins.print", lambda *a: printed.append(" ".join(map(str, a))))
    glue("acc", 0.98765, display=False)
    glue("acc", 0.9, display=False)
    glue("steps", 1200, display=False)
    glue("other", "a string", display=False)
    fig = plt.figure()
    glue("fig_acc", fig, display=False)
    assert printed[:4] == ["acc = 98.8%", "acc = 90.0%   (book: 98.8%)", "steps = 1,200", "other = a string"]
    assert printed[4].startswith("The figure of the text, drawn by your run") and shown == [fig]
    assert not plt.fignum_exists(fig.number), "shown once: the inline backend does not draw it again"
    md = _text(out["cells"][-1])
    assert '<a id="fig-acc"></a>' in md and "[the figure](#fig-acc)" in md
    assert "your run draws it in the output of the collapsed cell above" in md


def test_a_value_is_flagged_only_where_it_differs_from_the_books(monkeypatch, tmp_path):
    """Numbers are compared as numbers at the precision this run prints them, strings without the
    quotes of their repr: ``0`` is the book's ``0.0``, ``4`` its ``4.0``."""
    glued = {
        "zero": {"text/plain": "0.0"},
        "four": {"text/plain": "4.0"},
        "count": {"text/plain": "4"},
        "word": {"text/plain": "'dreiundzwanzig'"},
        "quoted": {"text/plain": "\"it's 'four'\""},  # a string that holds quotes
        "small": {"text/plain": "1.23456789e-05"},
        "acc": {"text/plain": "0.98765"},
    }
    conv = pn.Converter("chapters/x", pn.glued_outputs(_executed(tmp_path / "x.ipynb", glued)))
    assert conv.inline("{glue:text}`word`, {glue:text}`quoted`") == "**dreiundzwanzig**, **it's 'four'**"
    text = {name: ("", pn.glue_text(name, conv.glued)) for name in glued} | {
        "acc": (".1%", pn.glue_text("acc:.1%", conv.glued))
    }
    cell = pn.glue_shows_cell({}, text)
    namespace, _ = _run_glue_shows(cell, monkeypatch)
    printed = []
    monkeypatch.setattr("builtins.print", lambda *a: printed.append(" ".join(map(str, a))))
    glue = namespace["glue"]
    for name, value in [
        ("zero", 0), ("zero", 0.0), ("zero", -0.0), ("four", 4), ("count", 4.0), ("word", "dreiundzwanzig"),
        ("quoted", "it's 'four'"), ("small", 1.2345678e-05), ("acc", 0.98769),
    ]:  # fmt: skip
        glue(name, value, display=False)
    assert not [p for p in printed if "book:" in p], printed
    printed.clear()
    for name, value in [
        ("zero", 0.5), ("four", 3), ("count", 5), ("word", "dreizehn"), ("quoted", "its four"),
        ("small", 1.3e-05), ("acc", 0.9),
    ]:  # fmt: skip
        glue(name, value, display=False)
    assert printed == [
        "zero = 0.5   (book: 0.0)",
        "four = 3   (book: 4.0)",
        "count = 5   (book: 4)",
        "word = dreizehn   (book: dreiundzwanzig)",
        "quoted = its four   (book: it's 'four')",
        "small = 1.3e-05   (book: 1.23456789e-05)",
        "acc = 90.0%   (book: 98.8%)",
    ]


def test_a_differing_value_shows_the_bar_its_claim_sets(monkeypatch):
    """The bar of a claim on a glued value shows beside it where it differs from the book's, whether
    the chapter checks the claim before it glues the value or after; nothing where the value agrees."""
    from seqlab import claims

    text = {"acc": (".1%", "98.8%"), "loss": (".2f", "0.12"), "same": (".2f", "0.50"), "free": ("", "7")}
    namespace, _ = _run_glue_shows(pn.glue_shows_cell({}, text), monkeypatch)
    printed = []
    monkeypatch.setattr("builtins.print", lambda *a: printed.append(" ".join(map(str, a))))
    monkeypatch.setenv("SEQLAB_STRICT_CLAIMS", "0")
    glue = namespace["glue"]
    acc, loss, same = 0.9613, 0.25, 0.5
    assert claims.at_least("acc", acc, 0.95, "the accuracy") == acc  # the chapter's check, wrapped
    glue("acc", acc, display=False)  # the claim first
    glue("loss", loss, display=False)  # the value first: its bar comes with the claim
    claims.at_most("loss", loss, 0.3, "the loss")
    claims.at_least("same", same, 0.4, "a value the book's run agrees with")
    glue("same", same, display=False)
    glue("free", 8, display=False)
    assert printed == [
        "acc = 96.1%   (book: 98.8%; the chapter claims at least 95.0%)",
        "loss = 0.25   (book: 0.12)",
        "loss: the chapter claims at most 0.30 (your run: 0.25)",
        "same = 0.50",
        "free = 8   (book: 7)",
    ]
    # a missed bar still warns in words, as without the cell
    with pytest.warns(claims.ClaimWarning, match="at least 0.99"):
        claims.at_least("acc", acc, 0.99, "the accuracy")


def test_the_books_figure_is_labelled_as_the_books_run(tmp_path):
    executed = _executed(tmp_path / "self_attention.ipynb", {"fig_heads": {"image/png": "iVBORw0KGgo="}})
    source = read(ROOT / "chapters" / "self_attention.ipynb")
    nb = pn.plain(student.studentize(source), "chapters/self_attention", executed)
    number = pn.figure_numbers()["fig-heads"]
    (md,) = [c for c in nb["cells"] if '<a id="fig-heads"></a>' in _text(c)]
    assert (
        f"**Figure {number} as the book's run drew it.** Your run draws its own in the output of the "
        "collapsed cell above." in _text(md)
    )
    assert "attachment:fig_heads.png" in _text(md) and f"*Figure {number}. " in _text(md)


# ---------------------------------------------------------------------------------------------
# no raw markup in link texts; figure links stay in the notebook


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda p: p.stem)
def test_link_texts_are_plain_and_figure_links_stay_in_the_notebook(converted, notebook):
    nb = converted[notebook.stem]
    assert link_problems(nb) == []
    text = "\n".join(_text(c) for c in nb["cells"] if c["cell_type"] == "markdown")
    source = "\n".join(_text(c) for c in read(notebook)["cells"] if c["cell_type"] == "markdown")
    for label in re.findall(r"\{numref\}`(?:[^`<]*<)?([^`>]+)>?`", source):
        if pn.figure_labels()[label] == f"chapters/{notebook.stem}":
            assert f"](#{label})" in text and f'<a id="{label}"></a>' in text
            assert f"[Figure {pn.figure_numbers()[label]}](#{label})" in text


def test_link_problems_finds_markup_and_figure_links_that_leave():
    def nb(*sources):
        return {"cells": [{"cell_type": "markdown", "metadata": {}, "source": s} for s in sources]}

    good = nb(
        '<a id="fig-x"></a>\n\n![a plot](attachment:x.png)',
        "See [Figure 3](#fig-x) and [the book](https://a.b/c.html).",
    )
    assert link_problems(good) == []
    raw = nb(
        "See [the figure “Attention of global (after {glue:text}`a5_steps` steps)”](https://a.b/c.html#fig-y)."
    )
    latex = nb("See [Attention weights $\\alpha_{ij}$](#fig-y).", '<a id="fig-y"></a>')
    leaves = nb(
        '<a id="fig-x"></a>', "See [Figure 3](https://seqlab-course.github.io/seqlab/chapters/x.html#fig-x)."
    )
    missing = nb("See [Figure 3](#fig-z).")
    assert [len(link_problems(x)) for x in (raw, latex, leaves, missing)] == [1, 1, 1, 1]
    assert "markup" in link_problems(raw)[0] and "leaves the notebook" in link_problems(leaves)[0]
