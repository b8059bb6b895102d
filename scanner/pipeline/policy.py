"""What counts of a scan's findings, decided once for every command: the tree's expectations (a
prompt-injection fixture is expected to carry injections) and the reviewed exceptions (inline directives,
the allowlist, the baseline: `scanner.suppress`). `scan`, `check` and the hooks all apply these, so two
commands that look at the same files can never disagree about them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from scanner.findings import Finding
from scanner.pipeline.result import ScanResult
from scanner.scan import Scanner
from scanner.suppress import (
    DEFAULT_ALLOWLIST, Allowlist, Baseline, RepoPaths, SuppressionReport, apply_suppressions,
    fingerprint_key_from_env, load_allowlist, load_baseline, write_baseline,
)

INJECTION_CLASS = "prompt-injection"      # the manifest class that exists to carry injections (spec, class 8)


class TreeClasses:
    """The manifest class of a scanned file, from the fixture tree holding it (each manifest read once)."""

    def __init__(self, result: ScanResult):
        self.result = result
        self._trees: dict[Path, dict[str, str]] = {}

    def of(self, display: str) -> str | None:
        base = self.result.roots.get(display, Path("."))
        file = (base / display).resolve()
        from scanner.redact import find_root     # with read_manifest below: only `--allow-class` needs them

        root = find_root(file.parent)
        if root is None:
            return None
        if root not in self._trees:
            from scanner.fixtures.tree import read_manifest      # the fixture models (pydantic)

            self._trees[root] = {rel: e.class_ for rel, e in read_manifest(root).entries.items()}
        return self._trees[root].get(file.relative_to(root).as_posix())


def expected_injections(result: ScanResult, classes: set[str]) -> list[Finding]:
    """The injection findings in fixtures whose manifest class is expected to carry them."""
    trees = TreeClasses(result)
    return [f for f in result.findings if f.kind == "injection" and trees.of(f.path) in classes]


def drop_expected_injections(result: ScanResult, classes: set[str]) -> int:
    """Leave out injection findings in fixtures whose manifest class is expected to carry them (`scan
    --allow-class`); returns how many were left out."""
    expected = {id(f) for f in expected_injections(result, classes)}
    kept = [f for f in result.findings if id(f) not in expected]
    result.findings = kept
    for doc in result.documents:
        doc["injection_vectors"] = sorted({f.vector for f in kept if f.path == doc["path"] and f.kind == "injection"})
    return len(expected)


@dataclass
class Suppressions:
    """The reviewed exceptions of a run and the fingerprint key they are matched with."""

    repo_root: Path
    key: bytes | None = None
    allowlist: Allowlist | None = None
    baseline: Baseline | None = None

    @classmethod
    def load(cls, repo_root: Path, allowlist_path: Path | None = None,
             baseline_path: Path | None = None) -> "Suppressions":
        """The key from the environment, the allowlist (default: `.centinela-allowlist.yaml` at the repository
        root, when present) and the baseline. A bad key, allowlist or baseline raises `SuppressionError`."""
        key = fingerprint_key_from_env(repo_root=repo_root)
        if allowlist_path is None and (repo_root / DEFAULT_ALLOWLIST).is_file():
            allowlist_path = repo_root / DEFAULT_ALLOWLIST
        allowlist = load_allowlist(allowlist_path, repo_root) if allowlist_path is not None else None
        baseline = load_baseline(baseline_path) if baseline_path is not None else None
        return cls(repo_root, key, allowlist, baseline)

    @property
    def reviewed(self) -> bool:
        """An allowlist or a baseline is in use (their fingerprints hold secrets' and personal data's)."""
        return self.allowlist is not None or self.baseline is not None

    def apply(self, result: ScanResult, scanner: Scanner) -> SuppressionReport:
        """Mark the suppressed findings of `result` (inline directives, allowlist, baseline) from the texts the
        scan kept; sets and returns `result.suppression`."""
        report = apply_suppressions(
            result.findings, path_of=RepoPaths(self.repo_root, result.roots).path_of, text_of=result.text_of,
            allowlist=self.allowlist, baseline=self.baseline, key=self.key,
            scanned=[d["path"] for d in result.documents if "error" not in d],  # read ones only
            active_rules=scanner.rule_ids())
        result.suppression = report
        return report

    def write_baseline(self, result: ScanResult, path: Path) -> int:
        """Write the findings of `result` as a baseline (fingerprint, rule, path; never the datum)."""
        return write_baseline(result.findings, path, path_of=RepoPaths(self.repo_root, result.roots).path_of,
                              text_of=result.text_of, key=self.key)
