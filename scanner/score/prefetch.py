"""One call computed in a forked child while this process does other work, its result handed back.

`score` spends most of its cold start on two independent reads: parsing golden/judgments.yaml and cases.yaml
(11.5 and 1.6 MB on `make bench-score`'s tree) and reading the run (50,000 files, each validated). On a machine
with a second core the YAML is parsed in a child (`fork`) while the parent reads the run; the child sends the data back with marshal (plain data: str, numbers, booleans, None, lists, dicts) or
pickle (anything else: a date), which keep every type, value and order. Writing the report, report.md and
report.html are rendered in a child (the report is there already: a fork copies it for nothing) while the
parent writes report.json and cascade.json.

`result()` gives what `fn(*args)` would have given in this process. Nothing here changes a result: when there
is no `fork`, another thread is running (a fork copies only the calling thread), or the child fails in any
way (crashes, is killed, raises, sends something that does not unpickle), the call is made here instead, as
it always was. The child never runs the parent's exit handlers or flushes its buffers (`os._exit`). The
parent always reaps the child: `close()` (also on the way out of a `with` block) kills one still running.
"""

from __future__ import annotations

import marshal
import os
import pickle
import signal
import threading
from typing import Any, Callable


def _dumps(value) -> bytes:
    """marshal for plain data (ten times faster to write than pickle: 0.05 s against 0.41 s for the bench's
    parsed judgments, read back in 0.2 s against 0.16 s), pickle for anything else (a date, a model)."""
    try:
        return b"M" + marshal.dumps(value)
    except ValueError:
        return b"P" + pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def _loads(blob: bytes):
    if blob[:1] == b"M":
        return marshal.loads(memoryview(blob)[1:])
    if blob[:1] == b"P":
        return pickle.loads(memoryview(blob)[1:])
    raise ValueError("not a prefetch result")


def _can_fork() -> bool:
    return hasattr(os, "fork") and threading.active_count() == 1


class Prefetch:
    def __init__(self, fn: Callable[..., Any], *args: Any, fork: bool = True):
        self._fn, self._args = fn, args
        self._pid: int | None = None
        self._fd: int | None = None
        self._done = False
        self._value: Any = None
        self.from_child = False               # whether `result()` came from the child (tests read it)
        self.started = False                  # whether a child was started
        if fork and _can_fork():
            self._start()

    def _start(self) -> None:
        try:
            r, w = os.pipe()
        except OSError:
            return
        try:
            pid = os.fork()
        except OSError:
            os.close(r)
            os.close(w)
            return
        if pid == 0:                                  # the child: compute, send, leave without cleanup
            code = 1
            try:
                os.close(r)
                blob = _dumps(self._fn(*self._args))
                view = memoryview(blob)
                while view:
                    view = view[os.write(w, view):]
                code = 0
            except BaseException:                     # noqa: BLE001 - the parent computes it itself
                pass
            finally:
                os._exit(code)
        os.close(w)
        self._pid, self._fd = pid, r
        self.started = True

    def result(self) -> Any:
        if self._done:
            return self._value
        value, ok = None, False
        if self._pid is not None:
            chunks = []
            try:
                while True:
                    chunk = os.read(self._fd, 1 << 20)
                    if not chunk:
                        break
                    chunks.append(chunk)
            except OSError:
                chunks = None
            status = self._reap()
            if chunks is not None and status == 0:
                try:
                    value, ok = _loads(b"".join(chunks)), True
                except Exception:                     # noqa: BLE001 - computed here instead
                    ok = False
        if not ok:
            value = self._fn(*self._args)
        self._done, self._value, self.from_child = True, value, ok
        return value

    def _reap(self, kill: bool = False) -> int | None:
        pid, self._pid = self._pid, None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if pid is None:
            return None
        if kill:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        while True:
            try:
                _, status = os.waitpid(pid, 0)
                return os.waitstatus_to_exitcode(status)
            except InterruptedError:
                continue
            except ChildProcessError:
                return None

    def close(self) -> None:
        """Reap the child (killing it if it still runs) when the result is not wanted after all."""
        if self._pid is not None:
            self._reap(kill=True)

    def __enter__(self) -> "Prefetch":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
