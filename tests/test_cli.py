"""The command frame: entry points, exit codes and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from scanner import __version__


def run(*args, module=True):
    cmd = [sys.executable, "-m", "scanner", *args]
    return subprocess.run(cmd, capture_output=True, text=True)


def test_python_m_scanner_and_version():
    proc = run("--version")
    assert proc.returncode == 0 and proc.stdout.strip() == f"centinela, version {__version__}"


def test_console_script_installed():
    exe = Path(sys.executable).with_name("centinela")
    assert exe.exists()
    proc = subprocess.run([str(exe), "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "manifest" in proc.stdout


def test_usage_errors_are_one_line_exit_2():
    for args in (["nonsense"], ["manifest", "verify"], ["manifest", "verify", ".", "--format", "xml"],
                 ["units"], ["units", "/no/such/file.html"]):
        proc = run(*args)
        assert proc.returncode == 2, args
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1, proc.stderr
        assert "Traceback" not in proc.stderr


def test_units_command_json(tmp_path):
    page = tmp_path / "p.html"
    page.write_text("<p title='Hola'>Caf&eacute;</p>", encoding="utf-8")
    proc = run("units", str(page), "--format", "json")
    assert proc.returncode == 0
    data = json.loads(proc.stdout)
    assert [(u["channel"], u["text"], u["start"], u["end"], u["line"], u["column"]) for u in data["units"]] == [
        ("attribute", "Hola", 10, 14, 1, 11), ("visible_text", "Café", 16, 27, 1, 17)]


def test_unreadable_file_is_exit_2(tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text("{nope")
    proc = run("units", str(bad))
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith(f"centinela: error: {bad}: invalid JSON")
