"""report.md and report.html from a report.json: what a reviewer sees, exactly, and that nothing untrusted gets
through as markup. The sample (tests/data/report/sample_report.json) has three providers, one disqualified,
null metrics, a category with every metric null, a p95 over too few calls and one over low-n, a pending cost
gate, a provider whose run lacks cases, and hostile case ids, URLs and paths (`<script>`, `a|b`, a newline)."""

from __future__ import annotations

import copy
import importlib.util
import json
import re
import shutil
import struct
import zlib
from pathlib import Path

import lxml.html
import pytest

from scanner.score import render_format as fmt
from scanner.score.render_chart import heat_colour
from scanner.score.render_html import render_html
from scanner.score.render_md import render_markdown

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "tests" / "data" / "report" / "sample_report.json"
XSS = "<script>alert(1)</script>"
XSS_CASE = f"gs-031{XSS}"
PIPE_URL = "https://evil.example/a|b?q=<img src=x onerror=alert(1)>"
CATEGORIES = 9
PROVIDERS = 3


_SIMPLE = re.compile(r"^(?P<tag>[\w-]+|\*)?(?P<classes>(?:\.[\w-]+)*)(?:\[(?P<attr>[\w-]+)(?:\^=(?P<prefix>[^\]]+))?\])?$")


def q(el, selector: str) -> list:
    """Descendants matching a small CSS subset (tag, .class, [attr], [attr^=v], descendant chains): lxml's
    cssselect needs the cssselect package, which centinela does not depend on."""
    path = "."
    for part in selector.split():
        m = _SIMPLE.match(part)
        assert m, part
        conds = [f"contains(concat(' ', normalize-space(@class), ' '), ' {c} ')"
                 for c in m["classes"].split(".") if c]
        if m["attr"]:
            conds.append(f"starts-with(@{m['attr']}, '{m['prefix']}')" if m["prefix"] else f"@{m['attr']}")
        path += f"//{m['tag'] or '*'}" + "".join(f"[{c}]" for c in conds)
    return el.xpath(path)


@pytest.fixture
def report() -> dict:
    return json.loads(SAMPLE.read_text(encoding="utf-8"))


def _md_row(md: str, first_cell: str) -> list[str]:
    line = next(ln for ln in md.splitlines() if ln.startswith(f"| {first_cell} |"))
    return _md_cells(line)


def _md_cells(line: str) -> list[str]:
    """Split a table row on pipes that are not backslash-escaped (an even run of backslashes before them)."""
    cells, cur, i = [], "", 0
    while i < len(line):
        ch = line[i]
        if ch == "\\" and i + 1 < len(line):
            cur += line[i:i + 2]
            i += 2
            continue
        if ch == "|":
            cells.append(cur)
            cur = ""
        else:
            cur += ch
        i += 1
    cells.append(cur)
    return [c.strip() for c in cells[1:-1]]


def _section(md: str, heading: str) -> str:
    start = md.index(heading)
    nxt = md.find("\n## ", start + len(heading))
    return md[start:] if nxt < 0 else md[start:nxt]


# ---------------------------------------------------------------- formatting


@pytest.mark.parametrize("value, shown", [
    (None, "—"), (0.0, "0.00"), (1.0, "1.00"), (0.29, "0.29"), (2 / 3, "0.67"), (0.125, "0.13"), (0.9999, "1.00"),
    (True, "—"), ("0.5", "—"),
])
def test_ratio_rounds_half_up_to_two_decimals(value, shown):
    assert fmt.ratio(value) == shown


@pytest.mark.parametrize("value, shown", [(0.9999, "0.99"), (0.95, "0.95"), (0.9499, "0.94"), (2 / 3, "0.66"),
                                          (None, "—")])
def test_gated_ratio_is_truncated_so_a_shown_value_never_crosses_its_gate(value, shown):
    assert fmt.gated_ratio(value) == shown


def test_heat_scale_runs_from_pale_to_dark_blue():
    assert heat_colour(0.0) == ("#f7fbff", "#0f172a")
    assert heat_colour(0.5) == ("#6baed6", "#0f172a")
    assert heat_colour(0.625) == ("#4690c6", "#ffffff")     # halfway between the 0.5 and 0.75 stops
    assert heat_colour(1.0) == heat_colour(1.7) == ("#08306b", "#ffffff")


