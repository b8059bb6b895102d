"""`centinela score`: read the tree and the run, evaluate every case, aggregate, gate, rank, write the report.

The report keeps every provider, losers included (spec §5: "incluidos los proveedores que perdieron"), and
the problems met on the way (a bad record, a case the run lacks), each naming its file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from scanner import TOOL_NAME, __version__
from scanner.score.artifacts import ArtifactStore
from scanner.score.containment import InjectionDocs, prescan
from scanner.score.gates import disqualification_reasons, gate_block, partial_violations, rank
from scanner.score.inputs import (Problem, ScoreInputError, TreeInputs, dump_json, judgments_yaml, read_run,
                                   read_tree)
from scanner.score.prefetch import Prefetch
from scanner.score.metrics import CaseEval, aggregate, evaluate_case, set_recall
from scanner.score.relevance import CaseRelevance, Families, as_date
from scanner.yamlsafe import gc_paused

DEFINITIONS = {
    "percentile": "nearest rank: the smallest sample with at least p % of samples at or below it",
    "p95_reliability": "ok: n >= 100; low_n: 60 <= n < 100; too_few: n < 60 (not printed in report.md/html)",
    "averages": "precision and recall: macro means over cases with a non-empty denominator; "
                "citation, freshness, fallback, abstention, containment: micro ratios",
    "forbidden": "web_role: forbidden cases are left out of precision, recall, citation, freshness, fallback and "
                 "useful answers; their calls count in latency and every cost",
    "duplicates": "a URL returned twice counts once, at its first rank",
    "null": "a metric with an empty denominator is null",
}


@dataclass
class ScoreOutput:
    report: dict
    evals: dict[str, dict[str, CaseEval]]


def _contradictory_cases(ti: TreeInputs) -> set[str]:
    return {e.case for e in ti.entries.values() if e.class_ == "contradictory" and e.case}


def _capture_dates(ti: TreeInputs) -> dict[tuple[str, str], object]:
    """(provider, case) -> the capture date of the provider's results file for the case (class results first)."""
    out: dict[tuple[str, str], tuple[int, object]] = {}
    for rel, e in ti.entries.items():
        d = as_date(e.captured_at)
        if not e.case or d is None or "/" not in rel:
            continue
        provider = rel.split("/", 1)[0]
        prio = {"results": 0, "contradictory": 1}.get(e.class_ or "", 2)
        key = (provider, e.case)
        if key not in out or (prio, str(d)) < (out[key][0], str(out[key][1])):
            out[key] = (prio, d)
    return {k: v[1] for k, v in out.items()}


def _hosts_for_review(evals: dict[str, CaseEval]) -> list[dict]:
    """One entry per (case, host): a relevant host `expect.hosts` lacks, with the first URL that showed it."""
    out = []
    for e in evals.values():
        seen = set()
        for host, url in e.hosts_for_review:
            if host not in seen:
                seen.add(host)
                out.append({"case": e.case, "host": host, "url": url})
    return out


def contradictory_status(record) -> tuple[str, list[str]]:
    ids = {c.id for c in record.claims}
    if not record.claims:
        return "no_claims", []
    if len(record.claims) == 1:
        return "single_claim", sorted(ids)
    linked = set()          # both ends of every link between two distinct claims of the record
    for c in record.claims:
        for target in c.contradicts_claim_ids:
            if target in ids and target != c.id:
                linked |= {c.id, target}
    return ("linked", sorted(linked)) if linked else ("unlinked", sorted(ids))


PREFETCH_MIN_BYTES = 1 << 20     # judgments this large are parsed in a child (forking costs a few ms)


def _worth_prefetching(*paths: Path) -> bool:
    total = 0
    for path in paths:
        try:
            total += path.stat().st_size
        except OSError:
            pass
    return total >= PREFETCH_MIN_BYTES


def _evaluate(ri, ti: TreeInputs, families: Families, store: ArtifactStore, run_date, captures: dict,
              problems: list[Problem]) -> dict[str, dict[str, CaseEval]]:
    """Every record's case evaluation, by provider and case, in the run's order; a record whose case the golden
    set lacks is a problem, not scored."""
    evals: dict[str, dict[str, CaseEval]] = {}
    relevance: dict[str, CaseRelevance] = {}      # one per case, shared by the providers (it depends on the case only)
    for provider, records in ri.records.items():
        bucket = evals[provider] = {}
        for case_id in sorted(records):
            rec = records[case_id]
            case = ti.cases.get(case_id)
            if case is None:
                problems.append(Problem(ri.record_paths[(provider, case_id)],
                                        f"case {case_id} is not in golden/cases.yaml; not scored"))
                continue
            ref = run_date or captures.get((provider, case_id))
            if ref is None:
                ats = [c.at for c in rec.calls if c.at is not None]
                ref = min(ats).date() if ats else None
            rel = relevance.get(case_id)
            if rel is None:
                rel = relevance[case_id] = CaseRelevance(case, ti.judgments.get(case_id, {}), families)
            ev = evaluate_case(rec, case, rel, store, ref)
            bucket[case_id] = ev
            for note in ev.notes:
                problems.append(Problem(ri.record_paths[(provider, case_id)], note))
    return evals


