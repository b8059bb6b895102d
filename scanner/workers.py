"""Run one function over many items in forked worker processes, with a watchdog per item.

The parent forks workers after everything expensive is loaded (rules, spaCy), so a worker starts in
milliseconds and shares that memory copy-on-write. Each worker takes one item at a time; the parent waits on
all of them at once and:

- kills a worker whose item has run past `seconds` (a C call — zlib, a regex, lxml — cannot be interrupted
  from inside), reports the item as timed out and forks a replacement;
- caps each worker's address space at what it had when forked plus `memory_bytes`, so a runaway allocation
  fails inside the worker (MemoryError, reported for that item) instead of exhausting the machine;
- reports an item whose worker died (a signal, the kernel's OOM killer) as crashed, and goes on.

Results are returned by item index, so callers put them back in input order: running with N workers gives
exactly what one gives.
"""

from __future__ import annotations

import faulthandler
import multiprocessing
import os
import signal
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Iterator

from scanner import rx


def fork_available() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


@dataclass
class Failure:
    """Why an item has no result: `timeout`, `memory` or `crashed`, and a one-line detail."""

    code: str
    detail: str = ""


def _address_space() -> int | None:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def _limit_memory(extra: int | None) -> None:
    if extra is None:
        return
    try:
        import resource
    except ImportError:          # pragma: no cover - not POSIX
        return
    current = _address_space()
    if current is None:
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = current + extra
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _worker(conn: Connection, func: Callable[[Any], Any], memory_bytes: int | None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)     # the parent handles Ctrl-C and ends its workers
    faulthandler.disable()                            # a crash is one line in the report, not a dump on stderr
    _limit_memory(memory_bytes)
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        index, item = msg
        try:
            result = func(item)
        except MemoryError:
            result = Failure("memory")
        except BaseException as exc:     # a bug in one item must not take the others down
            result = Failure("crashed", f"{type(exc).__name__}: {exc}")
        try:
            conn.send((index, result))
        except MemoryError:
            conn.send((index, Failure("memory")))


class _Slot:
    def __init__(self, ctx, func, memory_bytes):
        self.ctx, self.func, self.memory_bytes = ctx, func, memory_bytes
        self.proc = None
        self.conn: Connection | None = None
        self.index: int | None = None
        self.started = 0.0
        self.spawn()

    def spawn(self) -> None:
        parent, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_worker, args=(child, self.func, self.memory_bytes), daemon=True)
        self.proc.start()
        child.close()
        self.conn = parent
        self.index = None

    def give(self, index: int, item) -> None:
        self.index = index
        self.started = time.monotonic()
        try:
            self.conn.send((index, item))
        except (OSError, ValueError):
            pass                         # the worker is gone: wait() sees its pipe closed and reports it

    def kill(self) -> None:
        if self.proc is not None and self.proc.is_alive():
            os.kill(self.proc.pid, signal.SIGKILL)
        if self.proc is not None:
            self.proc.join()
        if self.conn is not None:
            self.conn.close()

    def stop(self) -> None:
        try:
            self.conn.send(None)
        except (OSError, ValueError):
            pass
        self.proc.join(timeout=5)
        if self.proc.is_alive():
            self.kill()
        self.conn.close()


def run(func: Callable[[Any], Any], items: list, jobs: int = 1, seconds: float | None = None,
        memory_bytes: int | None = None) -> Iterator[tuple[int, Any]]:
    """Yield (index, func(item) or Failure) for every item, in completion order."""
    if not items:
        return
    ctx = multiprocessing.get_context("fork")
    n_slots = max(1, min(jobs, len(items)))
    if n_slots > 1:
        rx.refresh()                     # regexes ready to run before the fork, not once per worker
    # (one worker writes only the programs its files reach, as a scan in this process would)
    slots = [_Slot(ctx, func, memory_bytes) for _ in range(n_slots)]
    pending = list(range(len(items)))
    pending.reverse()                    # pop() from the end: items go out in input order
    left = len(items)
    try:
        for slot in slots:
            if pending:
                i = pending.pop()
                slot.give(i, items[i])
        while left:
            busy = [s for s in slots if s.index is not None]
            timeout = None
            if seconds:
                now = time.monotonic()
                timeout = max(0.0, min(s.started + seconds - now for s in busy))
            ready = wait([s.conn for s in busy], timeout)
            for slot in busy:
                if slot.conn in ready:
                    try:
                        index, result = slot.conn.recv()
                    except (EOFError, OSError):
                        index, result = slot.index, _death(slot)
                        slot.kill()
                        slot.spawn()
                elif seconds and time.monotonic() - slot.started >= seconds:
                    index, result = slot.index, Failure("timeout")
                    slot.kill()
                    slot.spawn()
                else:
                    continue
                slot.index = None
                left -= 1
                yield index, result
                if pending:
                    i = pending.pop()
                    slot.give(i, items[i])
    finally:
        for slot in slots:
            if slot.index is not None:
                slot.kill()
            else:
                slot.stop()


def _death(slot: _Slot) -> Failure:
    slot.proc.join(timeout=5)
    code = slot.proc.exitcode
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        if -code == signal.SIGKILL:
            return Failure("memory", f"worker killed ({name}: out of memory?)")
        return Failure("crashed", f"worker died ({name})")
    return Failure("crashed", f"worker exited with code {code}")