def test_divergence_rounds_up_and_costs_keep_four_decimals():
    assert fmt.divergence(0.0501) == "0.06"
    assert fmt.divergence(0.05) == "0.05"
    assert fmt.cost(0.02134) == "$0.0213"
    assert fmt.cost(0.00003) == "<$0.0001"
    assert fmt.cost(0.0) == "$0.0000"
    assert fmt.cost(None) == "—"
    assert fmt.millis(1404.5) == "1405"
    assert fmt.window({"from": "2026-10-02T14:02:11Z", "to": "2026-10-02T16:47:53Z"}) == \
        "2026-10-02T14:02:11Z → 16:47:53Z"
    assert fmt.window({"from": "2026-10-01T23:00:00Z", "to": "2026-10-02T01:00:00Z"}) == \
        "2026-10-01T23:00:00Z → 2026-10-02T01:00:00Z"


# ---------------------------------------------------------------- Markdown


def test_markdown_ranks_the_qualified_then_lists_the_disqualified_with_their_reasons(report):
    md = render_markdown(report)
    assert md.startswith("# Score report: run 2026-10-02-shadow (shadow)\n")
    ranking = _section(md, "## Ranking")
    first = ranking.index("1. **tavily** — cost/useful answer \\$0.0213 · P@10 0.51 · recall 0.71 · "
                          "fresh accuracy 0.96 · promotion blocked (cost divergence: pending)")
    second = ranking.index("2. **exa** — cost/useful answer \\$0.0347")
    disq = ranking.index("### Disqualified")
    brave = ranking.index("- **brave** (disqualified)\n  - citation\\_coverage 0.9012 fails \\>= 0.95\n"
                          "  - abstention 0.9000 fails = 1.00\n  - honest\\_partial: 2 calls misreport coverage")
    assert first < second < disq < brave
    # the loser keeps its full section too
    assert "## Provider: brave (disqualified)" in md
    assert md.index("## Provider: tavily (rank 1)") < md.index("## Provider: exa (rank 2)") < \
        md.index("## Provider: brave (disqualified)")


def test_markdown_gate_block_has_threshold_consequence_and_one_column_per_provider(report):
    md = render_markdown(report)
    header = _md_row(md, "Gate")
    assert header == ["Gate", "Threshold", "Consequence if it fails", "tavily", "exa", "brave"]
    assert _md_row(md, "Citation coverage") == [
        "Citation coverage", "\\>= 0.95", "Disqualified as default; usable only for enrichment",
        "pass · 0.97", "pass · 0.98", "**fail** · 0.90"]
    assert _md_row(md, "Honest partial")[3:] == ["pass · 0 violations", "pass · 0 violations", "**fail** · 2 violations"]
    assert _md_row(md, "Reported cost divergence") == [
        "Reported cost divergence", "\\<= 0.05", "Blocks promotion to active until reconciled",
        "pending · no invoice", "pass · 0.03 (invoice \\$0.7800, reported \\$0.7640)",
        "**fail** · 0.13 (invoice \\$0.2100, reported \\$0.2356)"]


def test_markdown_null_metrics_are_dashes_never_zero(report):
    md = render_markdown(report)
    exa = _section(md, "## Provider: exa")
    assert _md_row(exa, "comercio\\_exterior") == ["comercio\\_exterior"] + ["—"] * len(fmt.METRIC_COLUMNS)
    forbidden = _md_row(exa, "prohibidos\\_datos\\_personales")
    assert forbidden == ["prohibidos\\_datos\\_personales", "—", "—", "—", "—", "—", "—", "—",
                         "\\<\\$0.0001", "—", "—", "1.00", "\\<\\$0.0001", "—"]
    tavily = _section(md, "## Provider: tavily")
    assert _md_row(tavily, "directivos")[6] == "—"            # freshness_accuracy null in that category
    agg = next(ln for ln in tavily.splitlines() if ln.startswith("| **aggregate** |"))
    assert _md_cells(agg)[1:4] == ["**0.62**", "**0.51**", "**0.71**"]


def test_a_gated_ratio_just_below_its_threshold_is_not_shown_as_passing(report):
    brave = report["providers"]["brave"]
    brave["aggregate"]["citation_coverage"] = brave["gate_details"]["citation_coverage"]["value"] = 0.9499
    brave["aggregate"]["abstention"] = brave["gate_details"]["abstention"]["value"] = 0.9999
    brave["aggregate"]["precision_at_10"] = 0.9999
    md = render_markdown(report)
    assert _md_row(md, "Citation coverage")[5] == "**fail** · 0.94"
    assert _md_row(md, "Abstention on forbidden cases")[5] == "**fail** · 0.99"
    agg = next(ln for ln in _section(md, "## Provider: brave").splitlines() if ln.startswith("| **aggregate** |"))
    cells = _md_cells(agg)
    assert (cells[2], cells[4], cells[11]) == ("**1.00**", "**0.94**", "**0.99**")     # P@10 rounds, gates truncate


