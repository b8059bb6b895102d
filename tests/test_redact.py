"""`redact --check/--write`: the plan, the write, the manifest, truncation, invalidated spans, crash safety."""

from __future__ import annotations

import hashlib
import hmac
import json
import subprocess
import sys

import pytest

from scanner import redact as redact_mod
from scanner.fixtures.verify import verify_tree
from scanner.redact import JOURNAL, Redactor
from scanner.pipeline.run import plan_redactions
from treefactory import build_tree, edit_manifest, read_manifest, sha, write_json

SECRET = "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"
EMAIL = "juan.perez.lopez@gmail.com"


def leaky_envelope() -> dict:
    return {
        "request": {"method": "POST", "url": "https://api.tavily.com/search?api_key=" + SECRET,
                    "headers": {"Authorization": "Bearer " + SECRET, "content-type": "application/json",
                                "Cookie": "session=8f2a7c9e1b4d6f3a0c5e7b9d2f4a6c8e"},
                    "body": {"query": "Aceros del Bajío contacto"}},
        "response": {"status": 200,
                     "headers": {"date": "Fri, 02 Oct 2026 14:11:09 GMT", "content-type": "application/json",
                                 "x-ratelimit-remaining": "99", "x-request-id": "req_7f3a9c2e1b5d8f4a6c0e"},
                     "body": {"results": [{"url": "https://acerosdelbajio.com.mx/contacto",
                                           "content": "Ventas: ventas@acerosdelbajio.com.mx. Escribe a " + EMAIL
                                                      + " o al cel. 33 1234 5678.",
                                           "published_date": "2026-09-01"}]}},
    }


def run(*args, env=None, fresh=False):
    """`centinela redact ...` in this process (tests/inprocess.py), with `env` as the whole environment while it
    runs: each fresh interpreter paid the start-up and spaCy's model (about 1.5 s of CPU) for a command whose
    output is all these tests read. `fresh=True`: a real `python -m scanner` (the write, in
    test_write_redacts_in_place_updates_manifest_and_is_idempotent, keeps one)."""
    if fresh:
        return subprocess.run([sys.executable, "-m", "scanner", *args], capture_output=True, text=True, env=env)
    import os

    from inprocess import run_cli

    if env is None:
        return run_cli(*args)
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        return run_cli(*args)
    finally:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture
def tree(tmp_path):
    root = build_tree(tmp_path / "tree")
    target = root / "alpha/search/gs-001.json"
    write_json(target, leaky_envelope())
    edit_manifest(root, lambda f: f["alpha/search/gs-001.json"].update(sha256=sha(target), sha256_original=sha(target)))
    return root


def test_verify_reports_unredacted(tree):
    report = verify_tree(tree)
    assert [(p.path, p.code) for p in report.problems] == [("alpha/search/gs-001.json", "unredacted")]
    assert SECRET not in report.problems[0].message and EMAIL not in report.problems[0].message


