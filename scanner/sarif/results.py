"""One SARIF result per finding: its exact region, its fingerprints, its message and properties; and the
data each secret or personal-data finding points at, for the final scrub of the log."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import sarif_om as om

from scanner.evidence import datum_variants
from scanner.findings import SEVERITY_ORDER, Finding
from scanner.fingerprint import FINGERPRINT_KEY, LINE_HASH_KEY, SENSITIVE_KINDS, finding_fingerprint
from scanner.sarif.places import Place, Places, encode_uri_path
from scanner.sarif.rules import RuleMeta, level_of, rule_meta_for_unknown
from scanner.sarif.serialize import Suppression
from scanner.sarif.sources import Source, Sources

_SUPPRESSION_KINDS = {"inline": "inSource", "allowlist": "external", "baseline": "external"}


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


def _finding_properties(f: Finding) -> dict:
    props = {"kind": f.kind, "vector": f.vector, "entity": f.entity, "channel": f.channel,
             "locator": f.locator, "page": f.page, "container": f.container}
    return {k: v for k, v in props.items() if v is not None}


def _region(f: Finding, src: Source, has_span: bool) -> om.Region:
    """PDFs have no lines (the page is in the properties); otherwise exact, from the decoded text."""
    if f.page is not None:
        region = om.Region(start_line=1)
    elif has_span:
        sl, sc, el, ec = src.region(f.start, f.end)
        region = om.Region(start_line=sl, start_column=sc, end_line=el, end_column=ec)
    else:
        region = om.Region(start_line=max(f.line or 1, 1), start_column=max(f.column or 1, 1))
    if f.kind == "injection" and f.page is None and f.evidence:
        region.snippet = om.ArtifactContent(text=f.evidence)
    return region


@dataclass
class Item:
    finding: Finding
    place: Place
    rule: RuleMeta
    region: om.Region
    partial: dict = field(default_factory=dict)
    order: tuple = ()


class Items:
    """The results of a run, built finding by finding (in file order, so `:n` occurrence counts are stable)."""

    def __init__(self, places: Places, sources: Sources, rules: dict[str, RuleMeta], key: Optional[bytes],
                 include_suppressed: bool):
        self.places, self.sources, self.rules, self.key = places, sources, rules, key
        self.include_suppressed = include_suppressed
        self.items: list[Item] = []
        self.masks: dict[str, str] = {}          # secret and personal data seen → masked form, for the final scrub
        self.suppressed_counts: dict[str, int] = {}
        self._occurrences: dict[str, int] = {}

    def add(self, f: Finding) -> None:
        place = self.places(f.path)
        src = self.sources(f.path)
        rule = self.rules.get(f.rule_id)
        if rule is None:
            rule = self.rules[f.rule_id] = rule_meta_for_unknown(f)
        text = src.text
        has_span = f.page is None and text is not None and 0 <= f.start <= f.end <= len(text)
        region = _region(f, src, has_span)
        partial: dict[str, str] = {}
        hashes = src.hashes()
        if 1 <= region.start_line <= len(hashes):
            partial[LINE_HASH_KEY] = hashes[region.start_line - 1]
        if f.kind in SENSITIVE_KINDS and has_span and f.end > f.start:
            for variant in datum_variants(text[f.start:f.end]):
                self.masks.setdefault(variant, f.evidence or "REDACTED")
                # and as a URI spells it (`%40` for `@`), so a percent-encoded copy is caught too
                self.masks.setdefault(encode_uri_path(variant), encode_uri_path(f.evidence or "REDACTED"))
        fp = finding_fingerprint(f, place.rel or f.path, text, key=self.key, data=src.data)
        self._occurrences[fp] = self._occurrences.get(fp, 0) + 1
        partial[FINGERPRINT_KEY] = f"{fp}:{self._occurrences[fp]}"
        if f.suppression is not None and not self.include_suppressed:
            kind = f.suppression.kind
            self.suppressed_counts[kind] = self.suppressed_counts.get(kind, 0) + 1
            return
        self.items.append(Item(f, place, rule, region, partial,
                               (place.uri, region.start_line, region.start_column or 0, f.rule_id, f.start, f.end)))

    def keep_most_severe(self, max_results: int) -> int:
        """At most `max_results` results (GitHub's limit), the most severe kept; returns how many were dropped."""
        items = self.items
        dropped = 0
        if len(items) > max_results:
            ranked = sorted(items, key=lambda it: (-SEVERITY_ORDER.get(level_of(it.finding.severity), 1),
                                                   -float(it.rule.security_severity), it.order))
            dropped = len(items) - max_results
            items = ranked[:max_results]
        items.sort(key=lambda it: it.order)
        self.items = items
        return dropped

    def results(self, index_of: dict[str, int]) -> list[om.Result]:
        out = []
        for it in self.items:
            f = it.finding
            res = om.Result(
                rule_id=f.rule_id, rule_index=index_of[f.rule_id], level=level_of(f.severity),
                message=om.Message(text=_message(f)),
                locations=[om.Location(physical_location=om.PhysicalLocation(
                    artifact_location=it.place.artifact_location(), region=it.region))],
                partial_fingerprints=it.partial,
                properties=_finding_properties(f),
            )
            if self.include_suppressed:         # SARIF: every result has `suppressions`, or none has
                s = f.suppression
                res.suppressions = [] if s is None else [Suppression(
                    kind=_SUPPRESSION_KINDS.get(s.kind, "external"), status="accepted",
                    justification=s.justification or None,
                    properties={"centinela-kind": s.kind} if s.kind else None)]
            out.append(res)
        return out
