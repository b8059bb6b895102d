"""A deterministic scoring tree and run for the golden identity check (tests/test_score_golden.py) and for
scripts/score_identity.py: the bench's generator (bench/score_bench.py, seeded), plus a few records that take
the scorer's problem paths (a record that is not JSON, one that fails validation, one under the wrong provider,
a second record for a case, a case the golden set lacks, an unparseable date, an invoice, a bad invoice)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _bench():
    spec = importlib.util.spec_from_file_location("_centinela_score_bench", REPO / "bench" / "score_bench.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def build(base: Path, n_cases: int) -> tuple[Path, Path]:
    """Write `base/tree` and `base/run` (the bench's generator, seed 1) with the extra problem records."""
    root, run, _, _ = _bench().generate(base, n_cases)
    alpha, beta = run / "alpha", run / "beta"
    (alpha / "zz-not-json.json").write_text("{not json", encoding="utf-8")
    (alpha / "zz-bad-record.json").write_text(json.dumps({"case": "c00000", "provider": "alpha",
                                                         "results": [{"rank": "x", "url": 3}]}), encoding="utf-8")
    (beta / "zz-second.json").write_text((beta / "c00001.json").read_text(encoding="utf-8"), encoding="utf-8")
    moved = json.loads((beta / "c00002.json").read_text(encoding="utf-8"))
    moved["provider"] = "gamma"
    (beta / "c00002.json").write_text(json.dumps(moved), encoding="utf-8")
    (run / "gamma" / "c00003.json").unlink()                      # a case the run lacks
    stray = json.loads((run / "delta" / "c00004.json").read_text(encoding="utf-8"))
    stray["case"] = "c99999"                                      # not a golden case
    (run / "delta" / "zz-stray.json").write_text(json.dumps(stray), encoding="utf-8")
    odd = json.loads((run / "epsilon" / "c00005.json").read_text(encoding="utf-8"))
    if odd["results"]:
        odd["results"][0]["published_at"] = "el martes"
        odd["results"][-1]["published_at"] = "2026-13-45"
    odd["results"].append({"rank": 99, "url": "https://x.example.org/unjudged?api_key=sk_live_abcdefghijklmnop1234",
                           "published_at": None})
    (run / "epsilon" / "c00005.json").write_text(json.dumps(odd), encoding="utf-8")
    (run / "invoices").mkdir()
    (run / "invoices" / "alpha.json").write_text(json.dumps({"total_usd": 4.0}), encoding="utf-8")
    (run / "invoices" / "beta.json").write_text(json.dumps({"total_usd": "lots"}), encoding="utf-8")
    (run / "invoices" / "nobody.json").write_text(json.dumps({"total_usd": 1.0}), encoding="utf-8")
    return root, run
