"""Turn a chapter's test cells into the one-line cells of "exercises as code" (docs/contributors.md).

    python -m tools.handout.convert_tests CHAPTER [QUESTION=ANSWER ...]      (PYTHONPATH=code)

For each question of ``chapters/CHAPTER.ipynb`` the public test cell becomes
``check("<question>", <answer>)`` and the hidden one the same with ``hidden=True`` (under otter's
test config); the question's ``points: P`` becomes ``points: [0, P]`` (the public case pays nothing,
the hidden case all: docs/instructors.md, "Scoring"); the exercises' import cell gets
``from seqlab.exercises import check``. The answer is the function of the question's name unless
``QUESTION=ANSWER`` says otherwise. The declarations themselves are written by hand, into
``seqlab/exercises/questions/CHAPTER.py`` and ``tools/grading/seqlab_hidden/CHAPTER.py``. Only cells of
the exercise section change; cell ids stay.
"""

import json
import re
import sys

from tools.course import ROOT
from tools.otter_format import QUESTION_MARK

HIDDEN_HEADER = '""" # BEGIN TEST CONFIG\nhidden: true\n"""  # END TEST CONFIG\n'
IMPORT = "from seqlab.exercises import check"


def convert(chapter: str, answers: dict[str, str]) -> None:
    path = ROOT / "chapters" / f"{chapter}.ipynb"
    nb = json.loads(path.read_text())
    cells = nb["cells"]
    first = next(i for i, c in enumerate(cells) if "".join(c["source"]).startswith(QUESTION_MARK))
    setup = next(c for c in reversed(cells[:first]) if c["cell_type"] == "code")
    source = "".join(setup["source"])
    imports = re.findall(r"^from seqlab\.exercises import (.+)$", source, re.M)
    if not any("check" in [name.strip() for name in line.split(",")] for line in imports):
        setup["source"] = (source.rstrip("\n") + "\n\n" + IMPORT).splitlines(keepends=True)
    question = None
    for cell in cells[first:]:
        source = "".join(cell["source"])
        tags = cell.get("metadata", {}).get("tags", [])
        if cell["cell_type"] == "raw" and source.startswith(QUESTION_MARK):
            question = re.search(r"^name:\s*(\S+)", source, re.M).group(1)
            source = re.sub(r"^points:\s*([\d.]+)\s*$", r"points: [0, \1]", source, flags=re.M)
        elif cell["cell_type"] == "code" and "public-test" in tags:
            source = f'check("{question}", {answers.get(question, question)})'
        elif cell["cell_type"] == "code" and "hidden-test" in tags:
            source = HIDDEN_HEADER + f'check("{question}", {answers.get(question, question)}, hidden=True)'
        else:
            continue
        cell["source"] = source.splitlines(keepends=True)
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    convert(sys.argv[1], dict(arg.split("=", 1) for arg in sys.argv[2:]))
