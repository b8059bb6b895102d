"""review.html: a scan result as one self-contained page for a security reviewer.

A summary (files, injection findings per vector and rule, secrets and personal data masked), then one section
per file with findings: each injection finding (rule id, name, severity, vector, channel, position, message,
evidence, every explanation field it carries, what `centinela contain` does with it), and the page as a person
sees it next to what a model reads, the flagged text highlighted with its rule and vector. Files without
findings and files that could not be read are listed briefly at the end.

`render_review(result, rules)` is a pure function of the `ScanResult` (its findings, documents, errors and the
views `Scanner(review=True)` captured) and the rules' metadata: it reopens no file. Secrets and personal data
are masked in the views before they reach the result (scanner.review.capture); the page shows only those
masked forms. No script, font, stylesheet, image or URL: inline CSS under a Content-Security-Policy that
forbids everything else; every fixture string is escaped with its invisible characters made visible
(scanner.review.text); URLs are text, never links (the only links are anchors within the page). The look is
the score report's (scanner.score.render_html).
"""

from __future__ import annotations

from collections import Counter
from typing import Mapping

from scanner import TOOL_NAME, __version__
from scanner.findings import SEVERITY_ORDER, Finding
from scanner.review.capture import SENSITIVE_KINDS, finding_key
from scanner.review.text import attr, html
from scanner.scrub import scrub_path, scrub_text
from scanner.score.render_html import CSS as REPORT_CSS

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
NULL = "—"

CHANNEL_LABEL = {
    "visible_text": "visible text", "title": "title", "comment": "HTML comment", "attribute": "attribute",
    "link": "link", "json_ld": "JSON-LD", "script": "script", "style": "style", "noscript": "noscript",
    "template": "template", "svg_text": "SVG text", "textarea": "textarea", "json_string": "JSON string",
    "json_key": "JSON key", "http_header_name": "HTTP header name", "http_header_value": "HTTP header",
    "http_url": "request URL", "pdf_text": "PDF text", "pdf_metadata": "PDF metadata", "plain_text": "text",
    "json_ld_key": "JSON-LD key",
}
HIDDEN_LABEL = {"visible_text": "CSS-hidden text", "pdf_text": "PDF hidden layer", "attribute": "hidden attribute",
                "svg_text": "hidden SVG text", "textarea": "hidden textarea"}
LOCATED = frozenset({"json_string", "json_key", "attribute", "json_ld", "http_header_value", "http_url", "link",
                     "pdf_metadata"})
CONTAIN_WORDS = {"fenced": "fenced: passed to the model inside a ⟦flagged⟧ fence",
                 "dropped": "dropped: its channel is not passed to the model"}
SHOWN_ELSEWHERE = frozenset({"container"})     # extra fields the card already shows in its own words
SENSITIVE_ROWS = 200                           # per file; the rest are counted (every one is in scan.json and SARIF)

