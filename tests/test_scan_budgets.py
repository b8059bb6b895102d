"""Per-file budgets are enforced for real: a file that hangs is killed at its time limit, one that allocates
past its memory limit fails inside its worker, one whose worker dies is reported; the other files are scanned
and the scan ends. The worker is a fork, so a test can make one file misbehave by patching the loader."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

import scanner.pipeline.files as files_module
from scanner.budget import Budget
from scanner.scan import Scanner
from scanner.pipeline.run import scan_paths

PAGE = "<html><body><p>Contacto: juan.perez.lopez@gmail.com</p></body></html>"


@pytest.fixture
def tree(tmp_path):
    for name in ("a.html", "slow.html", "fat.html", "dies.html", "z.html"):
        (tmp_path / name).write_text(PAGE)
    return tmp_path


@pytest.fixture
def misbehaving(monkeypatch):
    real = files_module.load_bytes

    def load(data, display):
        name = os.path.basename(display)
        if name == "slow.html":
            time.sleep(3600)
        if name == "fat.html":
            hog = bytearray(3 << 30)          # 3 GB, over any budget below
            hog[-1] = 1
        if name == "dies.html":
            os.kill(os.getpid(), signal.SIGSEGV)
        return real(data, display)

    monkeypatch.setattr(files_module, "load_bytes", load)


def errors_of(result):
    return {e["path"]: (e["code"], e["message"]) for e in result.errors}


def test_time_memory_and_crash_are_per_file_errors(tree, misbehaving):
    started = time.monotonic()
    result = scan_paths(Scanner(("secret", "pii")), [tree], budget=Budget(max_file_seconds=2, max_memory_mb=256))
    elapsed = time.monotonic() - started
    assert errors_of(result) == {
        "slow.html": ("timeout", "took longer than 2 s (--max-file-seconds): not scanned"),
        "fat.html": ("memory", "needed more than 256 MB of memory (--max-memory-mb): not scanned"),
        "dies.html": ("crashed", "could not be scanned: worker died (SIGSEGV)"),
    }
    assert [d["path"] for d in result.documents] == ["a.html", "dies.html", "fat.html", "slow.html", "z.html"]
    assert {f.path for f in result.findings} == {"a.html", "z.html"}     # the others, scanned as usual
    assert elapsed < 1800          # slow.html sleeps an hour: the watchdog cut it short (a bound no load reaches)


def test_with_several_workers_too(tree, misbehaving):
    result = scan_paths(Scanner(("secret",)), [tree], jobs=3, budget=Budget(max_file_seconds=2, max_memory_mb=256))
    assert {p: c for p, (c, _) in errors_of(result).items()} == {"slow.html": "timeout", "fat.html": "memory",
                                                                 "dies.html": "crashed"}


def test_no_budget_and_one_job_scans_in_this_process(tree, monkeypatch, tmp_path_factory):
    log = tmp_path_factory.mktemp("pids") / "pids"
    real = files_module.load_bytes

    def load(data, display):
        with open(log, "a") as fh:          # a worker's memory is its own: tell the parent through a file
            fh.write(f"{os.getpid()}\n")
        return real(data, display)

    monkeypatch.setattr(files_module, "load_bytes", load)
    scan_paths(Scanner(("secret",)), [tree], budget=Budget(max_file_seconds=0, max_memory_mb=0))
    assert set(log.read_text().split()) == {str(os.getpid())}
    log.unlink()
    scan_paths(Scanner(("secret",)), [tree], budget=Budget())
    pids = set(log.read_text().split())
    assert len(pids) == 1 and str(os.getpid()) not in pids


def test_budget_values():
    assert Budget().max_file_bytes == 64 << 20
    assert Budget(max_file_mb=0).max_file_bytes is None
    assert not Budget(max_file_seconds=0, max_memory_mb=0).needs_workers
    with pytest.raises(ValueError):
        Budget(max_file_seconds=-1)


def run_scan(*args):
    """`centinela scan ...` in this process (tests/inprocess.py): the budgets are enforced in the forked workers
    either way (each capped at what it had when forked plus its budget); a fresh interpreter only added its
    start-up and spaCy's model. tests/test_hostile_files.py keeps a real `python -m scanner scan` with budgets."""
    from inprocess import run_cli

    return run_cli("scan", *args)


def test_cli_time_and_memory_budgets_on_a_real_slow_file(tmp_path):
    """Real files that cost far more than their budgets: 24 MB of tags (about 14 s of work on an idle machine)
    against a 5 s time budget, 64 MB of NUL bytes named .html against a 64 MB memory budget; each budget stops
    its file, and the small file beside it is scanned. (5 s leave the small file room on a loaded machine; the tag
    file needs several times that on any machine. It was 8 MB, about 4.5 s of work once the HTML loader got
    faster: the scan sometimes ended within the budget and the test failed.)"""
    slow, big = tmp_path / "slow", tmp_path / "big"
    slow.mkdir()
    big.mkdir()
    (slow / "slow.html").write_bytes(b"<b>" * ((24 << 20) // 3))
    with open(big / "big.html", "wb") as fh:
        fh.truncate(64 << 20)
    for folder in (slow, big):
        (folder / "small.html").write_text(PAGE)
    proc = run_scan(slow, "--format", "json", "--kinds", "secret,pii", "--max-file-mb", "0",
                    "--max-memory-mb", "0", "--max-file-seconds", "5")
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert [(e["path"], e["code"]) for e in data["errors"]] == [("slow.html", "timeout")]
    assert [f["path"] for f in data["findings"]] == ["small.html"]
    proc = run_scan(big, "--format", "json", "--kinds", "secret", "--max-file-mb", "0",
                    "--max-memory-mb", "64", "--max-file-seconds", "0")
    assert proc.returncode == 1
    assert [(e["path"], e["code"]) for e in json.loads(proc.stdout)["errors"]] == [("big.html", "memory")]
    proc = run_scan(big, "--kinds", "secret")        # the defaults: over 64 MB is not read at all
    assert "big.html: error: too_large: 64.0 MB is over" not in proc.stdout   # exactly 64 MB is allowed
    with open(big / "big.html", "ab") as fh:
        fh.write(b"x")
    proc = run_scan(big, "--kinds", "secret")
    assert "big.html: error: too_large: 64.0 MB is over the 64 MB limit (--max-file-mb): not scanned" in proc.stdout


def test_cli_rejects_bad_budget_values(tmp_path):
    (tmp_path / "a.html").write_text(PAGE)
    for option in (["--jobs", "0"], ["--max-file-seconds", "-1"], ["--max-memory-mb", "x"]):
        proc = run_scan(tmp_path, *option)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, option
