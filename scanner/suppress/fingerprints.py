"""The repo-relative path and the `centinela/v1` fingerprint of a finding, as SARIF computes them, so that
allowlist and baseline entries match the values code scanning shows."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Iterable, Optional

from scanner.findings import Finding
from scanner.fingerprint import file_data, finding_fingerprint, legacy_fingerprint


def posix(path: str) -> str:
    p = path.replace("\\", "/")
    while p.startswith("./"):
        p = p[2:]
    return p


class RepoPaths:
    """`path_of` for a `ScanResult`: a finding's display path → the repo-relative POSIX path, computed as
    `build_sarif` computes it (symlinks resolved).

    `roots` is `ScanResult.roots` (display path → the directory it is relative to). A path outside
    `repo_root` keeps its display path, as in SARIF (`place.rel or f.path`).
    """

    def __init__(self, repo_root: Path, roots: Optional[dict] = None):
        self.repo_root = Path(os.path.realpath(repo_root))
        self.roots = roots or {}
        self._paths: dict[str, str] = {}

    def abs_path(self, display: str) -> Path:
        p = Path(display)
        if not p.is_absolute():
            root = self.roots.get(display)
            p = Path(root if root is not None else Path.cwd()) / p
        return Path(os.path.realpath(p))

    def path_of(self, display: str) -> str:
        rel = self._paths.get(display)
        if rel is None:
            try:
                rel = self.abs_path(display).relative_to(self.repo_root).as_posix()
            except ValueError:
                rel = display
            self._paths[display] = rel
        return rel


class Fingerprinter:
    """`centinela/v1` of findings (cached per finding), from `path_of`/`text_of` and an optional key.

    `findings` are all the findings of the scan: the data they point at are replaced in an injection's text
    before it is hashed, exactly as `build_sarif` does (`scanner.fingerprint.file_data`)."""

    def __init__(self, path_of: Callable[[str], str], text_of: Callable[[str], Optional[str]],
                 key: Optional[bytes] = None, findings: Iterable[Finding] = ()):
        self.path_of = path_of
        self.key = key
        self._text_of = text_of
        self._texts: dict[str, Optional[str]] = {}
        self._fps: dict[int, str] = {}
        self._findings = list(findings)
        self._data: Optional[dict] = None

    def data(self, display: str) -> list:
        if self._data is None:
            self._data = file_data(self._findings, self.text)
        return self._data.get(display, [])

    def legacy(self, f: Finding) -> Optional[str]:
        """The unkeyed value an older centinela wrote for a secret or personal datum (see
        `scanner.fingerprint.legacy_fingerprint`), to recognise old baseline and allowlist entries."""
        return legacy_fingerprint(f, self.repo_path(f.path), self.text(f.path))

    def text(self, display: str) -> Optional[str]:
        # the last few texts only: keeping every file's decoded text would hold a whole tree in memory
        texts = self._texts
        if display in texts:
            texts[display] = texts.pop(display)          # most recent last
        else:
            texts[display] = self._text_of(display)
            if len(texts) > 8:
                del texts[next(iter(texts))]
        return texts[display]

    def repo_path(self, display: str) -> str:
        return posix(self.path_of(display))

    def __call__(self, f: Finding) -> str:
        fp = self._fps.get(id(f))
        if fp is None:
            fp = self._fps[id(f)] = finding_fingerprint(f, self.repo_path(f.path), self.text(f.path), key=self.key,
                                                        data=self.data(f.path))
        return fp
