"""Suppressions: inline HTML comments, a reviewed allowlist file, and a baseline for adopting centinela.

A suppressed finding stays in `ScanResult.findings` and carries `finding.extra["suppressed"] = {"kind":
"inline" | "allowlist" | "baseline", "justification": "…"}`. The SARIF writer leaves it out by default
(GitHub ignores SARIF `suppressions`), and the text summary counts it. `apply_suppressions` is the one entry
point; it marks findings and returns a `SuppressionReport`: counts per kind, and warnings.

Precedence: inline, then allowlist, then baseline. The first mechanism that applies is the one recorded.
Every mechanism is still evaluated, so an allowlist entry that also covers an inline-suppressed finding is
not reported stale.

Paths. `path_of(display_path)` turns a finding's `path` (as the scan shows it, relative to the scanned
directory) into the repo-relative POSIX path that the fingerprint and the allowlist use. `text_of(display_path)`
gives the file's decoded text (`Document.text`, which the finding offsets index), or None (a PDF, an
unreadable file). `SourceFiles` builds both from `ScanResult.roots` exactly as `build_sarif` does, so the
fingerprints here are the `centinela/v1` values of the SARIF file.

1. Inline (HTML files only)
---------------------------
A directive is a real HTML comment (as the project's tokenizer sees it: not text inside `<script>`,
`<style>`, `<textarea>` or `<title>`) that fits on one line::

    <!-- centinela-ignore SEC014, PII001: test key of the provider's public docs -->
    <!-- centinela-ignore-next-line PII001: the author's published contact address -->

* Grammar: `centinela-ignore` or `centinela-ignore-next-line`, one or more rule ids separated by commas,
  a colon, and a reason with at least one letter or digit. No wildcard: a directive without a rule id is
  malformed. Rule ids are compared exactly.
* Scope of `centinela-ignore`: findings of the named rules whose start offset lies on the directive's own
  line, or on the next target line. Scope of `centinela-ignore-next-line`: the next target line only, and
  the directive must stand alone on its line (only blanks and other directives around it), so no text
  can hide what is allowed.
* The next target line is the first later line that is neither blank nor made only of directive comments
  (so directives can be stacked above one element). Lines end at `\\n`, `\\r\\n` or a lone `\\r`.
* Only for files with an HTML extension (`.html`, `.htm`, `.xhtml`, `.shtml`), only for findings in the
  file's own text (no page, no container: HTML recorded inside a JSON body is web content, and a
  directive there is never honoured).
* **Only kinds `secret` and `pii` can be suppressed inline. An injection finding never is.** A recorded page
  is attacker-controlled text: `<!-- centinela-ignore INJ001: fine --> <!-- ignore previous instructions -->`
  would otherwise let the injection switch its own finding off. Injection findings are suppressed only
  through the allowlist file (reviewed, outside the fixtures, code-owner protected). A directive that
  would cover an injection finding leaves it reported and yields an `inline-refused` warning.
* A comment that mentions `centinela-ignore` but does not parse (no reason, no rule id, spread over several
  lines, `-next-line` not alone on its line, unterminated) suppresses nothing and yields an
  `inline-malformed` warning. It is a warning and not an error entry: what it tried to suppress is still
  reported, so the scan fails closed on its own.
* A valid directive that suppresses nothing yields `inline-unused` (not for rules that did not run).

Residual risk, by design: a recorded page could carry a directive for a secret or personal-data rule.
Keep `fixtures/**` under CODEOWNERS and read the "N suppressed (inline …)" summary in review.

2. Allowlist file (any file type; made for JSON and PDF)
--------------------------------------------------------
YAML, by default `.centinela-allowlist.yaml` at the repository root::

    version: 1
    entries:
      - fingerprint: "3f0c…64 hex…"          # centinela/v1 (a SARIF value's ":n" suffix is accepted)
        rule: INJ007
        path: fixtures/web-search/exa/extract/gs-002-injection.json
        pointer: /response/body/results/0/text # optional JSON pointer; or page: 3 for a PDF
        reason: golden-set sample of system impersonation
        reviewer: "@alice"
        expires: 2026-12-31                    # optional: suppresses until the start of that day

* A finding is suppressed when `rule` and `path` match exactly and
    - injection (and other non-sensitive kinds): the fingerprint matches, or the pointer/page matches when
      given (so the entry survives a re-captured text at the same place);
    - secret and pii: the fingerprint matches, and the pointer/page also matches when given. A place alone
      is never enough for a datum: with a fingerprint key, a real credential re-captured where a dummy was
      allowlisted is a new finding (without a key only if its masked form differs: see section 3).
  The finding's pointer is its `locator` when that is a JSON pointer, else its `container` (HTML inside a
  JSON body). Pointers are compared exactly.
* An expired entry (today >= expires) suppresses nothing and yields `allowlist-expired`. An entry that
  matches nothing yields `allowlist-stale` (only for files that were scanned and rules that ran).
* Entries never store the datum. The model forbids every key but the ones above (a `value:`, `secret:`,
  `text:` … key is refused with a message naming the file and the entry). As a last check, an entry whose
  text fields contain the datum of a secret or personal-data finding of the scan suppresses nothing and
  yields `allowlist-datum` (the warning never shows the datum).
* A file that does not validate raises `SuppressionError` naming the file and entry (the CLI: exit 2).

3. Baseline (`--baseline FILE`, `--write-baseline FILE`)
--------------------------------------------------------
JSON: `{version: 2, tool, fingerprint: "centinela/v1", keyed, total, results: [{path, rule, fingerprint,
count}]}`, sorted, no timestamps, written atomically. A finding is suppressed while its
(fingerprint, rule, path) has occurrences left in the baseline: a third copy of a text baselined twice is
new. Findings already suppressed inline or by the allowlist are not written to it, so an expired allowlist
entry cannot live on through the baseline. A malformed baseline raises `SuppressionError` (fail closed). A
path holding a datum is written masked, as every output shows it.

Why storing fingerprints of secrets and personal data is acceptable: `finding_fingerprint` never hashes a
datum without a key (`scanner.fingerprint`). With a key (`$CENTINELA_FINGERPRINT_KEY`, a key file outside
the repository; a CI secret) it is an HMAC of the datum, which nobody without the key can test a guess
against. Without one the datum is left out: the value is built from rule, path, place in the file and masked
evidence, which the SARIF result shows anyway; the run warns once that it fell back. Then two data with the
same mask at the same place share a fingerprint, so an entry written without a key also covers a different
datum of the same shape there: set a key for baselines and allowlists that guard real data. The baseline
records whether it was keyed, and a mismatch is reported (`baseline-key-mismatch`).

Old files. A baseline of version 1 written without a key (centinela 0.1.0) holds, for secrets and personal
data, fingerprints over a plain digest of the datum (sha256(b"centinela-fp\\0" + datum)): brute-forceable
from a small space. It is still honoured (each finding is also tried under that old value, computed here and
never written) and reported as `baseline-legacy-unkeyed`, asking for a rewrite; an allowlist entry holding
such a value still matches and is reported as `allowlist-legacy-fingerprint` with the value to put instead.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Literal, Optional

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from scanner import TOOL_NAME
from scanner.atomic import atomic_write_text
from scanner.evidence import datum_variants
from scanner.findings import Finding
from scanner.scrub import scrub_path
from scanner.fingerprint import (
    FINGERPRINT_KEY, KEY_ENV, SENSITIVE_KINDS, FingerprintKeyError, file_data, finding_fingerprint, fingerprint_key,
    legacy_fingerprint,
)
from scanner.jsonsafe import read_json
from scanner.yamlsafe import read_text_bounded, safe_load
from scanner.sourcetext import LineIndex

DEFAULT_ALLOWLIST = ".centinela-allowlist.yaml"
FINGERPRINT_KEY_ENV = KEY_ENV
SUPPRESSION_KINDS = ("inline", "allowlist", "baseline")
INLINE_KINDS = ("secret", "pii")                 # the only kinds an inline comment can suppress
BASELINE_VERSION = 2     # 2: unkeyed datum fingerprints leave the datum out; 1 (0.1.0) hashed it plainly
HTML_EXT = (".html", ".htm", ".xhtml", ".shtml")  # = scanner.loaders.HTML_EXT (kept local: no loader import)

_RULE_ID = r"[A-Za-z0-9][A-Za-z0-9_.\-]*"
_RULE_RE = re.compile(rf"^{_RULE_ID}$")
_FP_RE = re.compile(r"^([0-9a-f]{64})(?::[1-9][0-9]*)?$")
_POINTER_RE = re.compile(r"^(?:/(?:[^~]|~[01])*)*$")
_MARKER = "centinela-ignore"
_DIRECTIVE_RE = re.compile(
    rf"^centinela-ignore(?P<next>-next-line)?(?![\w-])\s*(?P<rules>{_RULE_ID}(?:\s*,\s*{_RULE_ID})*)?\s*"
    rf"(?P<colon>:)?\s*(?P<reason>.*?)\s*$",
    re.S,
)
_BREAK_RE = re.compile(r"\r\n|\r|\n")
# Extra keys that look like an attempt to store the datum get their own message (all extra keys are refused).
_DATUM_LIKE = ("value", "secret", "datum", "text", "match", "evidence", "snippet", "token", "password",
               "email", "content", "raw", "data", "plain")


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
        from scanner.scrub import scrub_path

        path = scrub_path(self.path)
        where = f"{path}:{self.line}" if self.line is not None else path
        return f"{where}: warning: {self.code}: {self.message}"

    def to_json(self) -> dict:
        from scanner.scrub import scrub_path

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
    return bool((finding.extra or {}).get("suppressed"))


def suppression_kind(finding: Finding) -> Optional[str]:
    s = (finding.extra or {}).get("suppressed")
    if not s:
        return None
    return str(s.get("kind")) if isinstance(s, dict) else str(s)


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


# --------------------------------------------------------------------------- paths and texts

def _posix(path: str) -> str:
    p = path.replace("\\", "/")
    while p.startswith("./"):
        p = p[2:]
    return p


class SourceFiles:
    """`path_of` and `text_of` for a `ScanResult`, computed as `build_sarif` computes them.

    `roots` is `ScanResult.roots` (display path → the directory it is relative to). A path outside
    `repo_root` keeps its display path, as in SARIF (`place.rel or f.path`).
    """

    def __init__(self, repo_root: Path, roots: Optional[dict] = None):
        self.repo_root = Path(os.path.realpath(repo_root))
        self.roots = roots or {}
        self._paths: dict[str, str] = {}
        self._texts: dict[str, Optional[str]] = {}

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

    def text_of(self, display: str) -> Optional[str]:
        if display not in self._texts:
            self._texts[display] = _document_text(self.abs_path(display), display)
        return self._texts[display]


def _document_text(path: Path, display: str) -> Optional[str]:
    from scanner.loaders import check_file, load_bytes, sniff_kind
    from scanner.units import LoadError

    try:
        check_file(path, display)          # never open a FIFO or a device: reading it would wait forever
        data = path.read_bytes()
    except (OSError, LoadError):
        return None
    kind = sniff_kind(display, data)
    if kind in ("pdf", "binary"):
        return None
    if kind == "html":                      # what load_html decodes, without building its units
        from scanner.loaders.html import sniff_charset
        from scanner.sourcetext import decode_bytes

        return decode_bytes(data, sniff_charset(data)).text
    try:
        return load_bytes(data, display).text
    except LoadError:
        return None


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
        if display not in self._texts:
            self._texts[display] = self._text_of(display)
        return self._texts[display]

    def repo_path(self, display: str) -> str:
        return _posix(self.path_of(display))

    def __call__(self, f: Finding) -> str:
        fp = self._fps.get(id(f))
        if fp is None:
            fp = self._fps[id(f)] = finding_fingerprint(f, self.repo_path(f.path), self.text(f.path), key=self.key,
                                                        data=self.data(f.path))
        return fp


# --------------------------------------------------------------------------- 1. inline

@dataclass
class InlineDirective:
    line: int
    rules: tuple[str, ...]
    reason: str
    next_line_only: bool
    covers: tuple[int, ...]          # 1-based lines whose findings it covers
    used: bool = False
    refused: bool = False


def _line_bounds(text: str) -> list[tuple[int, int]]:
    """(start, end) of every line, without its break."""
    bounds = []
    pos = 0
    for m in _BREAK_RE.finditer(text):
        bounds.append((pos, m.start()))
        pos = m.end()
    bounds.append((pos, len(text)))
    return bounds


def parse_inline(text: str, path: str = "") -> tuple[list[InlineDirective], list[SuppressionWarning]]:
    """The inline directives of an HTML text, and a warning for each comment that mentions the marker but
    does not parse (see the module docstring for the grammar and scope)."""
    from scanner.loaders.html_tokens import tokenize

    if _MARKER not in text.lower():
        return [], []
    index = LineIndex(text)
    bounds = _line_bounds(text)
    candidates = []                  # (line, token start, token end, content)
    for tok in tokenize(text):
        if tok.kind != "comment":
            continue
        content = text[tok.data_start:tok.data_end]
        if _MARKER in content.lower():
            candidates.append((index.line_col(tok.start)[0], tok.start, tok.end, content, tok.data_end))
    marker_spans: dict[int, list[tuple[int, int]]] = {}
    for line, start, end, _, _ in candidates:
        marker_spans.setdefault(line, []).append((start, end))

    def rest_of_line(line: int) -> str:
        s, e = bounds[line - 1]
        pieces, pos = [], s
        for a, b in sorted(marker_spans.get(line, [])):
            pieces.append(text[pos:max(a, pos)])
            pos = max(pos, b)
        pieces.append(text[pos:e] if pos < e else "")
        return "".join(pieces)

    def next_target(line: int) -> Optional[int]:
        for k in range(line + 1, len(bounds) + 1):
            s, e = bounds[k - 1]
            if not text[s:e].strip():
                continue
            if k in marker_spans and not rest_of_line(k).strip():
                continue
            return k
        return None

    directives: list[InlineDirective] = []
    warnings: list[SuppressionWarning] = []

    def malformed(line: int, why: str) -> None:
        warnings.append(SuppressionWarning(
            "inline-malformed", path,
            f"{why}; it suppresses nothing (expected <!-- centinela-ignore RULE_ID[, RULE_ID…]: reason -->)", line))

    for line, start, end, content, data_end in candidates:
        if data_end >= len(text):
            malformed(line, "unterminated comment")
            continue
        if _BREAK_RE.search(text, start, end):
            malformed(line, "a centinela-ignore comment must fit on one line")
            continue
        m = _DIRECTIVE_RE.match(content.strip())
        if m is None:
            malformed(line, "the comment mentions centinela-ignore but does not start with it (lower case)")
            continue
        if not m.group("rules"):
            malformed(line, "no rule id (there is no wildcard: name the rules)")
            continue
        reason = m.group("reason") or ""
        if not m.group("colon") or not any(ch.isalnum() for ch in reason):
            malformed(line, "no reason after the colon")
            continue
        rules = tuple(r.strip() for r in m.group("rules").split(","))
        next_only = bool(m.group("next"))
        if next_only and rest_of_line(line).strip():
            malformed(line, "centinela-ignore-next-line must stand alone on its line")
            continue
        target = next_target(line)
        covers = tuple(x for x in ((() if next_only else (line,)) + ((target,) if target else ())))
        directives.append(InlineDirective(line, rules, reason, next_only, covers))
    return directives, warnings


def _is_html(path: str) -> bool:
    return path.lower().endswith(HTML_EXT)


def _inline_pass(by_path: dict[str, list[Finding]], html_paths: Iterable[str], fpr: Fingerprinter,
                 active_rules: Optional[set], report: SuppressionReport, chosen: dict) -> None:
    for display in html_paths:
        text = fpr.text(display)
        if text is None:
            continue
        directives, warnings = parse_inline(text, display)
        report.warnings.extend(warnings)
        if not directives:
            continue
        index = LineIndex(text)
        for f in by_path.get(display, []):
            if f.page is not None or (f.extra or {}).get("container") or not 0 <= f.start <= len(text):
                continue
            line = index.line_col(f.start)[0]
            for d in directives:
                if line not in d.covers or f.rule_id not in d.rules:
                    continue
                if f.kind not in INLINE_KINDS:
                    d.refused = True
                    report.warnings.append(SuppressionWarning(
                        "inline-refused", display,
                        f"{f.rule_id} on line {line} is of kind {f.kind}: only secret and pii findings can be "
                        f"suppressed by a comment in the file (a recorded page could carry one); use the allowlist", d.line))
                    continue
                d.used = True
                chosen.setdefault(id(f), ("inline", d.reason))
        for d in directives:
            if d.used or d.refused:
                continue
            if active_rules is not None and not any(r in active_rules for r in d.rules):
                continue
            word = "centinela-ignore-next-line" if d.next_line_only else "centinela-ignore"
            report.warnings.append(SuppressionWarning(
                "inline-unused", display, f"{word} {', '.join(d.rules)} suppresses nothing", d.line))


# --------------------------------------------------------------------------- 2. allowlist

class AllowlistEntry(BaseModel):
    """One reviewed exception. Extra keys are forbidden: an entry can never hold the datum."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

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
        p = _posix(v)
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
BASELINE_BYTES = 256 << 20