CSS = REPORT_CSS + """
header.top h1 .run { color:#c4b5fd; }
.legend-row { display:flex; flex-wrap:wrap; gap:8px 20px; font-size:12.5px; color:#334155; margin:10px 0 0; }
.cards.review { grid-template-columns:repeat(4, minmax(0, 1fr)); }
.card.inj { border-top-color:#d97706; } .card.masks { border-top-color:#64748b; } .card.files { border-top-color:#0f172a; }
.card.contain { border-top-color:#0f766e; }
section.file { border-left:5px solid #d97706; }
section.file.sensitive-only { border-left-color:#94a3b8; }
section.file h2 { display:flex; flex-wrap:wrap; align-items:baseline; gap:4px 10px; }
section.file h2 .path { font-family:ui-monospace, "DejaVu Sans Mono", "Liberation Mono", monospace; font-size:15px;
  overflow-wrap:anywhere; }
.badge.expected { background:#ccfbf1; color:#115e59; }
.badge.suppressed { background:#f1f5f9; color:#475569; }
ol.findings { list-style:none; margin:10px 0 0; padding:0; display:grid;
  grid-template-columns:repeat(auto-fill, minmax(420px, 1fr)); gap:10px; }
li.finding { border:1px solid var(--line); border-left:4px solid #d97706; border-radius:8px; padding:8px 12px;
  background:#fffdf8; font-size:13px; }
li.finding .fhead { display:flex; flex-wrap:wrap; align-items:baseline; gap:4px 8px; margin-bottom:3px; }
li.finding .num { font-weight:700; color:#92400e; }
li.finding .rule { font-family:ui-monospace, "DejaVu Sans Mono", monospace; font-weight:700; }
li.finding .rname { font-weight:600; color:#334155; }
li.finding .fmsg { color:#334155; margin-bottom:4px; overflow-wrap:anywhere; }
dl.fmeta { display:grid; grid-template-columns:max-content minmax(0, 1fr); gap:1px 12px; margin:0; font-size:12.5px; }
dl.fmeta dt { color:var(--muted); } dl.fmeta dd { margin:0; overflow-wrap:anywhere; }
dl.fmeta dd.ev { font-style:italic; color:#451a03; }
.sev { font-size:11.5px; padding:0 8px; border-radius:999px; font-weight:700; letter-spacing:.03em; }
.sev-error { background:var(--fail-bg); color:var(--fail); } .sev-warning { background:var(--pending-bg); color:var(--pending); }
.sev-note { background:var(--na-bg); color:var(--na); }
.vec { font-size:11.5px; padding:0 8px; border-radius:999px; background:#ede9fe; color:#5b21b6; font-weight:600; }
.views { display:grid; grid-template-columns:minmax(0, 1fr) minmax(0, 1fr); gap:16px; margin:14px 0 4px; }
.views.one { grid-template-columns:minmax(0, 1fr); }
.view { border:1px solid var(--line); border-radius:8px; background:#fff; overflow:hidden; }
.view h3 { margin:0; padding:7px 14px; font-size:13px; background:#f8fafc; border-bottom:1px solid var(--line);
  color:#1e293b; }
.view h3 .sub { font-weight:400; color:var(--muted); }
.view.person h3 { border-top:3px solid #0f766e; } .view.model h3 { border-top:3px solid #7c3aed; }
.view.both h3 { border-top:3px solid #475569; }
.view .body { padding:10px 14px 6px; font-size:13.5px; line-height:1.5; }
.row { margin:0 0 7px; overflow-wrap:anywhere; }
.row.title { font-weight:650; font-size:14.5px; }
.pre { white-space:pre-wrap; }
.unit { border-left:3px solid #e2e8f0; padding:1px 0 1px 9px; }
.unit.hid { border-left-color:#a78bfa; background:#f5f3ff; border-radius:0 4px 4px 0; }
.chl { font-size:11.5px; color:var(--muted); display:flex; flex-wrap:wrap; gap:0 8px; }
.chl .chan { font-weight:650; color:#64748b; }
.unit.hid .chl .chan { color:#6d28d9; }
.chl .why { color:#6d28d9; }
.loc { font-family:ui-monospace, "DejaVu Sans Mono", "Liberation Mono", monospace; font-size:11.5px; color:#64748b; }
.pagehead { font-size:11.5px; font-weight:700; color:#475569; letter-spacing:.05em; text-transform:uppercase;
  border-bottom:1px dashed #cbd5e1; margin:8px 0 6px; padding-bottom:2px; }
mark.inj { background:#fef3c7; color:#422006; border-bottom:2px solid #d97706; padding:0 2px; border-radius:2px; }
a.tag { display:inline-block; font-size:11px; line-height:1.55; font-weight:700; font-style:normal; color:#92400e;
  background:#fff; border:1px solid #f59e0b; border-radius:999px; padding:0 7px; margin:0 5px 0 0;
  text-decoration:none; white-space:nowrap; vertical-align:1px; }
.placeholder { border:1px dashed #a78bfa; background:#faf5ff; color:#5b21b6; border-radius:6px; padding:3px 8px;
  font-size:12.5px; }
.masked { font-family:ui-monospace, "DejaVu Sans Mono", monospace; font-size:12px; background:#e2e8f0;
  color:#1e293b; border-radius:3px; padding:0 4px; white-space:nowrap; }
.masked .mk { font-family:system-ui, sans-serif; font-size:10px; font-weight:700; color:#64748b;
  letter-spacing:.04em; text-transform:uppercase; }
.ctl { font-family:ui-monospace, "DejaVu Sans Mono", monospace; font-size:11px; color:#9f1239; background:#ffe4e6;
  border-radius:3px; padding:0 3px; }
.gap, .omitted { color:#94a3b8; font-style:italic; font-size:12px; }
p.skipped { color:var(--muted); font-size:12px; margin:4px 14px 10px; }
ul.files { columns:3 320px; margin:6px 0 0; padding-left:18px; font-size:12.5px; }
ul.files li { overflow-wrap:anywhere; font-family:ui-monospace, "DejaVu Sans Mono", monospace; }
section#files td.path { width:46%; }
td.rule { font-family:ui-monospace, "DejaVu Sans Mono", monospace; font-size:12px; white-space:nowrap; }
.legend-row .swatch { display:inline-block; min-width:26px; text-align:center; margin-right:5px; }
"""


