"""`scanner.startup`: the collector paused while a command starts, what it built frozen while it works, and a
caller's process (the tests') left exactly as it was."""

from __future__ import annotations

import gc
import subprocess
import sys

from conftest import EXAMPLE_TREE, REPO
from inprocess import run_cli
from scanner import startup


def test_paused_then_frozen_then_restored_in_a_callers_process(monkeypatch):
    monkeypatch.setitem(startup._state, "own_process", False)
    assert gc.isenabled() and gc.get_freeze_count() == 0
    with startup.frozen_startup() as ready:
        assert not gc.isenabled()
        kept = [[] for _ in range(1000)]
        ready()
        assert gc.isenabled() and gc.get_freeze_count() >= len(kept)
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_restored_when_the_command_fails_before_it_is_ready(monkeypatch):
    monkeypatch.setitem(startup._state, "own_process", False)
    try:
        with startup.frozen_startup():
            raise RuntimeError("bad rule pack")
    except RuntimeError:
        pass
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_scan_in_this_process_leaves_the_collector_as_it_was():
    page = next(iter(sorted((EXAMPLE_TREE / "_shared" / "html").glob("*.html"))))
    proc = run_cli("scan", "--no-progress", "--format", "json", page)
    assert proc.returncode in (0, 1), proc.stderr
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_the_own_command_line_stays_frozen_to_its_exit():
    code = ("import gc, sys\n"
            "from scanner import startup\n"
            "startup.own_process()\n"
            "with startup.frozen_startup() as ready:\n"
            "    ready()\n"
            "print(gc.isenabled(), gc.get_freeze_count() > 0)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "True"]


def test_exiting_freezes_only_the_own_command_line(monkeypatch):
    monkeypatch.setitem(startup._state, "own_process", False)
    startup.exiting()
    assert gc.get_freeze_count() == 0
    code = ("import gc\n"
            "from scanner import startup\n"
            "kept = [[] for _ in range(1000)]\n"
            "startup.own_process()\n"
            "startup.exiting()\n"
            "print(gc.get_freeze_count() >= len(kept))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True"]


def test_a_score_in_this_process_leaves_the_collector_as_it_was(tmp_path):
    from scoregolden import build

    tree, run = build(tmp_path, 20)
    proc = run_cli("score", tree, "--run", run, "--out", tmp_path / "out")
    assert proc.returncode in (0, 1), proc.stderr
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_exit_process_runs_the_exit_handlers_and_flushes_before_leaving():
    code = ("import atexit, sys\n"
            "from scanner import startup\n"
            "startup.own_process()\n"
            "atexit.register(lambda: sys.stdout.write(' handler ran'))\n"
            "sys.stdout.write('buffered output')\n"
            "sys.stderr.write('a warning')\n"
            "startup.exit_process(3)\n"
            "print('never reached')\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert (proc.returncode, proc.stdout, proc.stderr) == (3, "buffered output handler ran", "a warning")


def test_exit_process_is_sys_exit_in_a_callers_process(monkeypatch):
    import pytest

    monkeypatch.setitem(startup._state, "own_process", False)
    with pytest.raises(SystemExit) as exc:
        startup.exit_process(1)
    assert exc.value.code == 1


def test_exit_process_waits_for_other_threads_as_the_interpreter_does():
    code = ("import sys, threading, time\n"
            "from scanner import startup\n"
            "startup.own_process()\n"
            "t = threading.Thread(target=lambda: (time.sleep(0.2), print('thread done')))\n"
            "t.start()\n"
            "startup.exit_process(0)\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert (proc.returncode, proc.stdout) == (0, "thread done\n")


def test_exit_process_leaves_a_profiler_or_tracer_its_systemexit():
    """coverage and cProfile write what they gathered when the program's SystemExit reaches them."""
    for hook in ("sys.settrace", "sys.setprofile"):
        code = ("import sys\n"
                "from scanner import startup\n"
                "startup.own_process()\n"
                f"{hook}(lambda *args: None)\n"
                "try:\n"
                "    startup.exit_process(3)\n"
                "except SystemExit as exc:\n"
                "    print('caught', exc.code)\n")
        proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
        assert (proc.returncode, proc.stdout) == (0, "caught 3\n"), hook
