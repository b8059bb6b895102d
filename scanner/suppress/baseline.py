"""3. The baseline (`--baseline`, `--write-baseline`): findings accepted when centinela was adopted
(format and matching: the package's docstring)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from scanner import TOOL_NAME
from scanner.atomic import atomic_write_text
from scanner.findings import Finding
from scanner.fingerprint import FINGERPRINT_KEY, SENSITIVE_KINDS
from scanner.jsonsafe import read_json
from scanner.scrub import scrub_path
from scanner.suppress.allowlist import first_error
from scanner.suppress.fingerprints import Fingerprinter, posix
from scanner.suppress.report import FINGERPRINT_KEY_ENV, SuppressionError, SuppressionReport, SuppressionWarning

BASELINE_VERSION = 2     # 2: unkeyed datum fingerprints leave the datum out; 1 (0.1.0) hashed it plainly
BASELINE_BYTES = 256 << 20


class BaselineEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)   # built on first use (a scan without a baseline never)

    path: str = Field(min_length=1)
    rule: str = Field(min_length=1)
    fingerprint: str = Field(pattern=r"^[0-9a-f]{64}$")
    count: int = Field(default=1, ge=1)


class BaselineFile(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)   # built on first use (a scan without a baseline never)

    version: Literal[1, 2]
    tool: Literal["centinela"]
    fingerprint: Literal["centinela/v1"]
    keyed: bool = False
    total: int = Field(ge=0)
    results: list[BaselineEntry]

    @model_validator(mode="after")
    def _total(self):
        if self.total != sum(e.count for e in self.results):
            raise ValueError("total is not the sum of the counts")
        return self


@dataclass
class Baseline:
    source: str
    keyed: bool
    counts: dict          # (fingerprint, rule, path as outputs show it) -> count
    version: int = BASELINE_VERSION

    @property
    def legacy_unkeyed(self) -> bool:
        """Written by centinela 0.1.0 without a key: its secret and personal-data entries are fingerprints over
        a plain digest of the datum (brute-forceable), the scheme this version replaced."""
        return self.version == 1 and not self.keyed


def load_baseline(path: Path | str) -> Baseline:
    """Read a baseline; anything unreadable or malformed raises `SuppressionError` (fail closed)."""
    path = Path(path)
    try:
        data = read_json(path, max_bytes=BASELINE_BYTES)
    except OSError as exc:
        raise SuppressionError(f"{path}: cannot read the baseline: {exc.strerror or exc}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise SuppressionError(f"{path}: the baseline is not valid JSON: {exc}") from None
    try:
        model = BaselineFile.model_validate(data)
    except ValidationError as exc:
        raise SuppressionError(f"{path}: not a centinela baseline: {first_error(exc)}") from None
    counts: dict = {}
    for e in model.results:
        k = (e.fingerprint, e.rule, scrub_path(posix(e.path)))
        counts[k] = counts.get(k, 0) + e.count
    return Baseline(str(path), model.keyed, counts, model.version)


def baseline_json(findings: Iterable[Finding], *, path_of: Callable[[str], str],
                  text_of: Callable[[str], Optional[str]], key: Optional[bytes] = None) -> str:
    """The baseline text of `findings`: only fingerprint, rule, path and a count per distinct triple.

    Findings suppressed inline or by the allowlist are left out (they have their own, reviewed, reason);
    baseline-suppressed ones are kept, so re-writing a baseline keeps what is still there. A path that holds a
    datum is written masked (`scanner.scrub.scrub_path`), as every output shows it.
    """
    findings = list(findings)
    fpr = Fingerprinter(path_of, text_of, key, findings)
    counts: dict[tuple[str, str, str], int] = {}
    for f in findings:
        if (f.suppression.kind if f.suppression is not None else None) in ("inline", "allowlist"):
            continue
        k = (scrub_path(fpr.repo_path(f.path)), f.rule_id, fpr(f))
        counts[k] = counts.get(k, 0) + 1
    results = [{"path": p, "rule": r, "fingerprint": fp, "count": n} for (p, r, fp), n in sorted(counts.items())]
    doc = {"version": BASELINE_VERSION, "tool": TOOL_NAME, "fingerprint": FINGERPRINT_KEY, "keyed": key is not None,
           "total": sum(counts.values()), "results": results}
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_baseline(findings: Iterable[Finding], path: Path | str, *, path_of: Callable[[str], str],
                   text_of: Callable[[str], Optional[str]], key: Optional[bytes] = None) -> int:
    """Write the baseline of `findings` to `path` atomically (see `baseline_json`); returns its total."""
    text = baseline_json(findings, path_of=path_of, text_of=text_of, key=key)
    atomic_write_text(path, text)
    return json.loads(text)["total"]


def baseline_pass(findings: list[Finding], baseline: Baseline, fpr: Fingerprinter, scanned: Optional[set],
                   active_rules: Optional[set], report: SuppressionReport, chosen: dict) -> None:
    if baseline.legacy_unkeyed:
        report.warnings.append(SuppressionWarning(
            "baseline-legacy-unkeyed", baseline.source,
            "written by an older centinela without a fingerprint key: the fingerprints of its secret and "
            "personal-data entries come from a plain digest of the datum, which a brute force over the datum's "
            "few possible values (a phone, a CURP) inverts; treat the file as a leak if it was ever pushed, and "
            "rewrite it with --write-baseline (with $" + FINGERPRINT_KEY_ENV + " set, the entries are keyed). "
            "Its entries still suppress until then"))
    elif baseline.keyed != (fpr.key is not None):
        report.warnings.append(SuppressionWarning(
            "baseline-key-mismatch", baseline.source,
            f"the baseline was written {'with' if baseline.keyed else 'without'} ${FINGERPRINT_KEY_ENV} and this run "
            f"is {'with' if fpr.key is not None else 'without'} it: secret and personal-data findings will not "
            f"match it"))
    left = dict(baseline.counts)
    for f in findings:                      # file order: the first occurrences use up the baselined count
        if id(f) in chosen:
            continue
        path = scrub_path(fpr.repo_path(f.path))
        k = (fpr(f), f.rule_id, path)
        if left.get(k, 0) <= 0 and baseline.legacy_unkeyed and f.kind in SENSITIVE_KINDS and fpr.key is None:
            legacy = fpr.legacy(f)
            if legacy is not None:
                k = (legacy, f.rule_id, path)
        if left.get(k, 0) > 0:
            left[k] -= 1
            chosen[id(f)] = ("baseline", f"in the baseline {Path(baseline.source).name} (accepted when centinela "
                                         f"was adopted)")
    scanned_shown = {scrub_path(p) for p in scanned} if scanned is not None else None
    fixed = sum(n for (fp, rule, path), n in left.items()
                if n > 0 and (scanned_shown is None or path in scanned_shown)
                and (active_rules is None or rule in active_rules))
    report.baseline_fixed = fixed
    if fixed:
        report.warnings.append(SuppressionWarning(
            "baseline-stale", baseline.source,
            f"{fixed} baselined finding(s) were not found any more: run --write-baseline to drop them"))
