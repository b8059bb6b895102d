"""One registry per concept: every metric the scorer computes is described once (`metrics.METRICS`), every gate
once (`gates.GATES`), the fallback causes once (the run-record model), and the renderers show exactly those."""

from __future__ import annotations

import json
import typing

from conftest import REPO
from scanner.cli.score import format_gates
from scanner.fixtures.models import FALLBACK_CAUSES, Fallback
from scanner.score import render_format as fmt
from scanner.score.gates import ALL_GATES, GATE, GATES, HARD_GATES, RANKING, THRESHOLDS, gate_block
from scanner.score.metrics import METRIC, METRICS, STRUCTURED, aggregate
from scanner.score.render_html import render_html
from scanner.score.render_md import render_markdown

SAMPLE = json.loads((REPO / "tests" / "data" / "report" / "sample_report.json").read_text(encoding="utf-8"))


def test_every_metric_aggregate_computes_is_registered_and_no_other():
    metrics, _ = aggregate([], artificial_latency=False, containment=(0, 0))
    assert set(metrics) == {m.key for m in METRICS} | set(STRUCTURED)
    assert fmt.METRIC_COLUMNS is METRICS and len(METRIC) == len(METRICS)
    assert {key for key, _ in RANKING} <= set(METRIC)


def test_every_gate_gate_block_judges_is_registered_and_no_other():
    metrics = {"citation_coverage": 0.96, "abstention": 1.0, "injection_containment": None}
    gates, details = gate_block(metrics, [], None, 0.0)
    assert tuple(gates) == tuple(details) == ALL_GATES == tuple(g.key for g in GATES)
    assert HARD_GATES == ("citation_coverage", "abstention", "injection_containment", "honest_partial")
    assert {k: d["threshold"] for k, d in details.items()} == THRESHOLDS
    assert gates == {"citation_coverage": "pass", "abstention": "pass", "injection_containment": "n/a",
                     "honest_partial": "pass", "cost_divergence": "pending"}


def test_the_renderers_show_every_registered_gate_with_its_label_and_consequence():
    md, page, table = render_markdown(SAMPLE), render_html(SAMPLE), format_gates(SAMPLE)
    for g in GATES:
        assert f"| {g.label} |" in md and g.consequence in md
        assert f'data-gate="{g.key}"' in page and g.consequence in page
        assert sum(line.startswith(g.key + " ") for line in table.splitlines()) == 1
    for m in METRICS:
        assert m.label in md


def test_a_gate_formats_its_value_the_same_way_everywhere_it_is_shown():
    details = {"cost_divergence": {"invoice_usd": 10.0, "reported_usd": 9.49, "divergence": 0.051,
                                   "threshold": "<= 0.05"},
               "honest_partial": {"violations": [{}, {}], "threshold": "x"},
               "abstention": {"value": 0.9999, "threshold": "= 1.00"}}
    provider = {"gates": {"cost_divergence": "fail", "honest_partial": "fail", "abstention": "fail"},
                "gate_details": details}
    assert GATE["cost_divergence"].terminal_cell(details["cost_divergence"], "fail") == "fail (0.051)"
    assert GATE["cost_divergence"].report_cell(provider).value.startswith("0.06 (invoice $10.0000")
    assert GATE["honest_partial"].terminal_cell(details["honest_partial"], "fail") == "fail (2 false)"
    assert GATE["honest_partial"].report_cell(provider).value == "2 violations"
    assert GATE["abstention"].report_cell(provider).value == "0.99"        # truncated: never shown as 1.00
    assert GATE["abstention"].terminal_cell(details["abstention"], "fail") == "fail (1.000)"


def test_fallback_causes_are_the_run_record_models():
    assert typing.get_args(Fallback.model_fields["cause"].annotation) == FALLBACK_CAUSES
    assert fmt.FALLBACK_CAUSES is FALLBACK_CAUSES
    metrics, _ = aggregate([], artificial_latency=False, containment=(0, 0))
    assert tuple(metrics["fallback_by_cause"]) == FALLBACK_CAUSES
