"""No exercise is answered on its own page: each question's reference solution against the page's
code, and each value its tests expect against the page's text and printed outputs.

    python -m tools.checks.answer_on_page [CHAPTER ...] [--cache DIR] [--execute]   (PYTHONPATH=code)

prints every question's scores and what is flagged; exit status 1 when a question not on the
allow-list (``ALLOWED``: the issue's ``KNOWN_LEAKS`` and ``FOUND_BY_THIS_CHECK``) is answered on
its page, or when a listed one is no longer found in a chapter checked with its outputs.

**Code (a).** The solution (the lines between ``# BEGIN SOLUTION`` and ``# END SOLUTION``) and every
listing of its page (the lesson's code cells, shown or not: the student notebook holds them all; the
fenced code of its markdown; the code each ``literalinclude`` pulls in, read by Sphinx's own
reader, so ``:pyobject:``, ``:lines:``, ``:start-after:`` ... cut what the page shows) become
token streams (Python's ``tokenize``): comments, docstrings and layout dropped, every number
``N``, every string ``S``, every name ``V`` unless it is a keyword, a builtin or an attribute
(``torch.sin`` is ``V . sin``: renaming variables or modules changes nothing, an API call stays
itself). The score is the share of the solution's tokens that lie in a run of ``K`` = 10
tokens which the page's code also holds (any listing): how much of the answer the page already
spells out, copied in runs longer than an idiom. A question is flagged at ``THRESHOLD`` = 0.45 or
above: over the 63 questions of the book the scores fall into the known leaks and their like (0.49
to 0.70) and the rest (0.39 and below), with no score between; solutions shorter than
``MIN_TOKENS`` tokens (a letter, one formula) are left to (b). A closed form copied into a larger
expression breaks the runs; so the solution's expressions (``ast``) are also matched against the
page's, each name of the solution standing for any expression: a question is flagged when
expressions of ``FORMULA_SIZE`` operations or more that the page computes make up
``FORMULA_THRESHOLD`` = 0.4 of its operations (0.47 for the closed form that positional_encoding's
Q2 asked for before issue 45 replaced it; 0.31 and below for every other question).

**Values (b).** The values the question's tests expect (scalars only: ``int``, ``float``, a letter),
and the reference solution evaluated on the page's own sizes (for a function of at most two integer
arguments, every choice of them among the integers the page prints), are searched in the page's
prose (glued numbers rendered as the reader sees them), its tables and printed outputs, the
question's own text excluded: a *distinctive* value anywhere (an integer with 3 significant digits
or more that is no power of two, 16,640 but not 100, 1,000 or 512; a float that is no whole number,
printed to 4 significant digits or more, 5.657; not a result equal to an argument); a rule read off
a column (``f(a1), f(a2), f(a3)`` printed as a list, ``a1, a2, a3`` too, not all equal); an answer
assigned by name (``hot_sampling = "b"``). Outputs come from an executed notebook: the book's
execution cache that ``make test`` fills (``_build/.jupyter_cache``), or a run of the notebook
(``--execute``); without either, the prose and the markdown's fixed text only.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import contextlib
import html
import io
import itertools
import keyword
import math
import os
import re
import sys
import textwrap
import time
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

from tools.course import ROOT, chapters, read
from tools.otter_format import QUESTION_MARK, answers, has_exercises, is_hidden_test

K = 10  # token K-grams: runs of 10 normalised tokens
THRESHOLD = 0.45  # containment at which a solution counts as shown (see the module docstring, and the report)
MIN_TOKENS = 20  # shorter solutions are judged by their values only
FORMULA_SIZE = 5  # operations in the smallest expression that counts
FORMULA_THRESHOLD = 0.4
MAX_PROBES = 20000  # argument tuples tried per question

# The questions answered on their page today (issue 45). Each must leave this list once its page
# is fixed; the test fails on a listed question that is no longer found, and on any other found.
KNOWN_LEAKS = {
}  # fmt: skip
# Found by this check beyond the list, at the same level as the known leaks (the question
# asks for the page's own listing again, with few changes): kept green here for the lead to judge;
# each must leave the list like the others.
FOUND_BY_THIS_CHECK = {}
ALLOWED = {**KNOWN_LEAKS, **FOUND_BY_THIS_CHECK}

_BUILTINS = set(dir(builtins))
_SKIP = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
         tokenize.ENCODING, tokenize.ENDMARKER}  # fmt: skip


# ---------------------------------------------------------------------------------------------
# (a) token streams


def normalized_tokens(source: str) -> list[str]:
    """``source`` as a normalised token stream (see the module docstring)."""
    out: list[str] = []
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(textwrap.dedent(source)).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        toks = []
        with contextlib.suppress(tokenize.TokenError, IndentationError, SyntaxError):
            for tok in tokenize.generate_tokens(io.StringIO(textwrap.dedent(source)).readline):
                toks.append(tok)
    statement_start = True  # after NEWLINE / INDENT / DEDENT: a string here is a docstring
    for i, tok in enumerate(toks):
        if tok.type in _SKIP:
            if tok.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
                statement_start = True
            continue
        if tok.type == tokenize.STRING:
            nxt = next((t for t in toks[i + 1 :] if t.type not in (tokenize.NL, tokenize.COMMENT)), None)
            if statement_start and (nxt is None or nxt.type in (tokenize.NEWLINE, tokenize.ENDMARKER)):
                continue  # a docstring or a bare string statement
            out.append("S")
        elif tok.type == tokenize.NUMBER:
            out.append("N")
        elif tok.type == tokenize.NAME:
            attribute = bool(out) and out[-1] == "."
            out.append(
                tok.string if attribute or keyword.iskeyword(tok.string) or tok.string in _BUILTINS else "V"
            )
        elif tok.type == tokenize.OP:
            out.append(tok.string)
        statement_start = False
    return out


def kgrams(tokens: list[str], k: int = K) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + k]) for i in range(len(tokens) - k + 1)}


def containment(solution: list[str], listings: list[list[str]], k: int = K) -> float:
    """The share of the solution's tokens that lie in a run of ``k`` tokens which the listings
    hold too (0 to 1): how much of the answer the page already spells out."""
    if len(solution) < k:
        return 0.0
    shown = set().union(*(kgrams(t, k) for t in listings)) if listings else set()
    covered = [False] * len(solution)
    for i in range(len(solution) - k + 1):
        if tuple(solution[i : i + k]) in shown:
            covered[i : i + k] = [True] * k
    return sum(covered) / len(solution)


def _parse(source: str) -> ast.Module | None:
    source = textwrap.dedent(source)
    for text in (source, "def _f():\n" + textwrap.indent(source, "    ")):  # an answer may ``return``
        with contextlib.suppress(SyntaxError):
            return ast.parse(text)
    return None


_LEAVES = (ast.Name, ast.Constant, ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)


def _size(node: ast.AST) -> int:
    """The operations (calls, operators, attributes, subscripts ...) in an expression."""
    return sum(1 for x in ast.walk(node) if not isinstance(x, (*_LEAVES, ast.keyword)))


def _matches(pattern: ast.AST, node: ast.AST) -> bool:
    """``node`` is ``pattern`` with each of the pattern's names replaced by some expression (a
    variable, or what the page computes in its place); numbers must be equal."""
    if isinstance(pattern, ast.Name):
        return isinstance(node, ast.expr)
    if type(pattern) is not type(node):
        return False
    if isinstance(pattern, ast.Constant):
        a, b = pattern.value, node.value
        numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b))
        return a == b if numbers else (type(a) is type(b) and a == b)
    for name in pattern._fields:
        if name == "ctx":
            continue
        x, y = getattr(pattern, name, None), getattr(node, name, None)
        if isinstance(x, list):
            if not isinstance(y, list) or len(x) != len(y):
                return False
            if not all(_matches(u, v) if isinstance(u, ast.AST) else u == v for u, v in zip(x, y)):
                return False
        elif isinstance(x, ast.AST):
            if not isinstance(y, ast.AST) or not _matches(x, y):
                return False
        elif x != y:
            return False
    return True


def formula_score(solution: str, listings: list[str], smallest: int = FORMULA_SIZE) -> tuple[float, str]:
    """The share of the solution's operations that lie in an expression of ``smallest`` operations
    or more which the page computes too, up to its names (any variable, or any expression in its
    place: ``4 * sin(k * w / 2) ** 2`` is found in ``4 * sin(arange(T)[:, None] * omega / 2) ** 2``);
    and the largest such expression."""
    tree = _parse(solution)
    if tree is None:
        return 0.0, ""
    index: dict[type, list[ast.AST]] = {}
    for source in listings:
        page = _parse(source)
        for node in ast.walk(page) if page is not None else ():
            if isinstance(node, ast.expr):
                index.setdefault(type(node), []).append(node)
    exprs = [n for n in ast.walk(tree) if isinstance(n, ast.expr) and _size(n) > 0]
    covered: set[int] = set()
    largest = ""
    for node in sorted(exprs, key=_size, reverse=True):
        if _size(node) < smallest or id(node) in covered:
            continue
        if any(_matches(node, other) for other in index.get(type(node), [])):
            covered.update(id(x) for x in ast.walk(node))
            largest = largest or ast.unparse(node)
    return (sum(id(n) in covered for n in exprs) / len(exprs) if exprs else 0.0), largest


# ---------------------------------------------------------------------------------------------
# a chapter as a page: its questions, its listings, its text


@dataclass
class QuestionBlock:
    name: str
    cells: list[int]  # the cells between # BEGIN QUESTION and # END QUESTION
    text: str = ""  # the question's markdown
    solution: str = ""  # the answer, between the markers


@dataclass
class Page:
    chapter: str
    questions: list[QuestionBlock]
    listings: list[tuple[str, str]]  # (where, code)
    text: list[tuple[str, str]]  # (where, prose or output), question texts tagged by name
    executed: bool = False
    notes: list[str] = field(default_factory=list)


def question_blocks(nb) -> list[QuestionBlock]:
    blocks, current = [], None
    for i, cell in enumerate(nb.cells):
        src = cell.source
        if cell.cell_type == "raw" and src.startswith(QUESTION_MARK):
            name = re.search(r"^name:\s*(\S+)", src, re.M)
            config = name.group(1) if name else f"question {len(blocks) + 1}"
            current = QuestionBlock(config, [i])
            blocks.append(current)
            continue
        if current is None:
            continue
        current.cells.append(i)
        if cell.cell_type == "raw" and src.strip().startswith("# END QUESTION"):
            current = None
        elif cell.cell_type == "markdown":
            current.text += src + "\n"
        elif cell.cell_type == "code" and "solution" in cell.get("metadata", {}).get("tags", []):
            current.solution += "\n".join(textwrap.dedent(a) for a in answers(src))
    return blocks


INCLUDE_OPTIONS = ("pyobject", "lines", "start-after", "end-before", "start-at", "end-at", "encoding")


class _Config:
    source_encoding = "utf-8-sig"


def literal_includes(markdown: str, base: Path) -> list[tuple[str, str]]:
    """(what, code) for each ``literalinclude`` of ``markdown``, cut as Sphinx cuts it."""
    from sphinx.directives.code import LiteralIncludeReader

    found = []
    for m in re.finditer(
        r"^(`{3,}|:{3,})\{literalinclude\}\s+(\S+)[ \t]*\n((?:[ \t]*:[\w-]+:.*\n?)*)", markdown, re.M
    ):
        options = {}
        for line in m.group(3).splitlines():
            key, _, value = line.strip()[1:].partition(":")
            options[key] = value.strip() if value.strip() else True
        options = {k: v for k, v in options.items() if k in INCLUDE_OPTIONS}
        if isinstance(options.get("dedent"), str):
            options["dedent"] = int(options["dedent"])
        options.pop("dedent", None)  # layout only: the tokens are the same
        path = (base / m.group(2)).resolve()
        text, _ = LiteralIncludeReader(str(path), options, _Config()).read()
        found.append((f"literalinclude {m.group(2)} {options}", text))
    return found


FENCE = re.compile(
    r"^(`{3,})(?:python|py|ipython3?|\{code-block\}\s+python|\{code\}\s+python)[ \t]*\n([\s\S]*?)^\1", re.M
)
GLUE = re.compile(r"\{glue(?::text|:any|:)?\}`([^`:]+)(?::([^`]*))?`")


def _glue_values(nb) -> dict[str, str]:
    values = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            meta = out.get("metadata", {}).get("scrapbook")
            if meta and "name" in meta:
                data = out.get("data", {})
                plain = next((v for k, v in data.items() if k.endswith("text/plain")), None)
                if plain is not None:
                    values[meta["name"]] = plain if isinstance(plain, str) else "".join(plain)
    return values


def _render_glue(markdown: str, glued: dict[str, str]) -> str:
    def one(m):
        name, spec = m.group(1).strip(), m.group(2)
        if name not in glued:
            return " "
        raw = glued[name]
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            return raw
        if spec:
            with contextlib.suppress(ValueError, TypeError):
                return format(value, spec)
        return str(value)

    return GLUE.sub(one, markdown)


def _output_text(out) -> str:
    if out.get("metadata", {}).get("scrapbook"):
        return ""  # a glued value: shown where the prose cites it
    if out.get("output_type") == "stream":
        return out.get("text", "")
    data = out.get("data", {})
    for kind in ("text/markdown", "text/html", "text/latex", "text/plain"):
        if kind in data:
            text = data[kind] if isinstance(data[kind], str) else "".join(data[kind])
            if kind == "text/html":
                text = html.unescape(
                    re.sub(r"<[^>]+>", " ", re.sub(r"</t[dh]>|</tr>|<br\s*/?>", " |\n", text))
                )
            return text
    return ""


def page_of(notebook: Path, executed=None) -> Page:
    """The page of ``notebook`` (outputs from ``executed``, the same notebook run, if given)."""
    nb = read(notebook)
    ran = executed if executed is not None else nb
    blocks = question_blocks(nb)
    in_block = {i: b.name for b in blocks for i in b.cells}
    glued = _glue_values(ran)
    listings, text = [], []
    for i, cell in enumerate(nb.cells):
        where = f"cell {i}"
        if cell.cell_type == "code" and i not in in_block:
            listings.append((where, cell.source))
            if i < len(ran.cells):
                printed = "\n".join(_output_text(o) for o in ran.cells[i].get("outputs", []))
                if printed.strip():
                    text.append((f"{where} output", printed))
        elif cell.cell_type == "markdown":
            for m in FENCE.finditer(cell.source):
                listings.append((f"{where} fenced code", m.group(2)))
            for what, code in literal_includes(cell.source, notebook.parent):
                listings.append((f"{where} {what}", code))
            owner = in_block.get(i)
            text.append(
                (f"{where}" + (f" (text of {owner})" if owner else ""), _render_glue(cell.source, glued))
            )
    has_outputs = any(c.get("outputs") for c in ran.cells if c.cell_type == "code")
    return Page(notebook.stem, blocks, listings, text, executed=has_outputs)


# ---------------------------------------------------------------------------------------------
# (b) the values the tests expect


@dataclass
class Expected:
    question: str  # the otter question (block) name
    check: str  # the harness question's name
    args: tuple
    value: object


def _scalar(value) -> bool:
    return type(value) in (int, float, str)


def expected_values(notebook: Path) -> tuple[list[Expected], dict[str, dict], list[str]]:
    """The scalar values each question's tests expect: ``(expected, answers, errors)``, where
    ``answers`` maps each question to the names its reference solution defines (name: object).

    Runs the exercise section (its set-up cells, the reference solutions, the public and hidden
    test cells) with ``Question.check`` replaced by a recorder of its cases' expected results.
    The one place that reads question declarations: when they move out of the notebooks, only
    this function changes."""
    import torch

    from seqlab.exercises import harness

    nb = read(notebook)
    blocks = question_blocks(nb)
    owner = {i: b.name for b in blocks for i in b.cells}
    first = min((b.cells[0] for b in blocks), default=len(nb.cells))
    start = max((i for i in range(first) if nb.cells[i].cell_type == "markdown"
                 and re.search(r"^##\s+Exercises", nb.cells[i].source, re.M)), default=first)  # fmt: skip
    found: list[Expected] = []
    errors: list[str] = []
    defined: dict[str, dict] = {}
    current = {"block": None}

    def record(self, answer, namespace=None, public=True):
        for _label, make in self.cases(public):
            try:
                if self.judge is not None:
                    return
                if self.oracle is None:
                    args, want = make()
                else:
                    args = make()
                    want = self.oracle(*args)
            except (ValueError, TypeError):
                continue  # a case that must raise
            if not _scalar(want):
                return  # a tensor, a tuple ...: not a value a page could print
            if not all(_scalar(a) for a in args):
                continue
            found.append(Expected(current["block"], self.name, tuple(args), want))

    original = harness.Question.check
    harness.Question.check = record
    registry, rng = dict(harness._QUESTIONS), torch.random.get_rng_state()  # put back afterwards
    namespace: dict = {"__name__": "__exercises__"}
    cwd = os.getcwd()
    try:
        os.chdir(notebook.parent)
        for i in range(start, len(nb.cells)):
            cell = nb.cells[i]
            if cell.cell_type != "code":
                continue
            current["block"] = owner.get(i)
            source = "\n".join(x for x in cell.source.splitlines() if not x.lstrip().startswith(("%", "!")))
            before = set(namespace)
            try:
                exec(compile(source, f"{notebook.name} cell {i}", "exec"), namespace)  # noqa: S102
            except Exception as error:  # noqa: BLE001
                errors.append(f"{notebook.stem} cell {i}: {type(error).__name__}: {error}")
            tags = cell.get("metadata", {}).get("tags", [])
            if owner.get(i) and "solution" in tags and not is_hidden_test(cell):
                defined.setdefault(owner[i], {}).update(
                    {k: namespace[k] for k in set(namespace) - before if not k.startswith("_")}
                )
    finally:
        os.chdir(cwd)
        harness.Question.check = original
        harness._QUESTIONS.clear()
        harness._QUESTIONS.update(registry)
        torch.random.set_rng_state(rng)
    return found, defined, errors


_SEP = r"(?:,|\u2009|\u202f|\u00a0| |\\,|\{,\})"  # 16,640 16 640 16\,640 16{,}640
NUMBER = re.compile(
    rf"(?<![\w.])-?\d{{1,3}}(?:{_SEP}\d{{3}})+(?:\.\d+)?(?!\w)"
    r"|(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?!\w)"
)


def page_numbers(text: str) -> list[tuple[float, int, str]]:
    """(value, decimals, as printed) of every number in ``text`` (16640, 16,640, 16 640, 5.657)."""
    found = []
    for m in NUMBER.finditer(text):
        printed = m.group(0)
        plain = re.sub(r"[,\u2009\u202f\u00a0 ]|\\,|\{,\}", "", printed)
        try:
            value = float(plain)
        except ValueError:
            continue
        decimals = len(plain.split(".")[1].split("e")[0].split("E")[0]) if "." in plain else 0
        found.append((value, decimals, printed))
    return found


def _significant(printed: str) -> int:
    """Significant digits of a printed number; a decimal's trailing zeros say nothing of a value
    ("1.00000" is one digit: many results round to it)."""
    mantissa = re.sub(r"[eE].*", "", re.sub(r"[^\d.eE]", "", printed))
    if "." in mantissa:
        mantissa = mantissa.rstrip("0")
    return len(mantissa.replace(".", "").lstrip("0"))


def distinctive(value) -> bool:
    """A value a page will not print by chance: an integer with 3 significant digits or more that
    is no power of two (pages print sizes: 100, 1,000, 512), a float that is no whole number
    (printed with 4 significant digits or more, see ``matches``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return False
    if isinstance(value, int) or float(value).is_integer():
        n = abs(int(value))
        return len(str(n).rstrip("0")) >= 3 and n & (n - 1) != 0
    return True


def matches(value: float, number: tuple[float, int, str]) -> bool:
    """``value`` printed as ``number`` (rounded to its decimals), with 3 significant digits or more."""
    shown, decimals, printed = number
    if isinstance(value, int) or float(value).is_integer():
        return decimals == 0 and shown == value
    close = abs(value - shown) <= 0.5 * 10**-decimals * (1 + 1e-9)
    return close and decimals >= 1 and _significant(printed) >= 4


def _same_list(got: list, shown: list[float]) -> bool:
    return len(got) == len(shown) and all(abs(g - y) < 1e-9 + 0.005 * abs(g) for g, y in zip(got, shown))


LIST = re.compile(r"-?\d+(?:\.\d+)?(?:,[ \u00a0]-?\d+(?:\.\d+)?){2,}")


def page_lists(text: str) -> list[list[float]]:
    """Every list of 3 or more numbers printed as ``a, b, c``."""
    return [[float(x) for x in m.group(0).split(",")] for m in LIST.finditer(text)]


@dataclass
class Finding:
    question: str
    kind: str  # "code", "value", "rule", "named"
    score: float
    detail: str


def _probes(function, examples: list[Expected], page_ints: list[int]) -> list[tuple[tuple, object]]:
    """(arguments, the reference's result) on each declared case's arguments, and, for a function
    of at most two integer arguments, on every choice of them among the integers the page prints
    (its sizes; the other arguments as declared). A result equal to one of its arguments is left
    out (``n - 1`` at ``n`` = 1000 is no answer)."""
    tried, out = set(), []
    for e in examples:
        ints = [i for i, a in enumerate(e.args) if type(a) is int]
        variants = [e.args]
        if 1 <= len(ints) <= 2:
            for choice in itertools.product(page_ints, repeat=len(ints)):
                args = list(e.args)
                for i, n in zip(ints, choice):
                    args[i] = n
                variants.append(tuple(args))
        for args in variants:
            if args in tried or len(tried) >= MAX_PROBES:
                continue
            tried.add(args)
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    value = function(*args)
            except Exception:  # noqa: BLE001, S112
                continue
            if _scalar(value) and not isinstance(value, bool) and value not in args:
                out.append((args, value))
    return out


def value_findings(page: Page, expected: list[Expected], defined: dict[str, dict]) -> list[Finding]:
    findings: list[Finding] = []
    by_block: dict[str, list[Expected]] = {}
    for e in expected:
        if e.question:
            by_block.setdefault(e.question, []).append(e)
    all_text = "\n".join(t for _, t in page.text)
    page_ints = sorted(
        {int(v) for v, d, _ in page_numbers(all_text) if d == 0 and 1 <= v <= 100000 and v == int(v)}
    )
    code_text = "\n".join(src for _, src in page.listings)
    for block in page.questions:
        own = f"(text of {block.name})"
        text = "\n".join(t for where, t in page.text if not where.endswith(own))
        numbers = page_numbers(text)
        lists = page_lists(text)
        cases = by_block.get(block.name, [])
        named = {}
        for e in cases:
            if not e.args:  # a value, not a function: searched by its name
                names = [k for k, v in defined.get(block.name, {}).items() if not callable(v)]
                for name in names:
                    named[name] = e.value
        for name, value in named.items():
            forms = "|".join(re.escape(v) for v in (repr(value), str(value)))
            pattern = rf"\b{re.escape(name)}\s*=\s*(?:{forms})(?!\w)"
            hits = re.findall(pattern, text + "\n" + code_text)
            if hits:
                findings.append(Finding(block.name, "named", 1.0, f"{name} = {value!r} on the page"))
        values = [(e.args, e.value, "tests") for e in cases if distinctive(e.value)]
        functions = {k: v for k, v in defined.get(block.name, {}).items() if callable(v)}
        by_check: dict[str, list[Expected]] = {}
        for e in cases:
            by_check.setdefault(e.check, []).append(e)
        probes = []
        for check, examples in by_check.items():
            function = functions.get(check) or (
                functions[next(iter(functions))] if len(functions) == 1 else None
            )
            if function is None or not examples[0].args:
                continue
            probes += [(function, args, value) for args, value in _probes(function, examples, page_ints)]
        # a printed number that several different results of the reference round to is a
        # coincidence of a smooth function (ratios near 1 print alike), not an answer: it counts
        # only when every size that matches gives the same result (16,640 for every H is one answer)
        probed = [(args, value) for _, args, value in probes if distinctive(value)]
        for number in numbers:
            hits = [(args, value) for args, value in probed if matches(value, number)]
            if hits and len({value for _, value in hits}) == 1:
                values.append((*hits[0], "reference on the page's sizes"))
        seen = set()
        for args, value, source in values:
            for number in numbers:
                if matches(value, number) and (value, number[2]) not in seen:
                    seen.add((value, number[2]))
                    what = f"{value!r} = {block.name}{args} ({source}) printed as {number[2]!r}"
                    findings.append(Finding(block.name, "value", 1.0, what))
        # a rule read off a column: f(a1), f(a2), f(a3) printed as a list beside a1, a2, a3
        int_lists = [xs for xs in lists if all(x.is_integer() and x >= 1 for x in xs)]
        for function, n_args in {(id(f), len(a)): (f, len(a)) for f, a, _ in probes}.values():
            fixed = {a for f, a, _ in probes if f is function}
            for position in range(n_args):
                for args in {a[:position] + a[position + 1 :] for a in fixed}:
                    for xs in int_lists:
                        got = []
                        for x in xs:
                            full = args[:position] + (int(x),) + args[position:]
                            try:
                                got.append(function(*full))
                            except Exception:  # noqa: BLE001
                                got = None
                                break
                        if not got or not all(
                            isinstance(g, (int, float)) and not isinstance(g, bool) for g in got
                        ):
                            continue
                        if len(set(got)) < 2 or [float(g) for g in got] == xs:
                            continue
                        if any(_same_list(got, ys) for ys in lists):
                            shown = ", ".join(str(g) for g in got)
                            over = ", ".join(str(int(x)) for x in xs)
                            what = f"{shown} printed, = {block.name} at {args} over {over}"
                            findings.append(Finding(block.name, "rule", 1.0, what))
    return findings


# ---------------------------------------------------------------------------------------------
# the check


@dataclass
class Report:
    chapter: str
    scores: dict[str, tuple[float, int, str, float]]  # question -> (code, tokens, best listing, formula)
    findings: list[Finding]
    executed: bool
    errors: list[str]


def code_findings(page: Page) -> tuple[dict[str, tuple[float, int, str, float]], list[Finding]]:
    listings = [(where, normalized_tokens(src)) for where, src in page.listings]
    scores, findings = {}, []
    for block in page.questions:
        tokens = normalized_tokens(block.solution)
        score = containment(tokens, [t for _, t in listings])
        best = max(listings, key=lambda wt: containment(tokens, [wt[1]]), default=("-", []))
        formula, largest = formula_score(block.solution, [src for _, src in page.listings])
        scores[block.name] = (score, len(tokens), best[0], formula)
        if formula >= FORMULA_THRESHOLD:
            what = f"{formula:.0%} of its operations in expressions the page computes ({largest})"
            findings.append(Finding(block.name, "formula", formula, what))
        if len(tokens) >= MIN_TOKENS and score >= THRESHOLD:
            findings.append(
                Finding(
                    block.name,
                    "code",
                    score,
                    f"{score:.0%} of its tokens in runs of {K} the page holds (most in {best[0]})",
                )
            )
    return scores, findings


def executed_notebook(notebook: Path, cache: Path | None = None, execute: bool = False):
    """The notebook as last run, from the book's execution cache (None if not cached and not
    ``execute``)."""
    import nbformat

    if cache is not None and cache.is_dir():
        from jupyter_cache import get_cache

        from tools.book.solutions_switch import as_the_book_reads

        nb = nbformat.reads(as_the_book_reads(notebook.read_text(encoding="utf-8")), as_version=4)
        with contextlib.suppress(KeyError, ValueError, OSError):
            _, merged = get_cache(str(cache)).merge_match_into_notebook(nb)
            return merged
    if execute:
        from tools.course import execute as run

        return run(notebook)[0]
    return None


def check(notebook: Path, cache: Path | None = None, execute: bool = False) -> Report:
    page = page_of(notebook, executed_notebook(notebook, cache, execute))
    scores, findings = code_findings(page)
    expected, defined, errors = expected_values(notebook)
    findings += value_findings(page, expected, defined)
    return Report(notebook.stem, scores, findings, page.executed, errors)


def flagged(reports: list[Report]) -> dict[tuple[str, str], list[Finding]]:
    out: dict[tuple[str, str], list[Finding]] = {}
    for report in reports:
        for f in report.findings:
            out.setdefault((report.chapter, f.question), []).append(f)
    return out


def stale(reports: list[Report]) -> list[tuple[str, str]]:
    """The allow-listed questions no longer found, in chapters checked with their outputs (a leak
    seen only in outputs cannot be judged without them)."""
    found = flagged(reports)
    keys = [(r.chapter, name) for r in reports if r.executed for name in r.scores]
    return [key for key in keys if key in ALLOWED and key not in found]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", help="chapter names (default: every chapter with exercises)")
    parser.add_argument("--cache", type=Path, default=ROOT / "_build" / ".jupyter_cache")
    parser.add_argument("--execute", action="store_true", help="run a notebook the cache does not hold")
    args = parser.parse_args(argv)
    notebooks = [
        nb for nb in chapters() if has_exercises(nb) and (not args.chapters or nb.stem in args.chapters)
    ]
    start = time.perf_counter()
    reports = [check(nb, args.cache, args.execute) for nb in notebooks]
    found = flagged(reports)
    print(f"{'chapter':<20} {'question':<26} {'tokens':>6} {'code':>6} {'formula':>7}  flagged by")
    for report in reports:
        for name, (score, tokens, _, formula) in report.scores.items():
            kinds = sorted({f.kind for f in found.get((report.chapter, name), [])})
            short = "" if tokens >= MIN_TOKENS else " (short)"
            flags = ", ".join(kinds) or "-"
            print(
                f"{report.chapter:<20} {name:<26} {tokens:>6} {score:>6.2f} {formula:>7.2f}  {flags}{short}"
            )
    print()
    for report in reports:
        if not report.executed:
            print(f"{report.chapter}: no executed notebook (cache or --execute): prose only, no outputs")
        for error in report.errors:
            print(f"{report.chapter}: ERROR running the exercises: {error}")
    unexpected = 0
    for key, findings in found.items():
        status = "known (issue 45)" if key in KNOWN_LEAKS else "allowed, new" if key in ALLOWED else "NEW"
        unexpected += key not in ALLOWED
        print(f"{status:<17} {key[0]} {key[1]}:")
        for f in findings:
            print(f"    {f.kind}: {f.detail}")
    fixed = stale(reports)
    for key in fixed:
        print(f"no longer found   {key[0]} {key[1]}: take it off the allow-list")
    for key in [k for k in ALLOWED if k not in found and k not in fixed]:
        print(f"not found         {key[0]} {key[1]}: its chapter has no executed outputs here")
    print(f"{time.perf_counter() - start:.1f} s")
    return 1 if unexpected or fixed or any(r.errors for r in reports) else 0


if __name__ == "__main__":
    sys.exit(main())
