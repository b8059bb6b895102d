"""A command's start-up with the cyclic garbage collector paused, and what it built frozen while it works.

Starting a scan imports some 900 modules and builds its detectors (rule packs, compiled patterns, the learned
model): tens of thousands of containers that live as long as the command and hold no garbage, which every
collection the allocations trigger walks again, as does the collection at interpreter exit. `frozen_startup()`
pauses the collector for that phase; `ready()` then moves everything alive to the permanent generation
(`gc.freeze`) and turns the collector back on, so the collections of the work that follows — in this process,
at its exit, and in the workers it forks, whose pages also stay shared copy-on-write — skip it: about a sixth
of a cold pre-commit scan's CPU (bench/run.py precommit).

When the command runs in a caller's process (`scanner.cli.main(argv)`, as the tests do) everything is
unfrozen on the way out, so that process keeps its collector exactly as it was; only the process's own command
line (`main()` without arguments: the `centinela` script, `python -m scanner`) stays frozen to its exit.

`exit_process(code)` ends a command that has written everything: in its own process it runs the exit handlers
(atexit: multiprocessing's, logging's, weakref finalizers), flushes stdout and stderr and leaves with
`os._exit`, so the interpreter does not tear down, one by one, the some 900 modules and the detectors' objects
the scan built (a tenth of a cold pre-commit scan's CPU); in a caller's process, under a tracer or profiler
(coverage, cProfile), when a thread other than the main one is still running or when a flush fails, it is
`sys.exit(code)` as before.
"""

from __future__ import annotations

import gc
import os
import sys
from contextlib import contextmanager

_state = {"own_process": False}


def own_process() -> None:
    """This process runs one command and exits (`scanner.cli.main()` with its own command line)."""
    _state["own_process"] = True


@contextmanager
def frozen_startup():
    """Yields `ready()`: call it once the command has imported and built what it keeps for its whole run."""
    enabled = gc.isenabled()
    frozen = False
    gc.disable()

    def ready() -> None:
        nonlocal frozen
        if not frozen:
            gc.freeze()
            frozen = True
        if enabled:
            gc.enable()

    try:
        yield ready
    finally:
        if frozen and not _state["own_process"]:
            gc.unfreeze()
        if enabled:
            gc.enable()


def exiting() -> None:
    """The command is done and the process's own command line is about to exit: freeze everything alive, so the
    interpreter's collections on the way out do not walk it all again (it is still freed, just not searched for
    cycles first). `centinela score` on the 10,000-case bench: 0.40–1.03 s from its last line of output to the process's
    end, 0.21–0.32 s frozen (2026-12-02, alternating, load 3). Nothing happens when the command runs in a caller's process (the tests' `main(argv)`)."""
    if _state["own_process"]:
        gc.freeze()


def exit_process(code: int):
    """Leave the command with `code` (see the module's docstring); never returns."""
    if _state["own_process"]:
        import threading

        # Not under a tracer or a profiler (coverage, cProfile, a debugger): they write what they gathered once
        # the program's SystemExit reaches them.
        if threading.active_count() == 1 and sys.gettrace() is None and sys.getprofile() is None:
            import atexit

            atexit._run_exitfuncs()
            try:
                for stream in (sys.stdout, sys.stderr):
                    if stream is not None:
                        stream.flush()
            except Exception:                # a closed pipe: the interpreter's own exit reports it, as before
                pass
            else:
                os._exit(code)
    sys.exit(code)
