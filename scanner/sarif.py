"""SARIF 2.1.0 for GitHub code scanning (`scan --format sarif`).

The log is built from sarif-om objects and serialised by `to_sarif_dict`, which maps sarif-om's snake_case
attributes to the SARIF JSON names. We do not use jschema-to-python's `to_json`, for three reasons: it drops
every value equal to its default, it escapes non-ASCII, and it is not a dependency. sarif-om 1.0.4 predates
SARIF 2.1.0 final, and its defects are handled here:

* `Suppression` has `state`, which 2.1.0 final renamed to `status`. A log that uses `state` fails the
  OASIS schema, and upload-sarif validates against that schema. `_Suppression` adds a `status` field, and
  `state` is never set.
* Defaults that `to_json` silently drops (a result's `level: "warning"`, `defaultConfiguration.level`) are
  always written here. Other values equal to their default are dropped as before: `-1` indexes, "en-US",
  `kind: "fail"`.
* Spanish text stays readable: `dumps_sarif` writes with `ensure_ascii=False` and sorted keys.

What GitHub needs and what we do about it, in brief (details in the research notes, §1):

* One run, `automationDetails.id = "<category>/"`. Rules carry short and full descriptions, help text and
  markdown, tags, precision and `security-severity` (a string).
* Results carry a repo-relative, percent-encoded URI with `uriBaseId` `%SRCROOT%`, and 1-based regions in
  UTF-16 columns (`columnKind`).
* `partialFingerprints` holds `primaryLocationLineHash` (GitHub's own algorithm, `scanner.fingerprint`)
  and `centinela/v1`, our line-free key.
* There are at most 25,000 results per run. The most severe are kept, and the dropped ones are counted in
  the run's `properties`.
* GitHub ignores SARIF suppressions, so suppressed findings are left out unless `include_suppressed=True`.
* Files that could not be read become `toolExecutionNotifications`.

No secret or personal datum is written. For those kinds, messages carry only the masked `evidence`, and
there is no snippet. As a last guard, every datum that the findings point at is replaced, in every string
of the log, by its masked form.
"""

from __future__ import annotations

import json
import os
import re
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

import attr
import sarif_om as om

from scanner import TOOL_NAME, __version__
from scanner.evidence import datum_variants
from scanner.findings import SEVERITY_ORDER, Finding
from scanner.fingerprint import (
    FINGERPRINT_KEY, LINE_HASH_KEY, SENSITIVE_KINDS, file_data, finding_fingerprint, github_text, line_hashes,
    without_data,
)
from scanner.scrub import scrub_path, scrub_text
from scanner.sourcetext import LineIndex

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"
GITHUB_MAX_RESULTS = 25_000
GITHUB_MAX_TAGS = 20

# Result level, and the security-severity used when a rule gives none (research notes §1.7).
_LEVELS = {"error": "error", "warning": "warning", "note": "note",
           "critical": "error", "high": "error", "medium": "warning", "low": "note", "info": "note"}
_DEFAULT_SECURITY_SEVERITY = {"error": 8.0, "warning": 5.5, "note": 2.0}
_SUPPRESSION_KINDS = {"inline": "inSource", "allowlist": "external", "baseline": "external"}
_HELP_SECTIONS = (("what", "What it detects"), ("why", "Why it matters"), ("example", "Example"),
                  ("fix", "What to do"))


def _information_uri() -> str:
    """The project's home page from the installed metadata ([project.urls]), else a URN naming the tool."""
    try:
        from importlib.metadata import PackageNotFoundError, metadata

        meta = metadata(TOOL_NAME)
        for entry in meta.get_all("Project-URL") or []:
            label, _, url = entry.partition(",")
            if label.strip().lower() in ("homepage", "home", "repository", "source") and url.strip():
                return url.strip()
        if meta.get("Home-page"):
            return meta["Home-page"]
    except (ImportError, PackageNotFoundError):  # pragma: no cover - not installed
        pass
    return f"urn:{TOOL_NAME}"


# --------------------------------------------------------------------------- rules

