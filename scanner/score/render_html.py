"""report.html: the scorer's report.json as one self-contained page for a reviewer.

Summary cards, the cost-per-useful-answer chart (inline SVG, disqualified providers greyed with their reasons),
the hard-gate block in colour, a per-category heat map of precision@10 and recall, then every provider's
tables as in report.md, the problems and the definitions. No script, no external font, stylesheet, image or
URL: the page opens offline and from a CI artifact alike. Every string from the report is escaped
(`html.escape`): case ids, URLs and paths come from untrusted fixtures, and URLs are shown as text, never
linked. Colour is never the only signal: every coloured cell also says what it means in words.
"""

from __future__ import annotations

from html import escape

from scanner.terminal import safe

from scanner.score import render_format as fmt
from scanner.score.render_chart import cost_chart, heat_colour, heat_gradient_css

GATE_CLASS = {"pass": "gate-pass", "fail": "gate-fail", "pending": "gate-pending", "n/a": "gate-na"}
GATE_WORD = {"pass": "PASS", "fail": "FAIL", "pending": "PENDING", "n/a": "N/A"}
HEAT_COLUMNS = (("precision_at_10", "P@10"), ("recall", "Recall"))

CSS = """
:root { --ink:#0f172a; --muted:#64748b; --line:#e2e8f0; --bg:#f8fafc; --card:#ffffff;
  --pass:#15803d; --pass-bg:#dcfce7; --fail:#b91c1c; --fail-bg:#fee2e2; --pending:#b45309; --pending-bg:#fef3c7;
  --na:#475569; --na-bg:#f1f5f9; --accent:#2563eb; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--ink);
  font:14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Liberation Sans", "DejaVu Sans", Arial, sans-serif; }
header.top { background:#0f172a; color:#f8fafc; padding:22px 40px 18px; }
header.top h1 { margin:0 0 6px; font-size:24px; font-weight:650; letter-spacing:-0.01em; }
header.top h1 .run { color:#93c5fd; }
header.top .meta { color:#cbd5e1; font-size:13px; display:flex; flex-wrap:wrap; gap:6px 18px; }
header.top .meta b { color:#f1f5f9; font-weight:600; }
.pill { display:inline-block; padding:1px 9px; border-radius:999px; font-size:12px; font-weight:600;
  border:1px solid currentColor; white-space:nowrap; }
.pill.mode-replay { color:#fcd34d; } .pill.mode-shadow { color:#86efac; }
.notice { margin:14px 0 0; padding:8px 12px; border-radius:6px; background:#422006; color:#fde68a; font-size:13px; }
main { max-width:1360px; margin:0 auto; padding:20px 40px 60px; }
nav.toc { font-size:13px; color:var(--muted); margin-bottom:14px; }
nav.toc a { color:var(--accent); text-decoration:none; margin-right:14px; }
section.block { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:18px 22px;
  margin:0 0 18px; }
h2 { font-size:18px; margin:0 0 4px; } h2 .sub { font-weight:400; color:var(--muted); font-size:14px; }
h3 { font-size:15px; margin:18px 0 6px; }
p.lede { margin:0 0 12px; color:var(--muted); }
.cards { display:grid; grid-template-columns:repeat(auto-fill, minmax(250px, 1fr)); gap:14px; margin:0 0 18px;
  align-items:start; }
.card { background:var(--card); border:1px solid var(--line); border-top:5px solid var(--accent); border-radius:10px;
  padding:12px 16px; }
.card.disqualified { border-top-color:#94a3b8; background:#f8fafc; }
.card.run { border-top-color:#0f172a; }
.card a { color:var(--accent); }
.card .who { display:flex; justify-content:space-between; align-items:baseline; gap:8px; }
.card .name { font-size:17px; font-weight:650; overflow-wrap:anywhere; }
.card .rank { font-weight:700; color:var(--accent); }
.card.disqualified .rank { color:var(--fail); font-size:12px; letter-spacing:.04em; }
.card .big { font-size:26px; font-weight:700; font-variant-numeric:tabular-nums; margin-top:4px; }
.card.disqualified .big { color:var(--muted); }
.card .sub { color:var(--muted); font-size:12px; }
.card ul { margin:8px 0 0; padding-left:18px; font-size:12.5px; }
.card .gatesum { margin-top:8px; font-size:12.5px; }
svg.chart { display:block; max-width:1200px; font-size:14px; }
svg.chart .grid { stroke:#e2e8f0; stroke-width:1; }
svg.chart .tick { fill:#64748b; font-size:12px; }
svg.chart .name { fill:#0f172a; font-weight:650; font-size:15px; }
svg.chart .muted { fill:#64748b; }
svg.chart .badge-text { fill:#64748b; font-size:12px; }
svg.chart .bar-row.disqualified .badge-text { fill:#b91c1c; font-weight:600; }
svg.chart .value { fill:#0f172a; font-weight:600; font-variant-numeric:tabular-nums; }
svg.chart .caption { fill:#64748b; font-size:12.5px; }
svg.chart .caption.reason { fill:#991b1b; }
table { border-collapse:collapse; width:100%; font-variant-numeric:tabular-nums; }
th, td { padding:6px 9px; border-bottom:1px solid var(--line); text-align:left; vertical-align:top; }
thead th { background:#f1f5f9; font-size:12px; text-transform:none; color:#334155; font-weight:650;
  border-bottom:2px solid #cbd5e1; }
td.num, th.num { text-align:right; white-space:nowrap; }
abbr { text-decoration:none; cursor:help; }
table.metrics { font-size:13px; }
table.metrics th, table.metrics td { padding:5px 6px; }
table.metrics thead th { white-space:normal; vertical-align:bottom; }
td.threshold { white-space:nowrap; font-family:ui-monospace, "DejaVu Sans Mono", monospace; font-size:12.5px; }
td.bad { color:var(--fail); font-weight:700; }
section.provider.ranked { border-left:5px solid var(--accent); }
section.provider.disqualified { border-left:5px solid #94a3b8; }
td.null { color:#94a3b8; }
tr.agg th, tr.agg td { font-weight:700; background:#f8fafc; border-top:2px solid #cbd5e1; }
.scroll { overflow-x:auto; }
td.gate { font-weight:600; white-space:nowrap; border-left:4px solid transparent; }
td.gate .status { display:block; letter-spacing:.04em; }
td.gate .val { display:block; font-weight:400; font-size:12px; white-space:normal; }
td.gate-pass { background:var(--pass-bg); color:var(--pass); border-left-color:var(--pass); }
td.gate-fail { background:var(--fail-bg); color:var(--fail); border-left-color:var(--fail); }
td.gate-pending { background:var(--pending-bg); color:var(--pending); border-left-color:var(--pending); }
td.gate-na, td.gate-none { background:var(--na-bg); color:var(--na); border-left-color:#94a3b8; }
td.consequence { color:#334155; font-size:12.5px; max-width:300px; }
table.heat { width:auto; }
table.heat th.cat { min-width:190px; }
td.heat { width:78px; text-align:center; font-weight:600; border:2px solid #fff; }
td.heat-null { color:#475569; font-weight:400;
  background:repeating-linear-gradient(45deg, #f1f5f9 0 5px, #d9dee6 5px 7px); }
th.group { text-align:center; border-left:3px solid #fff; }
th.group.disqualified { color:#94a3b8; }
.legend { display:flex; align-items:center; gap:10px; margin-top:10px; font-size:12px; color:var(--muted); }
.legend .ramp { width:220px; height:12px; border-radius:3px; border:1px solid var(--line); }
.legend .nodata { width:28px; height:12px; border:1px solid var(--line);
  background:repeating-linear-gradient(45deg, #f1f5f9 0 5px, #d9dee6 5px 7px); }
section.provider h2 { display:flex; align-items:center; gap:10px; }
.badge { font-size:12px; padding:2px 9px; border-radius:999px; font-weight:700; }
.badge.ranked { background:#dbeafe; color:#1e40af; }
.badge.disqualified { background:var(--fail-bg); color:var(--fail); }
.counts { display:flex; flex-wrap:wrap; gap:6px 16px; color:#334155; font-size:13px; margin:6px 0 4px; }
.counts b { font-variant-numeric:tabular-nums; }
.warn { background:var(--pending-bg); color:#78350f; border-left:4px solid var(--pending); padding:6px 10px;
  margin:8px 0; border-radius:4px; overflow-wrap:anywhere; }
.reasons { margin:6px 0; color:var(--fail); }
.note { display:inline-block; font-size:11.5px; padding:0 7px; border-radius:999px; margin:0 4px 2px 0;
  background:#f1f5f9; color:#334155; border:1px solid #cbd5e1; white-space:nowrap; }
.note.artificial { background:#fef3c7; color:#92400e; border-color:#fcd34d; }
.note.low-n { background:#ffedd5; color:#9a3412; border-color:#fdba74; }
td.withheld { color:#94a3b8; font-style:italic; }
.two { display:grid; grid-template-columns:minmax(0, 2fr) minmax(0, 1fr); gap:22px; }
.none { color:var(--muted); margin:2px 0 8px; }
td.url, td.path { font-family:ui-monospace, "DejaVu Sans Mono", "Liberation Mono", monospace; font-size:12px;
  overflow-wrap:anywhere; word-break:break-all; }
dl.defs { display:grid; grid-template-columns:max-content 1fr; gap:4px 16px; margin:0; font-size:13px; }
dl.defs dt { font-weight:650; } dl.defs dd { margin:0; color:#334155; }
"""


