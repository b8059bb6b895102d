"""report.md: the scorer's report.json as GitHub-flavoured Markdown.

Order: the ranking, then the disqualified with their reasons (spec §5: the losers are kept), the hard-gate
block, one section per provider (metrics per category and aggregate, latency, fallback by cause, contradictory
cases, injection documents, unjudged URLs, hosts for review), the problems and the definitions.

Case ids, URLs, paths and reasons come from untrusted fixtures: every such string is written with Markdown's
punctuation backslash-escaped (so `<script>` stays text and `a|b` stays in its cell) and newlines folded.
"""

from __future__ import annotations

import re

from scanner.score import render_format as fmt
from scanner.score.gates import GATES, GateCell
from scanner.terminal import safe

_MD_ESCAPE = str.maketrans({c: "\\" + c for c in "\\`*_[]<>|~&$"})     # $: GitHub renders $…$ as math
_NEWLINES = re.compile(r"\s*[\r\n\u2028\u2029\x0b\x0c\x85]+\s*")


def text(value) -> str:
    """An untrusted string as inert Markdown: one line, every markup character escaped, and every control,
    escape and bidi character as a visible escape (`scanner.terminal.safe`)."""
    value = str(value)
    if value.isascii() and value.isprintable():          # nothing to fold or make visible (checked in C): the
        return value.translate(_MD_ESCAPE)               # common case, without `safe`'s call (a report has 10^5 cells)
    return safe(_NEWLINES.sub(" ", value)).translate(_MD_ESCAPE)


def _table(header: list[str], rows: list[list[str]], align_right: set[int] = frozenset()) -> list[str]:
    """Cells are written as given: callers escape untrusted text with `text()`; formatted numbers are safe."""
    rule = ["---:" if i in align_right else "---" for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(rule) + " |"]
    lines += ["| " + " | ".join(c.replace("\n", " ") for c in row) + " |" for row in rows]
    return lines + [""]


def _money(value) -> str:
    return text(fmt.cost(value))


def _title(report: dict) -> list[str]:
    run = report.get("run") or {}
    tool = report.get("tool") or {}
    lines = [f"# Score report: run {text(run.get('id') or fmt.NULL)} ({text(run.get('mode') or fmt.NULL)})", ""]
    meta = [f"Fixture root: {text(report.get('root') or fmt.NULL)}",
            f"run date: {text(run.get('date') or fmt.NULL)}",
            f"{text(tool.get('name') or 'centinela')} {text(tool.get('version') or '')}".rstrip()]
    lines += [" · ".join(meta), ""]
    if run.get("mode") == "replay":
        lines += ["> Replay run: latencies are artificial. Real latencies come from the shadow phase (spec §4.5).", ""]
    return lines


def _ranking(report: dict, standings: list[fmt.Standing]) -> list[str]:
    known = fmt.providers(report)
    lines = ["## Ranking", "",
             "Qualified providers by cost per useful answer, lowest first; ties broken by P@10, recall and "
             "freshness accuracy, highest first.", ""]
    ranked = [s for s in standings if s.rank is not None]
    if not ranked:
        lines += ["No provider passes every hard gate.", ""]
    for s in ranked:
        p = known.get(s.name) or {}
        agg = p.get("aggregate") or {}
        parts = [f"cost/useful answer {_money(agg.get('cost_per_useful_answer_usd'))}",
                 f"P@10 {fmt.ratio(agg.get('precision_at_10'))}", f"recall {fmt.ratio(agg.get('recall'))}",
                 f"fresh accuracy {fmt.ratio(agg.get('freshness_accuracy'))}"]
        line = f"{s.rank}. **{text(s.name)}** — " + " · ".join(parts)
        if p.get("promotion_blocked"):
            gate = (p.get("gates") or {}).get("cost_divergence", fmt.NULL)
            line += f" · promotion blocked (cost divergence: {text(gate)})"
        lines.append(line)
    lines += ["", "### Disqualified", ""]
    losers = [s for s in standings if s.rank is None]
    if not losers:
        lines += ["None.", ""]
    for s in losers:
        label = "disqualified" if s.disqualified else "not ranked by the report"
        lines.append(f"- **{text(s.name)}** ({label})")
        lines += [f"  - {text(r)}" for r in s.reasons] or ["  - no reason given"]
    return lines + [""] if losers else lines