def _first_error(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        loc = ".".join(str(x) for x in err.get("loc", ()) if x != "__root__")
        msg = err.get("msg", "invalid")
        msg = msg[len("Value error, "):] if msg.startswith("Value error, ") else msg
        if err.get("type") == "extra_forbidden":
            msg = "unknown field (entries hold only fingerprint, rule, path, pointer, page, reason, reviewer, expires)"
        parts.append(f"{loc}: {msg}" if loc else msg)
    return "; ".join(parts)


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
            raise SuppressionError(f"{source}: {label}: {_first_error(exc)}") from None
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
    container = (f.extra or {}).get("container")
    if isinstance(container, str) and container.startswith("/"):
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


def _allowlist_pass(findings: list[Finding], allowlist: Allowlist, fpr: Fingerprinter, today: _dt.date,
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


# --------------------------------------------------------------------------- 3. baseline

class BaselineEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(min_length=1)
    rule: str = Field(min_length=1)
    fingerprint: str = Field(pattern=r"^[0-9a-f]{64}$")
    count: int = Field(default=1, ge=1)


class BaselineFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

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
        raise SuppressionError(f"{path}: not a centinela baseline: {_first_error(exc)}") from None
    counts: dict = {}
    for e in model.results:
        k = (e.fingerprint, e.rule, scrub_path(_posix(e.path)))
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
        if suppression_kind(f) in ("inline", "allowlist"):
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


def _baseline_pass(findings: list[Finding], baseline: Baseline, fpr: Fingerprinter, scanned: Optional[set],
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


# --------------------------------------------------------------------------- entry point

def apply_suppressions(
    findings: list[Finding],
    *,
    path_of: Callable[[str], str],
    text_of: Callable[[str], Optional[str]],
    allowlist: Optional[Allowlist] = None,
    baseline: Optional[Baseline] = None,
    today: Optional[_dt.date] = None,
    key: Optional[bytes] = None,
    scanned: Optional[Iterable[str]] = None,
    active_rules: Optional[Iterable[str]] = None,
    inline: bool = True,
) -> SuppressionReport:
    """Mark suppressed findings (`finding.extra["suppressed"]`) and report counts and warnings.

    - `path_of(display_path)`: repo-relative POSIX path; `text_of(display_path)`: decoded text or None
      (`SourceFiles(repo_root, result.roots)` gives both).
    - `allowlist` / `baseline`: from `load_allowlist` / `load_baseline`, or None.
    - `today`: for expiry (default: the local date). `key`: the fingerprint HMAC key (as for SARIF).
    - `scanned`: display paths of every scanned file (`result.roots`). When given, unused inline directives
      are looked for in every scanned HTML file, and stale allowlist/baseline entries are reported only for
      scanned files (a pre-commit run on a few files does not call the rest stale). When None, only files
      with findings are read and every entry counts.
    - `active_rules`: ids of the rules that ran; directives and entries for other rules are not stale.
    - `inline=False` ignores inline directives (e.g. a `--no-inline-suppressions` audit run).

    Any earlier `extra["suppressed"]` is cleared first, so calling it again gives the same result.
    """
    today = today or _dt.date.today()
    fpr = Fingerprinter(path_of, text_of, key, findings)
    report = SuppressionReport()
    ordered = sorted(findings, key=Finding.sort_key)
    for f in ordered:
        if f.extra:
            f.extra.pop("suppressed", None)
    by_path: dict[str, list[Finding]] = {}
    for f in ordered:
        by_path.setdefault(f.path, []).append(f)
    scanned_display = list(scanned) if scanned is not None else None
    scanned_repo = {fpr.repo_path(p) for p in scanned_display} if scanned_display is not None else None
    rules = set(active_rules) if active_rules is not None else None
    chosen: dict[int, tuple[str, str]] = {}      # id(finding) -> (kind, justification); first wins

    if inline:
        html_paths = [p for p in (scanned_display if scanned_display is not None else by_path) if _is_html(p)]
        _inline_pass(by_path, sorted(set(html_paths)), fpr, rules, report, chosen)
    if allowlist is not None:
        report.warnings.extend(allowlist.problems)
        _allowlist_pass(ordered, allowlist, fpr, today, scanned_repo, rules, report, chosen)
    if baseline is not None:
        _baseline_pass(ordered, baseline, fpr, scanned_repo, rules, report, chosen)

    for f in ordered:
        hit = chosen.get(id(f))
        if hit is None:
            continue
        kind, justification = hit
        f.extra["suppressed"] = {"kind": kind, "justification": justification}
        report.counts[kind] += 1
    return report


def unsuppressed(findings: Iterable[Finding]) -> list[Finding]:
    """The findings that still count (for the exit code and the text listing)."""
    return [f for f in findings if not is_suppressed(f)]
