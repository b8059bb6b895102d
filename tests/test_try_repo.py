"""`pre-commit try-repo` from a clean clone into a throwaway git repository, the way pre-commit tests hooks.

It builds the hook's virtualenv with pip, which downloads packages from the index: that is outside the
test suite's network lock, so it runs only when asked (`make hooks-try`, which sets CENTINELA_TRY_REPO=1).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from conftest import REPO
from treefactory import build_tree, edit_manifest, sha

pytestmark = pytest.mark.skipif(os.environ.get("CENTINELA_TRY_REPO") != "1" or shutil.which("pre-commit") is None,
                                reason="needs pre-commit and the package index: run `make hooks-try`")


def git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)


@pytest.fixture
def clone(tmp_path):
    target = tmp_path / "centinela"
    git("clone", "-q", str(REPO), str(target), cwd=tmp_path)
    return target


@pytest.fixture
def project(tmp_path):
    repo = tmp_path / "project"
    repo.mkdir()
    git("init", "-q", cwd=repo)
    git("config", "user.email", "ci@example.test", cwd=repo)
    git("config", "user.name", "ci", cwd=repo)
    build_tree(repo / "fixtures")
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "fixtures", cwd=repo)
    return repo


def try_repo(clone, repo):
    env = {k: v for k, v in os.environ.items() if k != "CENTINELA_TRY_REPO"}
    return subprocess.run(["pre-commit", "try-repo", str(clone), "--all-files"], cwd=repo, capture_output=True,
                          text=True, env=env, timeout=1200)


def test_clean_fixtures_pass(clone, project):
    proc = try_repo(clone, project)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert proc.stdout.count("Passed") == 3


def test_dirty_fixture_fails_and_says_what_to_do(clone, project):
    target = project / "fixtures/alpha/search/gs-001.json"
    data = json.loads(target.read_text(encoding="utf-8"))
    data["response"]["body"] = {"results": [{"content": "Escríbeme: maria.gonzalez.rios@gmail.com"}]}
    target.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    edit_manifest(project / "fixtures", lambda f: f["alpha/search/gs-001.json"].update(sha256=sha(target)))
    git("add", "-A", cwd=project)
    proc = try_repo(clone, project)
    assert proc.returncode == 1
    assert "centinela-redact" in proc.stdout and "Failed" in proc.stdout
    assert "redact --write" in proc.stdout
    assert "maria.gonzalez.rios@gmail.com" not in proc.stdout