def test_check_plans_exact_spans_and_keeps_what_the_spec_keeps(tree):
    target = tree / "alpha/search/gs-001.json"
    text = target.read_text(encoding="utf-8")
    proc = run("redact", str(target), "--check", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    plan = json.loads(proc.stdout)
    (entry,) = plan["files"]
    assert entry["path"] == "alpha/search/gs-001.json"
    replaced = {text[r["start"]:r["end"]]: r["replacement"] for r in entry["redactions"]}
    assert replaced.get(EMAIL) == "redacted@example.test"
    assert replaced.get("33 1234 5678") == "+52-000-000-0000"
    assert any(SECRET in k for k in replaced), replaced
    assert all(v in ("REDACTED", "redacted@example.test", "+52-000-000-0000") for v in replaced.values())
    for kept in ("ventas@acerosdelbajio.com.mx", "Fri, 02 Oct 2026 14:11:09 GMT", "99", "req_7f3a9c2e1b5d8f4a6c0e",
                 "https://api.tavily.com/search", "2026-09-01"):
        assert not any(kept in k for k in replaced), kept
    assert entry["truncate"] is False and entry["spans_invalidated"] == []
    assert SECRET not in proc.stdout and EMAIL not in proc.stdout
    assert target.read_text(encoding="utf-8") == text            # --check changes nothing


def test_write_redacts_in_place_updates_manifest_and_is_idempotent(tree):
    target = tree / "alpha/search/gs-001.json"
    before = sha(target)
    proc = run("redact", str(tree), "--write", fresh=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    value = json.loads(target.read_text(encoding="utf-8"))        # still valid JSON
    assert value["request"]["headers"]["Authorization"] in ("REDACTED", "Bearer REDACTED")
    assert SECRET not in target.read_text(encoding="utf-8")
    assert EMAIL not in target.read_text(encoding="utf-8")
    assert "ventas@acerosdelbajio.com.mx" in value["response"]["body"]["results"][0]["content"]
    assert value["response"]["headers"]["date"] == "Fri, 02 Oct 2026 14:11:09 GMT"
    assert value["response"]["headers"]["x-request-id"] == "req_7f3a9c2e1b5d8f4a6c0e"
    entry = read_manifest(tree)["files"]["alpha/search/gs-001.json"]
    assert entry["sha256"] == sha(target) and entry["sha256_original"] == before
    assert not (tree / JOURNAL).exists()
    assert verify_tree(tree).problems == []
    again = run("redact", str(tree), "--write", "--format", "json")
    assert again.returncode == 0
    assert json.loads(again.stdout)["files"] == []
    assert sha(target) == entry["sha256"]


def test_hmac_provenance(tree, monkeypatch):
    target = tree / "alpha/search/gs-001.json"
    original = target.read_bytes()
    key = "k" * 32
    proc = run("redact", str(target), "--write", "--provenance", "hmac", env={**_env(), "CENTINELA_PROVENANCE_KEY": key})
    assert proc.returncode == 0, proc.stderr
    entry = read_manifest(tree)["files"]["alpha/search/gs-001.json"]
    assert entry["sha256_original"] == hmac.new(key.encode(), original, hashlib.sha256).hexdigest()
    assert entry["sha256_original_algorithm"] == "hmac-sha256"
    no_key = run("redact", str(target), "--write", "--provenance", "hmac", env=_env())
    assert no_key.returncode in (0, 2)     # nothing left to redact, or refused for want of a key


def test_plain_provenance_warns_about_low_entropy_values(tree):
    proc = run("redact", str(tree / "alpha/search/gs-001.json"), "--check")
    assert "brute force" in proc.stdout


def _env():
    import os

    return {k: v for k, v in os.environ.items() if k != "CENTINELA_PROVENANCE_KEY"}


def test_spans_invalidated_are_named(tree):
    page = tree / "_shared/html/acme.html"
    page.write_text(f"<html><body><p>Escribe a {EMAIL} hoy.</p><p>Planta en Querétaro.</p></body></html>\n",
                    encoding="utf-8")
    text = page.read_text(encoding="utf-8")
    start = text.index("Planta en Querétaro.")
    write_json(tree / "_shared/expected/gs-002.json", {"case": "gs-002", "observations": [
        {"id": "obs-1", "artifact": "_shared/html/acme.html", "span": f"offset:{start}-{start + 20}",
         "text": "Planta en Querétaro."},
        {"id": "obs-2", "artifact": "_shared/html/acme.html", "span": "selector:p:nth-of-type(2)",
         "text": "Planta en Querétaro."}]})
    proc = run("redact", str(page), "--check", "--format", "json")
    (entry,) = json.loads(proc.stdout)["files"]
    assert entry["spans_invalidated"] == ["_shared/expected/gs-002.json#obs-1"]


def test_large_envelope_body_is_truncated_and_stays_valid_json(tree):
    target = tree / "beta/fetch/gs-002.json"
    filler = "<p>" + ("Lorem ipsum dolor sit amet. " * 30) + "</p>\n"
    page = "<html><body>" + filler * 1000 + "</body></html>"
    env = leaky_envelope()
    env["request"] = {"method": "GET", "url": "https://acme.example/", "headers": {}}
    env["response"]["headers"]["content-type"] = "text/html; charset=utf-8"
    env["response"]["body"] = page
    write_json(target, env)
    edit_manifest(tree, lambda f: f["beta/fetch/gs-002.json"].update(sha256=sha(target), sha256_original=sha(target)))
    assert target.stat().st_size > 512 * 1024
    proc = run("redact", str(target), "--write", "--format", "json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    value = json.loads(target.read_text(encoding="utf-8"))
    assert target.stat().st_size < 16 * 1024
    assert value["response"]["headers"]["date"] == "Fri, 02 Oct 2026 14:11:09 GMT"
    assert value["response"]["body"].startswith("<html><body><p>Lorem ipsum")
    assert read_manifest(tree)["files"]["beta/fetch/gs-002.json"]["truncated"] is True
    assert [p for p in verify_tree(tree).problems if p.path == "beta/fetch/gs-002.json"] == []


def test_interrupted_write_is_finished_by_the_next_run(tree, monkeypatch):
    """Killed after the files were replaced but before the manifest: the journal lets a second run finish."""
    target = tree / "alpha/search/gs-001.json"

    def crash(root):
        raise KeyboardInterrupt("killed")

    monkeypatch.setattr(redact_mod, "finish_journal", crash)
    redactor = Redactor()
    plan = plan_redactions([tree], redactor)
    with pytest.raises(KeyboardInterrupt):
        redactor.write(plan)
    assert (tree / JOURNAL).exists()
    assert SECRET not in target.read_text(encoding="utf-8")          # the file is whole, after
    assert [p.code for p in verify_tree(tree).problems] == ["sha256_mismatch"]
    monkeypatch.undo()
    proc = run("redact", str(tree), "--write")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not (tree / JOURNAL).exists()
    assert verify_tree(tree).problems == []


def test_pdf_with_personal_data_is_reported_not_touched(tmp_path):
    from scanner.pdfwriter import TextRun, make_pdf

    pdf = tmp_path / "directorio.pdf"
    pdf.write_bytes(make_pdf([[TextRun(f"Contacto personal: {EMAIL}")]]))
    before = pdf.read_bytes()
    proc = run("redact", str(pdf), "--write", "--format", "json")
    assert proc.returncode == 1
    (entry,) = json.loads(proc.stdout)["files"]
    assert entry["unredactable"] and entry["redactions"] == []
    assert pdf.read_bytes() == before