# ----------------------------------------------------------------------------------------- small helpers

def rule_names(scanner) -> dict[str, str]:
    """Rule id → name of every rule a `Scanner` runs (its rule metadata, and the personal-data recognizers)."""
    names = {m.id: m.name for m in scanner.rule_metas()}
    if getattr(scanner, "pii", None) is not None:
        from scanner.pii.scanner import RULES

        for rule_id, description in RULES.values():
            names.setdefault(rule_id, description)
    return names


def _where(f: Finding) -> str:
    span = f"characters {f.start}–{f.end}" if f.end > f.start else f"character {f.start}"
    if f.page:
        return f"page {f.page}, {span} of the page text"
    if f.line:
        return f"line {f.line}, column {f.column}, {span}"
    return span


def _value(v) -> str:
    if v is None:
        return NULL
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return format(v, ".4g")
    if isinstance(v, (list, tuple)):
        return ", ".join(_value(x) for x in v) or NULL
    if isinstance(v, dict):
        return "; ".join(f"{k}: {_value(x)}" for k, x in v.items()) or NULL
    return str(v)


def _sev(severity: str) -> str:
    cls = severity if severity in SEVERITY_ORDER else "note"
    return f'<span class="sev sev-{cls}">{html(severity)}</span>'


def _plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


class _File:
    """One scanned file as the page shows it."""

    def __init__(self, path: str, entry: dict, findings: list[Finding], view: dict | None):
        self.path = path
        self.entry = entry
        self.view = view
        self.injections = [f for f in findings if f.kind == "injection"]
        self.sensitive = [f for f in findings if f.kind in SENSITIVE_KINDS]
        self.others = [f for f in findings if f.kind not in SENSITIVE_KINDS and f.kind != "injection"]
        self.scrubbed = (view or {}).get("scrubbed") or {}

    def text_of(self, f: Finding, name: str):
        """A finding's text as the page may show it: the masked copy when it held a datum."""
        over = self.scrubbed.get(finding_key(f)) or {}
        if name in over:
            return over[name]
        if name.startswith("extra."):
            return f.extra.get(name[6:])
        return getattr(f, name)


# ---------------------------------------------------------------------------------------------- sections

def _header(result, files: list[_File]) -> str:
    roots = sorted({str(b) for b in (result.roots or {}).values()})
    meta = [f"<span>scanned <b>{_plural(result.files_scanned, 'file')}</b></span>"]
    if roots:
        meta.append(f"<span>from <b>{html(', '.join(roots))}</b></span>")
    meta.append(f"<span>{html(TOOL_NAME)} <b>{html(__version__)}</b></span>")
    return ('<header class="top"><h1>Reviewer page · <span class="run">hidden prompt injection</span></h1>'
            f'<div class="meta">{"".join(meta)}</div>'
            '<p class="notice">Secrets and personal data are masked everywhere on this page. Nothing from the '
            "fixtures runs or loads here: no script, no remote resource, addresses are text, never links.</p>"
            "</header>")


