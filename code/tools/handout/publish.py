"""Publish the built book to the ``gh-pages`` branch with ghp-import (``make publish``).

    python -m tools.handout.publish [--site _build/html] [--remote origin]

First checks that no file of the site holds a hidden test (tools.checks.leak_check) and that every
chapter page has its student notebook beside it.
"""

import argparse
import subprocess
import sys
from pathlib import Path

from ghp_import import ghp_import

from tools.checks import leak_check
from tools.course import ROOT, chapters, repository_url, seqlab_version


def check_site(site: Path) -> list[str]:
    """What is wrong with the site for publishing (empty when nothing is)."""
    if not (site / "index.html").is_file():
        return [f"no built book at {site}: run `make book` first"]
    problems = []
    for nb in chapters():
        rel = nb.relative_to(ROOT)
        if (site / rel.with_suffix(".html")).is_file() and not (site / rel).is_file():
            problems.append(f"{rel}: the page has no student notebook beside it (Colab/Binder open it)")
    problems += [f"{rel} holds {', '.join(leak)}" for rel, leak in leak_check.scan(site, chapters()).items()]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=ROOT / "_build" / "html")
    parser.add_argument("--remote", default="origin")
    args = parser.parse_args(argv)
    site = args.site.resolve()
    if problems := check_site(site):
        print("not publishing:\n" + "\n".join(f"  {p}" for p in problems))
        return 1
    version = seqlab_version()
    ghp_import(str(site), mesg=f"Publish the book (seqlab {version})", remote=args.remote, branch="gh-pages",
               push=True, force=True, nojekyll=True)  # fmt: skip
    print(f"published {site} to {args.remote}/gh-pages")
    tag = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"refs/tags/v{version}"],
                         capture_output=True)  # fmt: skip
    if tag.returncode != 0:
        print(f"note: no tag v{version} here. The set-up cell of the student notebooks installs seqlab "
              f"from {repository_url()} at tag v{version} (Colab): git tag v{version} && "
              f"git push {args.remote} v{version}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
