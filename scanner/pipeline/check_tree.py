"""`centinela check ROOT --out OUT`: everything CI needs in one go, with every output written to OUT.

Parts: `manifest verify` (integrity), `scan` (JSON and SARIF), `redact --check` (nothing left to redact).
One scan of the tree feeds them all: each file is read, loaded and scanned once, and its redaction plan,
verify's `unredacted` check and its capture classification come from those same bytes, document and
findings. The scan part applies the
same expectations and reviewed exceptions as `scan` (`scanner.pipeline.policy`), so the two agree on the
same files. A part fails when:
- verify reports any problem;
- the scan finds an injection in a file whose manifest class is not `prompt-injection` (class 8 exists to carry
  injections: there they are expected, and the scan still records them), a secret or personal datum the spec
  removes, or a file it cannot read; a finding suppressed inline, by the allowlist or by the baseline does
  not count, as for `scan`;
- the redaction plan is not empty (the spec removes personal data always: a suppression silences a report,
  it does not keep a datum in the tree);
- given a run (`--run`): `verify-run` finds the run disagreeing with its fixtures, or `score`'s gates fail as
  `centinela gates` judges them (the top-ranked provider fails a gate, or no provider passes them all).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from scanner.atomic import atomic_write_text
from scanner.budget import Budget
from scanner.fixtures.classify import CATALOGUE, Classifier
from scanner.fixtures.tree import TreeError, read_manifest
from scanner.fixtures.verify import capture_kinds_check, unredacted_check, verify_tree
from scanner.pipeline.policy import INJECTION_CLASS, Suppressions, expected_injections
from scanner.pipeline.result import ScanResult
from scanner.pipeline.run import plan_of, scan_paths
from scanner.review.render import render_review, rule_names
from scanner.sarif import build_sarif, dumps_sarif, rule_metas
from scanner.scan import Scanner
from scanner.score.report import score, write_report
from scanner.score.verdict import gate_outcome
from scanner.score.verify_run import verify_run
from scanner.scrub import scrub_path, shown_path
from scanner.terminal import json_text, safe


@dataclass
class Part:
    name: str
    ok: bool
    summary: str
    outputs: list[str] = field(default_factory=list)


@dataclass
class CheckReport:
    root: str
    parts: list[Part] = field(default_factory=list)
    sensitive_findings: list = field(default_factory=list)    # the scan's secret and personal-data findings
    suppression: object = None                                # the scan's SuppressionReport

    @property
    def ok(self) -> bool:
        return all(p.ok for p in self.parts)

    def to_json(self) -> dict:
        return {"root": self.root, "ok": self.ok,
                "parts": [{"name": p.name, "ok": p.ok, "summary": p.summary, "outputs": p.outputs} for p in self.parts]}


def _dump(path: Path, data) -> str:
    atomic_write_text(path, json_text(json.dumps(data, indent=2, ensure_ascii=False)) + "\n")
    return path.name


def check_tree(root: Path, out: Path, suppressions: Suppressions, category: str = "centinela",
               run_dir: Path | None = None, budget: Budget | None = None) -> CheckReport:
    """Every part. `suppressions` are the run's reviewed exceptions and fingerprint key (it keys the SARIF
    fingerprints of secrets and personal data, as for `scan`); `budget`: per-file limits of the scan (default:
    the scan's, so no file stalls CI)."""
    if not root.is_dir():
        raise TreeError(f"{root}: not a directory")
    out.mkdir(parents=True, exist_ok=True)
    report = CheckReport(root=str(root))
    scanner = Scanner(review=True)                      # keeps the views review.html shows
    captures = {rel for rel, e in read_manifest(root).entries.items() if e.class_ in CATALOGUE}
    result = scan_paths(scanner, [root], budget=budget or Budget(), redaction="sha256",
                        classify=frozenset(captures), classifier=Classifier())
    report.suppression = suppressions.apply(result, scanner)

    verify = verify_tree(root, content=False,
                         extra_checks=(partial(unredacted_check, known=result.redactable),
                                       partial(capture_kinds_check, classified=result.captures)))
    codes = sorted({p.code for p in verify.problems})
    report.parts.append(Part("manifest verify", verify.ok,
                             "ok" if verify.ok else f"{len(verify.problems)} problem(s): {', '.join(codes)}",
                             [_dump(out / "manifest-verify.json", verify.to_json())]))
    report.parts.append(_scan_part(root, out, result, scanner, suppressions, category))
    report.sensitive_findings = [f for f in result.findings if f.kind in ("secret", "pii")]

    plan = plan_of(result)
    pending = [fp for fp in plan.files if fp.changes]
    redact_ok = not pending and not plan.errors and not any(fp.unredactable for fp in plan.files)
    report.parts.append(Part("redact --check", redact_ok,
                             "nothing to redact" if redact_ok else
                             f"{sum(len(fp.redactions) for fp in pending)} value(s) to redact in {len(pending)} file(s)",
                             [_dump(out / "redact-plan.json", plan.to_json())]))
    if run_dir is not None:
        _run_parts(root, run_dir, out, report)
    _dump(out / "check.json", report.to_json())
    return report


def _scan_part(root: Path, out: Path, result: ScanResult, scanner: Scanner, suppressions: Suppressions,
               category: str) -> Part:
    expected = {id(f) for f in expected_injections(result, {INJECTION_CLASS})}
    active = result.active()
    failing = [f for f in active if (f.kind == "injection" and id(f) not in expected)
               or (f.kind != "injection" and f.redactable)]
    n_expected = sum(1 for f in active if id(f) in expected)
    outputs = [_dump(out / "scan.json", result.to_json())]
    sarif = build_sarif(result, rule_metas(scanner), repo_root=suppressions.repo_root, category=category,
                        scan_root_for=lambda p: result.roots.get(p), fingerprint_key=suppressions.key)
    atomic_write_text(out / "scan.sarif", dumps_sarif(sarif))
    outputs.append("scan.sarif")
    classes = {rel: e.class_ for rel, e in read_manifest(root).entries.items()}
    notes = {p: "prompt-injection fixture: injections expected" for p, c in classes.items() if c == INJECTION_CLASS}
    atomic_write_text(out / "review.html", render_review(result, rule_names(scanner), notes))
    outputs.append("review.html")
    # A scanned PDF with no text layer is the spec's class-3 case: it must fail as format_tables_ocr, loudly,
    # and it does (scan.json lists it) — it is not a failure of the tree.
    unreadable = [e for e in result.errors if e.get("code") != "format_tables_ocr"]
    summary = (f"{len(active)} finding(s) in {result.files_scanned} files; {n_expected} injection(s) in "
               f"prompt-injection fixtures (expected); {len(failing)} failing")
    if result.suppression is not None and result.suppression.total:
        summary += f"; {result.suppression.summary_line()}"
    if unreadable:
        summary += f"; {len(unreadable)} file(s) could not be read"
    ocr = len(result.errors) - len(unreadable)
    if ocr:
        summary += f"; {ocr} scanned PDF(s) reported as format_tables_ocr"
    if failing:
        by_file = sorted({f"{scrub_path(f.path)} ({f.rule_id})" for f in failing})
        summary += ": " + ", ".join(by_file[:6]) + (" …" if len(by_file) > 6 else "")
    return Part("scan", not failing and not unreadable, summary, outputs)


def _run_parts(root: Path, run_dir: Path, out: Path, report: CheckReport) -> None:
    checked = verify_run(root, run_dir)
    failed = {p: [c for c, v in d["checks"].items() if v == "fail"] for p, d in checked["providers"].items()}
    failed = {p: c for p, c in failed.items() if c}
    report.parts.append(Part("verify-run", checked["ok"],
                             "the run agrees with its fixtures" if checked["ok"] else
                             "; ".join(f"{p}: {', '.join(c)}" for p, c in sorted(failed.items())),
                             [_dump(out / "verify-run.json", checked)]))
    result = score(root, run_dir)
    written = write_report(result.report, out, result.evals)
    outcome = gate_outcome(result.report)
    ranking = result.report["ranking"]
    summary = f"{outcome.verdict}; ranking: {', '.join(ranking) or 'none'}"
    if result.report["disqualified"]:
        summary += "; disqualified: " + ", ".join(d["provider"] for d in result.report["disqualified"])
    report.parts.append(Part("score + gates", outcome.passes, summary, [p.name for p in written]))


def format_text(report: CheckReport) -> str:
    lines = [f"{'ok  ' if p.ok else 'FAIL'} {p.name}: {safe(p.summary)}" for p in report.parts]
    lines.append(f"{shown_path(report.root)}: {'all parts pass' if report.ok else 'failed'}")
    return "\n".join(lines)
