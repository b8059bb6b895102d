"""Where a result points: the repo-relative, percent-encoded URI of its file (`%SRCROOT%`), or a `file:`
URI outside the repository; every segment that holds a datum masked first."""

from __future__ import annotations

import os
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import sarif_om as om

from scanner.scrub import scrub_path

SRCROOT = "%SRCROOT%"


@dataclass
class Place:
    rel: Optional[str]                  # repo-relative POSIX path, None when outside the repo
    abs: Path
    uri: str
    uri_base_id: Optional[str]

    def artifact_location(self) -> om.ArtifactLocation:
        return om.ArtifactLocation(uri=self.uri, uri_base_id=self.uri_base_id)


def encode_uri_path(posix_path: str) -> str:
    """Percent-encode a relative POSIX path for `artifactLocation.uri` (space, accents, `#`, `%`, …)."""
    return urllib.parse.quote(posix_path, safe="/")


class Places:
    def __init__(self, repo_root: Path, scan_root_for: Optional[Callable[[str], Optional[Path]]]):
        self.repo_root = Path(os.path.realpath(repo_root))
        self.scan_root_for = scan_root_for
        self._cache: dict[str, Place] = {}

    def __call__(self, path: str) -> Place:
        place = self._cache.get(path)
        if place is None:
            place = self._cache[path] = self._place(path)
        return place

    def _place(self, path: str) -> Place:
        p = Path(path)
        if not p.is_absolute():
            root = self.scan_root_for(path) if self.scan_root_for is not None else None
            p = Path(root if root is not None else Path.cwd()) / p
        real = Path(os.path.realpath(p))          # GitHub wants symlinks resolved
        try:
            rel = real.relative_to(self.repo_root).as_posix()
        except ValueError:
            # Outside the repository: a file: URI (GitHub does not show it), its segments masked all the same.
            return Place(None, real, "file://" + encode_uri_path(scrub_path(real.as_posix())), None)
        # A segment holding a datum (a file named after a person) is masked before it is percent-encoded:
        # `jua…@gmail.com.html`, never `juan.perez.lopez%40gmail.com.html`.
        return Place(rel, real, encode_uri_path(scrub_path(rel)), SRCROOT)


def split_container(path: str, places: Places) -> tuple[str, Optional[str]]:
    """`file.json#/response/body` (an error inside a recorded body) → (`file.json`, `/response/body`)."""
    head, sep, tail = path.rpartition("#")
    if not sep or not tail.startswith("/") or places(path).abs.exists():
        return path, None
    return head, tail
