"""Bytecode for the modules centinela and its tests import, written into the virtualenv by `make setup`.

pip installs with --no-compile (Makefile: byte-compiling every module of every dependency, spaCy's 70
languages included, doubled the install step), and where PYTHONDONTWRITEBYTECODE=1 is set (this project's CI
and development machines) Python never writes bytecode either: every process compiled the dependencies it
imported from source on each start — spaCy, Presidio, pydantic, pdfminer: measured 2026-12-05, a scan of the
example tree took 4.2–4.7 s without and 2.85–2.99 s with their bytecode. This script imports what the commands
and the test suite import, with bytecode writing on, so that exactly those modules get theirs, beside their
sources: in the virtualenv (`sys.prefix`) and in the checkout's package (`__pycache__/`, ignored by git).

Nothing here changes what runs: Python checks each bytecode file against its source's size and modification
time, and compiles the source again when they differ.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import pkgutil
import py_compile
import sys
import time
import warnings


# What every test process imports, past what importing the package brings in. Not what one test alone needs
# (scikit-learn for training, the providers' SDKs): compiling it here, on one core before the suite starts,
# would cost more than the one process that imports it compiling it while the other works.
TEST_IMPORTS = ("pytest", "_pytest.python", "_pytest.fixtures", "_pytest.tmpdir", "_pytest.monkeypatch",
                "_pytest.capture", "_pytest.junitxml", "_pytest.skipping", "_pytest.terminal", "_pytest.warnings",
                "xdist", "xdist.plugin", "xdist.remote", "xdist.looponfail", "execnet", "filelock", "hypothesis",
                "hypothesis.strategies", "jsonschema", "httpx")
# Training code (scikit-learn, fastText): never imported to scan, score or check.
NOT_WALKED = ("scanner.__main__", "scanner.training")


def import_everything() -> None:
    """Every module of the package (a command imports a part of them), what loading the Spanish model and
    Presidio's engine import, and the test suite's imports; a module that cannot be imported (an optional
    extra not installed) is passed over."""
    warnings.simplefilter("ignore")
    import scanner

    for info in pkgutil.walk_packages(scanner.__path__, "scanner.", onerror=lambda _: None):
        if not info.name.startswith(NOT_WALKED):
            try:
                importlib.import_module(info.name)
            except Exception:  # noqa: BLE001 - a module needing an optional extra
                pass
    for name in TEST_IMPORTS:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the test extra not installed
            pass
    try:
        from scanner.pii.ner import load

        load()
        from scanner.pii.baseline import presidio_engine

        presidio_engine().analyze("calentar el motor: juan@gmail.com", language="es")
    except Exception:  # noqa: BLE001 - a lighter install: the rest is still compiled
        pass


def _compile(path: str) -> bool:
    try:
        py_compile.compile(path, doraise=True)
        return True
    except (py_compile.PyCompileError, OSError):
        return False


def _current(path: str) -> bool:
    try:
        return os.stat(importlib.util.cache_from_source(path)).st_mtime >= os.stat(path).st_mtime
    except (OSError, ValueError, NotImplementedError):
        return False


def main() -> int:
    started = time.perf_counter()
    # Each module imported from here on has its bytecode written as Python compiles it (once), whatever
    # PYTHONDONTWRITEBYTECODE says: this is the build step that setting would otherwise skip for good.
    sys.dont_write_bytecode = False
    import_everything()
    roots = tuple(os.path.realpath(p) + os.sep for p in (sys.prefix, os.path.dirname(os.path.dirname(__file__))))
    paths = sorted({path for module in list(sys.modules.values())
                    if (path := getattr(module, "__file__", None)) and path.endswith(".py")
                    and os.path.realpath(path).startswith(roots)})
    left = [p for p in paths if not _current(p)]        # imported before this script turned writing on
    done = [_compile(p) for p in left]
    print(f"write_bytecode: bytecode for {len(paths)} modules of the virtualenv and the package "
          f"({len(left)} compiled apart{f', {done.count(False)} failed' if False in done else ''}) "
          f"in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
