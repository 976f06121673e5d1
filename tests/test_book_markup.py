"""The book's accessible markup at its source: the reference list is an ARIA list of list items
(code/tools/book/bib_style.py), and index.html is a whole page (code/tools/book/index_page.py)."""

import re

import pytest
from docutils.core import publish_parts
from docutils.writers.html5_polyglot import HTMLTranslator, Writer

from tools.book import bib_style, index_page

RST = """Text citing [A]_ and [B]_.

.. [A] The first reference.
.. [B] The second reference.

Between the runs.

.. [C] A third, in a run of its own.
"""


def test_reference_list_is_a_list_of_items():
    class Translator(HTMLTranslator):
        visit_citation = bib_style.visit_citation
        depart_citation = bib_style.depart_citation

    writer = Writer()
    writer.translator_class = Translator
    body = publish_parts(RST, writer=writer)["body"]
    assert "doc-biblioentry" not in body  # deprecated in DPUB-ARIA 1.1
    lists = re.findall(r'<div role="list" class="citation-list">(.*?)</div>\n</div>', body, re.S)
    assert len(lists) == 2  # one list per run of references, each closed
    assert [chunk.count('role="listitem"') for chunk in lists] == [2, 1]
    assert body.count("<div") == body.count("</div>")


def test_index_page_is_a_whole_page():
    page = index_page.redirect_page("intro.html", "Sequence <models>", "en")
    assert page.startswith('<!DOCTYPE html>\n<html lang="en">')
    assert "<title>Sequence &lt;models&gt;</title>" in page
    assert '<meta http-equiv="Refresh" content="0; url=intro.html">' in page
    assert '<a href="intro.html">' in page
    assert 'lang="en"' in index_page.redirect_page("intro.html", "", None)
    with pytest.raises(ValueError, match="target"):
        index_page.redirect_page('x" onload="y', "t", "en")
