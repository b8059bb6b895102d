"""The fixture models carry exactly the contract's fields, and the committed JSON Schemas match them."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from conftest import REPO
from scanner.fixtures.models import SCHEMA_MODELS, GoldenCase, ManifestEntry, RunRecord, schema_text


@pytest.mark.parametrize("name", sorted(SCHEMA_MODELS))
def test_committed_schema_is_current(name):
    committed = (REPO / "schemas" / f"{name}.schema.json").read_text(encoding="utf-8")
    assert committed == schema_text(SCHEMA_MODELS[name]), (
        f"schemas/{name}.schema.json is stale: run `python -m scanner.fixtures.models`")


def test_manifest_entry_round_trip_keeps_class_alias_and_extra_fields():
    raw = {"case": "gs-001", "class": "results", "captured_at": "2026-10-02T14:11:09Z", "sha256": "a" * 64,
           "sha256_original": "b" * 64, "synthetic": False, "truncated": False, "hash_algorithm": "sha256"}
    entry = ManifestEntry.model_validate(raw)
    assert entry.class_ == "results"
    assert entry.dump() == raw
    schema = json.loads((REPO / "schemas/manifest.schema.json").read_text())
    props = schema["$defs"]["ManifestEntry"]["properties"]
    assert set(props) == {"case", "class", "captured_at", "sha256", "sha256_original", "synthetic", "truncated"}


def test_golden_case_web_role_is_checked():
    GoldenCase.model_validate({"id": "gs-1", "category": "c", "web_role": "forbidden"})
    with pytest.raises(ValidationError):
        GoldenCase.model_validate({"id": "gs-1", "category": "c", "web_role": "sometimes"})


def test_run_record_contract_example():
    record = RunRecord.model_validate({
        "case": "gs-001", "provider": "tavily",
        "calls": [{"op": "search", "at": "2026-10-02T14:11:09Z", "latency_ms": 812, "cost_usd": 0.008,
                   "status": "ok", "requested_urls": None, "returned_urls": 10, "partial": False, "missing": []}],
        "results": [{"rank": 1, "url": "https://www.gob.mx/x", "published_at": "2025-03-01"}],
        "claims": [{"id": "c1", "claim_type": "plant_location", "artifact": "_shared/html/acme.html",
                    "span": "offset:812-871", "text": "x", "contradicts_claim_ids": []}],
        "fallback": {"cause": "no_result"}, "outcome": "claims"})
    assert record.calls[0].status == "ok" and record.fallback.cause == "no_result"
    with pytest.raises(ValidationError):
        RunRecord.model_validate({"case": "x", "provider": "p", "outcome": "maybe"})