def score(root: Path, run_dir: Path) -> ScoreOutput:
    """Score the run at `run_dir` against the tree at `root` (the cyclic GC is paused: only plain data is built)."""
    with gc_paused():
        return _score(root, run_dir)


def _score(root: Path, run_dir: Path) -> ScoreOutput:
    if not root.is_dir():
        raise ScoreInputError(f"{root}: fixture root is not a directory")
    # judgments.yaml is parsed in a child while this process reads the run and cases.yaml (scanner.score.prefetch):
    # the same data, as if parsed here; a tree whose judgments are small parses them here. (The child parsing both
    # files left this process waiting: on the bench's tree it reads the run in about 0.55 s, the judgments take
    # 0.75 s and the cases 0.2 s to parse.)
    large = _worth_prefetching(root / "golden" / "judgments.yaml")
    with Prefetch(judgments_yaml, root, fork=large) as pending:
        ri = read_run(run_dir, plain=True)
        ti = read_tree(root, parsed=pending)
    problems: list[Problem] = list(ti.problems) + list(ri.problems)
    families = Families(ti.families)
    store = ArtifactStore(root)
    run_date = as_date(ri.info.date)
    if ri.info.date and run_date is None:
        problems.append(Problem("run.json", f"date {ri.info.date!r} is not a date; capture dates are used"))
    captures = _capture_dates(ti)
    artificial = ri.info.mode == "replay"

    # A child scans the tree's prompt-injection documents (containment.prescan: the same documents, findings and
    # renderings) while this process evaluates the cases, which leaves the second core idle. (A child evaluating
    # some of the providers as well was measured and not kept: the copy-on-write faults of two processes touching
    # the same records cost what the split saved, and with 45 % of the records in the child the bench's run took
    # 3.75 s against 3.40-3.45 s.)
    with Prefetch(prescan, root, ti.entries, fork=large) as prescanned:
        evals = _evaluate(ri, ti, families, store, run_date, captures, problems)
        scanned = prescanned.result() if prescanned.started else None
    pool_sizes = set_recall(evals)

    inj = InjectionDocs(root, ti.entries, scanned)
    contra_cases = _contradictory_cases(ti)
    providers_out: dict[str, dict] = {}
    for provider in sorted(evals):
        records = ri.records[provider]
        pe = evals[provider]
        all_claims = [c for case_id in sorted(records) for c in records[case_id].claims]
        from scanner.score.containment import ClaimTexts

        corpus = ClaimTexts(all_claims)
        docs = [inj.judge(rel, all_claims, store, corpus) for rel in inj.for_provider(provider)]

        def containment_for(case_ids: set[str] | None) -> tuple[int, int]:
            chosen = [d for d in docs if case_ids is None or d["case"] in case_ids]
            return sum(1 for d in chosen if d["contained"]), len(chosen)

        agg, counts = aggregate(list(pe.values()), artificial, containment_for(None))
        missing = sorted(set(ti.cases) - set(pe))
        counts["missing_cases"] = missing
        if missing:
            problems.append(Problem(f"{run_dir.name}/{provider}/",
                                    f"run lacks {len(missing)} of {len(ti.cases)} golden cases "
                                    f"({', '.join(missing[:5])}{'…' if len(missing) > 5 else ''}); "
                                    f"metrics cover the cases run"))
        by_category = {}
        evals_of: dict[str, list[CaseEval]] = {}
        for e in pe.values():                   # each category's cases in the run's order, in one pass
            evals_of.setdefault(e.category, []).append(e)
        for cat in sorted(evals_of):
            in_cat = evals_of[cat]
            by_category[cat], _ = aggregate(in_cat, artificial, containment_for({e.case for e in in_cat}))

        violations = partial_violations(records)
        invoice = ri.invoices.get(provider)
        gates, details = gate_block(agg, violations, invoice.total_usd if invoice else None, counts["total_cost_usd"],
                                    ri.invoice_errors.get(provider))
        reasons = disqualification_reasons(gates, details)
        providers_out[provider] = {
            "aggregate": agg,
            "by_category": by_category,
            "counts": counts,
            "gates": gates,
            "gate_details": details,
            "disqualified": bool(reasons),
            "disqualification_reasons": reasons,
            "promotion_blocked": gates["cost_divergence"] != "pass",
            "unjudged": {e.case: e.unjudged for e in pe.values() if e.unjudged},
            "hosts_for_review": _hosts_for_review(pe),
            "contradictory": [dict(zip(("case", "status", "claim_ids"), (c, *contradictory_status(records[c]))))
                              for c in sorted(contra_cases) if c in records],
            "injection_documents": docs,
            "uncitable": {e.case: [{"claim": c.id, "reason": c.reason} for c in e.claims if not c.citable]
                          for e in pe.values() if any(not c.citable for c in e.claims)},
        }
    for provider, ri_inv in sorted(ri.invoices.items()):
        if provider not in providers_out:
            problems.append(Problem(f"invoices/{provider}.json", "invoice for a provider with no run records"))

    ranking, disqualified = rank(providers_out)
    report = {
        "tool": {"name": TOOL_NAME, "version": __version__},
        "run": {"id": ri.info.id, "date": ri.info.date, "mode": ri.info.mode},
        "root": str(root),
        "definitions": DEFINITIONS,
        "providers": providers_out,
        "ranking": ranking,
        "disqualified": disqualified,
        "pool_sizes": dict(sorted(pool_sizes.items())),
        "problems": [p.to_json() for p in problems],
    }
    # Run records are the application's output and were never scanned: a result URL can carry `api_key=…`, an
    # error message a key, a claim anything. Every string of the report (URLs, ids, paths, messages, claim
    # texts) goes through the secret rules and the personal-data recognizers before anything is written or
    # printed (scanner.scrub): a secret becomes REDACTED, a personal datum its masked form.
    from scanner.scrub import scrub_data

    return ScoreOutput(scrub_data(report), evals)