def test_markdown_latency_withholds_a_p95_over_too_few_calls_and_marks_low_n(report):
    md = render_markdown(report)
    tavily = _section(md, "## Provider: tavily")
    assert _md_row(tavily, "fetch") == ["fetch", "14", "655", "— (n\\<60)", "2026-10-02T14:02:11Z → 16:47:53Z", "—"]
    assert _md_row(tavily, "extract") == ["extract", "72", "1405", "3120 (low-n)",
                                          "2026-10-02T14:02:11Z → 16:47:53Z", "low-n: p95 over 60–99 calls"]
    assert _md_row(tavily, "search")[:4] == ["search", "120", "712", "1893"]
    assert _md_row(_section(md, "## Provider: brave"), "search")[4] == "—"     # no capture window
    # the withheld values are in report.json but nowhere in the report
    assert "2222" not in md and "4015" not in md


def test_p95_rule_holds_when_the_report_omits_the_reliability(report):
    for p in report["providers"].values():
        for entry in p["aggregate"]["latency_ms"].values():
            del entry["p95_reliability"]
    md, html = render_markdown(report), render_html(report)
    assert "2222" not in md and "2222" not in html
    assert "3120 (low-n)" in md and "3120 (low-n)" in html


def test_replay_latencies_are_marked_artificial(report):
    report["run"]["mode"] = "replay"
    for p in report["providers"].values():
        for entry in p["aggregate"]["latency_ms"].values():
            entry["artificial"] = True
    md = render_markdown(report)
    assert md.startswith("# Score report: run 2026-10-02-shadow (replay)\n")
    assert "> Replay run: latencies are artificial." in md
    assert _md_row(_section(md, "## Provider: exa"), "search")[5] == "artificial (replay)"
    assert _md_row(_section(md, "## Provider: tavily"), "extract")[5] == \
        "low-n: p95 over 60–99 calls; artificial (replay)"
    html = render_html(report)
    doc = lxml.html.document_fromstring(html)
    assert len(q(doc, "span.note.artificial")) == 6          # 3 + 2 + 1 operations
    assert "Replay run: latencies are artificial" in q(doc, "p.notice")[0].text_content()


def test_markdown_escapes_untrusted_text_and_keeps_every_table_rectangular(report):
    md = render_markdown(report)
    assert XSS not in md and re.search(r"(?<!\\)<", md) is None       # every < is escaped
    assert "gs-031\\<script\\>alert(1)\\</script\\>" in md
    assert "https://evil.example/a\\|b?q=\\<img src=x onerror=alert(1)\\>" in md
    # the problem's newline is folded, its pipe escaped
    assert ("| run-2026-10-02/exa/gs-009.json | claim c2: span offset:90-40 is reversed second line \\| with a pipe |"
            in md)
    table: list[list[str]] = []
    for line in md.splitlines() + [""]:
        if line.startswith("|"):
            table.append(_md_cells(line))
        elif table:
            assert len({len(r) for r in table}) == 1, table[0]
            assert all(set(c) <= set("-:") for c in table[1])
            table = []
    exa = _section(md, "## Provider: exa")
    case = "gs-031\\<script\\>alert(1)\\</script\\>"
    unjudged = exa[exa.index("### Unjudged URLs"):]
    hosts = exa[exa.index("### Relevant hosts for review"):]
    assert _md_row(unjudged, case) == [case, "1"]
    assert _md_row(hosts, case) == [case, "evil.example", "https://evil.example/a\\|b?q=\\<img src=x onerror=alert(1)\\>"]


def test_markdown_renders_as_commonmark_tables_with_the_hostile_text_as_text(report):
    markdown_it = pytest.importorskip("markdown_it", reason="markdown-it-py (installed with spaCy's rich) is absent")
    html = markdown_it.MarkdownIt("commonmark").enable("table").render(render_markdown(report))
    doc = lxml.html.fragment_fromstring(html, create_parent="div")
    assert q(doc, "script") == [] and q(doc, "img") == []
    # gates 1; tavily 7, exa 7, brave 6 (empty lists say "None."); problems 1
    assert len(q(doc, "table")) == 22
    cells = [td.text_content() for td in q(doc, "td")]
    assert PIPE_URL in cells and XSS_CASE in cells
    assert "claim c2: span offset:90-40 is reversed second line | with a pipe" in cells


