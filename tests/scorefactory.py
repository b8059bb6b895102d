"""Small fixture trees and runs for scorer tests, written from plain dicts."""

from __future__ import annotations

import json
from pathlib import Path

import yaml


def write_tree(root: Path, cases: list[dict], families: dict, judgments: dict, files: dict[str, str | bytes],
               manifest: dict | None = None) -> Path:
    (root / "golden").mkdir(parents=True, exist_ok=True)
    (root / "golden" / "cases.yaml").write_text(yaml.safe_dump(cases, allow_unicode=True), encoding="utf-8")
    (root / "golden" / "families.yaml").write_text(yaml.safe_dump(families), encoding="utf-8")
    (root / "golden" / "judgments.yaml").write_text(yaml.safe_dump(judgments, allow_unicode=True), encoding="utf-8")
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content, encoding="utf-8")
    (root / "manifest.json").write_text(json.dumps({"files": manifest or {}}, indent=2), encoding="utf-8")
    return root


def write_run(run: Path, info: dict, records: dict[str, list[dict]], invoices: dict[str, float] | None = None) -> Path:
    run.mkdir(parents=True, exist_ok=True)
    (run / "run.json").write_text(json.dumps(info), encoding="utf-8")
    for provider, recs in records.items():
        (run / provider).mkdir(exist_ok=True)
        for rec in recs:
            rec = {"provider": provider, "calls": [], "results": [], "claims": [], "fallback": None,
                   "outcome": "claims" if rec.get("claims") else "honest_no_data", **rec}
            (run / provider / f"{rec['case']}.json").write_text(json.dumps(rec), encoding="utf-8")
    if invoices:
        (run / "invoices").mkdir(exist_ok=True)
        for provider, total in invoices.items():
            (run / "invoices" / f"{provider}.json").write_text(json.dumps({"total_usd": total}), encoding="utf-8")
    return run


def call(op="search", cost=0.0, latency=None, **kw) -> dict:
    return {"op": op, "cost_usd": cost, "latency_ms": latency, **kw}


def results(*items) -> list[dict]:
    """results(("url", "2026-09-01"), ("url2", None), ...) ranked 1..n in order."""
    return [{"rank": i, "url": u, "published_at": d} for i, (u, d) in enumerate(items, 1)]
