import os
from concurrent.futures import ThreadPoolExecutor

import pytest
import torch
from filelock import FileLock


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
    yield


@pytest.fixture(scope="session")
def dist(tmp_path_factory, worker_id):
    """What `make student` builds, for every chapter with exercises (shared by all test modules,
    and built once for all of pytest-xdist's workers; SEQLAB_TEST_DIST=dist reuses one instead).
    otter's own run of the solutions is skipped: test_exercises grades them itself."""
    from pathlib import Path

    from tools.course import chapters
    from tools.handout import student
    from tools.otter_format import has_exercises

    if os.environ.get("SEQLAB_TEST_DIST"):  # a dist built already (make student): reused as it is
        return Path(os.environ["SEQLAB_TEST_DIST"]).resolve()
    shared = tmp_path_factory.getbasetemp()
    if worker_id != "master":  # every worker's base folder sits in the run's one folder
        shared = shared.parent
    out = shared / "dist"
    with FileLock(str(shared / "dist.lock")):
        if not (out / ".complete").exists():
            out.mkdir(exist_ok=True)
            student.seqlab_wheel()  # built once, before the threads share it
            with ThreadPoolExecutor(os.cpu_count() or 2) as pool:  # otter assign: a process each
                done = pool.map(
                    lambda notebook: student.assign(notebook, out, run_tests=False),
                    [notebook for notebook in chapters() if has_exercises(notebook)],
                )
                list(done)  # raises what any of them raised
            (out / ".complete").write_text("ok\n")
    return out