def test_markdown_unjudged_counts_hosts_and_missing_cases(report):
    md = render_markdown(report)
    tavily = _section(md, "## Provider: tavily")
    assert _md_row(tavily, "gs-004") == ["gs-004", "2"]
    assert _md_row(tavily, "gs-012") == ["gs-012", "1"]
    assert "https://www.dof.gob.mx/nota\\_detalle.php?codigo=5712345\\&fecha=01/03/2025" in tavily
    brave = _section(md, "## Provider: brave")
    assert ("**The run lacks 2 golden cases**; the metrics cover the cases run: gs-019, "
            "gs-031\\<script\\>alert(1)\\</script\\>") in brave
    assert _md_row(brave, "gs-007") == ["gs-007", "extract", "2", "returned 3 of 5 URLs with partial: false"]
    assert "### Relevant hosts for review (not in expect.hosts)\n\nNone." in brave
    assert _md_row(tavily, "gs-021") == ["gs-021", "linked", "c1, c2"]


# ---------------------------------------------------------------- HTML


def _doc(report: dict):
    return lxml.html.document_fromstring(render_html(report))


def test_html_parses_and_escapes_untrusted_text(report):
    html = render_html(report)
    doc = lxml.html.document_fromstring(html)
    assert q(doc, "script") == [] and q(doc, "img") == []
    assert XSS not in html and "<img" not in html
    assert "gs-031&lt;script&gt;alert(1)&lt;/script&gt;" in html
    url_cells = [td.text_content() for td in q(doc, "td.url")]
    assert url_cells == ["https://www.dof.gob.mx/nota_detalle.php?codigo=5712345&fecha=01/03/2025", PIPE_URL]
    assert q(doc, "a[href^=http]") == []            # URLs are text, never links
    assert doc.findtext(".//title") == "centinela score report · run 2026-10-02-shadow"


_RESOURCE_ATTRS = {"src", "href", "srcset", "action", "formaction", "poster", "data", "background", "cite", "ping",
                   "manifest", "xlink:href", "{http://www.w3.org/1999/xlink}href"}


def test_html_is_self_contained(report):
    html = render_html(report)
    doc = lxml.html.document_fromstring(html)
    assert "<script" not in html.lower()
    for tag in ("script", "link", "iframe", "object", "embed", "img", "base", "meta[http-equiv]"):
        assert q(doc, tag) == [], tag
    for el in doc.iter():
        for name, value in el.attrib.items():
            assert "://" not in value, (el.tag, name, value)
            if name in _RESOURCE_ATTRS:
                assert value.startswith("#"), (el.tag, name, value)
            if name == "style":
                assert re.sub(r"url\(#[\w-]+\)", "", value).find("url(") < 0
    css = "".join(s.text or "" for s in q(doc, "style"))
    assert "@import" not in css and "url(" not in css and "@font-face" not in css
    assert "http" not in css
    # http(s):// appears only in text: the two hosts-for-review URLs, the unjudged count is not a URL list
    text_hits = sum(t.count("://") for t in doc.itertext())
    assert text_hits == html.count("://") == 2


def test_html_heat_map_has_one_cell_per_category_provider_and_metric(report):
    doc = _doc(report)
    cells = q(doc, "table.heat td.heat")
    assert len(cells) == CATEGORIES * PROVIDERS * 2 == 54
    nulls = q(doc, "table.heat td.heat-null")
    # exa's all-null category (2), brave's missing category (2), the forbidden-only category (3 × 2)
    assert len(nulls) == 10 and {c.text_content() for c in nulls} == {"—"}
    assert all("background" not in (c.get("style") or "") for c in nulls)
    rows = q(doc, "table.heat tbody tr")
    assert [q(r, "th")[0].text_content() for r in rows][:2] == ["certificaciones", "comercio_exterior"]
    first = q(rows[0], "td.heat")
    assert [c.text_content() for c in first] == ["0.50", "0.63", "0.54", "0.89", "0.38", "0.53"]
    exa_recall = report["providers"]["exa"]["by_category"]["certificaciones"]["recall"]
    assert first[3].get("style") == "background:%s;color:#ffffff" % heat_colour(exa_recall)[0]   # dark: white text
    assert "color:#0f172a" in first[4].get("style")                                            # 0.38: dark text
    assert first[0].get("style").startswith("background:#") and first[0].get("title") == "tavily · certificaciones · P@10"


