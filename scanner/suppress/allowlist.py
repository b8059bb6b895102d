"""2. The allowlist file: reviewed exceptions keyed by fingerprint (format and matching: the package's
docstring)."""

from __future__ import annotations

import datetime as _dt
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from scanner.evidence import datum_variants
from scanner.findings import Finding
from scanner.fingerprint import SENSITIVE_KINDS
from scanner.suppress.fingerprints import Fingerprinter, posix
from scanner.suppress.inline import RULE_ID
from scanner.suppress.report import FINGERPRINT_KEY_ENV, SuppressionError, SuppressionReport, SuppressionWarning
from scanner.yamlsafe import read_text_bounded, safe_load
from scanner.validation import first_errors

DEFAULT_ALLOWLIST = ".centinela-allowlist.yaml"
_RULE_RE = re.compile(rf"^{RULE_ID}$")
_FP_RE = re.compile(r"^([0-9a-f]{64})(?::[1-9][0-9]*)?$")
_POINTER_RE = re.compile(r"^(?:/(?:[^~]|~[01])*)*$")
# Extra keys that look like an attempt to store the datum get their own message (all extra keys are refused).
_DATUM_LIKE = ("value", "secret", "datum", "text", "match", "evidence", "snippet", "token", "password",
               "email", "content", "raw", "data", "plain")