def _gate_status(cell: GateCell) -> str:
    status = text(cell.status)
    shown = f"**{status}**" if cell.status == "fail" else status
    return f"{shown} · {text(cell.value)}"


def _gates(report: dict, standings: list[fmt.Standing]) -> list[str]:
    known = fmt.providers(report)
    names = [s.name for s in standings if s.name in known]
    header = ["Gate", "Threshold", "Consequence if it fails"] + [text(n) for n in names]
    rows = [[g.label, text(g.shown_threshold(report)), g.consequence]
            + [_gate_status(g.report_cell(known[n])) for n in names] for g in GATES]
    return ["## Hard gates", ""] + _table(header, rows)


def _metrics_table(provider: dict) -> list[str]:
    header = ["Category"] + [c.label for c in fmt.METRIC_COLUMNS]
    by_category = provider.get("by_category") or {}
    rows = [[text(cat)] + [text(fmt.metric(c, by_category[cat])) for c in fmt.METRIC_COLUMNS]
            for cat in sorted(by_category)]
    rows.append(["**aggregate**"] + [f"**{text(fmt.metric(c, provider.get('aggregate')))}**"
                                     for c in fmt.METRIC_COLUMNS])
    return _table(header, rows, set(range(1, len(header))))


def _counts(provider: dict) -> list[str]:
    c = provider.get("counts") or {}
    parts = [f"cases run {fmt.integer(c.get('cases_run'))}", f"scored {fmt.integer(c.get('cases_scored'))}",
             f"forbidden {fmt.integer(c.get('forbidden_cases'))}",
             f"claims {fmt.integer(c.get('claims'))} (citable {fmt.integer(c.get('citable_claims'))})",
             f"results {fmt.integer(c.get('results'))}", f"useful answers {fmt.integer(c.get('useful_cases'))}",
             f"total cost {_money(c.get('total_cost_usd'))}",
             f"cases with an empty recall pool {fmt.integer(c.get('recall_cases_empty_pool'))}"]
    lines = ["Counts: " + " · ".join(parts), ""]
    missing = c.get("missing_cases") or []
    if missing:
        lines += [f"**The run lacks {len(missing)} golden case{'s' if len(missing) != 1 else ''}**; the metrics "
                  f"cover the cases run: " + ", ".join(text(m) for m in missing), ""]
    return lines


def _latency(provider: dict, mode: str | None) -> list[str]:
    rows = fmt.latency_rows(provider.get("aggregate"), mode)
    lines = ["### Latency (ms)", ""]
    if not rows:
        return lines + ["No timed calls.", ""]
    body = [[text(r.op), r.n, r.p50, text(r.p95), text(r.window), text("; ".join(r.notes)) or fmt.NULL]
            for r in rows]
    return lines + _table(["Operation", "n", "p50", "p95", "Capture window", "Notes"], body, {1, 2, 3})


def _fallback(provider: dict) -> list[str]:
    agg = provider.get("aggregate") or {}
    by_cause = agg.get("fallback_by_cause") or {}
    causes = list(fmt.FALLBACK_CAUSES) + sorted(set(by_cause) - set(fmt.FALLBACK_CAUSES))
    rows = [["**all causes**", f"**{fmt.ratio(agg.get('fallback_rate'))}**"]]
    rows += [[text(c), fmt.ratio(by_cause.get(c))] for c in causes]
    return ["### Fallback by cause (share of cases)", ""] + _table(["Cause", "Rate"], rows, {1})


