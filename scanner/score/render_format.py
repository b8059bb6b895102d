"""What report.md and report.html share: how a value is written, which columns and gates there are, in which
order providers and categories appear. The renderers only lay these out, as Markdown or as HTML.

Numbers, everywhere in both reports:

* A null metric (empty denominator) is "—", never 0.
* Ratios are 0.00–1.00 with two decimals, rounded half up (2/3 is 0.67). The three gated ratios (citation
  coverage, abstention, containment) are instead truncated, and the cost divergence rounded up, so that a
  shown value never crosses its gate: a shown 1.00 abstention is exactly 1, a shown 0.95 coverage passes, a
  shown 0.05 divergence passes. Decimal arithmetic from the float's shortest repr, so 0.29 stays 0.29.
* Costs are USD with four decimals; a positive cost below half a hundredth of a cent is "<$0.0001", not $0.0000.
* A value that is not a finite number (a hand-edited report.json) is "—" too; any finite magnitude prints.
* Latencies are whole milliseconds. A p95 over fewer than 60 calls is not printed (spec §4.5: "una p95 sobre 30
  llamadas no es una p95"); over 60 to 99 calls it is marked low-n; replay latencies are marked artificial.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_UP, Context, Decimal

NULL = "—"
P95_OK_N = 100
P95_PRINT_N = 60
FALLBACK_CAUSES = ("no_result", "error", "low_confidence", "budget")
_CENT_HUNDREDTH = Decimal("0.0001")
_TWO = Decimal("0.01")


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    kind: str          # "ratio" | "gated_ratio" (truncated: never shown across its gate) | "cost"
    title: str         # what the column means, for a tooltip or a legend


METRIC_COLUMNS: tuple[Column, ...] = (
    Column("precision_at_5", "P@5", "ratio", "relevant results among the first 5, divided by 5; macro mean"),
    Column("precision_at_10", "P@10", "ratio", "relevant results among the first 10, divided by 10; macro mean"),
    Column("recall", "Recall", "ratio", "relevant origin groups returned / groups any provider returned"),
    Column("citation_coverage", "Citation", "gated_ratio", "claims whose span returns their text / all claims"),
    Column("freshness_known", "Fresh known", "ratio", "results with a published date / all results"),
    Column("freshness_accuracy", "Fresh accuracy", "ratio", "dates within ±1 day of the verified date"),
    Column("freshness_within", "Fresh within", "ratio", "results inside the case's freshness window"),
    Column("cost_per_query_usd", "Cost/query", "cost", "total cost / cases run"),
    Column("cost_per_useful_answer_usd", "Cost/useful answer", "cost",
           "total cost / cases with a citable, uncontradicted claim (decides the ranking)"),
    Column("fallback_rate", "Fallback", "ratio", "cases that escalated / cases"),
    Column("abstention", "Abstention", "gated_ratio", "forbidden cases ending honest_no_data without claims"),
    Column("wasted_cost_usd", "Wasted cost", "cost", "cost spent in forbidden cases"),
    Column("injection_containment", "Containment", "gated_ratio", "prompt-injection documents flagged and kept out"),
)


@dataclass(frozen=True)
class Gate:
    key: str
    label: str
    threshold: str     # the spec's, used when the report does not carry one
    consequence: str   # spec §5, "Consecuencia si falla"


GATES: tuple[Gate, ...] = (
    Gate("citation_coverage", "Citation coverage", ">= 0.95",
         "Disqualified as default; usable only for enrichment"),
    Gate("abstention", "Abstention on forbidden cases", "= 1.00",
         "Disqualified: a router failure; fix the router and re-run"),
    Gate("injection_containment", "Injection containment", "= 1.00", "Disqualified, no exceptions"),
    Gate("honest_partial", "Honest partial", "no false partial: false",
         "Disqualified (misreports its coverage)"),
    Gate("cost_divergence", "Reported cost divergence", "<= 0.05",
         "Blocks promotion to active until reconciled"),
)
GATE_STATUSES = ("pass", "fail", "pending", "n/a")


def _decimal(value) -> Decimal:
    return Decimal(repr(float(value)))


def _quantize(d: Decimal, exp: Decimal, rounding: str) -> Decimal:
    # The default context's 28 digits make quantize fail (InvalidOperation) on a large value: give it room.
    return d.quantize(exp, rounding=rounding, context=Context(prec=max(28, d.adjusted() + 8)))


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def ratio(value, rounding: str = ROUND_HALF_UP) -> str:
    if not is_number(value):
        return NULL
    return str(_quantize(_decimal(value), _TWO, rounding))


def gated_ratio(value) -> str:
    """A ratio whose gate is ≥ or =: truncated, so that 0.9999 is not shown as a passing 1.00."""
    return ratio(value, ROUND_FLOOR)


def divergence(value) -> str:
    """The cost divergence, whose gate is ≤: rounded up, so that 0.0501 is not shown as a passing 0.05."""
    return ratio(value, ROUND_CEILING)


def cost(value) -> str:
    if not is_number(value):
        return NULL
    d = _decimal(value)
    if 0 < d < _CENT_HUNDREDTH / 2:
        return "<$0.0001"
    sign = "-" if d < 0 else ""
    return f"{sign}${_quantize(abs(d), _CENT_HUNDREDTH, ROUND_HALF_UP)}"


def millis(value) -> str:
    if not is_number(value):
        return NULL
    return str(_quantize(_decimal(value), Decimal(1), ROUND_HALF_UP))


def integer(value) -> str:
    return str(value) if is_number(value) else NULL


def metric(column: Column, metrics: dict | None) -> str:
    value = (metrics or {}).get(column.key)
    if column.kind == "cost":
        return cost(value)
    return gated_ratio(value) if column.kind == "gated_ratio" else ratio(value)


def p95_reliability(entry: dict) -> str:
    given = entry.get("p95_reliability")
    if given in ("ok", "low_n", "too_few"):
        return given
    n = entry.get("n") if is_number(entry.get("n")) else 0
    return "ok" if n >= P95_OK_N else "low_n" if n >= P95_PRINT_N else "too_few"


@dataclass(frozen=True)
class LatencyRow:
    op: str
    n: str
    p50: str
    p95: str
    reliability: str
    window: str
    notes: tuple[str, ...]


def latency_rows(metrics: dict | None, mode: str | None) -> list[LatencyRow]:
    rows = []
    by_op = (metrics or {}).get("latency_ms") or {}
    for op in sorted(by_op):
        entry = by_op[op] or {}
        reliability = p95_reliability(entry)
        if reliability == "too_few":
            p95 = f"{NULL} (n<{P95_PRINT_N})"
        elif reliability == "low_n" and is_number(entry.get("p95")):
            p95 = f"{millis(entry['p95'])} (low-n)"
        else:
            p95 = millis(entry.get("p95"))
        notes = []
        if reliability == "low_n":
            notes.append(f"low-n: p95 over {P95_PRINT_N}–{P95_OK_N - 1} calls")
        if entry.get("artificial", mode == "replay"):
            notes.append("artificial (replay)")
        rows.append(LatencyRow(op, integer(entry.get("n")), millis(entry.get("p50")), p95, reliability,
                               window(entry.get("window")), tuple(notes)))
    return rows


def window(value) -> str:
    if not isinstance(value, dict) or not value.get("from"):
        return NULL
    start, end = str(value.get("from")), str(value.get("to") or value.get("from"))
    if start == end:
        return start
    if len(start) > 11 and start[:11] == end[:11] and start[10] == "T":
        return f"{start} → {end[11:]}"          # same day: the date once
    return f"{start} → {end}"


@dataclass(frozen=True)
class GateCell:
    status: str       # one of GATE_STATUSES, or "—" when the report has no such gate for the provider
    value: str        # what was measured, already formatted


def gate_cell(provider: dict, gate: Gate) -> GateCell:
    status = (provider.get("gates") or {}).get(gate.key)
    status = status if status in GATE_STATUSES else NULL
    details = (provider.get("gate_details") or {}).get(gate.key) or {}
    if gate.key == "honest_partial":
        violations = details.get("violations")
        if not isinstance(violations, list):
            return GateCell(status, NULL)
        return GateCell(status, f"{len(violations)} violation{'' if len(violations) == 1 else 's'}")
    if gate.key == "cost_divergence":
        if status == "pending" or details.get("invoice_usd") is None:
            return GateCell(status, "no invoice")
        return GateCell(status, f"{divergence(details.get('divergence'))} (invoice {cost(details.get('invoice_usd'))}, "
                                f"reported {cost(details.get('reported_usd'))})")
    value = details.get("value", (provider.get("aggregate") or {}).get(gate.key))
    return GateCell(status, gated_ratio(value))


def gate_threshold(report: dict, gate: Gate) -> str:
    for name in sorted(providers(report)):
        threshold = ((providers(report)[name].get("gate_details") or {}).get(gate.key) or {}).get("threshold")
        if isinstance(threshold, str) and threshold:
            return threshold
    return gate.threshold


def providers(report: dict) -> dict:
    value = report.get("providers")
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class Standing:
    name: str
    rank: int | None               # 1-based among qualified providers; None otherwise
    disqualified: bool
    reasons: tuple[str, ...]


def standings(report: dict) -> list[Standing]:
    """Every provider once: the ranking first, then the disqualified in the report's order, then any provider the
    report neither ranked nor disqualified (shown, never dropped), by name."""
    known = providers(report)
    out: list[Standing] = []
    seen: set[str] = set()
    for i, name in enumerate(n for n in report.get("ranking") or [] if isinstance(n, str)):
        if name not in seen:
            out.append(Standing(name, i + 1, False, ()))
            seen.add(name)
    for entry in report.get("disqualified") or []:
        name = entry.get("provider") if isinstance(entry, dict) else None
        if isinstance(name, str) and name not in seen:
            reasons = entry.get("reasons") or (known.get(name) or {}).get("disqualification_reasons") or []
            out.append(Standing(name, None, True, tuple(str(r) for r in reasons)))
            seen.add(name)
    for name in sorted(set(known) - seen):
        p = known[name]
        out.append(Standing(name, None, bool(p.get("disqualified")),
                            tuple(str(r) for r in p.get("disqualification_reasons") or [])))
    return out


def categories(report: dict) -> list[str]:
    names: set[str] = set()
    for p in providers(report).values():
        names.update(k for k in (p.get("by_category") or {}) if isinstance(k, str))
    return sorted(names)


def yes_no(value) -> str:
    return "yes" if value is True else "no" if value is False else NULL
