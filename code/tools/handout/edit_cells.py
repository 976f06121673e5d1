"""Small edits of notebook cells by id, keeping every other byte: ``replace(path, {id: (old, new)})``."""

import json
from pathlib import Path


def replace(path: Path, edits: dict[str, tuple[str, str]]) -> None:
    nb = json.loads(Path(path).read_text())
    done = set()
    for cell in nb["cells"]:
        if cell.get("id") in edits:
            old, new = edits[cell["id"]]
            source = "".join(cell["source"])
            if old not in source:
                raise ValueError(f"{path}: cell {cell['id']} does not hold {old!r}")
            cell["source"] = source.replace(old, new, 1).splitlines(keepends=True)
            done.add(cell["id"])
    if missing := set(edits) - done:
        raise ValueError(f"{path}: no cells {sorted(missing)}")
    Path(path).write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