@dataclass(frozen=True)
class RuleMeta:
    """What SARIF (and GitHub) shows about a rule."""

    id: str
    name: str
    short_description: str
    full_description: str
    help_text: str
    help_markdown: str
    tags: tuple[str, ...] = ("security",)
    precision: str = "high"                  # very-high | high | medium | low
    security_severity: float = 5.5           # (0, 10]; written as a string, "8.0"
    level: str = "warning"                   # error | warning | note

    def reporting_descriptor(self) -> om.ReportingDescriptor:
        tags = list(dict.fromkeys(("security", *self.tags)))[:GITHUB_MAX_TAGS]
        return om.ReportingDescriptor(
            id=self.id,
            name=self.name,
            short_description=om.MultiformatMessageString(text=_limit(self.short_description, 1024)),
            full_description=om.MultiformatMessageString(text=_limit(self.full_description, 1024)),
            help=om.MultiformatMessageString(text=self.help_text, markdown=self.help_markdown),
            default_configuration=om.ReportingConfiguration(level=_level(self.level)),
            properties={"tags": tags, "precision": self.precision,
                        "security-severity": format_security_severity(self.security_severity)},
        )


def format_security_severity(value: float) -> str:
    """GitHub's `security-severity`: a string score with one decimal, e.g. "8.0"."""
    return f"{float(value):.1f}"


