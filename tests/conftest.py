import pytest
import torch


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
    yield


@pytest.fixture(scope="session")
def dist(tmp_path_factory):
    """What `make student` builds, for every chapter with exercises (shared by all test modules)."""
    from tools.course import chapters
    from tools.handout import student
    from tools.otter_format import has_exercises

    out = tmp_path_factory.mktemp("dist")
    for notebook in chapters():
        if has_exercises(notebook):
            student.assign(notebook, out)
    return out
