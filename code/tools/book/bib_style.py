"""Sphinx extension: an author-year bibliography (pybtex style ``authoryear``) whose labels read as the
text cites ("Vaswani et al., 2017"), so a citation is found in the list by its name; the list is
written as a valid ARIA list (docutils gives each entry the deprecated role ``doc-biblioentry``,
which is no list item: axe-core's ``aria-deprecated-role`` and ``aria-required-children``).
"""

import functools
from collections import Counter

from docutils import nodes
from pybtex.plugin import find_plugin, register_plugin
from pybtex.richtext import Text
from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle


@functools.cache
def backend(name: str):
    """pybtex's output backend ``name`` ("text", "markdown"), found once: ``render_as(name)`` finds
    it again at every call, scanning the entry points of every installed package (minutes for the
    references of one chapter on a busy machine)."""
    return find_plugin("pybtex.backends", name)()


def surnames(entry) -> list[str]:
    """The authors' (or editors') last names, LaTeX decoded: "Popović", "van Merriënboer"."""
    people = entry.persons.get("author") or entry.persons.get("editor") or []
    return [Text.from_latex(" ".join(p.prelast_names + p.last_names)).render(backend("text")) for p in people]


def who(names: list[str]) -> str:
    """How the text names a work's authors: "Bahdanau", "Luong and Manning", "Vaswani et al."."""
    return f"{names[0]} et al." if len(names) > 2 else " and ".join(names)


class AuthorYearLabels(BaseLabelStyle):
    def format_labels(self, sorted_entries):
        """ "Vaswani et al., 2017"; works whose labels would coincide get a, b, ... in sorted order
        ("Touvron et al., 2023a" and "2023b": LLaMA and Llama 2)."""
        entries = list(sorted_entries)
        labels = [f"{who(surnames(e)) or e.key}, {e.fields.get('year', 'n.d.')}" for e in entries]
        counts, seen = Counter(labels), Counter()
        for label in labels:
            if counts[label] > 1:
                seen[label] += 1
                label += "abcdefghijklmnopqrstuvwxyz"[seen[label] - 1]
            yield label


class AuthorYearStyle(UnsrtStyle):
    default_label_style = "authoryear"
    default_sorting_style = "author_year_title"


register_plugin("pybtex.style.labels", "authoryear", AuthorYearLabels)
register_plugin("pybtex.style.formatting", "authoryear", AuthorYearStyle)


def visit_citation(self, node):
    """One reference, a ``listitem`` of the ``list`` that a run of references opens."""
    if not isinstance(node.previous_sibling(), type(node)):
        self.body.append('<div role="list" class="citation-list">\n')
    self.body.append(self.starttag(node, "div", classes=[node.tagname], role="listitem"))


def depart_citation(self, node):
    self.body.append("</div>\n")
    if not isinstance(node.next_node(descend=False, siblings=True), type(node)):
        self.body.append("</div>\n")  # the end of the run: close the list


def setup(app):
    app.add_node(nodes.citation, override=True, html=(visit_citation, depart_citation))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
