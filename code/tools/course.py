"""What the course tools share: where the chapters are, the book's settings, and notebooks read,
written and executed one way (nbformat, nbclient)."""

import re
import time
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[2]


def chapters(root: Path = ROOT) -> list[Path]:
    """The chapter notebooks in the order of ``_toc.yml``."""
    return [root / f"{doc}.ipynb" for doc in toc_docs(root) if (root / f"{doc}.ipynb").is_file()]


def toc_docs(root: Path = ROOT) -> list[str]:
    """The book's pages in the order of ``_toc.yml`` (its ``root:`` first, then every ``file:``),
    e.g. ``"chapters/lstm"``."""
    text = (root / "_toc.yml").read_text(encoding="utf-8")
    return re.findall(r"^[ \t-]*(?:root|file):\s*(\S+)", text, re.M)


def repository_url(root: Path = ROOT) -> str:
    """``repository.url`` of ``_config.yml``: the one place that names the repository."""
    return str(yaml.safe_load((root / "_config.yml").read_text())["repository"]["url"]).rstrip("/")


def seqlab_version(root: Path = ROOT) -> str:
    text = (root / "code" / "pyproject.toml").read_text()
    return re.search(r'^version\s*=\s*"([^"]+)"', text, re.M).group(1)


def read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def write(notebook: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nbformat.from_dict(notebook), path)


def tags(cell: dict) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def collapsed_cell(source: str, *tags: str, **fields) -> dict:
    """A code cell shown collapsed (JupyterLab, Notebook; Colab shows its ``# @title`` line)."""
    meta = {"tags": list(tags), "jupyter": {"source_hidden": True}, "cellView": "form"}
    return dict(cell_type="code", execution_count=None, **fields, metadata=meta, outputs=[], source=source)


def execute(notebook: Path, timeout: int = 600, env: dict | None = None):
    """Run ``notebook`` in a fresh kernel, in its folder (``env``: the kernel's environment);
    returns (the executed notebook, seconds)."""
    from nbclient import NotebookClient

    nb = read(notebook)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(notebook.parent)}})  # fmt: skip
    start = time.perf_counter()
    client.execute(**({"env": env} if env is not None else {}))
    return nb, time.perf_counter() - start
