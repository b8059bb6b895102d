"""Builds complete, clean fixture trees in a temporary folder, and breaks them in exactly one way."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import yaml

CLASSES_BY_FILE = {
    "search/gs-001.json": ("results", "gs-001"),
    "fetch/gs-002.json": ("html", "gs-002"),
    "fetch/gs-003-pdf.json": ("pdf", "gs-003"),
    "errors/429.json": ("429", None),
    "errors/502.json": ("5xx", None),
    "errors/timeout.json": ("timeout", None),
    "extract/gs-004-partial.json": ("partial", "gs-004"),
    "extract/gs-005-injection.json": ("prompt-injection", "gs-005"),
    "search/gs-006.json": ("contradictory", "gs-006"),
}
SYNTHETIC_OK = {"429", "5xx", "timeout", "partial", "prompt-injection"}
DATE = "Fri, 02 Oct 2026 14:11:09 GMT"
ISO = "2026-10-02T14:11:09Z"


def envelope(status: int = 200, body=None, ctype: str = "application/json") -> dict:
    return {
        "request": {"method": "POST", "url": "https://api.example.test/search",
                    "headers": {"content-type": "application/json", "authorization": "REDACTED"},
                    "body": {"query": "q"}},
        "response": {"status": status, "headers": {"date": DATE, "content-type": ctype},
                     "body": body if body is not None else {"results": []}},
    }


def golden_cases(n: int = 32, categories: int = 9, forbidden: int = 10) -> list[dict]:
    cases = []
    for i in range(n):
        cases.append({
            "id": f"gs-{i + 1:03d}",
            "category": f"cat{i % categories}",
            "query": f"consulta {i + 1}",
            "claim_type": "plant_location",
            "web_role": "forbidden" if i >= n - forbidden else "required",
            "freshness_days": 365,
            "expect": {"families": ["gov"], "hosts": ["www.gob.mx"]},
        })
    return cases


def write_json(path: Path, value) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build_tree(root: Path, providers=("alpha", "beta")) -> Path:
    files: dict[str, dict] = {}

    def add(rel: str, cls: str, case, synthetic: bool = False):
        digest = sha(root / rel)
        files[rel] = {"case": case, "class": cls, "captured_at": ISO, "sha256": digest,
                      "sha256_original": digest, "synthetic": synthetic, "truncated": False}

    page = root / "_shared/html/acme.html"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text("<html><body><p>Planta en Querétaro. ventas@acme.com.mx</p></body></html>\n", encoding="utf-8")
    add("_shared/html/acme.html", "html", "gs-002")
    pdf = root / "_shared/pdf/informe.pdf"
    pdf.parent.mkdir(parents=True, exist_ok=True)
    from scanner.pdfwriter import TextRun, make_pdf

    pdf.write_bytes(make_pdf([[TextRun("Informe anual 2025 de Acme")]]))
    add("_shared/pdf/informe.pdf", "pdf", "gs-003")
    write_json(root / "_shared/expected/gs-002.json", {"case": "gs-002", "observations": [
        {"id": "obs-1", "artifact": "_shared/html/acme.html", "span": "offset:15-37", "text": "Planta en Querétaro."}]})
    add("_shared/expected/gs-002.json", "expected", "gs-002")
    for p in providers:
        for rel, (cls, case) in CLASSES_BY_FILE.items():
            status = {"429": 429, "5xx": 502}.get(cls, 200)
            write_json(root / p / rel, envelope(status))
            add(f"{p}/{rel}", cls, case, synthetic=cls in SYNTHETIC_OK)
    (root / "golden").mkdir(parents=True, exist_ok=True)
    (root / "golden/cases.yaml").write_text(yaml.safe_dump(golden_cases(), allow_unicode=True, sort_keys=False), encoding="utf-8")
    (root / "golden/families.yaml").write_text("gov: [gob.mx]\nnews: [eleconomista.com.mx]\n", encoding="utf-8")
    (root / "golden/judgments.yaml").write_text('gs-001:\n  "https://www.gob.mx/x": {supports: true, group: g1}\n', encoding="utf-8")
    write_manifest(root, files)
    return root


def read_manifest(root: Path) -> dict:
    return json.loads((root / "manifest.json").read_text(encoding="utf-8"))


def write_manifest(root: Path, files: dict) -> None:
    write_json(root / "manifest.json", {"files": dict(sorted(files.items()))})


def edit_manifest(root: Path, fn) -> None:
    data = read_manifest(root)
    fn(data["files"])
    write_manifest(root, data["files"])


def set_golden(root: Path, cases: list[dict]) -> None:
    (root / "golden/cases.yaml").write_text(yaml.safe_dump(cases, allow_unicode=True, sort_keys=False), encoding="utf-8")
