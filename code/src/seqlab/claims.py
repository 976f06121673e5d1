"""The chapters' claim checks: a bar a measured value must clear, said in words.

``at_least(name, value, bar, what)`` (and ``at_most``) is the check behind each claim a chapter
makes about a trained model. Where it stops depends on who runs it:

- the book build and ``make test`` set ``SEQLAB_STRICT_CLAIMS=1``: a miss raises AssertionError;
- a student's run (another CPU, a GPU, a setting changed to explore) gets a warning in words,
  the book's bar next to this run's value, and the rest of the notebook runs on;
- ``SEQLAB_CLAIMS_LOG=path`` appends every check, passed or missed, to ``path`` as a JSON line,
  for the robustness report (``make robustness``), and never stops.

``SEQLAB_SEED_OFFSET`` (read by ``seqlab.device.seed_everything``) reruns a chapter with other seeds.

``grid(chapter)`` reads a chapter's claims over that grid of seeds and CPU kernels, as
``make robustness`` stores it with the package (``seqlab/grids/<chapter>.json``), so that a page
can show the spread it states.

``stored_spread(chapter)`` reads what a chapter stored of that report: each claim's values over the
grid of seeds and CPU kernels (``seqlab/spread/<chapter>.json``, written by
``tools.reports.spread``), so that a page can show the spread its sentences rely on.
"""

from __future__ import annotations

import json
import math
import os
import re
import warnings
from importlib import resources

__all__ = ["ClaimWarning", "at_least", "at_most", "grid", "stored_spread"]


class ClaimWarning(UserWarning):
    """A claim of the book that this run did not reproduce."""


def at_least(name: str, value: float, bar: float, what: str, n: int | None = None) -> float:
    """Check ``value >= bar``, for ``what`` (a phrase: "the Transformer's held-out exact match").

    ``n``: the number of held-out examples the value was measured on, where there are some.
    Returns ``value``. Raises ValueError for a value or bar that is not a finite number.
    """
    return _check(name, value, bar, what, ">=", n)


def at_most(name: str, value: float, bar: float, what: str, n: int | None = None) -> float:
    """Check ``value <= bar``; otherwise as ``at_least``."""
    return _check(name, value, bar, what, "<=", n)


def grid(chapter: str) -> dict:
    """A chapter's claims over the grid of ``make robustness`` (seed offsets x CPU kernels, the
    ``ATEN_CPU_CAPABILITY`` code paths ``default``, ``avx2``, ``avx512``), as stored with the package:
    ``{"chapter", "seeds", "kernels", "runs": [{"seed", "kernel", "claims": [{"name", "value", "bar",
    "op", "n"}, ...]}, ...]}``. Raises ValueError for a name that is not a chapter's, and
    FileNotFoundError where no grid is stored for it."""
    if not isinstance(chapter, str) or not re.fullmatch(r"[a-z0-9_]+", chapter):
        raise ValueError(f"chapter must be a chapter's name (a-z, 0-9, _), got {chapter!r}")
    path = resources.files("seqlab") / "grids" / f"{chapter}.json"
    if not path.is_file():
        raise FileNotFoundError(f"no grid stored for {chapter!r}: run `make robustness CHAPTERS={chapter}`")
    return json.loads(path.read_text())


def _check(name, value, bar, what, op, n):
    for arg, x in (("value", value), ("bar", bar)):
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
            raise ValueError(f"claim {name!r}: {arg} must be a finite number, got {x!r}")
    held = value >= bar if op == ">=" else value <= bar
    log = os.environ.get("SEQLAB_CLAIMS_LOG")
    if log:
        record = {"name": name, "value": float(value), "bar": float(bar), "op": op, "held": held, "n": n}
        with open(log, "a") as f:
            f.write(json.dumps(record) + "\n")
        return value
    if held:
        return value
    words = "at least" if op == ">=" else "at most"
    message = (
        f"The book claims {what} is {words} {bar:g}; this run got {value:.4g}. "
        "The book's numbers come from its own build (a fixed seed on one CPU); another machine, "
        "another seed or a changed setting can land elsewhere. The rest of the notebook still runs."
    )
    if os.environ.get("SEQLAB_STRICT_CLAIMS") == "1":
        raise AssertionError(f"claim {name!r}: {message}")
    warnings.warn(message, ClaimWarning, stacklevel=3)
    return value


def stored_spread(chapter: str) -> dict:
    """The spread over seeds and CPU kernels that ``chapter`` stored: ``{"chapter", "seeds",
    "kernels", "rows"}``, each row ``{"name", "runs", "min", "median", "max", "values"}`` for one
    claim's value. Raises ValueError naming the chapter when it stored none."""
    if not isinstance(chapter, str) or not chapter.isidentifier():
        raise ValueError(f"chapter must be a chapter's name (an identifier), got {chapter!r}")
    path = resources.files("seqlab") / "spread" / f"{chapter}.json"
    if not path.is_file():
        raise ValueError(
            f"no spread stored for chapter {chapter!r} (python -m tools.reports.spread {chapter})"
        )
    return json.loads(path.read_text())