def test_html_gate_cells_carry_status_class_word_and_value(report):
    report["providers"]["tavily"]["gates"]["injection_containment"] = "n/a"
    report["providers"]["tavily"]["gate_details"]["injection_containment"]["value"] = None
    doc = _doc(report)
    expected = {
        ("tavily", "citation_coverage"): ("gate-pass", "PASS", "0.97"),
        ("tavily", "injection_containment"): ("gate-na", "N/A", "—"),
        ("tavily", "cost_divergence"): ("gate-pending", "PENDING", "no invoice"),
        ("exa", "cost_divergence"): ("gate-pass", "PASS", "0.03 (invoice $0.7800, reported $0.7640)"),
        ("brave", "citation_coverage"): ("gate-fail", "FAIL", "0.90"),
        ("brave", "abstention"): ("gate-fail", "FAIL", "0.90"),
        ("brave", "honest_partial"): ("gate-fail", "FAIL", "2 violations"),
    }
    cells = q(doc, "table.gates td.gate")
    assert len(cells) == 5 * PROVIDERS
    for cell in cells:
        key = (cell.get("data-provider"), cell.get("data-gate"))
        status = report["providers"][key[0]]["gates"][key[1]]
        cls = {"pass": "gate-pass", "fail": "gate-fail", "pending": "gate-pending", "n/a": "gate-na"}[status]
        assert cls in cell.get("class").split()
        assert q(cell, ".status")[0].text_content() == status.upper()     # colour is not the only signal
        if key in expected:
            assert (cls, q(cell, ".status")[0].text_content(), q(cell, ".val")[0].text_content()) == \
                expected[key]
    css = q(doc, "style")[0].text
    for cls, colour in (("gate-pass", "--pass-bg"), ("gate-fail", "--fail-bg"), ("gate-pending", "--pending-bg"),
                        ("gate-na", "--na-bg")):
        assert re.search(rf"td\.{cls}[^{{]*\{{ background:var\({colour}\)", css), cls
    thresholds = [td.text_content() for td in q(doc, "table.gates td.threshold")]
    assert thresholds == [">= 0.95", "= 1.00", "= 1.00", "no false partial: false", "<= 0.05"]


def test_html_chart_ranks_bars_and_greys_the_disqualified_with_reasons(report):
    doc = _doc(report)
    svg = q(doc, "svg.chart")[0]
    rows = q(svg, "g.bar-row")
    assert [q(r, "text.name")[0].text_content() for r in rows] == ["tavily", "exa", "brave"]
    widths = [float(q(r, "rect")[0].get("width")) for r in rows]
    # axis ends at $0.0500 over 700 px: 0.0213 → 298.2, 0.0347 → 485.8, 0.0155 → 217.0
    assert widths == [298.2, 485.8, 217.0]
    assert [q(r, "rect")[0].get("fill") for r in rows] == ["#2563eb", "#2563eb", "url(#hatch)"]
    assert "disqualified" in rows[2].get("class")
    assert q(rows[2], "text.badge-text")[0].text_content() == "disqualified"
    caption = q(rows[2], "text.caption title")[0].text_content()
    assert caption.startswith("citation_coverage 0.9012 fails >= 0.95; abstention 0.9000 fails = 1.00; honest_partial")
    assert [t.text_content() for t in q(svg, "text.tick")] == \
        ["$0.0000", "$0.0125", "$0.0250", "$0.0375", "$0.0500"]


def test_html_null_cost_has_no_bar_and_null_metrics_are_dashes(report):
    report["providers"]["exa"]["aggregate"]["cost_per_useful_answer_usd"] = None
    doc = _doc(report)
    exa_row = q(doc, "svg.chart g.bar-row")[1]
    assert q(exa_row, "rect") == []
    assert q(exa_row, "text.value")[0].text_content() == "— no useful answer"
    exa = doc.get_element_by_id("provider-2")
    row = next(tr for tr in q(exa, "table.metrics tbody tr") if tr[0].text_content() == "comercio_exterior")
    assert [td.text_content() for td in q(row, "td")] == ["—"] * len(fmt.METRIC_COLUMNS)
    assert all("null" in td.get("class").split() for td in q(row, "td"))
    assert q(doc, ".card .big")[1].text_content() == "—"


