"""`scan`: load each file, run the rule kinds asked for, collect findings, per-document summaries and errors.

A file that cannot be loaded is an error entry (`unparsed`, `encrypted`, `format_tables_ocr`, …) and its
document entry says so: it is never passed as clean. One bad file never stops the scan of the others.

Symlinks never lead a scan out of "the tree", which for each file is: the fixture tree holding it (the
nearest folder above it, by its path as given, with a manifest.json) — as verify, redact and score judge
manifest paths —, else the folder argument it was found in while walking. A file whose path (through a
symlinked file or folder) resolves outside it is a `path_outside_root` error, never read. A file given
explicitly outside any fixture tree is read where its symlink leads, under the name given.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from scanner import TOOL_NAME, __version__
from scanner.budget import Budget
from scanner.findings import SEVERITY_ORDER, Finding
from scanner.loaders import HTML_EXT, check_file, is_scannable, iter_files, load_path
from scanner.units import Document, LoadError

ALL_KINDS = ("injection", "secret", "pii")


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

    def active(self) -> list[Finding]:
        """The findings that count: those not suppressed inline, by the allowlist or by the baseline."""
        return [f for f in self.findings if not f.extra.get("suppressed")]

    def to_json(self) -> dict:
        """The contract's JSON. A path holding a secret or personal datum (a file named after a person) is
        masked in every entry, and error messages are scrubbed (`scanner.scrub`)."""
        from scanner.scrub import mask_paths, scrub_text

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


def reportable(f: Finding) -> bool:
    """Contract: of EMAIL_ADDRESS only EMAIL_PERSONAL is a finding; a company's own phone is not personal data.
    Role mailboxes and company phones are kept and not reported; a company RFC and names are reported as notes."""
    if f.kind != "pii":
        return True
    if f.entity == "EMAIL_ROLE":
        return False
    if f.entity == "PHONE_NUMBER" and f.extra.get("replacement") is None:
        return False
    return True


@dataclass
class Target:
    path: Path
    display: str
    base: Path = Path(".")
    boundary: Path | None = None      # the folder the file must resolve inside (see the module's docstring)
    boundary_kind: str = ""           # "fixture tree" or "scanned folder", for the message


class _Trees:
    """The fixture tree holding a path, found from the path as written (symlinks not followed), cached per folder."""

    def __init__(self):
        self._seen: dict[str, Path | None] = {}

    def of(self, path: Path) -> Path | None:
        from scanner.fixtures.tree import MANIFEST

        folder = os.path.dirname(os.path.abspath(path))
        walked = []
        found = None
        while True:
            if folder in self._seen:
                found = self._seen[folder]
                break
            walked.append(folder)
            if os.path.isfile(os.path.join(folder, MANIFEST)):
                found = Path(folder)
                break
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
        for f in walked:
            self._seen[f] = found
        return found


def collect_targets(paths: list[Path]) -> list[Target]:
    """Files to scan: directories are walked (scannable extensions only), files are taken as given."""
    targets: list[Target] = []
    trees = _Trees()
    for root in paths:
        if root.is_dir():
            for f in iter_files([root]):
                if is_scannable(f):
                    tree = trees.of(f)
                    targets.append(Target(f, f.relative_to(root).as_posix(), root, tree or root,
                                          "fixture tree" if tree else "scanned folder"))
        else:
            tree = trees.of(root)
            targets.append(Target(root, root.as_posix(), Path("."), tree, "fixture tree" if tree else ""))
    return targets


def outside_reason(target: Target) -> str | None:
    """Why the target must not be read (it leads out of its tree), or None."""
    if target.boundary is None:
        return None
    # As scanner.fixtures.tree.unsafe_reason judges a manifest path; a symlink loop is left to check_file
    # (realpath does not raise on one), which reports it as unreadable.
    real, base = os.path.realpath(target.path), os.path.realpath(target.boundary)
    if os.path.commonpath([real, base]) != base:
        return f"resolves outside the {target.boundary_kind} (symlink)"
    return None


class Scanner:
    def __init__(self, kinds=ALL_KINDS, rule_dirs: tuple | None = None, prefilter: bool = True,
                 secret_rule_dirs: tuple = (), review: bool = False):
        self.kinds = tuple(kinds)
        self.review = None          # with review=True each flagged document keeps its view for the reviewer page
        if review:
            from scanner.review.capture import ReviewCapture

            self.review = ReviewCapture(self.kinds)
        self.injection = None
        self.prefilter = None
        if "injection" in self.kinds:
            from scanner.injection.engine import InjectionScanner

            self.injection = InjectionScanner(rule_dirs)
            # Only the built-in pack's phrases are known to the prefilter, and other kinds need every page.
            if prefilter and self.kinds == ("injection",) and not rule_dirs:
                from scanner.injection.prefilter import Prefilter
                from scanner.injection.signals import GATE_EXEMPT

                pf = Prefilter(self.injection.lexicon.lexicon, GATE_EXEMPT, tuple(self.injection.learned))
                self.prefilter = pf if pf.enabled else None

        self.secrets = None
        self.pii = None
        if "secret" in self.kinds:
            from scanner.secrets.detect import SecretScanner

            self.secrets = SecretScanner(extra_rule_dirs=tuple(secret_rule_dirs))
        if "pii" in self.kinds:
            from scanner.pii import PiiScanner

            self.pii = PiiScanner()

    def skip_clean_html(self, target: "Target") -> bool:
        """True when the prefilter shows an HTML page cannot hold an injection (so it needs no full load)."""
        if self.prefilter is None or target.path.suffix.lower() not in HTML_EXT:
            return False
        try:
            data = target.path.read_bytes()
        except OSError:
            return False          # the full path reports the error
        from scanner.loaders.html import decode_html

        return not self.prefilter.may_hold_injection(decode_html(data).text)

    def rule_metas(self) -> list:
        """SARIF rule metadata of every rule this scanner runs."""
        from scanner.sarif import rule_meta_from_rule

        metas = []
        if self.injection is not None:
            metas += [rule_meta_from_rule(r) for r in self.injection.rules]
        if self.secrets is not None:
            metas += [rule_meta_from_rule(r) for r in self.secrets.rules]
        if self.pii is not None and hasattr(self.pii, "rule_metas"):
            metas += list(self.pii.rule_metas())
        return metas

    def scan_document(self, doc: Document) -> list[Finding]:
        findings: list[Finding] = []
        for scanner in (self.injection, self.secrets, self.pii):
            if scanner is not None:
                findings.extend(f for f in scanner.scan(doc) if reportable(f))
        findings.sort(key=Finding.sort_key)
        return findings

    def scan_target(self, target: "Target", budget: Budget | None = None) -> "Outcome":
        """Load and scan one file: its document entry, its error entries and its findings. A file that cannot
        be read or loaded is an error entry, never an exception."""
        entry = {"path": target.display, "injection_vectors": [], "pii_entities": [], "secret_entities": []}
        out = Outcome(entry)
        outside = outside_reason(target)
        if outside is not None:
            out.fail("path_outside_root", f"not read: {outside}")
            return out
        try:
            size = check_file(target.path, target.display, budget.max_file_bytes if budget else None)
            if size == 0:
                raise LoadError(target.display, "empty file: nothing to scan", code="empty")
            if self.skip_clean_html(target):
                return out
            doc = load_path(target.path, target.display, budget.max_file_bytes if budget else None)
        except LoadError as exc:
            out.fail(exc.code, exc.message)
            return out
        doc.meta["abs_path"] = os.path.abspath(target.path)
        if doc.problems:
            entry["problems"] = list(doc.problems)
        for body_error in doc.meta.get("body_errors", []):
            where = f"{target.display}#{body_error['container']}"
            out.errors.append({"path": where, "code": body_error["code"], "message": body_error["message"]})
            entry.setdefault("errors", []).append(body_error)
        findings = self.scan_document(doc)
        out.findings = findings
        if self.review is not None:
            out.view = self.review.capture(doc, findings)
        entry["injection_vectors"] = sorted({f.vector for f in findings if f.kind == "injection" and f.vector})
        entry["pii_entities"] = sorted({f.entity for f in findings if f.kind == "pii" and f.entity})
        entry["secret_entities"] = sorted({f.entity for f in findings if f.kind == "secret" and f.entity})
        return out

    def scan(self, paths: list[Path], progress=None, jobs: int = 1, budget: Budget | None = None) -> ScanResult:
        """Scan files and folders; `progress(targets)` may wrap the list of files (a progress bar).

        With a `budget` whose time or memory limit is set, or with `jobs` > 1, files are scanned in forked
        worker processes (`scanner.pool`) that enforce it; the result is the same, in the same order, as a
        scan in this process."""
        result = ScanResult()
        targets = collect_targets(paths)
        outcomes = self._outcomes(targets, jobs, budget)
        for target in (progress(targets) if progress is not None else targets):
            outcome = outcomes(target)
            result.files_scanned += 1
            result.roots[target.display] = target.base
            result.errors.extend(outcome.errors)
            result.findings.extend(outcome.findings)
            result.documents.append(outcome.entry)
            if outcome.view is not None:
                result.views[target.display] = outcome.view
        return result

    def _outcomes(self, targets: list["Target"], jobs: int, budget: Budget | None):
        """A function from a target to its Outcome: computed on demand here, or collected from workers."""
        from scanner import pool

        if not ((jobs > 1 or (budget is not None and budget.needs_workers)) and pool.fork_available()):
            return lambda target: self.scan_target(target, budget)
        seconds = budget.max_file_seconds if budget is not None else None
        memory = budget.max_memory_bytes if budget is not None else None
        index_of = {id(t): i for i, t in enumerate(targets)}
        done: dict[int, Outcome] = {}
        stream = pool.run(lambda t: self.scan_target(t, budget), targets, jobs=jobs, seconds=seconds or None,
                          memory_bytes=memory)

        def outcome(target: "Target") -> Outcome:
            i = index_of[id(target)]
            while i not in done:
                index, result = next(stream)
                if isinstance(result, pool.Failure):
                    result = Outcome.failed(targets[index].display, result, budget)
                done[index] = result
            return done.pop(i)
        return outcome


@dataclass
class Outcome:
    """What scanning one file gives: its `documents` entry, its `errors` entries, its findings."""

    entry: dict
    errors: list[dict] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    view: dict | None = None            # the reviewer view (scanner.review.capture), when asked for

    def fail(self, code: str, message: str) -> None:
        self.errors.append({"path": self.entry["path"], "code": code, "message": message})
        self.entry["error"] = {"code": code, "message": message}

    @classmethod
    def failed(cls, display: str, failure, budget: Budget | None) -> "Outcome":
        from scanner.budget import memory_message, timeout_message

        out = cls({"path": display, "injection_vectors": [], "pii_entities": [], "secret_entities": []})
        if failure.code == "timeout":
            out.fail("timeout", timeout_message(budget.max_file_seconds))
        elif failure.code == "memory" and budget is not None and budget.max_memory_mb:
            out.fail("memory", memory_message(budget.max_memory_mb) + (f" ({failure.detail})" if failure.detail else ""))
        else:
            out.fail(failure.code, f"could not be scanned: {failure.detail or failure.code}")
        return out


_COLORS = {"error": "red", "warning": "yellow", "note": "cyan"}


def format_text(result: ScanResult, color: bool = False) -> str:
    """The text listing, grouped by file. Every field that comes from a file (its name, a JSON key quoted in a
    message, an injection's evidence) is made terminal-safe first and only then coloured; a path holding a
    datum is masked (`scanner.scrub`)."""
    import click

    from scanner.scrub import shown, shown_path
    from scanner.terminal import safe

    def paint(text: str, **style) -> str:
        return click.style(text, **style) if color else text

    lines: list[str] = []
    by_path: dict[str, list[Finding]] = {}
    for f in result.active():
        by_path.setdefault(f.path, []).append(f)
    for path in sorted(by_path):
        lines.append(paint(shown_path(path), bold=True))
        for f in by_path[path]:
            where = f"page {f.page} {f.line}:{f.column}" if f.page else f"{f.line}:{f.column}"
            label = safe(f.vector or f.entity or "")
            severity = paint(f"{safe(f.severity):<7}", fg=_COLORS.get(f.severity))
            lines.append(f"  {where:<12} {severity} {safe(f.rule_id)} {label}: {safe(f.message)}")
            lines.append(f"  {'':<12} evidence: {safe(f.evidence)}")
    for e in result.errors:
        lines.append(paint(f"{shown_path(e['path'])}: error: {safe(e['code'])}: {shown(e['message'])}", fg="red"))
    flagged = len(by_path)
    shown = sum(len(v) for v in by_path.values())
    lines.append(f"{shown} finding{'s' if shown != 1 else ''} in {flagged} of "
                 f"{result.files_scanned} files"
                 + (f"; {len(result.errors)} could not be read" if result.errors else ""))
    if result.suppression is not None and result.suppression.total:
        lines.append(safe(result.suppression.summary_line()))
    return "\n".join(lines)