def _cards(result, files: list[_File]) -> str:
    inj = [f for x in files for f in x.injections]
    sens = [f for x in files for f in x.sensitive]
    vectors = {f.vector for f in inj if f.vector}
    flagged_files = sum(1 for x in files if x.injections)
    secrets = sum(1 for f in sens if f.kind == "secret")
    personal = len(sens) - secrets
    in_text = sum(int((x.view or {}).get("masked") or 0) for x in files)
    contain = Counter((x.view or {}).get("contain", {}).get(finding_key(f), "unknown") for x in files
                      for f in x.injections)
    with_findings = sum(1 for x in files if x.injections or x.sensitive or x.others)
    errors = len(result.errors)
    cards = [
        ('card inj', "Injection findings", f"{len(inj):,}",
         f"in {_plural(flagged_files, 'file')} · {_plural(len(vectors), 'vector')}"),
        ('card masks', "Masked", _plural(len(sens), "finding"),
         f"{_plural(secrets, 'secret')} · {_plural(personal, 'personal datum', 'personal data')}; and "
         f"{_plural(in_text, 'span')} of the page text shown"),
        ('card contain', "Containment", f"{contain.get('fenced', 0):,} fenced",
         f"{contain.get('dropped', 0):,} dropped with their channel: what centinela contain does with each "
         "flagged span before a model reads the page"),
        ('card files', "Files", f"{result.files_scanned:,} scanned",
         f"{with_findings:,} with findings · {result.files_scanned - with_findings:,} without · "
         f"{errors:,} not readable"),
    ]
    out = ['<div class="cards review">']
    for cls, name, big, sub in cards:
        out.append(f'<div class="{cls}"><div class="who"><span class="name">{html(name)}</span></div>'
                   f'<div class="big">{html(big)}</div><div class="sub">{html(sub)}</div></div>')
    return "".join(out + ["</div>"])


def _summary(result, files: list[_File], names: dict[str, str]) -> str:
    rows = {}
    for x in files:
        for f in x.injections:
            key = (f.vector or NULL, f.rule_id)
            row = rows.setdefault(key, {"n": 0, "files": set(), "severity": f.severity})
            row["n"] += 1
            row["files"].add(x.path)
    body = []
    for (vector, rule_id), row in sorted(rows.items()):
        body.append(f'<tr><td><span class="vec">{html(vector)}</span></td><td class="rule">{html(rule_id)}</td>'
                    f'<td>{html(names.get(rule_id) or NULL)}</td><td>{_sev(row["severity"])}</td>'
                    f'<td class="num">{row["n"]:,}</td><td class="num">{len(row["files"]):,}</td></tr>')
    table = (_table(["Vector", "Rule", "Name", "Severity", "Findings", "Files"], body, {4, 5}) if body
             else '<p class="none">No injection finding.</p>')
    sens = Counter()
    sens_files: dict = {}
    for x in files:
        for f in x.sensitive:
            k = (f.kind, f.entity or NULL, f.rule_id)
            sens[k] += 1
            sens_files.setdefault(k, set()).add(x.path)
    srows = [f'<tr><td>{html(kind)}</td><td>{html(entity)}</td><td class="rule">{html(rule_id)}</td>'
             f'<td>{html(names.get(rule_id) or NULL)}</td><td class="num">{n:,}</td>'
             f'<td class="num">{len(sens_files[(kind, entity, rule_id)]):,}</td></tr>'
             for (kind, entity, rule_id), n in sorted(sens.items())]
    stable = (_table(["Kind", "Entity", "Rule", "Name", "Findings (masked)", "Files"], srows, {4, 5}) if srows
              else '<p class="none">No secret or personal datum found.</p>')
    legend = ('<div class="legend-row">'
              '<span><mark class="inj">flagged</mark> text a rule flagged, with '
              '<a class="tag" href="#summary">n · RULE · vector</a></span>'
              '<span><span class="unit hid swatch">&#160;</span>a unit a person does not see</span>'
              '<span><span class="masked"><span class="mk">masked </span>jua…@x</span> a secret or personal datum</span>'
              '<span><span class="ctl">⟨RLO⟩</span> invisible or direction-control characters, by name</span>'
              "</div>")
    return ('<section class="block" id="summary"><h2>Summary</h2>'
            '<p class="lede">Each injection finding is shown below as a person sees the page next to what a model '
            "reads: every text unit of the file with its channel.</p>"
            + _cards(result, files) + "<h3>Injection findings by vector and rule</h3>" + table
            + "<h3>Secrets and personal data</h3>" + stable + legend + "</section>")


