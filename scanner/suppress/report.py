"""What applying suppressions reports: counts per mechanism and warnings; and the error a file that cannot be
used raises (the CLI: exit 2, one line)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from scanner.findings import SUPPRESSION_KINDS, Finding
from scanner.fingerprint import KEY_ENV, FingerprintKeyError, fingerprint_key
from scanner.scrub import scrub_path

FINGERPRINT_KEY_ENV = KEY_ENV


class SuppressionError(Exception):
    """An allowlist or baseline file that cannot be used as given (the CLI: exit 2, one line)."""


@dataclass
class SuppressionWarning:
    code: str            # inline-malformed | inline-refused | inline-unused | allowlist-expired | allowlist-stale
    #                      | allowlist-datum | allowlist-outside | allowlist-legacy-fingerprint
    #                      | baseline-key-mismatch | baseline-legacy-unkeyed | baseline-stale
    path: str            # the scanned file (display path), or the allowlist/baseline file
    message: str
    line: Optional[int] = None

    def __str__(self) -> str:
        path = scrub_path(self.path)
        where = f"{path}:{self.line}" if self.line is not None else path
        return f"{where}: warning: {self.code}: {self.message}"

    def to_json(self) -> dict:
        return {"code": self.code, "path": scrub_path(self.path), "line": self.line, "message": self.message}


@dataclass
class SuppressionReport:
    counts: dict = field(default_factory=lambda: {k: 0 for k in SUPPRESSION_KINDS})
    warnings: list[SuppressionWarning] = field(default_factory=list)
    baseline_fixed: int = 0          # baselined occurrences that were not found any more

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def summary_line(self) -> str:
        c = self.counts
        return f"{self.total} suppressed (inline {c['inline']}, allowlist {c['allowlist']}, baseline {c['baseline']})"

    def to_json(self) -> dict:
        return {"total": self.total, "counts": dict(self.counts), "baseline_fixed": self.baseline_fixed,
                "warnings": [w.to_json() for w in self.warnings]}


def is_suppressed(finding: Finding) -> bool:
    return finding.suppression is not None


def suppression_kind(finding: Finding) -> Optional[str]:
    return finding.suppression.kind if finding.suppression is not None else None


def fingerprint_key_from_env(environ=None, repo_root=None) -> Optional[bytes]:
    """The HMAC key for `centinela/v1` digests of secrets and personal data: $CENTINELA_FINGERPRINT_KEY, else
    the file $CENTINELA_FINGERPRINT_KEY_FILE names, else ~/.config/centinela/fingerprint.key
    (`scanner.fingerprint.fingerprint_key`).

    None when there is none. A key too short, unreadable or (given `repo_root`) inside the repository raises
    `SuppressionError`. Pass the same key to `build_sarif(fingerprint_key=…)`, or SARIF and allowlist
    fingerprints differ.
    """
    try:
        return fingerprint_key(environ, repo_root)
    except FingerprintKeyError as exc:
        raise SuppressionError(str(exc)) from None
