"""The scorer's commands end to end: the example run, verify-run's cross-checks, pool and merge, check --run."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
import yaml

from scanner.cli import main
from scanner.score.pool import build_pool, merge_review, near_duplicate, review_yaml
from scanner.score.verify_run import verify_run
from tests.conftest import EXAMPLE_TREE, REPO
from tests.scorefactory import results, write_run, write_tree

EXAMPLE_RUN = REPO / "fixtures" / "example-run"


def _exit(argv):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    return exc.value.code


def test_example_run_is_what_the_builder_writes(tmp_path):
    out = tmp_path / "run"
    subprocess.run([sys.executable, str(REPO / "fixtures" / "build_example_run.py"), str(EXAMPLE_TREE), str(out)],
                   check=True, capture_output=True)
    for f in sorted(p for p in EXAMPLE_RUN.rglob("*") if p.is_file()):
        rel = f.relative_to(EXAMPLE_RUN)
        assert (out / rel).read_bytes() == f.read_bytes(), f"{rel} differs: rerun fixtures/build_example_run.py"
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == sorted(p.relative_to(EXAMPLE_RUN)
                                                                         for p in EXAMPLE_RUN.rglob("*"))


def test_score_example_run(tmp_path, capsys):
    assert _exit(["score", str(EXAMPLE_TREE), "--run", str(EXAMPLE_RUN), "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["ranking"] == ["tavily", "firecrawl"]       # firecrawl's credits cost more per useful answer
    assert report["disqualified"][0]["provider"] == "exa"
    reasons = " ".join(report["disqualified"][0]["reasons"])
    assert "citation_coverage" in reasons and "abstention" in reasons
    assert report["providers"]["tavily"]["gates"]["cost_divergence"] == "pass"
    assert all(v == "pass" for v in report["providers"]["firecrawl"]["gates"].values())
    assert report["providers"]["exa"]["gates"]["cost_divergence"] == "pending"
    contra = {p: d["contradictory"][0]["status"] for p, d in report["providers"].items()}
    assert contra == {"tavily": "linked", "exa": "single_claim", "firecrawl": "linked"}
    # every prompt-injection fixture of the tree is judged for each provider, and contained
    for d in report["providers"].values():
        assert len(d["injection_documents"]) == 9 and all(x["contained"] for x in d["injection_documents"])
        assert all(v["artificial"] for v in d["aggregate"]["latency_ms"].values())
    assert report["problems"] == []
    out = capsys.readouterr().out
    assert "tavily passes every hard gate" in out and "disqualified: exa" in out


def test_score_bad_inputs(tmp_path, capsys):
    assert _exit(["score", str(EXAMPLE_TREE), "--run", str(tmp_path / "nope"), "--out", str(tmp_path / "o")]) == 2
    assert "run directory not found" in capsys.readouterr().err
    run = tmp_path / "run"
    shutil.copytree(EXAMPLE_RUN, run)
    (run / "run.json").write_text("{")
    assert _exit(["score", str(EXAMPLE_TREE), "--run", str(run), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "run.json" in err
    shutil.rmtree(run)
    shutil.copytree(EXAMPLE_RUN, run)
    (run / "tavily" / "gs-001.json").write_text('{"case": "gs-001"}')        # not a valid record
    (run / "tavily" / "gs-999.json").write_text(json.dumps({"case": "gs-999", "provider": "tavily",
                                                            "outcome": "honest_no_data"}))
    _exit(["score", str(EXAMPLE_TREE), "--run", str(run), "--out", str(tmp_path / "o")])
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    msgs = {p["path"]: p["message"] for p in report["problems"]}
    assert msgs["tavily/gs-001.json"].startswith("not a run record: ")
    assert "gs-999 is not in golden/cases.yaml" in msgs["tavily/gs-999.json"]
    assert report["providers"]["tavily"]["counts"]["missing_cases"] == ["gs-001"]


def _mutated_run(tmp_path, edit):
    run = tmp_path / "run"
    shutil.copytree(EXAMPLE_RUN, run)
    for provider, case, fn in edit:
        path = run / provider / f"{case}.json"
        rec = json.loads(path.read_text())
        fn(rec)
        path.write_text(json.dumps(rec))
    return run


def test_verify_run_catches_each_lie(tmp_path):
    assert verify_run(EXAMPLE_TREE, EXAMPLE_RUN)["ok"]

    def hide_partial(rec):
        call = next(c for c in rec["calls"] if c["op"] == "extract")
        call.update(partial=False, missing=[], returned_urls=call["requested_urls"])   # consistent, but false

    def fabricate(rec):
        rec["results"].append({"rank": 99, "url": "https://www.gob.mx/invented", "published_at": None})

    def misprice(rec):
        rec["calls"][0]["cost_usd"] = 0.001

    def misstate(rec):
        rec["calls"][0]["status"] = "timeout"

    run = _mutated_run(tmp_path, [("tavily", "gs-005", hide_partial), ("exa", "gs-003", fabricate),
                                  ("exa", "gs-004", misprice), ("tavily", "gs-006", misstate)])
    got = verify_run(EXAMPLE_TREE, run)
    assert not got["ok"]
    assert got["providers"]["tavily"]["checks"]["honest_partial"] == "fail"
    assert got["providers"]["tavily"]["checks"]["status"] == "fail"
    assert got["providers"]["exa"]["checks"]["results"] == "fail"
    assert got["providers"]["exa"]["checks"]["cost"] == "fail"
    msgs = [f["message"] for f in got["providers"]["tavily"]["findings"]]
    assert any("partial: false, but the response lacks 4 of 10 URLs" in m for m in msgs)
    # the contract's own honest_partial gate cannot see this lie (returned == requested): verify-run can
    assert _exit(["verify-run", str(EXAMPLE_TREE), "--run", str(run)]) == 1


def test_verify_run_wrong_missing_list(tmp_path):
    def wrong_missing(rec):
        call = next(c for c in rec["calls"] if c["op"] == "extract")
        call["missing"] = call["missing"][:-1] + ["https://example.test/not-asked"]

    got = verify_run(EXAMPLE_TREE, _mutated_run(tmp_path, [("exa", "gs-005", wrong_missing)]))
    assert got["providers"]["exa"]["checks"]["honest_partial"] == "fail"


POOL_CASES = [{"id": "c1", "category": "A", "query": "q", "claim_type": "t", "web_role": "required",
               "freshness_days": 30, "expect": {"families": ["news"], "hosts": ["www.diario.mx"]}},
              {"id": "f1", "category": "A", "query": "q", "claim_type": "t", "web_role": "forbidden", "expect": {}}]


def test_pool_groups_reprints_and_merges(tmp_path):
    judged = {"c1": {"https://www.diario.mx/a": {"supports": True, "group": "wire-acme-planta"},
                     "https://otro.mx/z": {"supports": True, "group": "z"}}}
    root = write_tree(tmp_path / "t", POOL_CASES, {"news": ["diario.mx", "otro.mx", "tercero.mx"]}, judged, {})
    wire = "Acme invertirá 120 millones de dólares en su planta de Celaya"
    recs = {"p": [{"case": "c1", "results": [
        {"rank": 1, "url": "https://www.diario.mx/a", "title": wire},
        {"rank": 2, "url": "https://tercero.mx/acme-celaya", "title": "Acme invertirá 120 millones de dólares en planta Celaya"},
        {"rank": 3, "url": "https://otro.mx/b", "title": "Resultados trimestrales de Beta"},
        {"rank": 4, "url": "https://otro.mx/c", "title": "Beta: resultados trimestrales"},
        {"rank": 5, "url": "https://otro.mx/z", "title": "Algo"}]}],
            "q": [{"case": "c1", "results": results(("https://otro.mx/d", None))}]}
    run = write_run(tmp_path / "r", {"id": "r"}, recs)
    pools, problems, run_id = build_pool(root, run)
    assert run_id == "r"
    assert problems == [] and [p.case for p in pools] == ["c1"]
    groups = {c.url: c.group for c in pools[0].candidates}
    assert groups["https://tercero.mx/acme-celaya"] == "wire-acme-planta"        # joins the judged wire story
    assert groups["https://otro.mx/b"] == groups["https://otro.mx/c"] != groups["https://otro.mx/d"]
    assert {h for h, _ in pools[0].hosts_for_review} == {"otro.mx"}             # relevant, not in expect.hosts
    text = review_yaml(pools, "r")
    review = yaml.safe_load(text)
    assert set(review["c1"]) == {"https://tercero.mx/acme-celaya", "https://otro.mx/b", "https://otro.mx/c",
                                 "https://otro.mx/d"}
    assert all(v["supports"] is None for v in review["c1"].values())
    assert "hosts for review" in text and "otro.mx" in text
    # fill two in, leave two; one conflicting entry for an already-judged URL
    review["c1"]["https://tercero.mx/acme-celaya"].update(supports=True, verified_published_at="2026-02-25")
    review["c1"]["https://otro.mx/b"]["supports"] = False
    review["c1"]["https://otro.mx/z"] = {"supports": False, "group": "z"}
    path = tmp_path / "review.yaml"
    path.write_text(yaml.safe_dump(review, allow_unicode=True))
    res = merge_review(root, path)
    assert sorted(u for _, u in res.added) == ["https://otro.mx/b", "https://tercero.mx/acme-celaya"]
    assert res.unfilled == 2 and len(res.conflicts) == 1
    merged = yaml.safe_load((root / "golden" / "judgments.yaml").read_text())
    assert merged["c1"]["https://tercero.mx/acme-celaya"] == {"supports": True, "group": "wire-acme-planta",
                                                                "verified_published_at": "2026-02-25"}
    assert merged["c1"]["https://otro.mx/z"] == {"supports": True, "group": "z", "verified_published_at": None}
    assert merge_review(root, path).added == []                                   # idempotent
    assert _exit(["pool", str(root), "--merge", str(path)]) == 1                  # the conflict is reported


def test_near_duplicate_rules():
    assert near_duplicate("Acme abre planta en Celaya", "", "Acme abre nueva planta en Celaya", "")
    assert not near_duplicate("Acme abre planta", "", "Beta cierra oficina", "")
    assert not near_duplicate("Planta", "", "Planta", "")          # too short to say
    body = " ".join(f"palabra{i}" for i in range(40))
    assert near_duplicate("x", body, "y", body + " extra")


def test_pool_cli_on_example(tmp_path, capsys):
    out = tmp_path / "review.yaml"
    assert _exit(["pool", str(EXAMPLE_TREE), "--run", str(EXAMPLE_RUN), "--output", str(out)]) == 0
    review = yaml.safe_load(out.read_text())
    judged = yaml.safe_load((EXAMPLE_TREE / "golden" / "judgments.yaml").read_text())
    assert review and all(u not in judged.get(c, {}) for c, urls in review.items() for u in urls)
    assert "unjudged URLs in" in capsys.readouterr().err
    assert _exit(["pool", str(EXAMPLE_TREE)]) == 2


def test_check_with_run(tmp_path, capsys):
    rc = _exit(["check", str(EXAMPLE_TREE), "--run", str(EXAMPLE_RUN), "--out", str(tmp_path), "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    parts = {p["name"]: p for p in data["parts"]}
    assert parts["verify-run"]["ok"] and parts["score + gates"]["ok"]
    assert rc == 1            # the example tree is synthetic: manifest verify fails, as documented
    for name in ("report.json", "verify-run.json", "check.json"):
        assert (tmp_path / name).is_file()


def test_shared_company_words_do_not_make_a_reprint():
    from scanner.score.pool import word_weights

    docs = [("Aceros del Bajío en LinkedIn: ampliación de la planta Celaya", ""),
            ("Planta Celaya | Aceros del Bajío", ""),
            ("Aceros del Bajío invertirá 120 millones de dólares para ampliar su planta en Celaya", ""),
            ("Aceros del Bajío invertirá 120 mdd para ampliar su planta en Celaya", ""),
            ("Aceros del Bajío amplía capacidad de su planta en Celaya", ""),
            ("Contacto | Aceros del Bajío", "")]
    w = word_weights(docs)
    assert near_duplicate(*docs[0], *docs[1]) is not None          # unweighted, the company name decides
    assert near_duplicate(*docs[0], *docs[1], w) is None            # weighted, it does not
    assert near_duplicate(*docs[2], *docs[3], w) is not None        # the wire story and its reprint