def _table(header: list[str], rows: list[str], numeric=frozenset()) -> str:
    num = ' class="num"'
    ths = "".join(f'<th scope="col"{num if i in numeric else ""}>{h}</th>' for i, h in enumerate(header))
    return f'<div class="scroll"><table><thead><tr>{ths}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'


def _files_table(files: list[_File]) -> str:
    rows = []
    for i, x in enumerate(files, 1):
        vectors = " ".join(f'<span class="vec">{html(v)}</span>' for v in sorted({f.vector or NULL for f in x.injections}))
        rules = ", ".join(sorted({f.rule_id for f in x.injections}))
        rows.append(f'<tr><td class="path"><a href="#file-{i}">{html(scrub_path(x.path))}</a></td><td>{vectors or NULL}</td>'
                    f'<td class="rule">{html(rules or NULL)}</td><td class="num">{len(x.injections):,}</td>'
                    f'<td class="num">{len(x.sensitive):,}</td></tr>')
    inner = (_table(["File", "Vectors", "Rules", "Injection findings", "Secrets and personal data (masked)"], rows,
                    {3, 4}) if rows else '<p class="none">None.</p>')
    return f'<section class="block" id="files"><h2>Files with findings</h2>{inner}</section>'


def _finding_card(x: _File, f: Finding, number: int, names: dict[str, str]) -> str:
    name = names.get(f.rule_id) or ""
    meta = [("vector", f'<span class="vec">{html(f.vector or NULL)}</span>')]
    channel = CHANNEL_LABEL.get(f.channel or "", f.channel or NULL)
    loc = f' · <span class="loc">{html(f.locator)}</span>' if f.locator else ""
    meta.append(("channel", html(channel) + loc))
    where = _where(f)
    container = f.extra.get("container")
    if container:
        where += f" (inside {container})"
    meta.append(("where", html(where)))
    evidence = x.text_of(f, "evidence")
    if evidence:
        meta.append(("evidence", f'<span class="ev">“{html(evidence)}”</span>'))
    for key in sorted(f.extra):
        if key in SHOWN_ELSEWHERE:
            continue
        meta.append((key.replace("_", " "), html(_value(x.text_of(f, "extra." + key)))))
    if x.view is not None:
        how = (x.view.get("contain") or {}).get(finding_key(f))
        meta.append(("contain", html(CONTAIN_WORDS.get(how, how or NULL))))
    dl = "".join(f"<dt>{html(k)}</dt><dd>{v}</dd>" for k, v in meta)
    return (f'<li class="finding" id="f{number}" data-rule="{attr(f.rule_id)}" data-vector="{attr(f.vector or "")}">'
            f'<div class="fhead"><span class="num">#{number}</span><span class="rule">{html(f.rule_id)}</span>'
            f'<span class="rname">{html(name)}</span>{_sev(f.severity)}</div>'
            f'<div class="fmsg">{html(x.text_of(f, "message"))}</div><dl class="fmeta">{dl}</dl></li>')


