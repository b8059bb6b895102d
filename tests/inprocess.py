"""The CLI run in this test process (`scanner.cli.main`), returning what a subprocess run would: exit code,
standard output and standard error as text.

A `python -m scanner scan` subprocess pays Python's start-up, the imports, compiling the rules and loading
spaCy's model every time (about 4 s of CPU of the 7 s a scan of the example tree costs); in this process they
are paid once per test worker. Files are still scanned in forked worker processes, as on the command line.
For tests of what a command outputs. Tests of process behaviour (a terminal, signals, start-up, log handlers,
what a fresh interpreter does) and tests that compare two runs for independence of the process (hash seeds)
keep at least one real subprocess.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path


def run_cli(*args, cwd: Path | str | None = None) -> subprocess.CompletedProcess:
    from scanner.cli import main

    argv = [str(a) for a in args]
    out_bytes, err_bytes = io.BytesIO(), io.BytesIO()
    out = io.TextIOWrapper(out_bytes, encoding="utf-8", newline="")
    err = io.TextIOWrapper(err_bytes, encoding="utf-8", newline="")
    code = 0
    before = os.getcwd()
    try:
        os.chdir(cwd or before)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        os.chdir(before)
    out.flush()
    err.flush()
    return subprocess.CompletedProcess([sys.executable, "-m", "scanner", *argv], code,
                                       out_bytes.getvalue().decode("utf-8"), err_bytes.getvalue().decode("utf-8"))
