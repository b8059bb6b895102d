"""P@5, P@10 and pooled recall agree with trec_eval (ir_measures on its pytrec_eval backend), case by case.

A seeded random run of 3 providers × 120 cases holds the traps the research notes measured: cases with zero
results, ties in `rank`, the same URL twice, judged-but-irrelevant URLs, unjudged URLs, hosts outside the
case's families, and cases whose pool is empty. trec_eval sorts by score and breaks ties by docno, so the run
is fed with strictly decreasing scores in the scorer's documented order (rank, then record order; a URL's
first occurrence counts); a URL's relevance is judged `supports: true` with a wanted family.
"""

from __future__ import annotations

import random

import pytest

ir_measures = pytest.importorskip("ir_measures")
from ir_measures import P, R  # noqa: E402

from scanner.score.relevance import Families, host_of  # noqa: E402
from scanner.score.report import score  # noqa: E402
from tests.scorefactory import write_run, write_tree  # noqa: E402

FAMILIES = {"gov": ["gob.mx"], "news": ["news.mx", "diario.com.mx"], "corp": ["com.mx"]}
HOSTS = ["www.gob.mx", "dof.gob.mx", "news.mx", "www.diario.com.mx", "acme.com.mx", "beta.com.mx", "blog.example.org"]
PROVIDERS = ("alpha", "beta", "gamma")


def _build(tmp_path, seed=7, n_cases=120):
    rnd = random.Random(seed)
    cases, judgments, runs = [], {}, {p: [] for p in PROVIDERS}
    for i in range(n_cases):
        cid = f"c{i:03d}"
        fams = rnd.sample(sorted(FAMILIES), rnd.randint(1, 2))
        cases.append({"id": cid, "category": f"cat{i % 9}", "query": "q", "claim_type": "t",
                      "web_role": "required", "freshness_days": 365, "expect": {"families": fams, "hosts": []}})
        urls = [f"https://{rnd.choice(HOSTS)}/{cid}/{j}" for j in range(rnd.randint(0, 14))]
        groups = [f"g{rnd.randint(0, 5)}" for _ in urls]
        judged = {}
        for u, g in zip(urls, groups):
            if rnd.random() < 0.8:   # some URLs stay unjudged
                judged[u] = {"supports": rnd.random() < 0.6, "group": g}
        if judged:
            judgments[cid] = judged
        for p in PROVIDERS:
            k = rnd.choice([0, 0, 3, 7, 10, 12]) if urls else 0
            picks = [rnd.choice(urls) for _ in range(k)]     # duplicates happen
            ranks = sorted(rnd.randint(1, max(k, 1)) for _ in range(k))   # ties happen
            res = [{"rank": r, "url": u, "published_at": None} for r, u in zip(ranks, picks)]
            rnd.shuffle(res)                                 # record order differs from rank order
            runs[p].append({"case": cid, "results": res})
    root = write_tree(tmp_path / "tree", cases, FAMILIES, judgments, {})
    run = write_run(tmp_path / "run", {"id": "x", "date": "2026-10-01"}, runs)
    return cases, judgments, runs, root, run


def _ordered(results):
    seen, out = set(), []
    for i in sorted(range(len(results)), key=lambda i: (results[i]["rank"], i)):
        u = results[i]["url"]
        if u not in seen:
            seen.add(u)
            out.append(u)
    return out


def _relevant(case, judgments, url, fam):
    j = judgments.get(case["id"], {}).get(url)
    return bool(j and j["supports"] and fam.family_of(host_of(url)) in case["expect"]["families"])