class _Marks:
    """Keys of one file's active injection findings → their numbers; labels each finding once per view."""

    def __init__(self, numbered: dict[str, tuple[int, Finding]]):
        self.numbered = numbered
        self.labelled: set[str] = set()

    def reset(self) -> None:
        self.labelled = set()

    def tag(self, key: str) -> str:
        number, f = self.numbered[key]
        return (f'<a class="tag" href="#f{number}">{number} · {html(f.rule_id)} · {html(f.vector or NULL)}</a>')

    def segment(self, seg: dict, collapse: bool) -> str:
        keys = [k for k in seg.get("k", ()) if k in self.numbered]
        if "gap" in seg:
            return f'<span class="gap"> ⋯ {seg["gap"]:,} characters left out ⋯ </span>'
        if "m" in seg:
            inner = (f'<span class="masked" data-entity="{attr(seg.get("x") or "")}">'
                     f'<span class="mk">masked </span>{html(seg["m"])}</span>')
        else:
            inner = html(seg.get("t", ""), collapse)
        if not keys:
            return inner
        fresh = [k for k in keys if k not in self.labelled]
        self.labelled.update(fresh)
        findings = [self.numbered[k] for k in keys]
        data = (f' data-finding="{" ".join(f"f{n}" for n, _ in findings)}"'
                f' data-rule="{attr(" ".join(sorted({f.rule_id for _, f in findings})))}"'
                f' data-vector="{attr(" ".join(sorted({f.vector or "" for _, f in findings})))}"'
                f' data-channel="{attr(" ".join(sorted({f.channel or "" for _, f in findings})))}"')
        return f'<mark class="inj"{data}>' + "".join(self.tag(k) for k in fresh) + inner + "</mark>"


def _segments(row: dict, marks: _Marks) -> str:
    collapse = not row.get("pre")
    return "".join(marks.segment(s, collapse) for s in row.get("seg", ()))


def _pagehead(row: dict, state: dict) -> str:
    page = row.get("page")
    if page is not None and page != state.get("page"):
        state["page"] = page
        return f'<div class="pagehead">Page {int(page)}</div>'
    return ""


def _person_rows(rows: list[dict], marks: _Marks, labelled_locators: bool) -> str:
    out, state = [], {}
    for row in rows:
        out.append(_pagehead(row, state))
        if "omitted" in row:
            out.append(f'<p class="row omitted">⋯ {_plural(row["omitted"], "passage")} far from any finding left out ⋯</p>')
            continue
        if "ph" in row:
            keys = [k for k in row["ph"] if k in marks.numbered]
            if not keys:
                continue
            label = HIDDEN_LABEL.get(row["ch"]) if row["ch"] in HIDDEN_LABEL and row.get("why") else None
            label = label or CHANNEL_LABEL.get(row["ch"], row["ch"])
            loc = f' <span class="loc">{html(row["loc"])}</span>' if row.get("loc") and row["ch"] in LOCATED else ""
            why = f" — {html(row['why'])}" if row.get("why") else ""
            out.append(f'<p class="row placeholder">{"".join(marks.tag(k) for k in keys)}'
                       f"not shown to a person: {html(label)}{loc}{why}</p>")
            continue
        cls = "row pre" if row.get("pre") else "row"
        if row["ch"] == "title":
            cls += " title"
        loc = (f'<span class="loc">{html(row["loc"])}</span><br>'
               if labelled_locators and row["ch"] in LOCATED and row.get("loc") else "")
        out.append(f'<p class="{cls}">{loc}{_segments(row, marks)}</p>')
    return "".join(out)


def _model_rows(rows: list[dict], marks: _Marks) -> str:
    """One block per unit (or run of units shown together) with its channel, said again only when it changes."""
    out, state = [], {}
    previous = None
    for row in rows:
        head = _pagehead(row, state)
        out.append(head)
        if "omitted" in row:
            out.append(f'<p class="row omitted">⋯ {_plural(row["omitted"], "unit")} far from any finding left out ⋯</p>')
            previous = None
            continue
        hidden = bool(row.get("hid"))
        label = (HIDDEN_LABEL.get(row["ch"]) if hidden and row.get("why") else None) \
            or CHANNEL_LABEL.get(row["ch"], row["ch"])
        located = bool(row.get("loc")) and row["ch"] in LOCATED
        flagged = any(s.get("k") for s in row.get("seg", ()))
        same = (not head and previous == (row["ch"], hidden, row.get("why")) and not located and not flagged)
        chl = [] if same else [f'<span class="chan">{html(label)}</span>']
        if located:
            chl.append(f'<span class="loc">{html(row["loc"])}</span>')
        if row.get("why") and not same:
            chl.append(f'<span class="why">{html(row["why"])}</span>')
        previous = (row["ch"], hidden, row.get("why"))
        txt = "txt pre" if row.get("pre") else "txt"
        chl_html = f'<div class="chl">{"".join(chl)}</div>' if chl else ""
        out.append(f'<div class="row unit{" hid" if hidden else ""}" data-channel="{attr(row["ch"])}">'
                   f'{chl_html}<div class="{txt}">{_segments(row, marks)}</div></div>')
    return "".join(out)


