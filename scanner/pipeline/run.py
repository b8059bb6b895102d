"""A run over many files: every file through `scan_file`, in this process or in forked workers, and the
per-file results put together in input order.

With a budget whose time or memory limit is set, or with `jobs` > 1, files are scanned in forked worker
processes (`scanner.workers`) that enforce it; the result is the same, in the same order, as a run in this
process.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable

from scanner import workers
from scanner.budget import Budget
from scanner.loaders import pdfmemo
from scanner.pipeline.files import FileScan, Job, scan_file
from scanner.pipeline.result import ScanResult
from scanner.pipeline.targets import Target, collect_targets
from scanner.scan import Scanner

if TYPE_CHECKING:       # scanner.redact: imported only by a run that plans redactions (a scan's reports need none)
    from scanner.redact import RedactPlan, Redactor


def scan_paths(scanner: Scanner, paths: list[Path], progress=None, jobs: int = 1, budget: Budget | None = None,
               redaction: str | None = None, classify: frozenset = frozenset(), classifier=None) -> ScanResult:
    """Scan files and folders; `progress(targets)` may wrap the list of files (a progress bar).

    `redaction` (a provenance, `sha256` or `hmac`): also plan each file's redaction from the document and the
    findings of its scan (`result.plans`, `result.redactable`), as `redact --check` plans it; needs the
    scanner to run secrets and personal data. `classify`: display paths of captures for `classifier` (a
    `scanner.fixtures.classify.Classifier`) to classify from the bytes read for the scan (`result.captures`,
    for verify's capture-kind check)."""
    redactor = None
    if redaction is not None:
        from scanner.redact import Redactor

        redactor = Redactor(detectors=scanner.redaction_detectors())
    job = Job(scanner, budget, redactor, redaction or "sha256", keep_documents=False,
              classify=frozenset(classify) if classifier is not None else frozenset(), classifier=classifier)
    result = ScanResult()
    targets = collect_targets(paths)
    with pdfmemo.active():      # the same PDF under several names (a file, its recorded fetches) laid out once
        _collect(result, targets, _outcomes(targets, job, jobs), progress, redactor)
    return result


def _collect(result: ScanResult, targets: list[Target], outcomes: Callable[[Target], FileScan], progress,
             redactor: Redactor | None) -> None:
    for target in (progress(targets) if progress is not None else targets):
        outcome = outcomes(target)
        display = target.display
        result.files_scanned += 1
        result.roots[display] = target.base
        result.errors.extend(outcome.errors)
        result.findings.extend(outcome.findings)
        result.documents.append(outcome.entry)
        if outcome.view is not None:
            result.views[display] = outcome.view
        if outcome.source is not None:
            result.sources[display] = outcome.source
        if outcome.capture is not None:
            result.captures[display] = outcome.capture
        if redactor is not None:
            result.plans.append(outcome.plan)
            result.redactable[display] = outcome.redactable or []


def plan_redactions(paths: list[Path], redactor: Redactor, provenance: str = "sha256") -> RedactPlan:
    """`redact`'s plan of files and folders: each file read and loaded once, in this process (the plan keeps
    its document, to be written)."""
    from scanner.redact import RedactPlan

    job = Job(None, None, redactor, provenance, keep_documents=True)
    plan = RedactPlan()
    for target in collect_targets(paths):
        outcome = scan_file(target, job).plan
        if outcome is None:
            continue
        if isinstance(outcome, dict):
            plan.errors.append(outcome)
        else:
            plan.files.append(outcome)
    return plan


def plan_of(result: ScanResult) -> RedactPlan:
    """The redaction plan a scan made along the way (`scan_paths(redaction=…)`)."""
    from scanner.redact import RedactPlan

    plan = RedactPlan()
    for outcome in result.plans:
        if isinstance(outcome, dict):
            plan.errors.append(outcome)
        elif outcome is not None:
            plan.files.append(outcome)
    return plan


def _outcomes(targets: list[Target], job: Job, jobs: int) -> Callable[[Target], FileScan]:
    """A function from a target to its FileScan: computed on demand here, or collected from workers."""
    budget = job.budget
    if not ((jobs > 1 or (budget is not None and budget.needs_workers)) and workers.fork_available()):
        return lambda target: scan_file(target, job)
    seconds = budget.max_file_seconds if budget is not None else None
    memory = budget.max_memory_bytes if budget is not None else None
    index_of = {id(t): i for i, t in enumerate(targets)}
    done: dict[int, FileScan] = {}
    pii = job.scanner.pii if job.scanner is not None else None
    if pii is not None and len(targets) > 20:
        pii.warm()      # many files: spaCy's model once, before the fork, not in every worker that needs it
    stream = workers.run(lambda t: scan_file(t, job), targets, jobs=jobs, seconds=seconds or None,
                         memory_bytes=memory)

    def outcome(target: Target) -> FileScan:
        i = index_of[id(target)]
        while i not in done:
            index, result = next(stream)
            if isinstance(result, workers.Failure):
                result = FileScan.failed(targets[index], result, job)
            done[index] = result
        return done.pop(i)
    return outcome