def e(value) -> str:
    """An untrusted value as HTML text: controls, escapes and bidi characters as visible escapes (the page can
    be `cat` to a terminal, and a U+202E must not reorder a URL), then HTML-escaped."""
    return escape(safe(value), quote=True)


def _num_td(shown: str, extra: str = "") -> str:
    cls = "num null" if shown == fmt.NULL else "num"
    return f'<td class="{cls}{extra}">{e(shown)}</td>'


def _table(header: list[str], rows: list[str], numeric: frozenset[int] = frozenset(), cls: str = "",
           widths: dict[int, str] | None = None) -> str:
    """`header` cells are HTML (escaped by the caller); `numeric` columns are right-aligned."""
    def th(i: int, h: str) -> str:
        num = ' class="num"' if i in numeric else ""
        width = f' style="width:{widths[i]}"' if widths and i in widths else ""
        return f'<th scope="col"{num}{width}>{h}</th>'
    ths = "".join(th(i, h) for i, h in enumerate(header))
    klass = f' class="{cls}"' if cls else ""
    return (f'<div class="scroll"><table{klass}><thead><tr>{ths}</tr></thead><tbody>'
            + "".join(rows) + "</tbody></table></div>")


def _header(report: dict) -> str:
    run = report.get("run") or {}
    tool = report.get("tool") or {}
    mode = str(run.get("mode") or fmt.NULL)
    mode_cls = f" mode-{mode}" if mode in ("replay", "shadow") else ""
    out = [f'<header class="top"><h1>Score report · run <span class="run">{e(run.get("id") or fmt.NULL)}</span></h1>',
           '<div class="meta">',
           f'<span>mode <span class="pill{mode_cls}">{e(mode)}</span></span>',
           f'<span>run date <b>{e(run.get("date") or fmt.NULL)}</b></span>',
           f'<span>fixture root <b>{e(report.get("root") or fmt.NULL)}</b></span>',
           f'<span>{e(tool.get("name") or "centinela")} <b>{e(tool.get("version") or "")}</b></span>',
           "</div>"]
    if mode == "replay":
        out.append('<p class="notice">Replay run: latencies are artificial. Real latencies come from the shadow '
                   "phase (spec §4.5).</p>")
    return "\n".join(out + ["</header>"])


