"""One file through the pipeline: read it once, load it once, run the detectors once, and keep what every
output of the run needs of it (its entry and errors, its findings, its text, its redaction plan).

A file that cannot be read or loaded is an error entry (`unparsed`, `encrypted`, `format_tables_ocr`, …) and
its document entry says so: it is never passed as clean. Nothing here raises for a bad file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from scanner.budget import Budget, memory_message, timeout_message
from scanner.fingerprint import github_text
from scanner.findings import Finding
from scanner.loaders import HTML_EXT, check_file, load_bytes, read_file, sniff_kind
from scanner.pipeline.targets import Target, outside_reason
from scanner.scan import Scanner, reportable
from scanner.sourcetext import SourceText
from scanner.units import Document, LoadError

if TYPE_CHECKING:                               # scanner.redact: imported only by a run that plans redactions
    from scanner.redact import Redactor, RedactTarget

INLINE_MARKER = "centinela-ignore"      # an HTML file that holds it keeps its text for the inline directives


@dataclass
class Job:
    """What the run asks of each file. `scanner` None: a redaction only (no scan report, `redact`)."""

    scanner: Scanner | None
    budget: Budget | None = None
    redactor: Redactor | None = None        # plan each file's redaction from the same document
    provenance: str = "sha256"
    keep_documents: bool = True             # False in worker processes: a plan is never written from there
    classify: frozenset = frozenset()       # display paths of captures to classify from the bytes read (verify)
    classifier: object = None               # a scanner.fixtures.classify.Classifier, with `classify`

    @property
    def max_bytes(self) -> int | None:
        return self.budget.max_file_bytes if self.budget else None


def _entry(display: str) -> dict:
    return {"path": display, "injection_vectors": [], "pii_entities": [], "secret_entities": []}


@dataclass
class FileScan:
    """What the pipeline keeps of one file: its `documents` entry, its `errors` entries, its findings, its text
    for the outputs (`source`), its reviewer view, and, when asked, its redaction outcome and the data the spec
    removes from it."""

    entry: dict
    errors: list[dict] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    source: SourceText | None = None
    view: dict | None = None            # the reviewer view (scanner.review.capture), when asked for
    plan: object = None                 # scanner.redact.FilePlan, an error entry, or None
    redactable: list[Finding] | None = None
    capture: dict | None = None         # the capture's classification (`Classification.to_json()`), when asked

    def fail(self, code: str, message: str) -> None:
        self.errors.append({"path": self.entry["path"], "code": code, "message": message})
        self.entry["error"] = {"code": code, "message": message}

    @classmethod
    def failed(cls, target: Target, failure, job: Job) -> "FileScan":
        """A file whose worker was stopped (`scanner.workers.Failure`): over a budget, or crashed."""
        budget = job.budget
        out = cls(_entry(target.display))
        if failure.code == "timeout":
            out.fail("timeout", timeout_message(budget.max_file_seconds))
        elif failure.code == "memory" and budget is not None and budget.max_memory_mb:
            out.fail("memory", memory_message(budget.max_memory_mb) + (f" ({failure.detail})" if failure.detail else ""))
        else:
            out.fail(failure.code, f"could not be scanned: {failure.detail or failure.code}")
        if job.redactor is not None:
            where = job.redactor.target_of(target.path)
            if _is_target(where):
                where = {"path": where.rel, **out.entry["error"]}
            out.plan = where
        return out


def scan_file(target: Target, job: Job) -> FileScan:
    """Read, load and scan one file (and plan its redaction when asked). Never raises for a bad file."""
    out = FileScan(_entry(target.display))
    where = job.redactor.target_of(target.path) if job.redactor is not None else None
    name = target.display                       # the document's name: its path as the scan shows it
    if job.scanner is None:                     # a redaction only: a file it leaves alone is never read
        if not _is_target(where):
            out.plan = where
            return out
        name = where.rel                        # its path in the plan (relative to its fixture tree)
    else:
        outside = outside_reason(target)
        if outside is not None:
            out.fail("path_outside_root", f"not read: {outside}")
            out.plan = _unread(where, "path_outside_root", out.entry["error"]["message"])
            return out
    try:
        size = check_file(target.path, name, job.max_bytes)
        if size == 0 and job.scanner is not None:
            raise LoadError(name, "empty file: nothing to scan", code="empty")
        data = read_file(target.path, name, job.max_bytes)
    except LoadError as exc:
        out.fail(exc.code, exc.message)
        if exc.code == "empty" and _is_target(where):
            _plan_loaded(out, where, b"", job)       # nothing to scan, but an empty file is planned as one
        else:
            out.plan = _plan_failed(where, exc)
        return out
    if name in job.classify:
        out.capture = job.classifier.classify_bytes(data, name).to_json()
    if job.scanner is not None:
        clean = job.scanner.clean_page(name, data)
        if clean is not None:                   # the prefilter: this page cannot hold an injection
            if _has_marker(name, clean.text):
                out.source = SourceText(clean.text)
            return out
    try:
        doc = load_bytes(data, name)
    except LoadError as exc:
        out.fail(exc.code, exc.message)
        out.plan = _plan_failed(where, exc)
        return out
    doc.meta["abs_path"] = os.path.abspath(target.path)
    if job.scanner is None:
        out.plan = job.redactor.plan_document(where, doc, job.redactor.findings(doc), job.provenance)
        return out
    detected = _scan_document(out, target, doc, data, job.scanner)
    if _is_target(where):
        sensitive = [f for f in detected if f.kind in ("secret", "pii")]
        _keep_plan(out, job.redactor.plan_document(where, doc, sensitive, job.provenance), sensitive, job)
    else:
        out.plan = where
    return out


def _keep_plan(out: FileScan, plan, findings: list[Finding], job: Job) -> None:
    out.plan = plan
    out.redactable = [f for f in findings if f.redactable]
    if not job.keep_documents:
        plan.doc = None


def _scan_document(out: FileScan, target: Target, doc: Document, data: bytes, scanner: Scanner) -> list[Finding]:
    """Fill the file's entry, errors, findings, view and kept text; returns every detected finding."""
    entry = out.entry
    if doc.problems:
        entry["problems"] = list(doc.problems)
    for body_error in doc.meta.get("body_errors", []):
        where = f"{target.display}#{body_error['container']}"
        out.errors.append({"path": where, "code": body_error["code"], "message": body_error["message"]})
        entry.setdefault("errors", []).append(body_error)
    detected = scanner.detect(doc)
    findings = [f for f in detected if reportable(f)]
    out.findings = findings
    if scanner.review is not None:
        out.view = scanner.review.capture(doc, findings)
    entry["injection_vectors"] = sorted({f.vector for f in findings if f.kind == "injection" and f.vector})
    entry["pii_entities"] = sorted({f.entity for f in findings if f.kind == "pii" and f.entity})
    entry["secret_entities"] = sorted({f.entity for f in findings if f.kind == "secret" and f.entity})
    out.source = _source(target.display, doc, data, findings)
    return detected


