"""Run the centinela CLI and SIGKILL it at the N-th write boundary: before and after every rename and
before every fsync (so a temporary file may be half written). N = 0 runs to the end and prints how many
boundaries there were on stderr (`boundaries=K`). Used by tests/test_no_data_loss.py.

    python tests/killpoint.py N redact ROOT --write ...
"""

from __future__ import annotations

import os
import signal
import sys

kill_at = int(sys.argv[1])
count = 0
real_replace, real_fsync = os.replace, os.fsync


def boundary() -> None:
    global count
    count += 1
    if count == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)


def replace(*args, **kwargs):
    boundary()
    real_replace(*args, **kwargs)
    boundary()


def fsync(fd):
    boundary()
    real_fsync(fd)


os.replace, os.fsync = replace, fsync

from scanner.cli import main  # noqa: E402

try:
    main(sys.argv[2:])
finally:
    print(f"boundaries={count}", file=sys.stderr)
