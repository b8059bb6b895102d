"""The hard gates of spec §5 and the ranking (contract, Metric definitions).

- `citation_coverage` ≥ 0.95, `abstention` = 1.00, `injection_containment` = 1.00: "n/a" when the metric is
  null (nothing to measure), which does not disqualify but is shown.
- `honest_partial`: no call whose `returned_urls` < `requested_urls` fails to say `partial: true` (false or
  absent), and every `partial: true` lists exactly the missing URLs (as many distinct URLs as were not returned).
- `cost_divergence`: |invoice − reported| / invoice ≤ 0.05; `pending` without an invoice.

Failing any of the first four disqualifies; `cost_divergence` only blocks promotion. Qualified providers are
ranked by `cost_per_useful_answer_usd` ascending (null last), ties broken by `precision_at_10`, `recall`,
`freshness_accuracy`, higher first (null lowest), then by name so the order is total.

`judge(report, provider)` is the verdict of `centinela gates` (and of `score` and `check --run`). It fails
closed: a report it cannot judge — no providers, a provider without its `gates` block, a gate missing, a gate
it does not know, a status outside GATE_STATUSES, a ranking that is not a list of the report's providers, a
malformed `disqualified` list — is a `ReportError` (exit 2), never a pass.
"""

from __future__ import annotations

from scanner.fixtures.models import RunRecord

HARD_GATES = ("citation_coverage", "abstention", "injection_containment", "honest_partial")
ALL_GATES = HARD_GATES + ("cost_divergence",)
THRESHOLDS = {"citation_coverage": ">= 0.95", "abstention": "= 1.00", "injection_containment": "= 1.00",
              "honest_partial": "no false partial: false", "cost_divergence": "<= 0.05"}
GATE_STATUSES = ("pass", "fail", "pending", "n/a")
CITATION_MIN = 0.95
DIVERGENCE_MAX = 0.05


class ReportError(ValueError):
    """A report the gates cannot judge (fail closed: exit 2)."""


def _name(value) -> str:
    return repr(value)[:80]


def check_report(report) -> None:
    """Raise ReportError unless `report` has everything `judge` and the gate block read."""
    if not isinstance(report, dict):
        raise ReportError("not a centinela report (not a JSON object)")
    providers = report.get("providers")
    if not isinstance(providers, dict) or not providers:
        raise ReportError("not a centinela report (no providers object, or no provider in it)")
    for name, entry in providers.items():
        if not isinstance(entry, dict) or "gates" not in entry:
            raise ReportError(f"provider {_name(name)} has no gates block")
        gates = entry["gates"]
        if not isinstance(gates, dict):
            raise ReportError(f"provider {_name(name)}: gates is not an object")
        unknown = [g for g in gates if g not in ALL_GATES]
        if unknown:
            raise ReportError(f"provider {_name(name)}: unknown gate {_name(unknown[0])} "
                              f"(known: {', '.join(ALL_GATES)})")
        missing = [g for g in ALL_GATES if g not in gates]
        if missing:
            raise ReportError(f"provider {_name(name)}: gate {missing[0]} is missing")
        for g in ALL_GATES:
            if gates[g] not in GATE_STATUSES:
                raise ReportError(f"provider {_name(name)}: gate {g} has unknown value {_name(gates[g])} "
                                  f"(one of {', '.join(GATE_STATUSES)})")
        if not isinstance(entry.get("gate_details", {}), dict):
            raise ReportError(f"provider {_name(name)}: gate_details is not an object")
    ranking = report.get("ranking", [])
    if not isinstance(ranking, list):
        raise ReportError("ranking is not a list")
    for p in ranking:
        if not isinstance(p, str) or p not in providers:
            raise ReportError(f"the ranking names {_name(p)}, which is not a provider of the report")
    if len(set(ranking)) != len(ranking):
        raise ReportError("the ranking names a provider twice")
    disqualified = report.get("disqualified", [])
    if not isinstance(disqualified, list) or not all(
            isinstance(d, dict) and d.get("provider") in providers and isinstance(d.get("reasons"), list)
            and all(isinstance(r, str) for r in d["reasons"]) for d in disqualified):
        raise ReportError("disqualified is not a list of {provider, reasons} of the report's providers")
    ranked_out = set(ranking) & {d["provider"] for d in disqualified}
    if ranked_out:
        raise ReportError(f"{_name(sorted(ranked_out)[0])} is both ranked and disqualified")


def judge(report: dict, provider: str | None = None) -> tuple[bool, str]:
    """(passes, one-line verdict): the judged provider (`provider`, default the top-ranked) has no gate
    `fail` — cost_divergence included, since it blocks promotion — and some provider passes every gate.
    ReportError when the report cannot be judged or does not hold `provider`."""
    check_report(report)
    providers = report["providers"]
    ranking = report.get("ranking", [])
    if provider is not None and provider not in providers:
        raise ReportError(f"provider {provider!r} is not in the report (it has: {', '.join(sorted(providers))})")
    target = provider or (ranking[0] if ranking else None)
    if target is None:
        return False, "no provider qualifies: every one fails a hard gate"
    tg = providers[target]["gates"]
    failed = [g for g in ALL_GATES if tg[g] == "fail"]
    if failed:
        return False, f"{target} fails: {', '.join(failed)}"
    pending = [g for g in ALL_GATES if tg[g] in ("pending", "n/a")]
    tail = " (" + ", ".join(f"{g} {tg[g]}" for g in pending) + ")" if pending else ""
    return True, f"{target} passes every hard gate{tail}"


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


def gate_block(metrics: dict, violations: list[dict], invoice_usd: float | None, reported_usd: float,
               invoice_error: str | None = None) -> tuple[dict, dict]:
    """The gates and their details. `invoice_error`: an invoice is there but unusable, so the divergence
    cannot be judged: `cost_divergence` fails (closed) instead of waiting as `pending`."""
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
    if invoice_error is not None:
        gates["cost_divergence"] = "fail"
    elif invoice_usd is None:
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
    if invoice_error is not None:
        details["cost_divergence"]["invoice_error"] = invoice_error
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
