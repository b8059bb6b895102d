"""Run the centinela CLI and SIGKILL it at the N-th write boundary: before and after every rename and
before every fsync (so a temporary file may be half written). N = 0 runs to the end and reports how many
boundaries there were (`boundaries=K` on stderr). Used by tests/test_no_data_loss.py.

    python tests/killpoint.py N redact ROOT --write ...

`start(N, argv)` does the same in a child forked from the calling process (the test's, which has already
imported the scanner): the same CLI, the same SIGKILL of a real process, without paying a fresh
interpreter's imports for each of the dozens of kills.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from pathlib import Path

_count = 0


def _install(kill_at: int) -> None:
    """From now on this process kills itself at the kill_at-th boundary (never, for 0)."""
    real_replace, real_fsync = os.replace, os.fsync

    def boundary() -> None:
        global _count
        _count += 1
        if _count == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    def replace(*args, **kwargs):
        boundary()
        real_replace(*args, **kwargs)
        boundary()

    def fsync(fd):
        boundary()
        real_fsync(fd)

    os.replace, os.fsync = replace, fsync


def _child(kill_at: int, argv: list[str], report: str) -> None:
    # The child's own stdout and stderr go nowhere (the CLI's output is not what these tests read).
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    _install(kill_at)
    from scanner.cli import main

    try:
        main(argv)
    finally:
        Path(report).write_text(str(_count))


def start(kill_at: int, argv: list, report: Path) -> multiprocessing.Process:
    """The CLI with `argv` in a forked child that SIGKILLs itself at the kill_at-th boundary (0: never); when it
    ran to the end, `report` holds the number of boundaries. The caller joins it (exitcode -9: killed)."""
    proc = multiprocessing.get_context("fork").Process(target=_child, args=(kill_at, [str(a) for a in argv], str(report)))
    proc.start()
    return proc


def run(kill_at: int, argv: list, report: Path, timeout: float = 120) -> int:
    """start() and wait: the child's exit code (-9 when it was killed)."""
    proc = start(kill_at, argv, report)
    proc.join(timeout)
    if proc.is_alive():
        proc.kill()
        proc.join()
        raise TimeoutError(f"centinela {' '.join(map(str, argv))} did not finish in {timeout} s")
    return proc.exitcode


if __name__ == "__main__":
    _install(int(sys.argv[1]))
    from scanner.cli import main  # noqa: E402

    try:
        main(sys.argv[2:])
    finally:
        print(f"boundaries={_count}", file=sys.stderr)