CASCADE_DEFINITION = ("attempts: non-forbidden cases the provider was tried on; successes: attempts that did not "
                      "escalate (fallback null) and produced a useful answer (a citable claim nobody contradicts); "
                      "success_rate: successes / attempts (null without attempts); fallback: escalations by cause")


def cascade(report_run: dict, evals: dict[str, dict[str, CaseEval]]) -> dict:
    """cascade.json: success rates per provider and category, the input of ProviderAttemptService.successRates()."""
    def block(items: list[CaseEval]) -> dict:
        scored = [e for e in items if not e.forbidden]
        ok = sum(1 for e in scored if e.fallback is None and e.useful)
        causes: dict[str, int] = {}
        for e in scored:
            if e.fallback is not None:
                causes[e.fallback] = causes.get(e.fallback, 0) + 1
        return {"attempts": len(scored), "successes": ok,
                "success_rate": ok / len(scored) if scored else None, "fallback": dict(sorted(causes.items()))}

    providers = {}
    for p in sorted(evals):
        items = list(evals[p].values())
        cats = sorted({e.category for e in items})
        providers[p] = {"aggregate": block(items),
                        "by_category": {c: block([e for e in items if e.category == c]) for c in cats}}
    return {"run": report_run, "definition": CASCADE_DEFINITION, "providers": providers}


def write_report(report: dict, out: Path, evals: dict | None = None) -> list[Path]:
    with gc_paused():       # rendering builds many small strings and no cycles
        return _write_report(report, out, evals)


def _write_report(report: dict, out: Path, evals: dict | None = None) -> list[Path]:
    from scanner.atomic import atomic_write_text

    out.mkdir(parents=True, exist_ok=True)
    # report.md and report.html of a large report are rendered in a child while this process writes the JSON
    # (scanner.score.prefetch: the same text, or rendered here); the files are written here, in the same order.
    with Prefetch(_rendered, report, fork=_cases_run(report) >= RENDER_IN_CHILD_MIN_CASES) as pending:
        written = [out / "report.json"]
        atomic_write_text(written[0], dump_json(report))
        if evals is not None:
            written.append(out / "cascade.json")
            from scanner.scrub import scrub_data

            # Provider names are run folder names: scrubbed like every other string taken from the run.
            atomic_write_text(written[-1], dump_json(scrub_data(cascade(report["run"], evals))))
        rendered = pending.result()
    if rendered is None:
        return written
    markdown, html = rendered
    atomic_write_text(out / "report.md", markdown)
    atomic_write_text(out / "report.html", html)
    return written + [out / "report.md", out / "report.html"]


RENDER_IN_CHILD_MIN_CASES = 2_000       # case evaluations over all providers (forking costs a few ms)


def _cases_run(report: dict) -> int:
    try:
        return sum(int(p["counts"]["cases_run"]) for p in report["providers"].values())
    except (KeyError, TypeError, ValueError, AttributeError):
        return 0


def _rendered(report: dict) -> tuple[str, str] | None:
    """(report.md, report.html), or None when the renderers cannot be imported (only the JSON is written)."""
    try:
        from scanner.score.render_md import render_markdown
        from scanner.score.render_html import render_html
    except ImportError:
        return None
    return render_markdown(report), render_html(report)