def _views(x: _File, marks: _Marks) -> str:
    view = x.view
    if view is None:
        return ('<p class="none">The scan kept no view of this file (the page is rendered from a scan run with '
                "review=True, as scan --format html and check do).</p>")
    if view.get("error"):
        return (f'<p class="warn">The view of this file could not be built ({html(view["error"])}); its findings '
                "are listed above.</p>")
    skipped = view.get("skipped") or {}
    note = ""
    if skipped:
        listed = ", ".join(f"{n:,} {CHANNEL_LABEL.get(k, k)}" for k, n in skipped.items())
        note = f'<p class="skipped">Not shown (no finding there): {html(listed)}.</p>'
    if view.get("same"):
        marks.reset()
        body = _person_rows(view.get("person") or [], marks, True)
        return ('<div class="views one"><div class="view both"><h3>What a person and a model both read '
                '<span class="sub">— no hidden channel: the instruction is in plain sight</span></h3>'
                f'<div class="body">{body}</div>{note}</div></div>')
    marks.reset()
    person = _person_rows(view.get("person") or [], marks, x.view.get("kind") in ("json", "http"))
    marks.reset()
    model = _model_rows(view.get("model") or [], marks)
    return ('<div class="views"><div class="view person"><h3>What a person sees '
            '<span class="sub">— the visible text, in page order</span></h3>'
            f'<div class="body">{person}</div></div>'
            '<div class="view model"><h3>What a model reads '
            '<span class="sub">— every text unit, with its channel</span></h3>'
            f'<div class="body">{model}</div>{note}</div></div>')


def _sensitive_table(x: _File, names: dict[str, str]) -> str:
    findings = x.sensitive + x.others
    if not findings:
        return ""
    rows = []
    for f in findings[:SENSITIVE_ROWS]:
        action = f.extra.get("action") or ("redact" if f.extra.get("replacement") is not None else "report")
        rows.append(f'<tr><td class="rule">{html(f.rule_id)}</td><td>{html(names.get(f.rule_id) or NULL)}</td>'
                    f'<td>{html(f.entity or f.kind)}</td><td>{_sev(f.severity)}</td><td>{html(_where(f))}</td>'
                    f'<td><span class="masked"><span class="mk">masked </span>{html(x.text_of(f, "evidence") or NULL)}</span></td>'
                    f'<td>{html(action)}</td></tr>')
    more = len(findings) - SENSITIVE_ROWS
    tail = (f'<p class="none">… and {_plural(more, "more finding")} of this file, listed in the scan\'s JSON and '
            "SARIF.</p>" if more > 0 else "")
    return ("<h3>Secrets and personal data in this file</h3>"
            + _table(["Rule", "Name", "Entity", "Severity", "Where", "Evidence", "Action"], rows) + tail)