def _source(display: str, doc: Document, data: bytes, findings: list[Finding]) -> SourceText | None:
    """The text the outputs need of this file, or None: SARIF and fingerprints need the text of a file with
    findings (and GitHub's reading of its bytes, for line hashes); the inline directives the text of an HTML
    file that holds one."""
    text = None if sniff_kind(display, data) in ("pdf", "binary") else doc.text
    if findings:
        github = github_text(data)
        return SourceText(text, text if github == text else github)
    if text is not None and _has_marker(display, text):
        return SourceText(text)
    return None


def _has_marker(display: str, text: str) -> bool:
    return display.lower().endswith(HTML_EXT) and INLINE_MARKER in text.lower()


def _unread(where, code: str, message: str):
    """The redaction outcome of a file the scan did not read."""
    if _is_target(where):
        return {"path": where.rel, "code": code, "message": message}
    return where


def _is_target(where) -> bool:
    """A file the redaction plans (`where` is None in a run that plans none, which never imports scanner.redact)."""
    if where is None:
        return False
    from scanner.redact import RedactTarget

    return isinstance(where, RedactTarget)


def _plan_failed(where, exc: LoadError):
    if not _is_target(where):
        return where
    from scanner.redact import Redactor

    return Redactor.plan_unloaded(where, exc)


def _plan_loaded(out: FileScan, where: RedactTarget, data: bytes, job: Job) -> None:
    from scanner.redact import Redactor

    try:
        doc = load_bytes(data, where.rel)
    except LoadError as exc:
        out.plan = Redactor.plan_unloaded(where, exc)
        return
    findings = job.redactor.findings(doc)
    _keep_plan(out, job.redactor.plan_document(where, doc, findings, job.provenance), findings, job)