class AllowlistEntry(BaseModel):
    """One reviewed exception. Extra keys are forbidden: an entry can never hold the datum."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, defer_build=True)  # built on first use

    fingerprint: str
    rule: str = Field(min_length=1, max_length=100)
    path: str = Field(min_length=1, max_length=1000)
    pointer: Optional[str] = Field(default=None, max_length=2000)
    page: Optional[int] = Field(default=None, ge=1)
    reason: str = Field(min_length=1, max_length=500)
    reviewer: str = Field(min_length=1, max_length=100)
    expires: Optional[_dt.date] = None

    @model_validator(mode="before")
    @classmethod
    def _no_datum_keys(cls, data):
        if isinstance(data, dict):
            for key in data:
                name = str(key).lower()
                if name not in cls.model_fields and any(word in name for word in _DATUM_LIKE):
                    raise ValueError(f"field {key!r} is not allowed: an allowlist entry never stores the secret or "
                                     f"personal datum itself (the fingerprint identifies it)")
        return data

    @field_validator("fingerprint", mode="before")
    @classmethod
    def _fingerprint(cls, v):
        if not isinstance(v, str):
            raise ValueError("must be a quoted string: the 64 hex digits of a centinela/v1 fingerprint")
        m = _FP_RE.match(v.strip().lower())
        if m is None:
            raise ValueError("must be a centinela/v1 fingerprint: 64 hex digits (an optional ':n' is ignored)")
        return m.group(1)

    @field_validator("rule")
    @classmethod
    def _rule(cls, v: str) -> str:
        if not _RULE_RE.match(v):
            raise ValueError(f"{v!r} is not a rule id")
        return v

    @field_validator("path")
    @classmethod
    def _path(cls, v: str) -> str:
        p = posix(v)
        if p.startswith("/") or re.match(r"^[A-Za-z]:", p) or ".." in p.split("/") or not p:
            raise ValueError("must be a repo-relative POSIX path (no leading '/', no '..')")
        return p

    @field_validator("pointer")
    @classmethod
    def _pointer(cls, v):
        if v is not None and not _POINTER_RE.match(v):
            raise ValueError("must be a JSON pointer ('' or starting with '/', '~' only as ~0 or ~1)")
        return v

    @field_validator("reviewer")
    @classmethod
    def _reviewer(cls, v: str) -> str:
        if "\n" in v or "\r" in v:
            raise ValueError("must be one line")
        return v

    @model_validator(mode="after")
    def _one_place(self):
        if self.pointer is not None and self.page is not None:
            raise ValueError("give a pointer (JSON) or a page (PDF), not both")
        return self

    def expired(self, today: _dt.date) -> bool:
        return self.expires is not None and today >= self.expires

    def justification(self) -> str:
        until = f", until {self.expires.isoformat()}" if self.expires else ""
        return f"{self.reason} (reviewed by {self.reviewer}{until})"


@dataclass
class Allowlist:
    source: str
    entries: list[AllowlistEntry]
    problems: list = field(default_factory=list)    # SuppressionWarning of entries left out (allowlist-outside)


ALLOWLIST_BYTES = 8 << 20


def first_error(exc: ValidationError) -> str:
    return first_errors(exc, limit=3, extra_forbidden="unknown field (entries hold only fingerprint, rule, path, "
                                                      "pointer, page, reason, reviewer, expires)")


def parse_allowlist(text: str, source: str = DEFAULT_ALLOWLIST) -> Allowlist:
    """Validate allowlist YAML; `SuppressionError` names the file and the entry of the first problem."""
    try:
        # scanner.yamlsafe: no aliases, bounded; a repeated key is refused (a second `reason:` must not win)
        data = safe_load(text, max_bytes=ALLOWLIST_BYTES, unique_keys=True)
    except yaml.YAMLError as exc:
        raise SuppressionError(f"{source}: not valid YAML: {' '.join(str(exc).split())}") from None
    if data is None:
        return Allowlist(source, [])
    if not isinstance(data, dict):
        raise SuppressionError(f"{source}: expected a mapping with 'version: 1' and 'entries: [...]'")
    unknown = sorted(str(k) for k in data if k not in ("version", "entries"))
    if unknown:
        raise SuppressionError(f"{source}: unknown top-level key(s) {', '.join(unknown)} (only version, entries)")
    if data.get("version", 1) != 1:
        raise SuppressionError(f"{source}: version {data.get('version')!r} is not supported (1)")
    raw = data.get("entries") or []
    if not isinstance(raw, list):
        raise SuppressionError(f"{source}: 'entries' must be a list")
    entries = []
    for i, item in enumerate(raw, 1):
        label = f"entry {i}"
        if isinstance(item, dict) and (item.get("rule") or item.get("path")):
            label += f" ({item.get('rule', '?')} {item.get('path', '?')})"
        if not isinstance(item, dict):
            raise SuppressionError(f"{source}: {label}: expected a mapping")
        try:
            entries.append(AllowlistEntry.model_validate(item))
        except ValidationError as exc:
            raise SuppressionError(f"{source}: {label}: {first_error(exc)}") from None
    return Allowlist(source, entries)


def load_allowlist(path: Path | str, root: Path | str | None = None) -> Allowlist:
    """The allowlist at `path`. With `root` (the repository its paths are relative to), an entry whose path
    leads out of it through a symlink is left out with an `allowlist-outside` problem: it suppresses nothing
    (`..` and absolute paths are refused by the model already)."""
    path = Path(path)
    try:
        text = read_text_bounded(path, ALLOWLIST_BYTES)
    except yaml.YAMLError as exc:
        raise SuppressionError(f"{path}: not valid YAML: {exc}") from None
    except OSError as exc:
        raise SuppressionError(f"{path}: cannot read the allowlist: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise SuppressionError(f"{path}: the allowlist is not UTF-8") from None
    allowlist = parse_allowlist(text, str(path))
    if root is not None:
        base = os.path.realpath(root)
        kept = []
        for i, e in enumerate(allowlist.entries, 1):
            target = os.path.realpath(os.path.join(base, e.path))
            if os.path.commonpath([base, target]) != base:
                allowlist.problems.append(SuppressionWarning(
                    "allowlist-outside", str(path),
                    f"entry {i} ({e.rule} {e.path}): the path leads out of the repository (symlink): ignored, "
                    "it suppresses nothing"))
            else:
                kept.append(e)
        allowlist.entries = kept
    return allowlist


def finding_pointer(f: Finding) -> Optional[str]:
    """A finding's JSON pointer: its locator when that is one, else its container (HTML in a JSON body)."""
    if f.locator is not None and (f.locator == "" or f.locator.startswith("/")):
        return f.locator
    container = f.container
    if container is not None and container.startswith("/"):
        return container
    return None


def _entry_matches(entry: AllowlistEntry, f: Finding, fp: str) -> bool:
    place_given = entry.pointer is not None or entry.page is not None
    place_ok = ((entry.pointer is not None and finding_pointer(f) == entry.pointer)
                or (entry.page is not None and f.page == entry.page))
    if f.kind in SENSITIVE_KINDS:
        return entry.fingerprint == fp and (place_ok or not place_given)
    return entry.fingerprint == fp or place_ok