def _hard_gate_summary(provider: dict) -> str:
    gates = provider.get("gates") or {}
    hard = [g for g in fmt.GATES if g.key != "cost_divergence"]
    failed = [g.label for g in hard if gates.get(g.key) == "fail"]
    passed = sum(1 for g in hard if gates.get(g.key) == "pass")
    if failed:
        return f'<span style="color:var(--fail)">✗ fails: {e(", ".join(failed))}</span>'
    return f'<span style="color:var(--pass)">✓ {passed} of {len(hard)} hard gates pass</span>'


def _cards(report: dict, standings: list[fmt.Standing]) -> str:
    known = fmt.providers(report)
    out = ['<div class="cards" aria-label="Providers at a glance">']
    for s in standings:
        p = known.get(s.name) or {}
        agg = p.get("aggregate") or {}
        rank = f"#{s.rank}" if s.rank is not None else "DISQUALIFIED" if s.disqualified else "NOT RANKED"
        cls = "card" if s.rank is not None else "card disqualified"
        cost_status = (p.get("gates") or {}).get("cost_divergence", fmt.NULL)
        lines = [f'<div class="{cls}"><div class="who"><span class="name">{e(s.name)}</span>'
                 f'<span class="rank">{e(rank)}</span></div>',
                 f'<div class="big">{e(fmt.cost(agg.get("cost_per_useful_answer_usd")))}</div>',
                 f'<div class="sub">per useful answer · P@10 {e(fmt.ratio(agg.get("precision_at_10")))} · '
                 f'recall {e(fmt.ratio(agg.get("recall")))}</div>',
                 f'<div class="gatesum">{_hard_gate_summary(p)}<br>'
                 f'<span class="sub">cost divergence: {e(cost_status)}'
                 f'{" · promotion blocked" if p.get("promotion_blocked") else ""}</span></div>']
        if s.rank is None and s.reasons:
            lines.append("<ul>" + "".join(f'<li class="reasons">{e(r)}</li>' for r in s.reasons) + "</ul>")
        out.append("".join(lines) + "</div>")
    qualified = sum(1 for s in standings if s.rank is not None)
    problems = len([p for p in report.get("problems") or [] if isinstance(p, dict)])
    blocked = sum(1 for s in standings if s.rank is not None and (known.get(s.name) or {}).get("promotion_blocked"))
    out.append(f'<div class="card run"><div class="who"><span class="name">This run</span></div>'
               f'<div class="big">{qualified} of {len(standings)}</div>'
               f'<div class="sub">providers pass every hard gate</div>'
               f'<div class="gatesum">{blocked} qualified provider{"" if blocked == 1 else "s"} blocked from promotion'
               f'<br>{problems} problem{"" if problems == 1 else "s"} noted '
               f'(<a href="#problems">list</a>)</div></div>')
    return "\n".join(out + ["</div>"])


