"""Write every chapter's concept diagrams to chapters/images/<name>.svg (``make diagrams``).

Each public function of a module ``code/tools/diagrams/<chapter>.py`` draws one diagram: it returns
a Matplotlib figure, written to the file named after the function. The SVGs are written
reproducibly (no date, a fixed hash salt, text kept as text), so the files change only when a
drawing does, and ``tests/test_diagrams.py`` checks that the committed files are what the code draws.
"""

import importlib
import inspect
import io
import sys
from pathlib import Path

import matplotlib.pyplot as plt

from tools.course import ROOT

HERE = Path(__file__).resolve().parent
OUT = ROOT / "chapters" / "images"

SVG_RC = {"svg.hashsalt": "seqlab", "svg.fonttype": "none", "font.family": "DejaVu Sans"}


def diagrams() -> dict[str, object]:
    """{name: drawing function}: the public functions defined in every chapter module."""
    found: dict[str, object] = {}
    for name in sorted(p.stem for p in HERE.glob("*.py") if p.stem not in ("style", "build", "__init__")):
        module = importlib.import_module(f"tools.diagrams.{name}")
        for stem, draw in inspect.getmembers(module, inspect.isfunction):
            if draw.__module__ == module.__name__ and not stem.startswith("_"):
                if stem in found:
                    raise ValueError(f"diagram {stem!r} is defined twice")
                found[stem] = draw
    return found


def render(draw, fmt: str = "svg", **savefig) -> bytes:
    """The SVG (or ``fmt``) bytes of one drawing function's figure, written reproducibly."""
    with plt.rc_context(SVG_RC):
        fig = draw()
        buffer = io.BytesIO()
        fig.savefig(buffer, format=fmt, **({"metadata": {"Date": None, "Creator": None}} | savefig))
        plt.close(fig)
    return buffer.getvalue()


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for stem, draw in diagrams().items():
        (OUT / f"{stem}.svg").write_bytes(render(draw))
        print(f"wrote {OUT / stem}.svg")
    return 0


if __name__ == "__main__":
    sys.exit(main())
