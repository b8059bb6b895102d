"""The files a scan reads, and the tree each one must stay inside.

Symlinks never lead a scan out of "the tree", which for each file is: the fixture tree holding it (the
nearest folder above it, by its path as given, with a manifest.json) — as verify, redact and score judge
manifest paths —, else the folder argument it was found in while walking. A file whose path (through a
symlinked file or folder) resolves outside it is a `path_outside_root` error, never read. A file given
explicitly outside any fixture tree is read where its symlink leads, under the name given.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from scanner.fixtures.layout import MANIFEST
from scanner.loaders import is_scannable, iter_files


@dataclass
class Target:
    path: Path
    display: str
    base: Path = Path(".")
    boundary: Path | None = None      # the folder the file must resolve inside (see the module's docstring)
    boundary_kind: str = ""           # "fixture tree" or "scanned folder", for the message


class _Trees:
    """The fixture tree holding a path, found from the path as written (symlinks not followed), cached per folder."""

    def __init__(self):
        self._seen: dict[str, Path | None] = {}

    def of(self, path: Path) -> Path | None:
        folder = os.path.dirname(os.path.abspath(path))
        walked = []
        found = None
        while True:
            if folder in self._seen:
                found = self._seen[folder]
                break
            walked.append(folder)
            if os.path.isfile(os.path.join(folder, MANIFEST)):
                found = Path(folder)
                break
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
        for f in walked:
            self._seen[f] = found
        return found


def collect_targets(paths: list[Path]) -> list[Target]:
    """Files to scan: directories are walked (scannable extensions only), files are taken as given."""
    targets: list[Target] = []
    trees = _Trees()
    for root in paths:
        if root.is_dir():
            for f in iter_files([root]):
                if is_scannable(f):
                    tree = trees.of(f)
                    targets.append(Target(f, f.relative_to(root).as_posix(), root, tree or root,
                                          "fixture tree" if tree else "scanned folder"))
        else:
            tree = trees.of(root)
            targets.append(Target(root, root.as_posix(), Path("."), tree, "fixture tree" if tree else ""))
    return targets


def outside_reason(target: Target) -> str | None:
    """Why the target must not be read (it leads out of its tree), or None."""
    if target.boundary is None:
        return None
    # As scanner.fixtures.tree.unsafe_reason judges a manifest path; a symlink loop is left to check_file
    # (realpath does not raise on one), which reports it as unreadable.
    real, base = os.path.realpath(target.path), os.path.realpath(target.boundary)
    if os.path.commonpath([real, base]) != base:
        return f"resolves outside the {target.boundary_kind} (symlink)"
    return None
