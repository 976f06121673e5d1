import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "code" / "tools"))


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
    yield


@pytest.fixture(scope="session")
def dist(tmp_path_factory):
    """What `make student` builds, for every chapter with exercises (shared by all test modules)."""
    import student
    from course import chapters, has_exercises

    out = tmp_path_factory.mktemp("dist")
    for notebook in chapters():
        if has_exercises(notebook):
            student.assign(notebook, out)
    return out
