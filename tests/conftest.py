"""Test setup: the network lock is on for the whole session, before any test module is imported."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

from scanner import netlock

# Property tests: by hand they draw new examples each run (to find what no one thought of); in CI (.ci/run sets
# CENTINELA_HYPOTHESIS_PROFILE=ci) the same examples every run, seeded from each test, so a failure there is
# one anyone reproduces and a commit lands or not on its own merits. Both print the blob that replays a failure.
hypothesis_settings.register_profile("explore", print_blob=True)
hypothesis_settings.register_profile("ci", derandomize=True, print_blob=True)
hypothesis_settings.load_profile(os.environ.get("CENTINELA_HYPOTHESIS_PROFILE", "explore"))

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
    """Loopback is blocked at the start and end of every test, and no host is let through: a test that runs the
    CLI in this process (`main()` allows loopback, for `serve`; `record` its upstream) must not leave it open for
    the tests after it."""
    netlock.set_loopback(False)
    netlock.forget_hosts()
    yield
    netlock.set_loopback(False)
    netlock.forget_hosts()


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


_REAL_PDFS: dict[Path, object] = {}


def load_real_pdf(path: Path):
    """A real PDF's Document, or the LoadError it raises, loaded once per test session: pdfminer's layout of the
    real PDFs is the slowest step of the suite, and test_pdf_loader.py and test_pii.py read the same files.
    Callers treat the Document as read-only."""
    from scanner.loaders.pdf import load_pdf
    from scanner.units import LoadError

    if path not in _REAL_PDFS:
        try:
            _REAL_PDFS[path] = load_pdf(path.read_bytes(), str(path))
        except LoadError as exc:
            _REAL_PDFS[path] = exc
    return _REAL_PDFS[path]
