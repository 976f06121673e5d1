"""Sphinx extension: an author-year bibliography (pybtex style ``authoryear``) whose labels read as the
text cites ("Vaswani et al., 2017"), so a citation is found in the list by its name.
"""

from __future__ import annotations

from pybtex.plugin import register_plugin
from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle
from pybtex.style.sorting.author_year_title import SortingStyle


def _surnames(entry) -> list[str]:
    people = entry.persons.get("author") or entry.persons.get("editor") or []
    return [" ".join(p.prelast_names + p.last_names).replace("{", "").replace("}", "") for p in people]


def who(names: list[str]) -> str:
    """How the text names a work's authors: "Bahdanau", "Luong and Manning", "Vaswani et al."."""
    if len(names) > 2:
        return f"{names[0]} et al."
    return " and ".join(names)


class AuthorYearLabels(BaseLabelStyle):
    def format_labels(self, sorted_entries):
        for entry in sorted_entries:
            yield f"{who(_surnames(entry)) or entry.key}, {entry.fields.get('year', 'n.d.')}"


class AuthorYearStyle(UnsrtStyle):
    default_label_style = "authoryear"
    default_sorting_style = "author_year_title"


register_plugin("pybtex.style.labels", "authoryear", AuthorYearLabels)
register_plugin("pybtex.style.formatting", "authoryear", AuthorYearStyle)
assert SortingStyle  # the sorting style ships with pybtex


def setup(app):
    return {"parallel_read_safe": True, "parallel_write_safe": True}