def _section(title: str, header: list[str], rows: list[list[str]], empty: str = "None.") -> list[str]:
    lines = [f"### {title}", ""]
    return lines + (_table(header, rows) if rows else [empty, ""])


def _partial_violations(provider: dict) -> list[str]:
    details = ((provider.get("gate_details") or {}).get("honest_partial") or {}).get("violations") or []
    rows = [[text(v.get("case", fmt.NULL)), text(v.get("op", fmt.NULL)), text(v.get("call", fmt.NULL)),
             text(v.get("reason", fmt.NULL))] for v in details if isinstance(v, dict)]
    return _section("Honest-partial violations", ["Case", "Operation", "Call", "Reason"], rows)


def _lists(provider: dict) -> list[str]:
    contradictory = [[text(c.get("case", fmt.NULL)), text(c.get("status", fmt.NULL)),
                      text(", ".join(str(i) for i in c.get("claim_ids") or [])) or fmt.NULL]
                     for c in provider.get("contradictory") or [] if isinstance(c, dict)]
    injection = [[text(d.get("path", fmt.NULL)), text(d.get("case") or fmt.NULL), fmt.yes_no(d.get("flagged")),
                  fmt.yes_no(d.get("contained")), text("; ".join(str(r) for r in d.get("reasons") or [])) or fmt.NULL]
                 for d in provider.get("injection_documents") or [] if isinstance(d, dict)]
    unjudged = provider.get("unjudged") or {}
    unjudged_rows = [[text(case), str(len(unjudged[case] or []))] for case in sorted(unjudged)]
    hosts = [[text(h.get("case", fmt.NULL)), text(h.get("host", fmt.NULL)), text(h.get("url", fmt.NULL))]
             for h in provider.get("hosts_for_review") or [] if isinstance(h, dict)]
    return (_section("Contradictory cases", ["Case", "Status", "Claim ids"], contradictory)
            + _section("Injection documents", ["Document", "Case", "Flagged", "Contained", "Reasons"], injection)
            + _section("Unjudged URLs (counted as not relevant; complete the pool)", ["Case", "Unjudged URLs"],
                       unjudged_rows)
            + _section("Relevant hosts for review (not in expect.hosts)", ["Case", "Host", "URL"], hosts))


def _provider(report: dict, s: fmt.Standing) -> list[str]:
    provider = fmt.providers(report).get(s.name)
    standing = f"rank {s.rank}" if s.rank is not None else "disqualified" if s.disqualified else "not ranked"
    lines = [f"## Provider: {text(s.name)} ({standing})", ""]
    if not isinstance(provider, dict):
        return lines + ["The report has no metrics for this provider.", ""]
    mode = (report.get("run") or {}).get("mode")
    return (lines + _counts(provider) + ["### Metrics by category", ""] + _metrics_table(provider)
            + _latency(provider, mode) + _fallback(provider) + _partial_violations(provider) + _lists(provider))


def _problems(report: dict) -> list[str]:
    rows = [[text(p.get("path") or fmt.NULL), text(p.get("message") or fmt.NULL)]
            for p in report.get("problems") or [] if isinstance(p, dict)]
    lines = ["## Problems", ""]
    return lines + (_table(["File", "Problem"], rows) if rows else ["None.", ""])


def _definitions(report: dict) -> list[str]:
    definitions = report.get("definitions") or {}
    if not isinstance(definitions, dict) or not definitions:
        return []
    return ["## Definitions", ""] + [f"- **{text(k)}**: {text(definitions[k])}" for k in sorted(definitions)] + [""]


def render_markdown(report: dict) -> str:
    standings = fmt.standings(report)
    lines = _title(report) + _ranking(report, standings) + _gates(report, standings)
    for s in standings:
        lines += _provider(report, s)
    lines += _problems(report) + _definitions(report)
    while lines and lines[-1] == "":
        lines.pop()
    return "\n".join(lines) + "\n"
