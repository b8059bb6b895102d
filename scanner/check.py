"""`centinela check ROOT --out OUT`: everything CI needs in one go, with every output written to OUT.

Parts: `manifest verify` (integrity), `scan` (JSON and SARIF), `redact --check` (nothing left to redact).
A part fails when:
- verify reports any problem;
- the scan finds an injection in a file whose manifest class is not `prompt-injection` (class 8 exists to carry
  injections: there they are expected, and the scan still records them), a secret or personal datum the spec
  removes, or a file it cannot read;
- the redaction plan is not empty.
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

    @property
    def ok(self) -> bool:
        return all(p.ok for p in self.parts)

    def to_json(self) -> dict:
        return {"root": self.root, "ok": self.ok,
                "parts": [{"name": p.name, "ok": p.ok, "summary": p.summary, "outputs": p.outputs} for p in self.parts]}


def _dump(path: Path, data) -> str:
    atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return path.name


def run_check(root: Path, out: Path, repo_root: Path, category: str = "centinela") -> CheckReport:
    from scanner.fixtures.verify import verify_tree
    from scanner.redact import Redactor
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

    scanner = Scanner()
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
                        scan_root_for=lambda p: result.roots.get(p))
    atomic_write_text(out / "scan.sarif", dumps_sarif(sarif))
    outputs.append("scan.sarif")
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
        by_file = sorted({f"{f.path} ({f.rule_id})" for f in failing})
        summary += ": " + ", ".join(by_file[:6]) + (" …" if len(by_file) > 6 else "")
    report.parts.append(Part("scan", scan_ok, summary, outputs))

    plan = Redactor().plan([root])
    pending = [fp for fp in plan.files if fp.changes]
    redact_ok = not pending and not plan.errors and not any(fp.unredactable for fp in plan.files)
    report.parts.append(Part("redact --check", redact_ok,
                             "nothing to redact" if redact_ok else
                             f"{sum(len(fp.redactions) for fp in pending)} value(s) to redact in {len(pending)} file(s)",
                             [_dump(out / "redact-plan.json", plan.to_json())]))
    _dump(out / "check.json", report.to_json())
    return report


def format_text(report: CheckReport) -> str:
    lines = [f"{'ok  ' if p.ok else 'FAIL'} {p.name}: {p.summary}" for p in report.parts]
    lines.append(f"{report.root}: {'all parts pass' if report.ok else 'failed'}")
    return "\n".join(lines)