def _file_section(x: _File, index: int, numbers: dict, names: dict[str, str], expected: Mapping[str, str]) -> str:
    numbered = {finding_key(f): (numbers[id(f)], f) for f in x.injections}
    marks = _Marks(numbered)
    counts = []
    if x.injections:
        counts.append(_plural(len(x.injections), "injection finding"))
    if x.sensitive:
        counts.append(_plural(len(x.sensitive), "secret or personal datum", "secrets or personal data") + " masked")
    kind = (x.view or {}).get("kind")
    sub = " · ".join(([kind] if kind else []) + counts)
    badges = ""
    if x.path in expected:
        badges += f'<span class="badge expected">{html(expected[x.path])}</span>'
    if any(f.extra.get("suppressed") for f in x.injections + x.sensitive + x.others):
        badges += '<span class="badge suppressed">has suppressed findings</span>'
    cls = "block file" if x.injections else "block file sensitive-only"
    out = [f'<section class="{cls}" id="file-{index}"><h2><span class="path">{html(scrub_path(x.path))}</span>'
           f'<span class="sub">{html(sub)}</span>{badges}</h2>']
    if x.injections:
        out.append('<ol class="findings">' + "".join(_finding_card(x, f, numbers[id(f)], names) for f in x.injections)
                   + "</ol>")
        out.append(_views(x, marks))
    out.append(_sensitive_table(x, names))
    return "".join(out + ["</section>"])


def _rest(result, files: list[_File]) -> str:
    clean = [x.path for x in files if not (x.injections or x.sensitive or x.others)
             and "error" not in x.entry and not x.entry.get("errors")]
    out = ['<section class="block" id="other-files"><h2>Files without findings '
           f'<span class="sub">({len(clean):,})</span></h2>']
    out.append('<ul class="files">' + "".join(f"<li>{html(scrub_path(p))}</li>" for p in clean) + "</ul>" if clean
               else '<p class="none">None.</p>')
    if result.errors:
        rows = [f'<tr><td class="path">{html(scrub_path(e.get("path", NULL)))}</td><td>{html(e.get("code", NULL))}</td>'
                f'<td>{html(scrub_text(str(e.get("message", NULL))))}</td></tr>' for e in result.errors]
        out.append("<h3>Files that could not be scanned</h3>" + _table(["File", "Code", "Message"], rows))
    return "".join(out + ["</section>"])


def render_review(result, names: Mapping[str, str] | None = None, expected: Mapping[str, str] | None = None) -> str:
    """The reviewer page for a `ScanResult` (see the module docstring). `names`: rule id → rule name
    (`rule_names(scanner)`); `expected`: display path → a note for files whose findings are expected there
    (check: the prompt-injection fixtures)."""
    names = dict(names or {})
    expected = dict(expected or {})
    shown = result.findings if result.include_suppressed else result.active()
    by_path: dict[str, list[Finding]] = {}
    for f in sorted(shown, key=Finding.sort_key):
        by_path.setdefault(f.path, []).append(f)
    views = getattr(result, "views", None) or {}
    entries = {d.get("path"): d for d in result.documents}
    order = [d.get("path") for d in result.documents] + sorted(p for p in by_path if p not in entries)
    files = [_File(p, entries.get(p, {}), by_path.get(p, []), views.get(p)) for p in order]
    numbers: dict[int, int] = {}
    for x in files:
        for f in x.injections:
            numbers[id(f)] = len(numbers) + 1
    # Files with injection findings first (the page is about them), then those with only other findings.
    with_findings = ([x for x in files if x.injections]
                     + [x for x in files if not x.injections and (x.sensitive or x.others)])
    nav = ('<nav class="toc"><a href="#summary">Summary</a><a href="#files">Files with findings</a>'
           '<a href="#other-files">Other files</a></nav>')
    body = [_header(result, files), "<main>", nav, _summary(result, files, names), _files_table(with_findings)]
    body += [_file_section(x, i, numbers, names, expected) for i, x in enumerate(with_findings, 1)]
    body += [_rest(result, files), "</main>"]
    page = ("<!DOCTYPE html>\n"
            '<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{attr(CSP)}">'
            '<meta name="referrer" content="no-referrer">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>centinela reviewer page · {_plural(len(numbers), 'injection finding')}</title>"
            f"<style>{CSS}</style></head>\n<body>\n" + "\n".join(body) + "\n</body></html>\n")
    # Lone surrogates (undecodable file names) were shown by name above; nothing unencodable is left.
    return page.encode("utf-8", "replace").decode("utf-8")