def _ranking(report: dict, standings: list[fmt.Standing]) -> str:
    return ('<section class="block" id="ranking">'
            '<h2>Cost per useful answer <span class="sub">(lower is better)</span></h2>'
            '<p class="lede">The metric that decides (spec §4.7). Qualified providers in ranking order (ties broken '
            "by P@10, recall, freshness accuracy), then the disqualified, greyed and hatched, with their reasons.</p>"
            + cost_chart(report, standings) + "</section>")


def _gates(report: dict, standings: list[fmt.Standing]) -> str:
    known = fmt.providers(report)
    names = [s.name for s in standings if s.name in known]
    header = ["Gate", "Threshold", "Consequence if it fails"] + [e(n) for n in names]
    share = f"{52 / max(1, len(names)):.1f}%"
    widths = {0: "15%", 1: "12%", 2: "21%"} | {3 + i: share for i in range(len(names))}
    rows = []
    for g in fmt.GATES:
        cells = [f'<th scope="row">{e(g.label)}</th>', f'<td class="threshold">{e(fmt.gate_threshold(report, g))}</td>',
                 f'<td class="consequence">{e(g.consequence)}</td>']
        for n in names:
            cell = fmt.gate_cell(known[n], g)
            cls = GATE_CLASS.get(cell.status, "gate-none")
            word = GATE_WORD.get(cell.status, fmt.NULL)
            cells.append(f'<td class="gate {cls}" data-gate="{e(g.key)}" data-provider="{e(n)}">'
                         f'<span class="status">{e(word)}</span><span class="val">{e(cell.value)}</span></td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return ('<section class="block" id="gates"><h2>Hard gates</h2>'
            '<p class="lede">Failing any of the first four disqualifies; the cost divergence only blocks promotion. '
            "PASS green, FAIL red, PENDING amber, N/A grey (nothing to measure).</p>"
            + _table(header, rows, cls="gates", widths=widths) + "</section>")


