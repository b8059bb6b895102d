"""Atomic file replacement: a reader, or a crash at any instant, sees the old file or the new one, never half.

The new content is written to a temporary file in the same directory, flushed to disk, then renamed over
the target (rename is atomic on POSIX within one filesystem), and the directory entry is flushed too.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

# What mkstemp below names a file being written: `.{name}.` + 8 random characters + `.tmp`. One left behind
# means a writer was killed before its rename; the target itself is untouched (old or new, never half).
_TEMP_NAME = re.compile(r"^\..+\.[a-z0-9_]{8}\.tmp$")


def atomic_write_bytes(path: Path | str, data: bytes) -> None:
    path = Path(path)
    directory = path.parent
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        except FileNotFoundError:
            os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    _fsync_dir(directory)


def atomic_write_text(path: Path | str, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def is_temp_name(name: str) -> bool:
    """A file name atomic_write_bytes gives its temporary file."""
    return _TEMP_NAME.match(name) is not None


def stale_temps(root: Path) -> list[Path]:
    """Temporary files left under `root` by writers that were killed (symlinked folders are not followed)."""
    found = []
    for dirpath, _, filenames in os.walk(root, followlinks=False):
        found += [Path(dirpath) / n for n in sorted(filenames) if is_temp_name(n)]
    return sorted(found)


def remove_stale_temps(root: Path) -> list[Path]:
    """Remove what killed writers left (their targets were never touched); returns what was removed."""
    removed = []
    for path in stale_temps(root):
        try:
            path.unlink()
            removed.append(path)
        except FileNotFoundError:
            pass
    return removed
