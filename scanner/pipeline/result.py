"""What a scan hands its outputs: findings, per-file entries and errors, and each file's kept text."""

from __future__ import annotations

from dataclasses import dataclass, field

from scanner import TOOL_NAME, __version__
from scanner.findings import SEVERITY_ORDER, Finding
from scanner.scrub import mask_paths, scrub_text
from scanner.sourcetext import SourceText


@dataclass
class ScanResult:
    files_scanned: int = 0
    errors: list[dict] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    documents: list[dict] = field(default_factory=list)
    roots: dict = field(default_factory=dict)          # display path -> the directory it is relative to
    suppression: object = None                         # scanner.suppress.SuppressionReport, when applied
    include_suppressed: bool = False                   # list suppressed findings too (each with "suppressed")
    views: dict = field(default_factory=dict)          # display path -> reviewer view (Scanner(review=True))
    # display path -> the file's text as loaded, for every file an output needs it of (those with findings,
    # HTML files with an inline directive): SARIF, baselines and suppressions read it here, never the file.
    sources: dict[str, SourceText] = field(default_factory=dict)
    # With a redaction asked of the scan (`scanner.pipeline.scan_paths(redaction=…)`): each file's outcome
    # (a `scanner.redact.FilePlan`, an error entry, or None for a file redaction leaves alone), in file
    # order; and per display path the data the spec removes, found in the same load (for verify's check).
    plans: list = field(default_factory=list)
    redactable: dict[str, list[Finding]] = field(default_factory=dict)
    captures: dict[str, dict] = field(default_factory=dict)    # display path -> classification, when asked

    def text_of(self, display: str) -> str | None:
        """The decoded text of a scanned file (its findings' offsets index it), or None (a PDF, not kept)."""
        source = self.sources.get(display)
        return source.text if source is not None else None

    def active(self) -> list[Finding]:
        """The findings that count: those not suppressed inline, by the allowlist or by the baseline."""
        return [f for f in self.findings if f.suppression is None]

    def to_json(self) -> dict:
        """The contract's JSON. A path holding a secret or personal datum (a file named after a person) is
        masked in every entry, and error messages are scrubbed (`scanner.scrub`)."""
        shown = self.findings if self.include_suppressed else self.active()
        out = {
            "tool": {"name": TOOL_NAME, "version": __version__},
            "files_scanned": self.files_scanned,
            "errors": [{**e, "message": scrub_text(e["message"])} if isinstance(e.get("message"), str) else e
                       for e in mask_paths(self.errors)],
            "findings": [f.to_json() for f in shown],
            "documents": mask_paths(self.documents),
        }
        out["findings"] = mask_paths(out["findings"])
        if self.suppression is not None:
            out["suppressed"] = mask_paths(self.suppression.to_json())
        return out

    def fails(self, threshold: str = "warning") -> bool:
        level = SEVERITY_ORDER[threshold]
        return bool(self.errors) or any(SEVERITY_ORDER[f.severity] >= level for f in self.active())
