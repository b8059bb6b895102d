"""Validated rule packs kept between runs, keyed by content: what a cold scan would otherwise rebuild each time.

Loading a rule pack reads its YAML files and validates them with pydantic, whose schemas are built on first
use (the first build also imports importlib.metadata to look for pydantic plugins): for the injection, secret
and personal-data packs about a tenth of a cold pre-commit scan of a few small files (bench/run.py precommit).
`cached(name, files, build)` returns what `build()` returns, read from the user's cache when an entry made from
exactly the same inputs is there:

- the key is a sha256 of the cache's format, Python's, pydantic's and pydantic-core's versions, the path, size
  and modification time of every module of the `scanner` package (the models, their validators and whatever
  they consult: what Python's bytecode cache checks of a source) and each pack file's path and bytes; a change
  to any of them is another key, so a stale entry is never read;
- an entry is a pickle in `$CENTINELA_CACHE_DIR/packs` (default `$XDG_CACHE_HOME/centinela`, else
  `~/.cache/centinela`; `CENTINELA_NO_CACHE` or `CENTINELA_PACK_CACHE=0` turn it off). Unpickling runs code,
  so an entry is read only when it and its folder are owned by this user and writable by no one else, as the
  user's own files are; it must also unpickle and hold the same key. Anything else — absent, damaged, another
  key, someone else's — is rebuilt from the YAML and written again (atomically, mode 0600), never trusted;
- a pack that fails to validate raises as before and is not cached. Writing is best effort: a read-only cache
  is no cache.

`scanner.normalize` keeps its fold tables the same way (no files: the key is the code's).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import stat
import sys
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable, TypeVar

T = TypeVar("T")
FORMAT = 1
ENV = "CENTINELA_PACK_CACHE"
_PACKAGE = Path(__file__).resolve().parent


@lru_cache(maxsize=1)
def _code_key() -> bytes:
    """What the packs' validation depends on besides their files: the versions, and every module of the
    package by path, size and modification time (as the interpreter's own bytecode cache checks its sources:
    an edit, a checkout or an install is another key; reading and hashing all 1.6 MB of source took 12 ms)."""
    parts = [f"{FORMAT} {sys.version} {_version('pydantic')} {_version('pydantic_core')}"]
    stack = [str(_PACKAGE)]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        stack.append(entry.path)
                elif entry.name.endswith(".py"):
                    st = entry.stat()
                    parts.append(f"{entry.path}\0{st.st_size}\0{st.st_mtime_ns}")
    return hashlib.sha256("\n".join(sorted(parts)).encode("utf-8", "surrogateescape")).digest()


def _version(module: str) -> str:
    """A distribution's version from its `dist-info` beside the package, without importing it (the fold tables
    need no pydantic); the imported module's `__version__` when there is not exactly one."""
    from scanner.distinfo import version_beside

    version = version_beside(module)
    if version is not None:
        return version
    import importlib

    return str(getattr(importlib.import_module(module), "__version__", "unknown"))


def key_of(name: str, files: Iterable[Path]) -> str:
    h = hashlib.sha256(_code_key() + name.encode() + b"\0")
    for path in files:
        h.update(str(path).encode("utf-8", "surrogateescape") + b"\0" + Path(path).read_bytes() + b"\0")
    return h.hexdigest()


def directory() -> Path | None:
    if os.environ.get(ENV, "1") == "0":
        return None
    from scanner.cachedir import cache_dir

    base = cache_dir()
    return None if base is None else base / "packs"


def _private(st: os.stat_result) -> bool:
    """Owned by this user and writable by no one else (group or others)."""
    return st.st_uid == os.getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _read(path: Path, key: str):
    """(True, value) from a trustworthy entry holding `key`, else (False, None)."""
    try:
        folder = os.lstat(path.parent)
        if not (stat.S_ISDIR(folder.st_mode) and _private(folder)):
            return False, None
        with open(path, "rb", opener=lambda p, flags: os.open(p, flags | os.O_NOFOLLOW)) as fh:
            st = os.fstat(fh.fileno())
            if not (stat.S_ISREG(st.st_mode) and _private(st)):
                return False, None
            envelope = pickle.loads(fh.read())
    except Exception:               # absent, unreadable, truncated, a class that no longer exists…: rebuilt
        return False, None
    if isinstance(envelope, tuple) and len(envelope) == 3 and envelope[0] == FORMAT and envelope[1] == key:
        return True, envelope[2]
    return False, None


def _write(folder: Path, name: str, path: Path, key: str, value) -> None:
    try:
        from scanner.atomic import atomic_write_bytes

        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        data = pickle.dumps((FORMAT, key, value), protocol=pickle.HIGHEST_PROTOCOL)
        atomic_write_bytes(path, data)
        os.chmod(path, 0o600)
        for old in folder.glob(f"{name}-*.pickle"):     # the entries of earlier versions of this pack
            if old != path:
                old.unlink(missing_ok=True)
    except Exception:               # no cache: the pack was built all the same
        pass


def cached(name: str, files: Iterable[Path], build: Callable[[], T]) -> T:
    """`build()`, or what it returned before for the same `files` (their paths and bytes) and the same code."""
    folder = directory()
    if folder is None:
        return build()
    try:
        key = key_of(name, sorted(files))
    except OSError:                 # a file went away: building reports it as it would without the cache
        return build()
    path = folder / f"{name}-{key[:32]}.pickle"
    found, value = _read(path, key)
    if found:
        return value
    value = build()
    _write(folder, name, path, key, value)
    return value
