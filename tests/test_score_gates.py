"""Latency percentiles, the honest-partial and cost gates, ranking ties, and `centinela gates` exit codes."""

from __future__ import annotations

import json

import pytest

from scanner.fixtures.models import RunRecord
from scanner.score.gates import gate_block, partial_violations, rank
from scanner.score.latency import nearest_rank, p95_reliability
from scanner.cli import main


@pytest.mark.parametrize("n,p95", [(20, 19), (30, 29), (100, 95), (1, 1), (59, 57), (60, 57), (101, 96)])
def test_nearest_rank_p95_on_1_to_n(n, p95):
    # ceil(0.95 n)-th order statistic (research notes: 20 → 19, 30 → 29, 100 → 95)
    assert nearest_rank(list(range(1, n + 1)), 95) == p95


def test_nearest_rank_p50_and_ties():
    assert nearest_rank([5, 1, 3, 3], 50) == 3
    assert nearest_rank([7, 7, 7], 95) == 7
    assert nearest_rank([], 50) is None
    assert nearest_rank([10, 20], 50) == 10          # ceil(0.5·2) = 1st


def test_p95_reliability_floors():
    assert [p95_reliability(n) for n in (0, 59, 60, 99, 100)] == ["too_few", "too_few", "low_n", "low_n", "ok"]


def _rec(*calls):
    return RunRecord.model_validate({"case": "c", "provider": "p", "outcome": "claims", "calls": list(calls)})


@pytest.mark.parametrize("call,reason", [
    ({"op": "extract", "requested_urls": 10, "returned_urls": 6, "partial": False}, "with partial: false"),
    ({"op": "extract", "requested_urls": 10, "returned_urls": 6}, "with no partial flag"),
    ({"op": "extract", "requested_urls": 10, "returned_urls": 6, "partial": True, "missing": ["a", "b", "c"]},
     "lists 3 missing URLs, but 4"),
    ({"op": "extract", "requested_urls": 10, "returned_urls": 8, "partial": True, "missing": ["a", "a"]}, "twice"),
    ({"op": "extract", "partial": True, "missing": ["a"]}, "without requested_urls"),
])
def test_dishonest_partial(call, reason):
    v = partial_violations({"c": _rec(call)})
    assert len(v) == 1 and reason in v[0]["reason"]


@pytest.mark.parametrize("call", [
    {"op": "extract", "requested_urls": 10, "returned_urls": 6, "partial": True, "missing": list("abcd")},
    {"op": "extract", "requested_urls": 10, "returned_urls": 10, "partial": False},
    {"op": "search", "requested_urls": None, "returned_urls": 7, "partial": False},
])
def test_honest_partial(call):
    assert partial_violations({"c": _rec(call)}) == []


def _metrics(**kw):
    base = {"citation_coverage": 0.95, "abstention": 1.0, "injection_containment": 1.0}
    return {**base, **kw}


def test_gate_thresholds_are_inclusive_and_null_is_na():
    g, _ = gate_block(_metrics(), [], 100.0, 105.0)
    assert g == {"citation_coverage": "pass", "abstention": "pass", "injection_containment": "pass",
                 "honest_partial": "pass", "cost_divergence": "pass"}          # 0.95 and 5 % are inside
    g, d = gate_block(_metrics(citation_coverage=0.9499, abstention=0.9), [], 100.0, 105.01)
    assert g["citation_coverage"] == "fail" and g["abstention"] == "fail" and g["cost_divergence"] == "fail"
    g, d = gate_block(_metrics(citation_coverage=None, abstention=None, injection_containment=None), [], None, 1.0)
    assert g["citation_coverage"] == g["abstention"] == g["injection_containment"] == "n/a"
    assert g["cost_divergence"] == "pending" and d["cost_divergence"]["divergence"] is None
    g, d = gate_block(_metrics(), [], 0.0, 0.0)
    assert g["cost_divergence"] == "pass"


def _prov(cpua, p10=None, recall=None, fa=None, disq=False):
    return {"aggregate": {"cost_per_useful_answer_usd": cpua, "precision_at_10": p10, "recall": recall,
                          "freshness_accuracy": fa},
            "disqualified": disq, "disqualification_reasons": ["x"] if disq else []}


def test_ranking_order_and_tie_breaks():
    providers = {
        "a": _prov(0.02, 0.5, 0.5, 0.9),
        "b": _prov(0.02, 0.6, 0.1, 0.1),     # same cost, better P@10 → before a
        "c": _prov(0.02, 0.5, 0.7, 0.1),     # same cost and P@10 as a, better recall → before a
        "d": _prov(0.01, 0.0, 0.0, 0.0, disq=True),
        "e": _prov(None, 0.9, 0.9, 0.9),     # no useful answer: last of the qualified
        "f": _prov(0.02, 0.5, 0.7, None),    # as c but no freshness accuracy: after c
    }
    ranking, disq = rank(providers)
    assert ranking == ["b", "c", "f", "a", "e"]
    assert disq == [{"provider": "d", "reasons": ["x"]}]


def _report(tmp_path, gates_by_provider, ranking):
    rep = {"providers": {p: {"gates": g, "disqualified": any(g[k] == "fail" for k in list(g)[:4]),
                             "disqualification_reasons": []} for p, g in gates_by_provider.items()},
           "ranking": ranking, "disqualified": []}
    path = tmp_path / "report.json"
    path.write_text(json.dumps(rep))
    return path


PASS = {"citation_coverage": "pass", "abstention": "pass", "injection_containment": "pass",
        "honest_partial": "pass", "cost_divergence": "pending"}


def _exit(argv):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    return exc.value.code


def test_gates_command_exit_codes(tmp_path, capsys):
    ok = _report(tmp_path, {"a": PASS, "b": {**PASS, "abstention": "fail"}}, ["a"])
    assert _exit(["gates", str(ok)]) == 0
    assert "a passes every hard gate (cost_divergence pending)" in capsys.readouterr().out
    assert _exit(["gates", str(ok), "--provider", "b"]) == 1
    assert "b fails: abstention" in capsys.readouterr().out
    assert _exit(["gates", str(ok), "--provider", "zzz"]) == 2
    assert "not in the report" in capsys.readouterr().err
    none = _report(tmp_path, {"a": {**PASS, "honest_partial": "fail"}}, [])
    assert _exit(["gates", str(none)]) == 1
    blocked = _report(tmp_path, {"a": {**PASS, "cost_divergence": "fail"}}, ["a"])
    assert _exit(["gates", str(blocked)]) == 1        # promotion blocked
    assert _exit(["gates", str(tmp_path / "missing.json")]) == 2
    (tmp_path / "bad.json").write_text("{nope")
    assert _exit(["gates", str(tmp_path / "bad.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("centinela: error:") and "bad.json" in err[-1]