def _heatmap(report: dict, standings: list[fmt.Standing]) -> str:
    known = fmt.providers(report)
    shown = [s for s in standings if s.name in known]
    cats = fmt.categories(report)
    group = "".join(f'<th scope="colgroup" colspan="{len(HEAT_COLUMNS)}" class="group'
                    f'{"" if s.rank is not None else " disqualified"}">{e(s.name)}'
                    f'{"" if s.rank is not None else " (disqualified)"}</th>' for s in shown)
    sub = "".join(f'<th scope="col" class="num">{label}</th>' for _ in shown for _, label in HEAT_COLUMNS)
    rows = []
    for cat in cats:
        cells = [f'<th scope="row" class="cat">{e(cat)}</th>']
        for s in shown:
            metrics = (known[s.name].get("by_category") or {}).get(cat)
            for key, label in HEAT_COLUMNS:
                value = (metrics or {}).get(key)
                title = f"{s.name} · {cat} · {label}"
                if fmt.is_number(value):
                    bg, fg = heat_colour(value)
                    cells.append(f'<td class="heat" style="background:{bg};color:{fg}" title="{e(title)}">'
                                 f"{e(fmt.ratio(value))}</td>")
                else:
                    cells.append(f'<td class="heat heat-null" title="{e(title)}: no data">{fmt.NULL}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    body = "".join(rows) or f'<tr><td colspan="{1 + 2 * len(shown)}" class="none">No categories.</td></tr>'
    return ('<section class="block" id="heatmap"><h2>Precision@10 and recall by category</h2>'
            '<p class="lede">Darker is better. A hatched cell has no data (an empty denominator), which is not 0.</p>'
            '<div class="scroll"><table class="heat"><thead>'
            f'<tr><th scope="col" rowspan="2" class="cat">Category</th>{group}</tr><tr>{sub}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>"
            f'<div class="legend"><span>0.00</span><span class="ramp" style="background:{heat_gradient_css()}">'
            '</span><span>1.00</span><span class="nodata"></span><span>no data (—)</span></div></section>')


def _metrics_table(provider: dict) -> str:
    header = ["Category"] + [f'<abbr title="{e(c.title)}">{e(c.label)}</abbr>' for c in fmt.METRIC_COLUMNS]
    by_category = provider.get("by_category") or {}
    rows = []
    for cat in sorted(by_category):
        rows.append(f'<tr><th scope="row">{e(cat)}</th>'
                    + "".join(_num_td(fmt.metric(c, by_category[cat])) for c in fmt.METRIC_COLUMNS) + "</tr>")
    rows.append('<tr class="agg"><th scope="row">aggregate</th>'
                + "".join(_num_td(fmt.metric(c, provider.get("aggregate"))) for c in fmt.METRIC_COLUMNS) + "</tr>")
    return "<h3>Metrics by category</h3>" + _table(header, rows, frozenset(range(1, len(header))), cls="metrics")


def _note_class(note: str) -> str:
    return "artificial" if "artificial" in note else "low-n" if note.startswith("low-n") else "plain"


def _latency(provider: dict, mode: str | None) -> str:
    rows = fmt.latency_rows(provider.get("aggregate"), mode)
    if not rows:
        return '<h3>Latency (ms)</h3><p class="none">No timed calls.</p>'
    body = []
    for r in rows:
        if r.reliability == "too_few":
            why = f"a p95 over fewer than {fmt.P95_PRINT_N} calls is not a p95"
            p95 = f'<td class="num withheld" title="{why}">{e(r.p95)}</td>'
        else:
            p95 = _num_td(r.p95)
        notes = "".join(f'<span class="note {_note_class(n)}">{e(n)}</span>' for n in r.notes) or fmt.NULL
        body.append(f'<tr><th scope="row">{e(r.op)}</th>{_num_td(r.n)}{_num_td(r.p50)}{p95}'
                    f"<td>{e(r.window)}</td><td>{notes}</td></tr>")
    return "<h3>Latency (ms)</h3>" + _table(["Operation", "n", "p50", "p95", "Capture window", "Notes"], body,
                                            frozenset({1, 2, 3}))


def _fallback(provider: dict) -> str:
    agg = provider.get("aggregate") or {}
    by_cause = agg.get("fallback_by_cause") or {}
    causes = list(fmt.FALLBACK_CAUSES) + sorted(set(by_cause) - set(fmt.FALLBACK_CAUSES))
    rows = [f'<tr class="agg"><th scope="row">all causes</th>{_num_td(fmt.ratio(agg.get("fallback_rate")))}</tr>']
    rows += [f'<tr><th scope="row">{e(c)}</th>{_num_td(fmt.ratio(by_cause.get(c)))}</tr>' for c in causes]
    return "<h3>Fallback by cause</h3>" + _table(["Cause", "Share of cases"], rows, frozenset({1}))


def _list_table(title: str, header: list[str], rows: list[str]) -> str:
    if not rows:
        return f'<h3>{e(title)}</h3><p class="none">None.</p>'
    return f"<h3>{e(title)}</h3>" + _table([e(h) for h in header], rows)


def _td(value, cls: str = "") -> str:
    klass = f' class="{cls}"' if cls else ""
    return f"<td{klass}>{e(value)}</td>"


def _bad(flag) -> str:
    return "bad" if flag is False else ""


def _lists(provider: dict) -> str:
    violations = ((provider.get("gate_details") or {}).get("honest_partial") or {}).get("violations") or []
    partial = ["<tr>" + _td(v.get("case", fmt.NULL)) + _td(v.get("op", fmt.NULL)) + _td(v.get("call", fmt.NULL))
               + _td(v.get("reason", fmt.NULL)) + "</tr>" for v in violations if isinstance(v, dict)]
    contradictory = ["<tr>" + _td(c.get("case", fmt.NULL)) + _td(c.get("status", fmt.NULL))
                     + _td(", ".join(str(i) for i in c.get("claim_ids") or []) or fmt.NULL) + "</tr>"
                     for c in provider.get("contradictory") or [] if isinstance(c, dict)]
    injection = ["<tr>" + _td(d.get("path", fmt.NULL), "path") + _td(d.get("case") or fmt.NULL)
                 + _td(fmt.yes_no(d.get("flagged")), _bad(d.get("flagged")))
                 + _td(fmt.yes_no(d.get("contained")), _bad(d.get("contained")))
                 + _td("; ".join(str(r) for r in d.get("reasons") or []) or fmt.NULL) + "</tr>"
                 for d in provider.get("injection_documents") or [] if isinstance(d, dict)]
    unjudged = provider.get("unjudged") or {}
    unjudged_rows = [f"<tr>{_td(case)}{_num_td(str(len(unjudged[case] or [])))}</tr>" for case in sorted(unjudged)]
    hosts = ["<tr>" + _td(h.get("case", fmt.NULL)) + _td(h.get("host", fmt.NULL)) + _td(h.get("url", fmt.NULL), "url")
             + "</tr>" for h in provider.get("hosts_for_review") or [] if isinstance(h, dict)]
    return (_list_table("Honest-partial violations", ["Case", "Operation", "Call", "Reason"], partial)
            + _list_table("Contradictory cases", ["Case", "Status", "Claim ids"], contradictory)
            + _list_table("Injection documents", ["Document", "Case", "Flagged", "Contained", "Reasons"], injection)
            + '<div class="two"><div>'
            + _list_table("Relevant hosts for review (not in expect.hosts)", ["Case", "Host", "URL"], hosts)
            + "</div><div>"
            + _list_table("Unjudged URLs (counted as not relevant)", ["Case", "Unjudged URLs"], unjudged_rows)
            + "</div></div>")


def _counts(provider: dict) -> str:
    c = provider.get("counts") or {}
    items = [("cases run", fmt.integer(c.get("cases_run"))), ("scored", fmt.integer(c.get("cases_scored"))),
             ("forbidden", fmt.integer(c.get("forbidden_cases"))), ("claims", fmt.integer(c.get("claims"))),
             ("citable", fmt.integer(c.get("citable_claims"))), ("results", fmt.integer(c.get("results"))),
             ("useful answers", fmt.integer(c.get("useful_cases"))), ("total cost", fmt.cost(c.get("total_cost_usd"))),
             ("empty recall pools", fmt.integer(c.get("recall_cases_empty_pool")))]
    out = '<div class="counts">' + "".join(f"<span>{e(k)} <b>{e(v)}</b></span>" for k, v in items) + "</div>"
    missing = c.get("missing_cases") or []
    if missing:
        out += (f'<p class="warn"><b>The run lacks {len(missing)} golden case{"s" if len(missing) != 1 else ""}</b>; '
                f"the metrics cover the cases run: {e(', '.join(str(m) for m in missing))}</p>")
    return out


def _provider(report: dict, index: int, s: fmt.Standing) -> str:
    provider = fmt.providers(report).get(s.name)
    if s.rank is not None:
        badge = f'<span class="badge ranked">rank {s.rank}</span>'
    else:
        badge = f'<span class="badge disqualified">{"disqualified" if s.disqualified else "not ranked"}</span>'
    standing = "ranked" if s.rank is not None else "disqualified"
    out = [f'<section class="block provider {standing}" id="provider-{index}"><h2>{e(s.name)} {badge}</h2>']
    if s.rank is None and s.reasons:
        out.append('<ul class="reasons">' + "".join(f"<li>{e(r)}</li>" for r in s.reasons) + "</ul>")
    if not isinstance(provider, dict):
        out.append('<p class="none">The report has no metrics for this provider.</p></section>')
        return "".join(out)
    mode = (report.get("run") or {}).get("mode")
    out += [_counts(provider), _metrics_table(provider),
            '<div class="two"><div>', _latency(provider, mode), "</div><div>", _fallback(provider), "</div></div>",
            _lists(provider), "</section>"]
    return "".join(out)


def _problems(report: dict) -> str:
    rows = ["<tr>" + _td(p.get("path") or fmt.NULL, "path") + _td(p.get("message") or fmt.NULL) + "</tr>"
            for p in report.get("problems") or [] if isinstance(p, dict)]
    inner = _table(["File", "Problem"], rows) if rows else '<p class="none">None.</p>'
    return f'<section class="block" id="problems"><h2>Problems</h2>{inner}</section>'


def _definitions(report: dict) -> str:
    definitions = report.get("definitions") or {}
    if not isinstance(definitions, dict) or not definitions:
        return ""
    items = "".join(f"<dt>{e(k)}</dt><dd>{e(definitions[k])}</dd>" for k in sorted(definitions))
    return f'<section class="block" id="definitions"><h2>Definitions</h2><dl class="defs">{items}</dl></section>'


def render_html(report: dict) -> str:
    standings = fmt.standings(report)
    run = report.get("run") or {}
    title = f"centinela score report · run {run.get('id') or fmt.NULL}"
    nav = ('<nav class="toc"><a href="#ranking">Ranking</a><a href="#gates">Hard gates</a>'
           '<a href="#heatmap">By category</a>'
           + "".join(f'<a href="#provider-{i}">{e(s.name)}</a>' for i, s in enumerate(standings, 1))
           + '<a href="#problems">Problems</a></nav>')
    body = [_header(report), "<main>", nav, _cards(report, standings), _ranking(report, standings),
            _gates(report, standings), _heatmap(report, standings)]
    body += [_provider(report, i, s) for i, s in enumerate(standings, 1)]
    body += [_problems(report), _definitions(report), "</main>"]
    return ("<!DOCTYPE html>\n"
            f'<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{e(title)}</title><style>{CSS}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")
