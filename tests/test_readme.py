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


def test_the_github_workflow_runs_ci_and_nothing_else():
    """Its test job's one command is `.ci/run` (the steps before it check out and restore pip's
    cache); the Pages job builds the book the README names for a graded course."""
    workflow = (ROOT / ".github" / "workflows" / "ci.yml").read_text()
    jobs = workflow.split("\njobs:\n", 1)[1]
    ci, pages = jobs.split("\n  pages:\n", 1)
    assert re.findall(r"^\s+run: (.+)$", ci, re.M) == ["bash .ci/run"]
    assert "run: make book SOLUTIONS=remove" in pages and "make publish" in pages
    assert "make book SOLUTIONS=remove" in (ROOT / "README.md").read_text()
