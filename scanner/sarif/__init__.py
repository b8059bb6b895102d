"""SARIF 2.1.0 for GitHub code scanning (`scan --format sarif`, `check`'s scan.sarif).

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

Every text comes from what the scan kept (`ScanResult.sources`): no file is read again.

Modules: `rules` (RuleMeta), `places` (URIs), `sources` (texts, positions, line hashes), `results` (one
result per finding), `serialize` (sarif-om to JSON); `build_sarif` here puts the run together.

No secret or personal datum is written. For those kinds, messages carry only the masked `evidence`, and
there is no snippet. As a last guard, every datum that the findings point at is replaced, in every string
of the log, by its masked form.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, metadata
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

import sarif_om as om

from scanner import TOOL_NAME, __version__
from scanner.findings import Finding
from scanner.fingerprint import SENSITIVE_KINDS, file_data
from scanner.sarif.places import SRCROOT, Places, encode_uri_path, split_container  # noqa: F401
from scanner.sarif.results import Items
from scanner.sarif.rules import (  # noqa: F401  (the package's API)
    GITHUB_MAX_TAGS, RuleMeta, format_security_severity, rule_meta_for_unknown, rule_meta_from_injection_rule,
    rule_meta_from_rule, rule_metas,
)
from scanner.sarif.serialize import dumps_sarif, to_sarif_dict  # noqa: F401
from scanner.sarif.sources import Sources
from scanner.scrub import scrub_path, scrub_text

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
GITHUB_MAX_RESULTS = 25_000


def _information_uri() -> str:
    """The project's home page from the installed metadata ([project.urls]), else a URN naming the tool."""
    try:
        meta = metadata(TOOL_NAME)
        for entry in meta.get_all("Project-URL") or []:
            label, _, url = entry.partition(",")
            if label.strip().lower() in ("homepage", "home", "repository", "source") and url.strip():
                return url.strip()
        if meta.get("Home-page"):
            return meta["Home-page"]
    except PackageNotFoundError:  # pragma: no cover - not installed
        pass
    return f"urn:{TOOL_NAME}"


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
    - `text_of(path)`: the file's bytes (the line hash is then computed from exactly what GitHub reads, and
      positions from the loader's decoding) or its decoded text (`Document.text`), or None, for a result
      built by hand. By default the texts the scan kept (`result.sources`): no file is read again.
    - `max_results`: results per run, at most. Over it, the most severe are kept (level, then
      security-severity).
    - `include_suppressed`: also emit suppressed findings (`Finding.suppression`: inline, allowlist or
      baseline, and its justification), with a `suppressions` array on every result (SARIF: all or none).
    - `fingerprint_key`: HMAC key for the digest of secret and personal data in `centinela/v1`.
    - `srcroot_uri`: write the absolute `file:` URI of `repo_root` into `originalUriBaseIds`. It is off by
      default, because it leaks a local path and makes the output differ between machines.
    """
    places = Places(repo_root, scan_root_for)
    rule_by_id: dict[str, RuleMeta] = {}
    for r in rules:
        rule_by_id.setdefault(r.id, r)
    sources = Sources(result, text_of)
    findings = sorted(result.findings, key=Finding.sort_key)
    # Every datum the findings point at, per file, with its replacement: the line hashes and the injection
    # fingerprints of that file are computed without them.
    for path, data in file_data(findings, sources.text).items():
        sources.set_data(path, data)
    items = Items(places, sources, rule_by_id, fingerprint_key, include_suppressed)
    for f in findings:
        items.add(f)
    dropped = items.keep_most_severe(max_results)
    rule_list = sorted(rule_by_id.values(), key=lambda r: r.id)
    results = items.results({r.id: i for i, r in enumerate(rule_list)})
    notifications = _notifications(result.errors, places)
    run_props: dict[str, Any] = {}
    if dropped:
        note = (f"{dropped} results dropped: over GitHub's 25,000 limit" if max_results == GITHUB_MAX_RESULTS
                else f"{dropped} results dropped: over the limit of {max_results} results per run "
                     f"(GitHub's is 25,000)")
        run_props["droppedResults"] = dropped
        run_props["notes"] = [note + "; the most severe were kept."]
        notifications.append(om.Notification(level="warning", message=om.Message(text=note + ".")))
    if items.suppressed_counts:
        run_props["suppressedResultsLeftOut"] = dict(sorted(items.suppressed_counts.items()))
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
    doc = to_sarif_dict(om.SarifLog(schema_uri=SCHEMA_URI, version="2.1.0", runs=[run]))
    return _scrub(doc, items.masks) if items.masks else doc


def _notifications(errors: list[dict], places: Places) -> list[om.Notification]:
    """Files that could not be read: notifications (the run still succeeded)."""
    notifications = []
    for e in errors:
        file_path, container = split_container(str(e.get("path", "")), places)
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
    return notifications


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
