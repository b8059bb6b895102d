"""The adapter exercises (test_node_clients, test_real_clients), run in the background from the start of the
session, in a process of their own, while the test workers run the rest of the suite.

An exercise is mostly waiting: retry-after and jitter, the breaker's open interval, a held request, a server
starting. Run by the module's first test, as they were, they held a test worker for about 35 s with nothing to
do (2026-12-05: 22.4 s and 13.2 s of one worker's 216 s, its core idle meanwhile). Now the first test worker to
set up its session (tests/conftest.py) starts this file as a script (`launch`): it runs the exercises that the
session's selected tests of each adapter module read, the same way (`realclients.run_batch`: a few at a time,
each with its own server, folder and adapters; an exercise whose verdict rests on timing precision alone, after
the others) and writes each one's outcome to a file as it ends. The modules' tests run last (conftest orders
them) and read those files (`exercised`): by then the exercises have long finished. Each is judged exactly as before; only
where its waiting happens changed.

Where no launch happened (CENTINELA_TEST_EXERCISES_HERE=1 set, or the modules' tests were not in the session's
collection), the module's first test runs them in its own process, as before. A runner that dies
makes the tests that wait for its results fail with its error output, never pass.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

from scanner.atomic import atomic_write_text

TESTS = Path(__file__).resolve().parent
MODULES = ("test_node_clients", "test_real_clients")
LAUNCHED = "launched.json"
WAIT_SECONDS = 900          # an exercise's results, at most this long after the test asks (a loaded machine)


def folder_for(shared: Path) -> Path:
    return shared / "exercises"


def launch(session, shared: Path) -> subprocess.Popen | None:
    """Start the runner for the adapter modules among `session.items`, once per session (the first worker to
    call this under pytest-xdist; the others find the marker): the process, or None when this call did not
    start one."""
    from filelock import FileLock

    wanted: dict[str, list[str]] = {}           # module -> the ids of the exercises its selected tests read
    for item in session.items:
        module = getattr(item, "module", None)
        if module is None or module.__name__ not in MODULES:
            continue
        key = module.key(item)
        ids = wanted.setdefault(module.__name__, [])
        if key is not None and module.key_id(key) not in ids:
            ids.append(module.key_id(key))
    if not wanted or os.environ.get("CENTINELA_TEST_EXERCISES_HERE"):
        return None
    out = folder_for(shared)
    out.mkdir(parents=True, exist_ok=True)
    with FileLock(str(out / "launch.lock")):
        if (out / LAUNCHED).exists():
            return None
        log = open(out / "runner.log", "wb")
        proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), str(out), json.dumps(wanted)],
                                stdout=log, stderr=subprocess.STDOUT, cwd=str(TESTS.parent))
        log.close()
        atomic_write_text(out / LAUNCHED, json.dumps({"pid": proc.pid, "modules": sorted(wanted)}))
    return proc


def exercised(request, shared: Path | None, run_here):
    """For a module-scoped fixture: {key: an object whose `.result()` is the exercise's outcome} for every test
    of the module selected in this session. From the background runner when it was launched for this module,
    else `run_here()` (the exercises run now, in this process)."""
    module = request.module
    name = module.__name__
    out = folder_for(shared) if shared is not None else None
    try:
        launched = json.loads((out / LAUNCHED).read_text()) if out is not None else None
    except (OSError, ValueError):
        launched = None
    if not launched or name not in launched["modules"]:
        return run_here()
    return _FileResults(module, out / name, launched["pid"], out / "runner.log")


class _FileResults(dict):
    def __init__(self, module, folder: Path, pid: int, log: Path):
        super().__init__()
        self.module, self.folder, self.pid, self.log = module, folder, pid, log

    def __missing__(self, key):
        return _FileResult(self, key)


class _FileResult:
    def __init__(self, owner: _FileResults, key):
        self.owner, self.key = owner, key

    def result(self):
        owner = self.owner
        path = owner.folder / f"{owner.module.key_id(self.key)}.json"
        deadline = time.monotonic() + WAIT_SECONDS
        while not path.exists():
            if not _alive(owner.pid) and not path.exists():
                raise RuntimeError(f"the exercise runner ended without {path.name}:\n{_tail(owner.log)}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"no {path.name} after {WAIT_SECONDS} s:\n{_tail(owner.log)}")
            time.sleep(0.05)
        data = json.loads(path.read_text(encoding="utf-8"))
        if "error" in data:
            raise RuntimeError(f"the exercise {path.stem} raised in the runner:\n{data['error']}")
        return owner.module.decode(self.key, data["value"])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a runner that exited but was not reaped yet (its launcher waits at the end of its session) is a zombie
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def _tail(log: Path, lines: int = 40) -> str:
    try:
        return "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no runner log)"


def finish(proc: subprocess.Popen | None, timeout: float = WAIT_SECONDS) -> None:
    """At the end of the launching worker's session: wait for the runner (it has long finished), kill it past
    `timeout`."""
    if proc is None:
        return
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def run(out: Path, wanted: dict[str, list[str]]) -> int:
    """The runner: for each module, the exercises `wanted` names (ids, `module.key_id`) in the order of
    `module.EXERCISES`, a few at a time, the ones `module.alone(key)` names after the others one by one; each
    outcome written to `out/<module>/<key id>.json` as it ends."""
    sys.path.insert(0, str(TESTS))
    from realclients import run_batch
    from scanner import netlock

    netlock.install(allow_loopback=True)        # the replay servers on loopback; nothing else
    for name in MODULES:
        if name not in wanted:
            continue
        module = importlib.import_module(name)
        if getattr(module, "SKIP_REASON", None):     # its tests skip: nothing to exercise
            continue
        folder = out / name
        folder.mkdir(parents=True, exist_ok=True)
        scratch = out / f"{name}-work"
        keys = [k for k in module.EXERCISES if module.key_id(k) in wanted[name]]

        def done(key, future, module=module, folder=folder):
            try:
                text = json.dumps({"value": module.encode(key, future.result())})
            except BaseException:                      # noqa: BLE001 - its test raises it
                text = json.dumps({"error": traceback.format_exc()})
            atomic_write_text(folder / f"{module.key_id(key)}.json", text)

        run_batch(keys, module.run_exercise, lambda i, d=scratch: _mkdir(d / f"exercise{i}"),
                  alone=module.alone, on_done=done)
    return 0


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


if __name__ == "__main__":
    sys.exit(run(Path(sys.argv[1]), json.loads(sys.argv[2])))