def _limit(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _level(severity: str) -> str:
    return _LEVELS.get((severity or "").lower(), "warning")


def rule_meta_from_rule(rule) -> RuleMeta:
    """`RuleMeta` for a rule of a YAML pack: injection rules (`scanner.rulepack.Rule`), and secret rules too,
    since they have the same fields (id, name, severity, precision, security_severity, tags, message, help)."""
    help_ = rule.help
    sections = [(title, " ".join(str(getattr(help_, key)).split())) for key, title in _HELP_SECTIONS]
    markdown = "\n\n".join(f"## {title}\n\n{body}" for title, body in sections) + "\n"
    text = "\n\n".join(f"{title}: {body}" for title, body in sections)
    return RuleMeta(
        id=rule.id, name=rule.name, short_description=rule.message,
        full_description=" ".join(str(help_.what).split()), help_text=text, help_markdown=markdown,
        tags=tuple(rule.tags), precision=rule.precision, security_severity=float(rule.security_severity),
        level=rule.severity,
    )


rule_meta_from_injection_rule = rule_meta_from_rule


def rule_meta_for_unknown(finding: Finding) -> RuleMeta:
    """A stand-in for a rule whose metadata the caller did not pass (every result needs a rule)."""
    level = _level(finding.severity)
    what = f"centinela {finding.kind} rule {finding.rule_id}"
    return RuleMeta(
        id=finding.rule_id, name=finding.rule_id.lower(), short_description=what, full_description=what + ".",
        help_text=f"{what}. The rule's documentation was not passed to the SARIF writer.",
        help_markdown=f"## What it detects\n\n{what}. The rule's documentation was not passed to the SARIF writer.\n",
        tags=("security", finding.kind), precision="medium",
        security_severity=_DEFAULT_SECURITY_SEVERITY[level], level=level,
    )


# --------------------------------------------------------------------------- sarif-om, fixed and serialised

@attr.s
class _Suppression(om.Suppression):
    """sarif-om 1.0.4's Suppression with the SARIF 2.1.0 final `status` property (`state` stays unset)."""

    status = attr.ib(default=None, metadata={"schema_property_name": "status"})


_KEEP_DEFAULT = frozenset({"level"})


def to_sarif_dict(obj: Any) -> Any:
    """A sarif-om object tree as plain JSON data under SARIF's property names.

    `None` is dropped, and so is a value equal to its attrs default (the `-1` "no index" sentinels,
    "en-US"), except `level`, which is always written.
    """
    if attr.has(type(obj)):
        out: dict[str, Any] = {}
        for a in attr.fields(type(obj)):
            value = getattr(obj, a.name)
            if value is None:
                continue
            if a.name not in _KEEP_DEFAULT and a.default is not attr.NOTHING:
                default = a.default.factory() if isinstance(a.default, attr.Factory) else a.default
                if type(value) is type(default) and value == default:
                    continue
            out[a.metadata.get("schema_property_name", a.name)] = to_sarif_dict(value)
        return out
    if isinstance(obj, dict):
        return {str(k): to_sarif_dict(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_sarif_dict(v) for v in obj]
    return obj


def dumps_sarif(doc: dict) -> str:
    """The log as text: sorted keys, two-space indent, non-ASCII kept (`está`, not `est\\u00e1`), but every
    character a terminal could act on (DEL, C1, bidi and format characters) as a `\\uXXXX` escape."""
    from scanner.terminal import json_text

    return json_text(json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False)) + "\n"


# --------------------------------------------------------------------------- files and positions

def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le", errors="surrogatepass")) // 2


_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


class _Source:
    """One file's text for positions (as the loader decoded it) and for GitHub's line hash (as GitHub reads it).

    `data` are the (datum, replacement) pairs of the file's secret and personal-data findings: the line hashes
    are computed over the text with them replaced (`scanner.fingerprint.without_data`), never over a line
    that holds one."""

    def __init__(self, text: Optional[str], hash_text: Optional[str]):
        self.text = text
        self.hash_text = hash_text
        self.data: list[tuple[str, str]] = []
        self._index = LineIndex(text) if text is not None else None
        self._astral = bool(text is not None and _ASTRAL.search(text))
        self._hashes: Optional[list[str]] = None

    def hashes(self) -> list[str]:
        if self._hashes is None:
            text = self.hash_text
            self._hashes = line_hashes(without_data(text, self.data)) if text is not None else []
        return self._hashes

    def line_col16(self, offset: int) -> tuple[int, int]:
        """1-based line and UTF-16 column of a character offset."""
        line, col = self._index.line_col(offset)
        if self._astral:
            line_start = self._index.offset(line, 1)
            col = _utf16_len(self.text[line_start:offset]) + 1
        return line, col

    def region(self, start: int, end: int) -> tuple[int, int, int, int]:
        """startLine, startColumn, endLine, endColumn (exclusive) of [start, end); a trailing break is left out
        so the region ends on the line of its last character."""
        e = end
        while e > start and self.text[e - 1] in "\r\n":
            e -= 1
        sl, sc = self.line_col16(start)
        el, ec = self.line_col16(e)
        return sl, sc, el, ec


def _document_text(data: bytes, path: str) -> Optional[str]:
    """The decoded text the scanner's offsets index (`Document.text`); None for a PDF or an unloadable file."""
    from scanner.loaders import load_bytes, sniff_kind
    from scanner.units import LoadError

    if sniff_kind(path, data) in ("pdf", "binary"):
        return None
    try:
        return load_bytes(data, path).text
    except LoadError:
        return None


@dataclass
class _Place:
    rel: Optional[str]                  # repo-relative POSIX path, None when outside the repo
    abs: Path
    uri: str
    uri_base_id: Optional[str]

    def artifact_location(self) -> om.ArtifactLocation:
        return om.ArtifactLocation(uri=self.uri, uri_base_id=self.uri_base_id)


def encode_uri_path(posix_path: str) -> str:
    """Percent-encode a relative POSIX path for `artifactLocation.uri` (space, accents, `#`, `%`, …)."""
    return urllib.parse.quote(posix_path, safe="/")


class _Places:
    def __init__(self, repo_root: Path, scan_root_for: Optional[Callable[[str], Optional[Path]]]):
        self.repo_root = Path(os.path.realpath(repo_root))
        self.scan_root_for = scan_root_for
        self._cache: dict[str, _Place] = {}

    def __call__(self, path: str) -> _Place:
        place = self._cache.get(path)
        if place is None:
            place = self._cache[path] = self._place(path)
        return place

    def _place(self, path: str) -> _Place:
        p = Path(path)
        if not p.is_absolute():
            root = self.scan_root_for(path) if self.scan_root_for is not None else None
            p = Path(root if root is not None else Path.cwd()) / p
        real = Path(os.path.realpath(p))          # GitHub wants symlinks resolved
        try:
            rel = real.relative_to(self.repo_root).as_posix()
        except ValueError:
            # Outside the repository: a file: URI (GitHub does not show it), its segments masked all the same.
            return _Place(None, real, "file://" + encode_uri_path(scrub_path(real.as_posix())), None)
        # A segment holding a datum (a file named after a person) is masked before it is percent-encoded:
        # `jua…@gmail.com.html`, never `juan.perez.lopez%40gmail.com.html`.
        return _Place(rel, real, encode_uri_path(scrub_path(rel)), SRCROOT)


def _split_container(path: str, places: _Places) -> tuple[str, Optional[str]]:
    """`file.json#/response/body` (an error inside a recorded body) → (`file.json`, `/response/body`)."""
    head, sep, tail = path.rpartition("#")
    if not sep or not tail.startswith("/") or places(path).abs.exists():
        return path, None
    return head, tail


# --------------------------------------------------------------------------- results

def _message(f: Finding) -> str:
    text = " ".join((f.message or f.rule_id).split())
    if not text.endswith((".", "!", "?")):
        text += "."
    if f.evidence:
        # For pii/secret the evidence is the masked form (contract); the datum itself is never used.
        text += f" Evidence: «{f.evidence}»."
    if f.page is not None:
        text += f" Page {f.page}."
    return text


def _suppression_of(f: Finding) -> Optional[dict]:
    s = f.extra.get("suppressed") if f.extra else None
    if not s:
        return None
    return s if isinstance(s, dict) else {"kind": str(s)}


def _finding_properties(f: Finding) -> dict:
    props = {"kind": f.kind, "vector": f.vector, "entity": f.entity, "channel": f.channel,
             "locator": f.locator, "page": f.page, "container": (f.extra or {}).get("container")}
    return {k: v for k, v in props.items() if v is not None}


@dataclass
class _Item:
    finding: Finding
    place: _Place
    rule: RuleMeta
    region: om.Region
    partial: dict = field(default_factory=dict)
    order: tuple = ()


def build_sarif(
    result,
    rules: Iterable[RuleMeta],
    *,
    repo_root: Path,
    scan_root_for: Optional[Callable[[str], Optional[Path]]] = None,
    category: str = TOOL_NAME,
    text_of: Optional[Callable[[str], "str | bytes | None"]] = None,
    max_results: int = GITHUB_MAX_RESULTS,
    include_suppressed: bool = False,
    fingerprint_key: Optional[bytes] = None,
    srcroot_uri: bool = False,
    information_uri: Optional[str] = None,
) -> dict:
    """A SARIF 2.1.0 log (as a dict, ready for `dumps_sarif`) of a `ScanResult`, for GitHub code scanning.

    - `rules`: `RuleMeta` of every rule (see `rule_meta_from_rule`). A finding of an unknown rule gets a
      stand-in rule, never a dangling `ruleId`.
    - `repo_root`: URIs are relative to it, under `uriBaseId` `%SRCROOT%`. A file outside it gets a `file:`
      URI, which GitHub does not show.
    - `scan_root_for(path)`: the directory a finding's `path` is relative to (the scanned directory). None,
      or a None answer, means the current directory. Absolute paths are taken as they are.
    - `text_of(path)`: the file's bytes (best: the line hash is then computed from exactly what GitHub reads,
      and positions from the loader's decoding) or its decoded text (`Document.text`), or None. By default
      the file is read from disk, and only for files with findings.
    - `max_results`: results per run, at most. Over it, the most severe are kept (level, then
      security-severity).
    - `include_suppressed`: also emit findings marked `extra["suppressed"]` (`{"kind": "inline" | "allowlist"
      | "baseline", "justification": …}`), with a `suppressions` array on every result (SARIF: all or none).
    - `fingerprint_key`: HMAC key for the digest of secret and personal data in `centinela/v1`.
    - `srcroot_uri`: write the absolute `file:` URI of `repo_root` into `originalUriBaseIds`. It is off by
      default, because it leaks a local path and makes the output differ between machines.
    """
    places = _Places(repo_root, scan_root_for)
    rule_by_id: dict[str, RuleMeta] = {}
    for r in rules:
        rule_by_id.setdefault(r.id, r)
    sources: dict[str, _Source] = {}

    def source(path: str, place: _Place) -> _Source:
        src = sources.get(path)
        if src is None:
            content: Any = None
            if text_of is not None:
                content = text_of(path)
            else:
                try:
                    content = place.abs.read_bytes()
                except OSError:
                    content = None
            if isinstance(content, (bytes, bytearray)):
                src = _Source(_document_text(bytes(content), path), github_text(bytes(content)))
            else:
                src = _Source(content, content)
            sources[path] = src
        return src

    findings = sorted(result.findings, key=Finding.sort_key)
    # Every datum the findings point at, per file, with its replacement: the line hashes and the injection
    # fingerprints of that file are computed without them.
    for path, data in file_data(findings, lambda p: source(p, places(p)).text).items():
        sources[path].data = data
    items: list[_Item] = []
    masks: dict[str, str] = {}          # secret and personal data seen → masked form, for the final scrub
    occurrences: dict[str, int] = {}
    suppressed_counts: dict[str, int] = {}

    for f in findings:
        place = places(f.path)
        src = source(f.path, place)
        rule = rule_by_id.get(f.rule_id)
        if rule is None:
            rule = rule_by_id[f.rule_id] = rule_meta_for_unknown(f)
        sensitive = f.kind in SENSITIVE_KINDS
        text = src.text
        has_span = f.page is None and text is not None and 0 <= f.start <= f.end <= len(text)

        # Region: PDFs have no lines (page in properties); otherwise exact, from the decoded text.
        if f.page is not None:
            region = om.Region(start_line=1)
        elif has_span:
            sl, sc, el, ec = src.region(f.start, f.end)
            region = om.Region(start_line=sl, start_column=sc, end_line=el, end_column=ec)
        else:
            region = om.Region(start_line=max(f.line or 1, 1), start_column=max(f.column or 1, 1))
        if f.kind == "injection" and f.page is None and f.evidence:
            region.snippet = om.ArtifactContent(text=f.evidence)

        # Fingerprints.
        partial: dict[str, str] = {}
        hashes = src.hashes()
        if 1 <= region.start_line <= len(hashes):
            partial[LINE_HASH_KEY] = hashes[region.start_line - 1]
        if sensitive and has_span and f.end > f.start:
            for variant in datum_variants(text[f.start:f.end]):
                masks.setdefault(variant, f.evidence or "REDACTED")
                # and as a URI spells it (`%40` for `@`), so a percent-encoded copy is caught too
                masks.setdefault(encode_uri_path(variant), encode_uri_path(f.evidence or "REDACTED"))
        fp = finding_fingerprint(f, place.rel or f.path, text, key=fingerprint_key, data=src.data)
        occurrences[fp] = occurrences.get(fp, 0) + 1
        partial[FINGERPRINT_KEY] = f"{fp}:{occurrences[fp]}"

        suppression = _suppression_of(f)
        if suppression is not None and not include_suppressed:
            kind = str(suppression.get("kind", "other"))
            suppressed_counts[kind] = suppressed_counts.get(kind, 0) + 1
            continue
        items.append(_Item(f, place, rule, region, partial,
                           (place.uri, region.start_line, region.start_column or 0, f.rule_id, f.start, f.end)))

    # GitHub's limit: keep the most severe.
    dropped = 0
    if len(items) > max_results:
        ranked = sorted(items, key=lambda it: (-SEVERITY_ORDER.get(_level(it.finding.severity), 1),
                                               -float(it.rule.security_severity), it.order))
        dropped = len(items) - max_results
        items = ranked[:max_results]
    items.sort(key=lambda it: it.order)

    rule_list = sorted(rule_by_id.values(), key=lambda r: r.id)
    index_of = {r.id: i for i, r in enumerate(rule_list)}

    results = []
    for it in items:
        f = it.finding
        res = om.Result(
            rule_id=f.rule_id, rule_index=index_of[f.rule_id], level=_level(f.severity),
            message=om.Message(text=_message(f)),
            locations=[om.Location(physical_location=om.PhysicalLocation(
                artifact_location=it.place.artifact_location(), region=it.region))],
            partial_fingerprints=it.partial,
            properties=_finding_properties(f),
        )
        if include_suppressed:
            s = _suppression_of(f)
            res.suppressions = [] if s is None else [_Suppression(
                kind=_SUPPRESSION_KINDS.get(str(s.get("kind")), "external"), status="accepted",
                justification=s.get("justification") or None,
                properties={"centinela-kind": str(s.get("kind"))} if s.get("kind") else None)]
        results.append(res)

    # Files that could not be read: notifications, and the run still succeeded.
    notifications = []
    for e in result.errors:
        file_path, container = _split_container(str(e.get("path", "")), places)
        place = places(file_path)
        code = e.get("code") or "unparsed"
        props = {"code": code, **({"container": container} if container else {})}
        notifications.append(om.Notification(
            level="error",
            message=om.Message(text=f"{scrub_path(place.rel or file_path)}: "
                                    f"{scrub_text(str(e.get('message', 'could not be scanned')))} "
                                    f"({code}); the file was not scanned."),
            locations=[om.Location(physical_location=om.PhysicalLocation(
                artifact_location=place.artifact_location()))],
            properties=props,
        ))
    run_props: dict[str, Any] = {}
    if dropped:
        note = (f"{dropped} results dropped: over GitHub's 25,000 limit" if max_results == GITHUB_MAX_RESULTS
                else f"{dropped} results dropped: over the limit of {max_results} results per run "
                     f"(GitHub's is 25,000)")
        run_props["droppedResults"] = dropped
        run_props["notes"] = [note + "; the most severe were kept."]
        notifications.append(om.Notification(level="warning", message=om.Message(text=note + ".")))
    if suppressed_counts:
        run_props["suppressedResultsLeftOut"] = dict(sorted(suppressed_counts.items()))
    if any(f.kind in SENSITIVE_KINDS for f in findings):
        # How the centinela/v1 values of secrets and personal data were made (scanner.fingerprint).
        run_props["datumFingerprints"] = "hmac-sha256" if fingerprint_key is not None else "datum-omitted"

    base = (om.ArtifactLocation(uri=Path(places.repo_root).as_uri().rstrip("/") + "/") if srcroot_uri
            else om.ArtifactLocation(description=om.Message(text="The root of the repository")))
    category = category.rstrip("/") or TOOL_NAME
    run = om.Run(
        tool=om.Tool(driver=om.ToolComponent(
            name=TOOL_NAME, version=__version__, semantic_version=__version__,
            information_uri=information_uri or _information_uri(),
            rules=[r.reporting_descriptor() for r in rule_list],
        )),
        automation_details=om.RunAutomationDetails(id=f"{category}/"),
        column_kind="utf16CodeUnits",
        original_uri_base_ids={SRCROOT: base},
        invocations=[om.Invocation(
            execution_successful=True,
            tool_execution_notifications=notifications or None,
            properties={"filesScanned": result.files_scanned},
        )],
        results=results,
        properties=run_props or None,
    )
    log = om.SarifLog(schema_uri=SCHEMA_URI, version="2.1.0", runs=[run])
    doc = to_sarif_dict(log)
    if masks:
        doc = _scrub(doc, masks)
    return doc


def _scrub(obj: Any, masks: dict[str, str]) -> Any:
    """Replace every known secret or personal datum in every string by its masked form (last line of defence)."""
    if isinstance(obj, str):
        for datum in sorted(masks, key=len, reverse=True):
            if datum in obj:
                obj = obj.replace(datum, masks[datum])
        return obj
    if isinstance(obj, dict):
        return {_scrub(k, masks): _scrub(v, masks) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_scrub(v, masks) for v in obj]
    return obj
