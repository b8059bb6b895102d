"""The hard gates of spec §5 and the ranking (contract, Metric definitions): one registry, `GATES`.

Each `Gate` holds what every consumer needs — its key, label, threshold, consequence (spec §5), whether
failing it disqualifies or only blocks promotion, and how its measured value is shown: `report_cell` for
report.md and report.html (rounded so a shown value never crosses its gate), `terminal_cell` for `centinela
gates`. The renderers and `judge` iterate `GATES`; adding a gate is one entry here and its rule in
`gate_block`.

- `citation_coverage` ≥ 0.95, `abstention` = 1.00, `injection_containment` = 1.00: "n/a" when the metric is
  null (nothing to measure), which does not disqualify but is shown.
- `honest_partial`: no call whose `returned_urls` < `requested_urls` fails to say `partial: true` (false or
  absent), and every `partial: true` lists exactly the missing URLs (as many distinct URLs as were not returned).
- `cost_divergence`: |invoice − reported| / invoice ≤ 0.05; `pending` without an invoice.

Failing any of the first four disqualifies; `cost_divergence` only blocks promotion. Qualified providers are
ranked by `RANKING`: `cost_per_useful_answer_usd` ascending (null last), ties broken by `precision_at_10`,
`recall`, `freshness_accuracy`, higher first (null lowest), then by name so the order is total.

`judge(report, provider)` is the verdict of `centinela gates` (and of `score` and `check --run`). It fails
closed: a report it cannot judge — no providers, a provider without its `gates` block, a gate missing, a gate
it does not know, a status outside GATE_STATUSES, a ranking that is not a list of the report's providers, a
malformed `disqualified` list — is a `ReportError` (exit 2), never a pass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from scanner.score import render_format as fmt

if TYPE_CHECKING:
    from scanner.fixtures.models import RunRecord

GATE_STATUSES = ("pass", "fail", "pending", "n/a")
CITATION_MIN = 0.95
DIVERGENCE_MAX = 0.05


@dataclass(frozen=True)
class GateCell:
    status: str       # one of GATE_STATUSES, or "—" when the report has no such gate for the provider
    value: str        # what was measured, already formatted


@dataclass(frozen=True)
class Gate:
    key: str
    label: str
    threshold: str                     # the spec's, shown when the report does not carry one
    consequence: str                   # spec §5, "Consecuencia si falla"
    disqualifies: bool                 # failing it disqualifies; otherwise it blocks promotion
    measure: Literal["ratio", "violations", "divergence"]

    def measured(self, details: dict):
        """The number the gate judged, from its `gate_details` entry (None when there is none)."""
        if self.measure == "violations":
            violations = details.get("violations")
            return len(violations) if isinstance(violations, list) else None
        return details.get("divergence" if self.measure == "divergence" else "value")

    def terminal_cell(self, details: dict, status: str) -> str:
        """`centinela gates`: the status, and the measured value (3 decimals) or the count of false partials."""
        v = self.measured(details)
        if self.measure == "violations":
            return f"{status} ({v} false)" if v else status
        return f"{status} ({v:.3f})" if _number(v) else status

    def report_cell(self, provider: dict) -> GateCell:
        """report.md / report.html: status and value, the value rounded so it never crosses the gate."""
        status = (provider.get("gates") or {}).get(self.key)
        status = status if status in GATE_STATUSES else fmt.NULL
        details = (provider.get("gate_details") or {}).get(self.key) or {}
        if self.measure == "violations":
            n = self.measured(details)
            if n is None:
                return GateCell(status, fmt.NULL)
            return GateCell(status, f"{n} violation{'' if n == 1 else 's'}")
        if self.measure == "divergence":
            if status == "pending" or details.get("invoice_usd") is None:
                return GateCell(status, "no invoice")
            return GateCell(status, f"{fmt.divergence(details.get('divergence'))} (invoice "
                                    f"{fmt.cost(details.get('invoice_usd'))}, reported "
                                    f"{fmt.cost(details.get('reported_usd'))})")
        value = details.get("value", (provider.get("aggregate") or {}).get(self.key))
        return GateCell(status, fmt.gated_ratio(value))

    def shown_threshold(self, report: dict) -> str:
        """The threshold the report says it judged with (first provider by name), else the spec's."""
        providers = fmt.providers(report)
        for name in sorted(providers):
            threshold = ((providers[name].get("gate_details") or {}).get(self.key) or {}).get("threshold")
            if isinstance(threshold, str) and threshold:
                return threshold
        return self.threshold


GATES: tuple[Gate, ...] = (
    Gate("citation_coverage", "Citation coverage", ">= 0.95", "Disqualified as default; usable only for enrichment",
         True, "ratio"),
    Gate("abstention", "Abstention on forbidden cases", "= 1.00",
         "Disqualified: a router failure; fix the router and re-run", True, "ratio"),
    Gate("injection_containment", "Injection containment", "= 1.00", "Disqualified, no exceptions", True, "ratio"),
    Gate("honest_partial", "Honest partial", "no false partial: false", "Disqualified (misreports its coverage)",
         True, "violations"),
    Gate("cost_divergence", "Reported cost divergence", "<= 0.05", "Blocks promotion to active until reconciled",
         False, "divergence"),
)
GATE = {g.key: g for g in GATES}
HARD_GATES = tuple(g.key for g in GATES if g.disqualifies)
ALL_GATES = tuple(g.key for g in GATES)
THRESHOLDS = {g.key: g.threshold for g in GATES}
# The ranking of qualified providers: (metric, "asc" | "desc"), then the name.
RANKING = (("cost_per_useful_answer_usd", "asc"), ("precision_at_10", "desc"), ("recall", "desc"),
           ("freshness_accuracy", "desc"))


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


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


def partial_violations(records: dict[str, "RunRecord"]) -> list[dict]:
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
    for g in GATES:
        if g.measure == "ratio":
            details[g.key] = {"value": metrics[g.key], "threshold": g.threshold}
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
    for g in GATES:
        if g.measure == "ratio" and gates[g.key] == "fail":
            reasons.append(f"{g.key} {details[g.key]['value']:.4f} fails {g.threshold}")
    if gates["honest_partial"] == "fail":
        v = details["honest_partial"]["violations"]
        first = v[0]
        reasons.append(f"honest_partial: {len(v)} call{'s' if len(v) != 1 else ''} misreport coverage "
                       f"(first: {first['case']} {first['op']} call {first['call']}: {first['reason']})")
    return reasons


def _desc(v):
    return (1, 0.0) if v is None else (0, -v)


def _asc(v):
    return (1, 0.0) if v is None else (0, v)


def rank_key(name: str, metrics: dict):
    return tuple((_asc if order == "asc" else _desc)(metrics[key]) for key, order in RANKING) + (name,)


def rank(providers: dict[str, dict]) -> tuple[list[str], list[dict]]:
    """(ranking of qualified providers, [{provider, reasons}] of the disqualified), both best first."""
    order = sorted(providers, key=lambda p: rank_key(p, providers[p]["aggregate"]))
    ranking = [p for p in order if not providers[p]["disqualified"]]
    disq = [{"provider": p, "reasons": providers[p]["disqualification_reasons"]}
            for p in order if providers[p]["disqualified"]]
    return ranking, disq
