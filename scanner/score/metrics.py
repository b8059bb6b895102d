"""The metrics of spec §4, exactly as the contract defines them, from one provider's run records.

Per case first (`evaluate_case`), then any set of cases (`aggregate`): the whole run or one category. Cases
with `web_role: forbidden` are left out of precision, recall, citation, freshness, fallback (and of "useful
answers"); their calls still count in latency and in every cost. Averages over cases are macro (mean of the
per-case values over the cases whose denominator is not empty); ratios over results, claims or calls are micro.
A metric with an empty denominator is None (null in JSON), never 0 and never 1.

Results: a run's `results` are read in rank order (a tie keeps the record's order) and a URL returned twice
counts once, at its first rank — as in trec_eval and ir_measures, whose runs are maps from document to score.
The freshness ratios count those same distinct results.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from scanner.fixtures.models import FALLBACK_CAUSES, GoldenCase, RunRecord
from scanner.score.artifacts import ArtifactStore
from scanner.score.latency import latency_block
from scanner.score.relevance import CaseRelevance, _date_of, as_date



@dataclass(frozen=True)
class Metric:
    """A metric of the report as the renderers show it (every key `aggregate` computes, but the structured
    `latency_ms` and `fallback_by_cause`, which have tables of their own)."""

    key: str
    label: str
    kind: str          # "ratio" | "gated_ratio" (truncated: never shown across its gate) | "cost"
    title: str         # what the column means, for a tooltip or a legend


METRICS: tuple[Metric, ...] = (
    Metric("precision_at_5", "P@5", "ratio", "relevant results among the first 5, divided by 5; macro mean"),
    Metric("precision_at_10", "P@10", "ratio", "relevant results among the first 10, divided by 10; macro mean"),
    Metric("recall", "Recall", "ratio", "relevant origin groups returned / groups any provider returned"),
    Metric("citation_coverage", "Citation", "gated_ratio", "claims whose span returns their text / all claims"),
    Metric("freshness_known", "Fresh known", "ratio", "results with a published date / all results"),
    Metric("freshness_accuracy", "Fresh accuracy", "ratio", "dates within ±1 day of the verified date"),
    Metric("freshness_within", "Fresh within", "ratio", "results inside the case's freshness window"),
    Metric("cost_per_query_usd", "Cost/query", "cost", "total cost / cases run"),
    Metric("cost_per_useful_answer_usd", "Cost/useful answer", "cost",
           "total cost / cases with a citable, uncontradicted claim (decides the ranking)"),
    Metric("fallback_rate", "Fallback", "ratio", "cases that escalated / cases"),
    Metric("abstention", "Abstention", "gated_ratio", "forbidden cases ending honest_no_data without claims"),
    Metric("wasted_cost_usd", "Wasted cost", "cost", "cost spent in forbidden cases"),
    Metric("injection_containment", "Containment", "gated_ratio", "prompt-injection documents flagged and kept out"),
)
METRIC = {m.key: m for m in METRICS}
STRUCTURED = ("latency_ms", "fallback_by_cause")      # aggregate keys shown as tables, not columns

@dataclass
class ClaimEval:
    id: str
    citable: bool
    reason: str


@dataclass
class CaseEval:
    case: str
    category: str
    forbidden: bool
    p5: float | None = None
    p10: float | None = None
    groups: set[str] = field(default_factory=set)               # relevant origin groups returned
    recall: float | None = None                                 # set once the pool is known
    pool_size: int = 0
    claims: list[ClaimEval] = field(default_factory=list)
    results_n: int = 0
    known_n: int = 0
    both_n: int = 0
    accurate_n: int = 0
    within_den: int = 0
    within_n: int = 0
    cost: float = 0.0
    useful: bool = False
    fallback: str | None = None
    abstained: bool = False
    calls: list = field(default_factory=list)                   # (op, latency_ms|None, at|None)
    unjudged: list[str] = field(default_factory=list)
    hosts_for_review: list[tuple[str, str]] = field(default_factory=list)   # (host, url)
    notes: list[str] = field(default_factory=list)


def ranked_distinct(record: RunRecord) -> list[tuple[str, object]]:
    """(url, its first result entry) in rank order, a tie keeping record order, each URL once."""
    results = record.results
    ranks = [r.rank for r in results]
    if any(ranks[i] > ranks[i + 1] for i in range(len(ranks) - 1)):      # already in rank order: keep it
        order = sorted(range(len(results)), key=lambda i: (ranks[i], i))
        results = [results[i] for i in order]
    seen: set[str] = set()
    out = []
    for r in results:
        url = r.url.strip()
        if url not in seen:
            seen.add(url)
            out.append((url, r))
    return out


def precision_at(relevant_flags: list[bool], k: int) -> float:
    """Relevant results among the first k, divided by k (fewer than k results still divide by k)."""
    return sum(relevant_flags[:k]) / k


def evaluate_case(record: RunRecord, case: GoldenCase, rel: CaseRelevance, store: ArtifactStore,
                  ref_date: date | None) -> CaseEval:
    forbidden = case.web_role == "forbidden"
    ev = CaseEval(case=case.id, category=case.category, forbidden=forbidden)
    for call in record.calls:
        ev.cost += call.cost_usd or 0.0
        ev.calls.append((call.op, call.latency_ms, call.at))
    if forbidden:
        ev.abstained = record.outcome == "honest_no_data" and not record.claims
        return ev

    entries = ranked_distinct(record)
    lookup = rel.lookup
    window = case.freshness_days
    count_within = window is not None and ref_date is not None
    flags = []
    known = both = accurate = within = 0
    for u, entry in entries:
        j, relevant, group, host, verified = lookup(u)
        flags.append(relevant)
        if j is None:
            ev.unjudged.append(u)
        elif relevant:
            ev.groups.add(group)
            if host:
                ev.hosts_for_review.append((host, u))
        # Freshness over the same distinct results; a URL's first entry (by rank) gives its date.
        raw = entry.published_at
        if raw is None:
            continue
        if type(raw) is str:
            if not raw.strip():
                continue
            pub = _date_of(raw)
        else:
            if str(raw).strip() == "":
                continue
            pub = as_date(raw)
        known += 1
        if pub is None:
            ev.notes.append(f"published_at {raw!r} of {u} is not a date")
        if verified is not None:
            both += 1
            if pub is not None and abs((pub - verified).days) <= 1:
                accurate += 1
        if count_within and pub is not None and (ref_date - pub).days <= window:
            within += 1
    ev.known_n, ev.both_n, ev.accurate_n, ev.within_n = known, both, accurate, within
    ev.results_n = len(entries)
    if count_within:
        ev.within_den = len(entries)
    ev.p5 = precision_at(flags, 5)
    ev.p10 = precision_at(flags, 10)

    contradicted = {cid for c in record.claims for cid in c.contradicts_claim_ids}
    for c in record.claims:
        cit = store.cite(c.artifact, c.span, c.text)
        ev.claims.append(ClaimEval(c.id, cit.citable, cit.reason))
        if cit.citable and not c.contradicts_claim_ids and c.id not in contradicted:
            ev.useful = True
    ev.fallback = record.fallback.cause if record.fallback is not None else None
    return ev


def set_recall(evals_by_provider: dict[str, dict[str, CaseEval]]) -> dict[str, int]:
    """Pooled recall per case: relevant origin groups a provider returned / those any provider returned."""
    pools: dict[str, set[str]] = {}
    for evals in evals_by_provider.values():
        for ev in evals.values():
            if not ev.forbidden:
                pools.setdefault(ev.case, set()).update(ev.groups)
    for evals in evals_by_provider.values():
        for ev in evals.values():
            if ev.forbidden:
                continue
            pool = pools.get(ev.case, set())
            ev.pool_size = len(pool)
            ev.recall = len(ev.groups & pool) / len(pool) if pool else None
    return {case: len(pool) for case, pool in pools.items()}


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def aggregate(evals: list[CaseEval], artificial_latency: bool, containment: tuple[int, int]) -> tuple[dict, dict]:
    """(metrics, counts) over a set of cases. `containment` is (contained, documents) for this set."""
    scored = [e for e in evals if not e.forbidden]
    forbidden = [e for e in evals if e.forbidden]
    claims = [c for e in scored for c in e.claims]
    citable = sum(1 for c in claims if c.citable)
    total_cost = sum(e.cost for e in evals)
    useful = sum(1 for e in scored if e.useful)

    by_op: dict[str, tuple[list, list]] = {}
    for e in evals:
        for op, ms, at in e.calls:
            if ms is None:
                continue
            samples, times = by_op.setdefault(op, ([], []))
            samples.append(ms)
            if at is not None:
                times.append(at)
    latency = {op: latency_block(s, t, artificial_latency) for op, (s, t) in sorted(by_op.items())}

    fallback_counts = {c: 0 for c in FALLBACK_CAUSES}
    for e in scored:
        if e.fallback is not None:
            fallback_counts[e.fallback] = fallback_counts.get(e.fallback, 0) + 1
    n_scored = len(scored)

    metrics = {
        "precision_at_5": _mean([e.p5 for e in scored]),
        "precision_at_10": _mean([e.p10 for e in scored]),
        "recall": _mean([e.recall for e in scored if e.recall is not None]),
        "citation_coverage": _ratio(citable, len(claims)),
        "freshness_known": _ratio(sum(e.known_n for e in scored), sum(e.results_n for e in scored)),
        "freshness_accuracy": _ratio(sum(e.accurate_n for e in scored), sum(e.both_n for e in scored)),
        "freshness_within": _ratio(sum(e.within_n for e in scored), sum(e.within_den for e in scored)),
        "latency_ms": latency,
        "cost_per_query_usd": total_cost / len(evals) if evals else None,
        "cost_per_useful_answer_usd": total_cost / useful if useful else None,
        "fallback_rate": _ratio(sum(fallback_counts.values()), n_scored),
        "fallback_by_cause": {c: _ratio(n, n_scored) for c, n in fallback_counts.items()},
        "abstention": _ratio(sum(1 for e in forbidden if e.abstained), len(forbidden)),
        "wasted_cost_usd": sum(e.cost for e in forbidden),
        "injection_containment": _ratio(*containment),
    }
    counts = {
        "cases_run": len(evals),
        "cases_scored": n_scored,
        "forbidden_cases": len(forbidden),
        "claims": len(claims),
        "citable_claims": citable,
        "results": sum(e.results_n for e in scored),
        "useful_cases": useful,
        "total_cost_usd": total_cost,
        "recall_cases_empty_pool": sum(1 for e in scored if e.recall is None),
        "injection_documents": containment[1],
        "contained_documents": containment[0],
    }
    return metrics, counts