def test_precision_matches_trec_eval(tmp_path):
    cases, judgments, runs, root, run = _build(tmp_path)
    report = score(root, run).report
    fam = Families(FAMILIES)
    all_recs = [r for p in PROVIDERS for r in runs[p]]
    # the traps are really in the data: zero results, rank ties, a URL twice
    assert any(not r["results"] for r in all_recs)
    assert any(len({x["rank"] for x in r["results"]}) < len(r["results"]) for r in all_recs)
    assert any(len({x["url"] for x in r["results"]}) < len(r["results"]) for r in all_recs)
    for p in PROVIDERS:
        qrels, trec_run = [], {}
        for case in cases:
            cid = case["id"]
            qrels.append(ir_measures.Qrel(cid, "__none__", 0))   # every query is evaluated
            for u in judgments.get(cid, {}):
                qrels.append(ir_measures.Qrel(cid, u, int(_relevant(case, judgments, u, fam))))
            rec = next(r for r in runs[p] if r["case"] == cid)
            order = _ordered(rec["results"])
            trec_run[cid] = {u: float(len(order) - i) for i, u in enumerate(order)}
        trec_run = {q: d for q, d in trec_run.items() if d}
        got = {(m.query_id, str(m.measure)): m.value
               for m in ir_measures.pytrec_eval.iter_calc([P @ 5, P @ 10], qrels, trec_run)}
        ours_5, ours_10 = [], []
        for case in cases:
            cid = case["id"]
            t5, t10 = got.get((cid, "P@5"), 0.0), got.get((cid, "P@10"), 0.0)   # absent from the run: 0
            ours_5.append(t5)
            ours_10.append(t10)
        agg = report["providers"][p]["aggregate"]
        assert agg["precision_at_5"] == pytest.approx(sum(ours_5) / len(ours_5), abs=1e-12)
        assert agg["precision_at_10"] == pytest.approx(sum(ours_10) / len(ours_10), abs=1e-12)
        # and case by case, through the scorer's own per-case values
        per_case = score_per_case(root, run, p)
        for case, t5, t10 in zip(cases, ours_5, ours_10):
            assert per_case[case["id"]] == (pytest.approx(t5, abs=1e-12), pytest.approx(t10, abs=1e-12))


def score_per_case(root, run, provider):
    out = score(root, run)
    return {cid: (ev.p5, ev.p10) for cid, ev in out.evals[provider].items()}


def test_pooled_recall_matches_trec_eval_over_groups(tmp_path):
    cases, judgments, runs, root, run = _build(tmp_path, seed=11)
    out = score(root, run)
    fam = Families(FAMILIES)
    # the pool: relevant groups any provider returned
    groups_of = {}
    for p in PROVIDERS:
        for rec in runs[p]:
            case = next(c for c in cases if c["id"] == rec["case"])
            order = _ordered(rec["results"])
            best = {}
            for i, u in enumerate(order):
                if _relevant(case, judgments, u, fam):
                    g = judgments[case["id"]][u]["group"]
                    best.setdefault(g, i)
            groups_of[(p, rec["case"])] = best
    empty = 0
    for p in PROVIDERS:
        qrels, trec_run = [], {}
        for case in cases:
            cid = case["id"]
            pool = set().union(*(groups_of[(q, cid)] for q in PROVIDERS))
            if not pool:
                empty += 1
                assert out.evals[p][cid].recall is None
                continue
            qrels += [ir_measures.Qrel(cid, g, 1) for g in sorted(pool)]
            best = groups_of[(p, cid)]
            if best:
                trec_run[cid] = {g: float(1000 - i) for g, i in best.items()}
        got = {m.query_id: m.value for m in ir_measures.pytrec_eval.iter_calc([R @ 1000], qrels, trec_run)}
        for case in cases:
            cid = case["id"]
            ours = out.evals[p][cid].recall
            if ours is not None:
                assert ours == pytest.approx(got.get(cid, 0.0), abs=1e-12), (p, cid)
        vals = [got.get(c["id"], 0.0) for c in cases if out.evals[p][c["id"]].recall is not None]
        assert out.report["providers"][p]["aggregate"]["recall"] == pytest.approx(sum(vals) / len(vals), abs=1e-12)
    assert empty > 0            # the trap is really in the data
