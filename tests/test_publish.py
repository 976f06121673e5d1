"""`make publish` (code/tools/handout/publish.py): the site goes to gh-pages with ghp-import; tested against a
local bare repository only (the test's own repository has that bare one as its only remote)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PUBLISH = ["-m", "tools.handout.publish"]
GIT_ENV = {
    "GIT_AUTHOR_NAME": "test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def git(*args, cwd):
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True)


@pytest.fixture
def repos(tmp_path):
    bare, work = tmp_path / "remote.git", tmp_path / "work"
    git("init", "--bare", "-q", str(bare), cwd=tmp_path)
    git("init", "-q", str(work), cwd=tmp_path)
    git("remote", "add", "origin", str(bare), cwd=work)
    return bare, work


def fake_site(where: Path) -> Path:
    (where / "chapters").mkdir(parents=True)
    (where / "index.html").write_text("<html><body>the book</body></html>")
    (where / "chapters" / "demo.html").write_text("<html><body>a chapter</body></html>")
    (where / "chapters" / "demo.ipynb").write_text(json.dumps({"cells": [], "nbformat": 4, "metadata": {}}))
    return where


def publish(site, work, *extra):
    env = {**os.environ, **GIT_ENV, "PYTHONPATH": str(ROOT / "code")}
    return subprocess.run([sys.executable, *PUBLISH, "--site", str(site), *extra],
                          cwd=work, env=env, capture_output=True, text=True)  # fmt: skip


def test_publish_pushes_the_site_to_gh_pages(tmp_path, repos):
    bare, work = repos
    site = fake_site(tmp_path / "html")
    result = publish(site, work)
    assert result.returncode == 0, result.stdout + result.stderr
    files = git("ls-tree", "-r", "--name-only", "gh-pages", cwd=bare).stdout.split()
    assert set(files) == {".nojekyll", "index.html", "chapters/demo.html", "chapters/demo.ipynb"}
    assert "the book" in git("show", "gh-pages:index.html", cwd=bare).stdout
    # publishing again replaces the site
    (site / "index.html").write_text("<html><body>second edition</body></html>")
    assert publish(site, work).returncode == 0
    assert "second edition" in git("show", "gh-pages:index.html", cwd=bare).stdout


def test_publish_refuses_a_site_with_a_hidden_test(tmp_path, repos):
    bare, work = repos
    site = fake_site(tmp_path / "html")
    (site / "_sources").mkdir()
    shutil.copy(ROOT / "chapters" / "bahdanau.ipynb", site / "_sources" / "bahdanau.ipynb")
    result = publish(site, work)
    assert result.returncode == 1 and "hidden" in result.stdout
    branches = git("branch", "--list", cwd=bare).stdout
    assert "gh-pages" not in branches


def test_publish_refuses_without_a_built_book(tmp_path, repos):
    _, work = repos
    result = publish(tmp_path / "nothing", work)
    assert result.returncode == 1 and "make book" in result.stdout
