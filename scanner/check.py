"""`centinela check ROOT --out OUT`: everything CI needs in one go, with every output written to OUT.

Parts: `manifest verify` (integrity), `scan` (JSON and SARIF), `redact --check` (nothing left to redact).
A part fails when:
- verify reports any problem;
- the scan finds an injection in a file whose manifest class is not `prompt-injection` (class 8 exists to carry
  injections: there they are expected, and the scan still records them), a secret or personal datum the spec
  removes, or a file it cannot read;
- the redaction plan is not empty;
- given a run (`--run`): `verify-run` finds the run disagreeing with its fixtures, or `score`'s gates fail as
  `centinela gates` judges them (the top-ranked provider fails a gate, or no provider passes them all).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from scanner.atomic import atomic_write_text
from scanner.fixtures.tree import TreeError, read_manifest


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

    @property
    def ok(self) -> bool:
        return all(p.ok for p in self.parts)

    def to_json(self) -> dict:
        return {"root": self.root, "ok": self.ok,
                "parts": [{"name": p.name, "ok": p.ok, "summary": p.summary, "outputs": p.outputs} for p in self.parts]}


def _dump(path: Path, data) -> str:
    from scanner.terminal import json_text

    atomic_write_text(path, json_text(json.dumps(data, indent=2, ensure_ascii=False)) + "\n")
    return path.name


def run_check(root: Path, out: Path, repo_root: Path, category: str = "centinela",
              run_dir: Path | None = None, fingerprint_key: bytes | None = None) -> CheckReport:
    """Every part, sharing one cache of loaded documents and their scans (scanner.doccache): each file is parsed
    and scanned for secrets and personal data once, not once per part. `fingerprint_key` keys the SARIF
    fingerprints of secrets and personal data, as for `scan` (`scanner.fingerprint`)."""
    from scanner import doccache

    with doccache.active():
        return _run_check(root, out, repo_root, category, run_dir, fingerprint_key)


def _run_check(root: Path, out: Path, repo_root: Path, category: str, run_dir: Path | None,
               fingerprint_key: bytes | None = None) -> CheckReport:
    from scanner.fixtures.verify import verify_tree
    from scanner.redact import Redactor
    from scanner.review.render import render_review, rule_names
    from scanner.sarif import build_sarif, dumps_sarif
    from scanner.budget import Budget
    from scanner.scan import Scanner

    if not root.is_dir():
        raise TreeError(f"{root}: not a directory")
    out.mkdir(parents=True, exist_ok=True)
    report = CheckReport(root=str(root))

    verify = verify_tree(root)
    codes = sorted({p.code for p in verify.problems})
    report.parts.append(Part("manifest verify", verify.ok,
                             "ok" if verify.ok else f"{len(verify.problems)} problem(s): {', '.join(codes)}",
                             [_dump(out / "manifest-verify.json", verify.to_json())]))

    scanner = Scanner(review=True)                      # keeps the views review.html shows
    result = scanner.scan([root], budget=Budget())      # the scan's default per-file budgets: no file stalls CI
    classes = {rel: e.class_ for rel, e in read_manifest(root).entries.items()}
    failing = []
    for f in result.findings:
        if f.kind == "injection":
            if classes.get(f.path) != "prompt-injection":
                failing.append(f)
        elif f.extra.get("replacement") is not None:
            failing.append(f)
    expected = sum(1 for f in result.findings if f.kind == "injection" and classes.get(f.path) == "prompt-injection")
    outputs = [_dump(out / "scan.json", result.to_json())]
    sarif = build_sarif(result, scanner.rule_metas(), repo_root=repo_root, category=category,
                        scan_root_for=lambda p: result.roots.get(p), fingerprint_key=fingerprint_key)
    report.sensitive_findings = [f for f in result.findings if f.kind in ("secret", "pii")]
    atomic_write_text(out / "scan.sarif", dumps_sarif(sarif))
    outputs.append("scan.sarif")
    notes = {p: "prompt-injection fixture: injections expected" for p, c in classes.items() if c == "prompt-injection"}
    atomic_write_text(out / "review.html", render_review(result, rule_names(scanner), notes))
    outputs.append("review.html")
    # A scanned PDF with no text layer is the spec's class-3 case: it must fail as format_tables_ocr, loudly,
    # and it does (scan.json lists it) — it is not a failure of the tree.
    unreadable = [e for e in result.errors if e.get("code") != "format_tables_ocr"]
    scan_ok = not failing and not unreadable
    summary = (f"{len(result.findings)} finding(s) in {result.files_scanned} files; {expected} injection(s) in "
               f"prompt-injection fixtures (expected); {len(failing)} failing")
    if unreadable:
        summary += f"; {len(unreadable)} file(s) could not be read"
    ocr = len(result.errors) - len(unreadable)
    if ocr:
        summary += f"; {ocr} scanned PDF(s) reported as format_tables_ocr"
    if failing:
        from scanner.scrub import scrub_path

        by_file = sorted({f"{scrub_path(f.path)} ({f.rule_id})" for f in failing})
        summary += ": " + ", ".join(by_file[:6]) + (" …" if len(by_file) > 6 else "")
    report.parts.append(Part("scan", scan_ok, summary, outputs))

    plan = Redactor().plan([root])
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


def _run_parts(root: Path, run_dir: Path, out: Path, report: CheckReport) -> None:
    from scanner.score.gates import judge
    from scanner.score.report import score, write_report
    from scanner.score.verify_run import verify_run

    checked = verify_run(root, run_dir)
    failed = {p: [c for c, v in d["checks"].items() if v == "fail"] for p, d in checked["providers"].items()}
    failed = {p: c for p, c in failed.items() if c}
    report.parts.append(Part("verify-run", checked["ok"],
                             "the run agrees with its fixtures" if checked["ok"] else
                             "; ".join(f"{p}: {', '.join(c)}" for p, c in sorted(failed.items())),
                             [_dump(out / "verify-run.json", checked)]))
    result = score(root, run_dir)
    written = write_report(result.report, out, result.evals)
    passes, verdict = judge(result.report)
    ranking = result.report["ranking"]
    summary = f"{verdict}; ranking: {', '.join(ranking) or 'none'}"
    if result.report["disqualified"]:
        summary += "; disqualified: " + ", ".join(d["provider"] for d in result.report["disqualified"])
    report.parts.append(Part("score + gates", passes, summary, [p.name for p in written]))


def format_text(report: CheckReport) -> str:
    from scanner.scrub import shown_path
    from scanner.terminal import safe

    lines = [f"{'ok  ' if p.ok else 'FAIL'} {p.name}: {safe(p.summary)}" for p in report.parts]
    lines.append(f"{shown_path(report.root)}: {'all parts pass' if report.ok else 'failed'}")
    return "\n".join(lines)