def _datum_variants(raw: str) -> set[str]:
    return {v.casefold() for v in datum_variants(raw)}


def _entry_holding_datum(entries: list[AllowlistEntry], findings: list[Finding],
                         fpr: Fingerprinter) -> dict[int, Finding]:
    """Index of each entry whose free text (reason, reviewer, pointer) contains the datum of a secret or
    personal-data finding in one of the allowlisted files → that finding. (Only those files are read: the
    datum a reviewer could paste is the one of the file they allowlist.)"""
    paths = {e.path for e in entries}
    data: list[tuple[set[str], Finding]] = []
    for f in findings:
        if f.kind not in SENSITIVE_KINDS or f.page is not None or fpr.repo_path(f.path) not in paths:
            continue
        text = fpr.text(f.path)
        if text is None or not 0 <= f.start < f.end <= len(text):
            continue
        variants = _datum_variants(text[f.start:f.end])
        if variants:
            data.append((variants, f))
    out: dict[int, Finding] = {}
    if not data:
        return out
    for i, e in enumerate(entries):
        blob = "\n".join((e.reason, e.reviewer, e.pointer or "")).casefold()
        for variants, f in data:
            if any(v in blob for v in variants):
                out[i] = f
                break
    return out


def allowlist_pass(findings: list[Finding], allowlist: Allowlist, fpr: Fingerprinter, today: _dt.date,
                    scanned: Optional[set], active_rules: Optional[set], report: SuppressionReport,
                    chosen: dict) -> None:
    entries = allowlist.entries
    poisoned = _entry_holding_datum(entries, findings, fpr)
    by_key: dict[tuple[str, str], list[int]] = {}
    for i, e in enumerate(entries):
        by_key.setdefault((e.rule, e.path), []).append(i)
    used = [False] * len(entries)
    expired_hits = [0] * len(entries)
    legacy_hits: dict[int, str] = {}          # entry index -> the fingerprint it should hold now
    for f in findings:
        idxs = by_key.get((f.rule_id, fpr.repo_path(f.path)))
        if not idxs:
            continue
        fp = fpr(f)
        legacy = fpr.legacy(f) if f.kind in SENSITIVE_KINDS and fpr.key is None else None
        for i in idxs:
            e = entries[i]
            if i in poisoned:
                continue
            if not _entry_matches(e, f, fp):
                if legacy is None or not _entry_matches(e, f, legacy):
                    continue
                legacy_hits[i] = fp
            if e.expired(today):
                expired_hits[i] += 1
                continue
            used[i] = True
            chosen.setdefault(id(f), ("allowlist", e.justification()))
    for i, e in enumerate(entries):
        label = f"entry {i + 1} ({e.rule} {e.path})"
        if i in legacy_hits:
            report.warnings.append(SuppressionWarning(
                "allowlist-legacy-fingerprint", allowlist.source,
                f"{label} holds the fingerprint an older centinela computed from a plain digest of the datum, "
                f"which a brute force over the datum's few possible values inverts: replace it by "
                f"{legacy_hits[i]} (or set ${FINGERPRINT_KEY_ENV} and use the keyed value); it still suppresses "
                f"until then"))
        if i in poisoned:
            f = poisoned[i]
            report.warnings.append(SuppressionWarning(
                "allowlist-datum", allowlist.source,
                f"{label} contains the datum of a {f.kind} finding ({f.rule_id} in {f.path}, evidence {f.evidence}): "
                f"remove it from the entry; until then the entry suppresses nothing"))
            continue
        relevant = (scanned is None or e.path in scanned) and (active_rules is None or e.rule in active_rules)
        if e.expired(today):
            if relevant or expired_hits[i]:
                extra = f"; {expired_hits[i]} finding(s) it matches are reported again" if expired_hits[i] else ""
                report.warnings.append(SuppressionWarning(
                    "allowlist-expired", allowlist.source,
                    f"{label} expired on {e.expires.isoformat()}{extra}: review it again or remove it"))
            continue
        if not used[i] and relevant:
            report.warnings.append(SuppressionWarning(
                "allowlist-stale", allowlist.source, f"{label} matches no finding: remove it"))
