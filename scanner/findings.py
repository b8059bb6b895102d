"""Findings: what a rule reports, in the contract's shape (`scan --format json`)."""

from __future__ import annotations

from dataclasses import dataclass, field

KINDS = ("injection", "pii", "secret", "integrity")
SEVERITY_ORDER = {"note": 0, "warning": 1, "error": 2}


@dataclass
class Finding:
    rule_id: str
    kind: str
    path: str
    start: int
    end: int
    severity: str
    message: str
    evidence: str
    vector: str | None = None
    entity: str | None = None
    line: int | None = None
    column: int | None = None
    page: int | None = None
    # beyond the contract: where in the file, for people and for suppressions
    channel: str | None = None
    locator: str | None = None
    extra: dict = field(default_factory=dict)

    def sort_key(self):
        return (self.path, self.page or 0, self.start, self.end, self.rule_id)

    def to_json(self) -> dict:
        out = {
            "rule_id": self.rule_id, "kind": self.kind, "vector": self.vector, "entity": self.entity,
            "path": self.path, "line": self.line, "column": self.column, "start": self.start, "end": self.end,
            "page": self.page, "severity": self.severity, "message": self.message, "evidence": self.evidence,
            "channel": self.channel, "locator": self.locator,
        }
        out.update(self.extra)
        return out
