"""Findings: what a rule reports, in the contract's shape (`scan --format json`)."""

from __future__ import annotations

from dataclasses import dataclass, field

KINDS = ("injection", "pii", "secret", "integrity")
SEVERITY_ORDER = {"note": 0, "warning": 1, "error": 2}
SUPPRESSION_KINDS = ("inline", "allowlist", "baseline")


@dataclass(frozen=True)
class Suppression:
    """Why a finding does not count: the mechanism that suppressed it (`scanner.suppress`) and its reason."""

    kind: str                 # one of SUPPRESSION_KINDS
    justification: str

    def to_json(self) -> dict:
        return {"kind": self.kind, "justification": self.justification}


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
    # What the detector says about the finding (score, check digit, owner, `replacement`, `container`…), written
    # to the JSON as it is. The pipeline reads it only through the typed properties below.
    extra: dict = field(default_factory=dict)
    # Set by the pipeline (`scanner.suppress.apply_suppressions`), never by a detector.
    suppression: Suppression | None = None

    @property
    def replacement(self) -> str | None:
        """What `redact` writes in place of the datum; None: a datum kept on purpose (or not a datum at all)."""
        value = self.extra.get("replacement")
        return value if isinstance(value, str) else None

    @property
    def redactable(self) -> bool:
        """A secret or personal datum the spec removes (it has a replacement)."""
        return self.replacement is not None

    @property
    def container(self) -> str | None:
        """The JSON pointer of the recorded body the finding lies in (HTML inside a JSON string), if any."""
        value = self.extra.get("container")
        return value if isinstance(value, str) and value else None

    @property
    def suppressed(self) -> bool:
        return self.suppression is not None

    def sort_key(self):
        return (self.path, self.page or 0, self.start, self.end, self.rule_id)

    def to_json(self) -> dict:
        out = {
            "rule_id": self.rule_id, "kind": self.kind, "vector": self.vector, "entity": self.entity,
            "path": self.path, "line": self.line, "column": self.column, "start": self.start, "end": self.end,
            "page": self.page, "severity": self.severity, "message": self.message, "evidence": self.evidence,
            "channel": self.channel, "locator": self.locator,
        }
        out.update(self.details())
        return out

    def details(self) -> dict:
        """The detector's details, and (last) the suppression when there is one, as the JSON shows them."""
        if self.suppression is None:
            return self.extra
        return {**self.extra, "suppressed": self.suppression.to_json()}
