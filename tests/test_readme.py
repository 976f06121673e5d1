"""The README's CI block is what `.ci/run` runs, command for command and in the same order."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_readme_lists_the_commands_ci_runs():
    readme = (ROOT / "README.md").read_text()
    block = readme.split("CI (`.ci/run`) runs exactly these commands", 1)[1].split("```bash", 1)[1]
    listed = [line.split("#")[0].strip() for line in block.split("```", 1)[0].splitlines()]
    ran = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    ran = [line for line in ran if re.match(r"make\b", line)]
    assert [c for c in listed if c] == ran
