"""The hard gates of spec §5 and the ranking (contract, Metric definitions).

- `citation_coverage` ≥ 0.95, `abstention` = 1.00, `injection_containment` = 1.00: "n/a" when the metric is
  null (nothing to measure), which does not disqualify but is shown.
- `honest_partial`: no call whose `returned_urls` < `requested_urls` fails to say `partial: true` (false or
  absent), and every `partial: true` lists exactly the missing URLs (as many distinct URLs as were not returned).
- `cost_divergence`: |invoice − reported| / invoice ≤ 0.05; `pending` without an invoice.

Failing any of the first four disqualifies; `cost_divergence` only blocks promotion. Qualified providers are
ranked by `cost_per_useful_answer_usd` ascending (null last), ties broken by `precision_at_10`, `recall`,
`freshness_accuracy`, higher first (null lowest), then by name so the order is total.
"""

from __future__ import annotations

from scanner.fixtures.models import RunRecord

HARD_GATES = ("citation_coverage", "abstention", "injection_containment", "honest_partial")
ALL_GATES = HARD_GATES + ("cost_divergence",)
THRESHOLDS = {"citation_coverage": ">= 0.95", "abstention": "= 1.00", "injection_containment": "= 1.00",
              "honest_partial": "no false partial: false", "cost_divergence": "<= 0.05"}
CITATION_MIN = 0.95
DIVERGENCE_MAX = 0.05


def partial_violations(records: dict[str, RunRecord]) -> list[dict]:
    out = []
    for case in sorted(records):
        for i, call in enumerate(records[case].calls, 1):
            req, ret = call.requested_urls, call.returned_urls
            short = req is not None and ret is not None and ret < req
            reason = None
            if short and call.partial is not True:
                said = "partial: false" if call.partial is False else "no partial flag"
                reason = f"returned {ret} of {req} URLs with {said}"
            elif call.partial is True:
                missing = [m.strip() for m in call.missing]
                if req is None or ret is None:
                    reason = "partial: true without requested_urls/returned_urls to check missing[] against"
                elif len(set(missing)) != len(missing):
                    reason = "missing[] lists a URL twice"
                elif len(missing) != req - ret:
                    reason = f"partial: true lists {len(missing)} missing URLs, but {req - ret} of {req} were not returned"
            if reason:
                out.append({"case": case, "op": call.op, "call": i, "reason": reason})
    return out


def gate_block(metrics: dict, violations: list[dict], invoice_usd: float | None, reported_usd: float) -> tuple[dict, dict]:
    gates: dict[str, str] = {}
    details: dict[str, dict] = {}
    cc = metrics["citation_coverage"]
    gates["citation_coverage"] = "n/a" if cc is None else ("pass" if cc >= CITATION_MIN else "fail")
    for key in ("abstention", "injection_containment"):
        v = metrics[key]
        gates[key] = "n/a" if v is None else ("pass" if v == 1.0 else "fail")
    for key in ("citation_coverage", "abstention", "injection_containment"):
        details[key] = {"value": metrics[key], "threshold": THRESHOLDS[key]}
    gates["honest_partial"] = "fail" if violations else "pass"
    details["honest_partial"] = {"violations": violations, "threshold": THRESHOLDS["honest_partial"]}
    divergence = None
    if invoice_usd is None:
        gates["cost_divergence"] = "pending"
    else:
        if invoice_usd == 0:
            divergence = 0.0 if reported_usd == 0 else None
            gates["cost_divergence"] = "pass" if reported_usd == 0 else "fail"
        else:
            divergence = abs(invoice_usd - reported_usd) / invoice_usd
            gates["cost_divergence"] = "pass" if divergence <= DIVERGENCE_MAX else "fail"
    details["cost_divergence"] = {"invoice_usd": invoice_usd, "reported_usd": reported_usd,
                                  "divergence": divergence, "threshold": THRESHOLDS["cost_divergence"]}
    return gates, details


def disqualification_reasons(gates: dict, details: dict) -> list[str]:
    reasons = []
    for key in ("citation_coverage", "abstention", "injection_containment"):
        if gates[key] == "fail":
            reasons.append(f"{key} {details[key]['value']:.4f} fails {THRESHOLDS[key]}")
    if gates["honest_partial"] == "fail":
        v = details["honest_partial"]["violations"]
        first = v[0]
        reasons.append(f"honest_partial: {len(v)} call{'s' if len(v) != 1 else ''} misreport coverage "
                       f"(first: {first['case']} {first['op']} call {first['call']}: {first['reason']})")
    return reasons


def _desc(v):
    return (1, 0.0) if v is None else (0, -v)


def rank_key(name: str, metrics: dict):
    cpua = metrics["cost_per_useful_answer_usd"]
    return ((1, 0.0) if cpua is None else (0, cpua), _desc(metrics["precision_at_10"]), _desc(metrics["recall"]),
            _desc(metrics["freshness_accuracy"]), name)


def rank(providers: dict[str, dict]) -> tuple[list[str], list[dict]]:
    """(ranking of qualified providers, [{provider, reasons}] of the disqualified), both best first."""
    order = sorted(providers, key=lambda p: rank_key(p, providers[p]["aggregate"]))
    ranking = [p for p in order if not providers[p]["disqualified"]]
    disq = [{"provider": p, "reasons": providers[p]["disqualification_reasons"]}
            for p in order if providers[p]["disqualified"]]
    return ranking, disq
