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

    # The `python -m scanner` a test starts runs this checkout's package from any working directory: in a git
    # worktree sharing a virtualenv, the editable install's finder maps `scanner` to the other checkout.
    os.environ["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in os.environ.get("PYTHONPATH", "").split(
        os.pathsep) if p and p != str(REPO)])
    # One temporary folder for the run's cache and config, made by the process pytest started (the xdist workers
    # inherit it) and removed when that process ends.
    run_tmp = os.environ.get("CENTINELA_TEST_TMP")
    if not run_tmp or not os.path.isdir(run_tmp):
        import atexit
        import shutil

        run_tmp = os.environ["CENTINELA_TEST_TMP"] = tempfile.mkdtemp(prefix="centinela-test-")
        atexit.register(shutil.rmtree, run_tmp, True)
    # Bytecode: `make setup` writes it for every module the commands and the test processes import, beside the
    # sources (scripts/write_bytecode.py), so where PYTHONDONTWRITEBYTECODE=1 is set (this machine's environment
    # and CI's) neither the test processes nor the `python -m scanner` they start compile spaCy, Presidio or this
    # package from source (they did: about 6 s of CPU per test worker, and a cache prefix for the subprocesses
    # that compiled everything once more into it). Nothing is set here; a module edited since setup is compiled
    # in memory by each process that imports it, as Python does.

    os.environ["CENTINELA_CACHE_DIR"] = tempfile.mkdtemp(prefix="cache-", dir=run_tmp)
    # No fingerprint key from the user's environment or ~/.config: tests that want one set it themselves.
    os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="config-", dir=run_tmp)
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


_PDF_MEMO = None


def shared_pdf_memo():
    """One `scanner.loaders.pdfmemo` memo for the whole session (per test worker), for tests that load the example
    tree's files themselves: `with pdfmemo.active(shared_pdf_memo()): load_path(...)`. The tree holds its 104-page
    report four times (the file and three recorded fetches of it), and several modules load every file: each
    PDF's bytes are laid out once per worker. Every load still hands out its own copy of the document (unpickled,
    named as the caller asks), as the CLI's scans do within a run."""
    global _PDF_MEMO
    from scanner.loaders.pdfmemo import PdfMemo

    if _PDF_MEMO is None:
        _PDF_MEMO = PdfMemo()
    return _PDF_MEMO


_REAL_PDFS: dict[Path, object] = {}
_SHARED_DIR: Path | None = None      # under pytest-xdist: a folder all workers of this run share


def load_real_pdf(path: Path):
    """A real PDF's Document, or the LoadError it raises, loaded once per test session: pdfminer's layout of the
    real PDFs is the slowest step of the suite, and test_pdf_loader.py and test_pii.py read the same files.
    Under pytest-xdist the first worker to need a file loads it and leaves it pickled for the others (a lock
    per file: one load per run, whichever worker runs the test). Callers treat the Document as read-only."""
    from scanner.loaders.pdf import load_pdf
    from scanner.units import LoadError

    if path in _REAL_PDFS:
        return _REAL_PDFS[path]
    if _SHARED_DIR is None:
        try:
            _REAL_PDFS[path] = load_pdf(path.read_bytes(), str(path))
        except LoadError as exc:
            _REAL_PDFS[path] = exc
        return _REAL_PDFS[path]
    import hashlib
    import pickle

    from filelock import FileLock

    key = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:24]
    stored = _SHARED_DIR / f"{key}.pickle"
    with FileLock(str(_SHARED_DIR / f"{key}.lock")):
        if stored.is_file():
            kind, value = pickle.loads(stored.read_bytes())
            result = value if kind == "document" else LoadError(*value)
        else:
            try:
                result = load_pdf(path.read_bytes(), str(path))
                entry = ("document", result)
            except LoadError as exc:
                result = exc
                entry = ("error", (exc.path, exc.message, exc.code))
            stored.write_bytes(pickle.dumps(entry))
    _REAL_PDFS[path] = result
    return result


_SESSION_DIR: Path | None = None     # the session's folder shared by its test workers (one process: its own)


def shared_dir() -> Path | None:
    """The folder every test process of this session shares (under pytest-xdist, beside the workers' own
    temporary folders, pytest-N/), set once the session's first test is set up."""
    return _SESSION_DIR


@pytest.fixture(scope="session", autouse=True)
def _xdist_shared_dir(request, tmp_path_factory):
    """Under pytest-xdist, the folder beside the workers' own temporary folders (pytest-N/), shared by them; and
    the adapter exercises started in the background (tests/exercises.py) by the first process to get here."""
    global _SHARED_DIR, _SESSION_DIR
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        _SHARED_DIR = base.parent / "real-pdfs"
        _SHARED_DIR.mkdir(exist_ok=True)
        _SESSION_DIR = base.parent / "session"
    else:
        _SESSION_DIR = base / "session"
    _SESSION_DIR.mkdir(exist_ok=True)
    import exercises

    runner = exercises.launch(request.session, _SESSION_DIR)
    yield
    exercises.finish(runner)


def pytest_collection_modifyitems(config, items):
    """Tests marked `slow` (a minute or more on a loaded machine) run first, the heaviest first (`slow(weight)`,
    default 1), then the rest in their order: under pytest-xdist a long test that starts last is alone at the
    end of the run. The adapter modules (test_real_clients, test_node_clients: marked `background_exercises`)
    run last: what they judge runs in the background from the session's start (tests/exercises.py), so by
    then their tests only read it."""
    def weight(item) -> float:
        if item.get_closest_marker("background_exercises"):
            return 1
        marker = item.get_closest_marker("slow")
        return -(marker.args[0] if marker.args else 1) if marker else 0

    items.sort(key=weight)
