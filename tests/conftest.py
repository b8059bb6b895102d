"""Test setup: the network lock is on for the whole session, before any test module is imported."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from scanner import netlock

REPO = Path(__file__).resolve().parents[1]
# ../shared beside the repo; a git worktree elsewhere points at it with CENTINELA_SHARED.
SHARED = Path(os.environ.get("CENTINELA_SHARED") or REPO.parent / "shared")
REALDATA = SHARED / "realdata"
EXAMPLE_TREE = REPO / "fixtures" / "web-search"


def pytest_configure(config):
    netlock.install(allow_loopback=False)
    # The parsed-YAML cache of large files never lands in the user's cache during tests.
    import os
    import tempfile

    os.environ["CENTINELA_CACHE_DIR"] = tempfile.mkdtemp(prefix="centinela-test-cache-")
    # No fingerprint key from the user's environment or ~/.config: tests that want one set it themselves.
    os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="centinela-test-config-")
    for name in ("CENTINELA_FINGERPRINT_KEY", "CENTINELA_FINGERPRINT_KEY_FILE"):
        os.environ.pop(name, None)


@pytest.fixture(autouse=True)
def _loopback_blocked_between_tests():
    """Loopback is blocked at the start and end of every test: a test that runs the CLI in this process
    (`main()` allows loopback, for `serve`) must not leave it open for the tests after it."""
    netlock.set_loopback(False)
    yield
    netlock.set_loopback(False)


@pytest.fixture
def loopback():
    """Opt in to loopback connections (the replay server's tests); everything else stays blocked."""
    previous = netlock.set_loopback(True)
    yield
    netlock.set_loopback(previous)


def realdata_files(kind: str) -> list[Path]:
    folder = REALDATA / kind
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_file())


def require_realdata(kind: str) -> list[Path]:
    files = realdata_files(kind)
    if not files:
        pytest.skip(f"../shared/realdata/{kind} is not present")
    return files
