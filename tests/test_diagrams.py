"""The concept diagrams: the committed SVGs are what the code in code/tools/diagrams draws, and
every one is shown by a chapter."""

import json

import pytest

from tools.course import ROOT
from tools.diagrams import build

DIAGRAMS = build.diagrams()


@pytest.mark.parametrize("name", sorted(DIAGRAMS))
def test_committed_svg_is_what_the_code_draws(name):
    committed = build.OUT / f"{name}.svg"
    assert committed.exists(), f"run `make diagrams`: {committed} is missing"
    assert committed.read_bytes() == build.render(DIAGRAMS[name]), f"run `make diagrams`: {name} changed"


@pytest.mark.parametrize("name", sorted(DIAGRAMS))
def test_every_diagram_is_shown_by_a_chapter(name):
    sources = "".join(
        "".join(c["source"])
        for nb in (ROOT / "chapters").glob("*.ipynb")
        for c in json.loads(nb.read_text())["cells"]
    )
    assert f"images/{name}.svg" in sources, f"no chapter shows {name}.svg"