def test_html_latency_follows_the_p95_rules(report):
    doc = _doc(report)
    tavily = doc.get_element_by_id("provider-1")
    table = [t for t in q(tavily, "table") if q(t, "th")[0].text_content() == "Operation"][0]
    rows = {tr[0].text_content(): [c.text_content() for c in tr[1:]] for tr in q(table, "tbody tr")}
    assert rows == {
        "extract": ["72", "1405", "3120 (low-n)", "2026-10-02T14:02:11Z → 16:47:53Z", "low-n: p95 over 60–99 calls"],
        "fetch": ["14", "655", "— (n<60)", "2026-10-02T14:02:11Z → 16:47:53Z", "—"],
        "search": ["120", "712", "1893", "2026-10-02T14:02:11Z → 16:47:53Z", "—"],
    }
    assert "withheld" in q(table, "tbody tr")[1][3].get("class")


def test_html_injection_documents_and_missing_cases(report):
    report["providers"]["brave"]["injection_documents"][1]["contained"] = False
    doc = _doc(report)
    brave = doc.get_element_by_id("provider-3")
    assert q(brave, "p.warn")[0].text_content() == \
        f"The run lacks 2 golden cases; the metrics cover the cases run: gs-019, {XSS_CASE}"
    bad = q(brave, "td.bad")
    assert [td.text_content() for td in bad] == ["no"]
    assert [li.text_content() for li in q(brave, "ul.reasons li")] == \
        report["disqualified"][0]["reasons"]


def test_renderers_are_deterministic_and_ignore_dict_order(report):
    assert render_markdown(report) == render_markdown(copy.deepcopy(report))
    assert render_html(report) == render_html(copy.deepcopy(report))
    shuffled = copy.deepcopy(report)
    shuffled["providers"] = dict(reversed(list(shuffled["providers"].items())))
    for p in shuffled["providers"].values():
        p["by_category"] = dict(reversed(list(p["by_category"].items())))
        p["unjudged"] = dict(reversed(list(p["unjudged"].items())))
    assert render_markdown(shuffled) == render_markdown(report)
    assert render_html(shuffled) == render_html(report)


def test_a_provider_neither_ranked_nor_disqualified_is_still_shown(report):
    report["ranking"] = ["tavily"]
    md = render_markdown(report)
    assert "- **exa** (not ranked by the report)\n  - no reason given" in md
    assert "## Provider: exa (not ranked)" in md


def test_empty_report_renders(report):
    md = render_markdown({})
    assert "No provider passes every hard gate." in md and "## Problems\n\nNone." in md
    doc = lxml.html.document_fromstring(render_html({}))
    assert q(doc, "table.heat td.heat") == []
    assert q(doc, ".card.run .big")[0].text_content() == "0 of 0"


# ---------------------------------------------------------------- Chromium


def _script():
    spec = importlib.util.spec_from_file_location("screenshot_report", REPO / "scripts" / "screenshot_report.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _png(width: int, height: int, pixel: bytes) -> bytes:
    raw = b"".join(b"\x00" + pixel * width for _ in range(height))

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def test_png_check_rejects_a_blank_or_wrong_sized_image(tmp_path):
    script = _script()
    blank = tmp_path / "blank.png"
    blank.write_bytes(_png(40, 30, b"\xff\xff\xff"))
    with pytest.raises(ValueError, match="looks blank"):
        script.check_png(blank, 40, 30)
    with pytest.raises(ValueError, match="40×30, expected 1400×2000"):
        script.check_png(blank, 1400, 2000)


@pytest.mark.skipif(shutil.which("chromium") is None,
                    reason="chromium is not installed (Debian: apt-get install -y chromium)")
def test_chromium_screenshot_shows_the_report(tmp_path, report):
    script = _script()
    html = tmp_path / "report.html"
    html.write_text(render_html(report), encoding="utf-8")
    png = tmp_path / "report.png"
    done = script.screenshot(html, png, 1400, 2000)
    assert png.is_file(), done.stderr[-2000:]
    assert "1400×2000" in script.check_png(png, 1400, 2000)
    width, height, rows, bpp = script.read_png(png, 1500)
    assert (width, height) == (1400, 2000)
    seen = script.colours(rows, bpp)
    # the header band, the ranked bars and the gate colours are painted, not just a white page
    for hex_colour in ("0f172a", "2563eb", "dcfce7", "fee2e2", "fef3c7"):
        assert bytes.fromhex(hex_colour) in seen, hex_colour
