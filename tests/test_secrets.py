"""Secret detection: every rule's own examples, exact spans, what is kept, idempotence, masked evidence, the
example tree (already redacted: zero findings), the real pages, and the cost of a scan."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from conftest import SHARED, shared_pdf_memo
from scanner.loaders import iter_files, load_bytes, load_path, pdfmemo
from scanner.pdfwriter import TextRun, make_pdf
from scanner.rulepack import RuleError
from scanner.secrets import SecretScanner
from scanner.secrets.rules import load_rule, load_rules, rule_json_schema
from scanner.secrets.values import is_redacted
from scanner.units import Channel, LoadError

REPO = Path(__file__).resolve().parents[1]
EXAMPLE_TREE = REPO / "fixtures" / "web-search"
REALDATA = SHARED / "realdata"       # ../shared, or CENTINELA_SHARED (conftest)
CONTRACT_ENTITIES = {"API_KEY", "AUTH_HEADER", "COOKIE", "ACCOUNT_ID"}

SCANNER = SecretScanner()
RULES = load_rules()

TVLY = "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"
EXA_KEY = "9f3b2c7e-41aa-4d0e-b8f1-6a2d5c9e0b17"
COOKIE = "sid=8f2a7c9e1b4d6f3a0c5e7b9d2f4a6c8e; Path=/; HttpOnly"


def scan_bytes(data: bytes | str, name: str):
    if isinstance(data, str):
        data = data.encode("utf-8")
    doc = load_bytes(data, name)
    return doc, SCANNER.scan(doc)


def dump(value) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)


def redact_text(doc, findings) -> str:
    """What the redactor writes: each finding's span replaced by its replacement, outermost first."""
    out, pos = [], 0
    for f in sorted((f for f in findings if f.page is None), key=lambda f: (f.start, -(f.end - f.start))):
        if f.start < pos:
            continue
        out += [doc.text[pos:f.start], f.extra["replacement"]]
        pos = f.end
    out.append(doc.text[pos:])
    return "".join(out)


def spans(doc, findings) -> dict[str, str]:
    return {doc.text[f.start:f.end]: f.rule_id for f in findings}


# --- the rules themselves ---------------------------------------------------------------------------------

def test_rules_are_data_with_unique_ids_named_files_and_help():
    assert len(RULES) >= 25
    assert len({r.id for r in RULES}) == len(RULES)
    for r in RULES:
        assert Path(r.source).name.startswith(r.id + "-"), r.source
        assert r.entity in CONTRACT_ENTITIES and r.kind == "secret"
        assert all(getattr(r.help, k).strip() for k in ("what", "why", "example", "fix"))
        assert len(r.examples.positive) >= 2 and len(r.examples.negative) >= 2


CASES = [(rule, polarity, i, ex) for rule in RULES for polarity in ("positive", "negative")
         for i, ex in enumerate(getattr(rule.examples, polarity))]


@pytest.mark.parametrize("rule, polarity, index, example", CASES, ids=[f"{r.id}-{p}-{i}" for r, p, i, _ in CASES])
def test_rule_example(rule, polarity, index, example):
    doc = load_bytes(example.to_bytes(), example.file)
    findings = SCANNER.scan(doc)
    hits = [f for f in findings if f.rule_id == rule.id]
    if polarity == "positive":
        assert hits, f"{rule.id} should flag {example.file}: {example.content[:160]!r}"
        for f in hits:
            assert f.kind == "secret" and f.entity == rule.entity and f.severity == rule.severity
            assert 0 <= f.start < f.end <= len(doc.text)
            assert f.extra["replacement"] in ("REDACTED", '"REDACTED"', '\\"REDACTED\\"')
    else:
        assert not hits, f"{rule.id} must not flag {example.file}: {[h.evidence for h in hits]}"


@pytest.mark.parametrize("rule, polarity, index, example", [c for c in CASES if c[1] == "positive"],
                         ids=[f"{r.id}-{i}" for r, p, i, _ in CASES if p == "positive"])
def test_rule_example_redacts_to_nothing_and_never_shows_the_secret(rule, polarity, index, example):
    doc = load_bytes(example.to_bytes(), example.file)
    findings = SCANNER.scan(doc)
    for f in findings:
        secret = doc.text[f.start:f.end]
        if len(secret) >= 6:
            assert secret not in f.evidence and secret not in json.dumps(f.to_json(), ensure_ascii=False)
    new_text = redact_text(doc, findings)
    if example.file.endswith((".json", ".har")):
        json.loads(new_text)
    again = load_bytes(new_text.encode("utf-8"), example.file)
    assert SCANNER.scan(again) == [], example.file


def test_rule_json_schema_describes_the_match_section():
    schema = rule_json_schema()
    match = schema["$defs"]["Match"]["properties"]
    assert {"header_names", "query_params", "json_keys", "value_pattern", "keywords", "entropy"} <= set(match)


def _write_rule(tmp_path: Path, name: str, text: str) -> Path:
    folder = tmp_path / "rules"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    return folder


NEW_RULE = """
id: SEC901
name: newsearch-key-header
entity: API_KEY
severity: error
precision: very-high
security_severity: 9.0
message: NewSearch key header
match:
  header_names: [x-newsearch-key]
help: {what: a, why: b, example: c, fix: d}
examples:
  positive:
    - {file: a.json, content: '{"request": {"url": "https://n.example/q", "headers": {"X-NewSearch-Key": "k1"}}, "response": null}'}
    - {file: b.txt, content: "x"}
  negative:
    - {file: c.txt, content: "y"}
    - {file: d.txt, content: "z"}
"""


def test_a_reviewer_adds_a_rule_without_python(tmp_path):
    folder = _write_rule(tmp_path, "SEC901-newsearch.yaml", NEW_RULE)
    scanner = SecretScanner(rule_dir=folder)
    doc = load_bytes(NEW_RULE.split("content: '")[1].split("'}")[0].encode(), "a.json")
    (f,) = scanner.scan(doc)
    assert f.rule_id == "SEC901" and doc.text[f.start:f.end] == "k1"
    both = SecretScanner(extra_rule_dirs=(folder,))
    assert {"SEC001", "SEC901"} <= set(both.by_id)


@pytest.mark.parametrize("change, expected", [
    (lambda t: t.replace("message: NewSearch key header\n", "message: [unclosed\n"), "invalid YAML"),
    (lambda t: t.replace("header_names: [x-newsearch-key]", "value_pattern: 'k['\n  keywords: [k]"), "invalid regex"),
    (lambda t: t.replace("header_names: [x-newsearch-key]", "value_pattern: 'k1'"), "needs keywords"),
    (lambda t: t.replace("header_names: [x-newsearch-key]", "header_names: [a]\n  validators: [magic]"),
     "unknown validator"),
    (lambda t: t.replace("entity: API_KEY", "entity: PASSWORD"), "entity"),
    (lambda t: t.replace("precision: very-high", "precision: certain"), "precision"),
    (lambda t: t.replace("    - {file: d.txt, content: \"z\"}\n", ""), "negative"),
    (lambda t: t.replace("match:", "matches:"), "match"),
    (lambda t: t.replace("id: SEC901", "id: secret-1"), "SEC001"),
])
def test_a_bad_rule_is_one_line_naming_the_file(tmp_path, change, expected):
    folder = _write_rule(tmp_path, "SEC901-bad.yaml", change(NEW_RULE))
    with pytest.raises(RuleError) as err:
        load_rule(folder / "SEC901-bad.yaml")
    message = str(err.value)
    assert "\n" not in message and "SEC901-bad.yaml" in message and expected in message, message


def test_duplicate_rule_ids_are_refused(tmp_path):
    folder = _write_rule(tmp_path, "SEC901-a.yaml", NEW_RULE)
    _write_rule(tmp_path, "SEC901-b.yaml", NEW_RULE)
    with pytest.raises(RuleError, match="already used"):
        load_rules((folder,))


# --- exact spans ----------------------------------------------------------------------------------------------

def leaky_envelope() -> dict:
    return {
        "request": {
            "method": "POST",
            "url": "https://api.example/search?q=Bajío&api_key=abc123&lang=es",
            "headers": {"Authorization": "Bearer " + TVLY, "X-API-KEY": EXA_KEY, "Cookie": COOKIE,
                        "content-type": "application/json"},
            "body": {"query": "Aceros del Bajío — «planta»", "apiKey": "Qx7mP2vL9kR4tW8z/1", "account_id": 73915024}},
        "response": {
            "status": 200,
            "headers": {"date": "Fri, 02 Oct 2026 14:11:09 GMT", "set-cookie": ["__cf_bm=Zk3vQ9x2Lw8Rt5Yp1Hn6; path=/",
                                                                                  "lang=es"],
                        "x-ratelimit-remaining": "99", "x-request-id": "req_7f3a9c2e1b5d8f4a6c0e",
                        "openai-organization": "org-Q8vN2kLm5Rt7Xw3Zp9Hb4Jc6"},
            "body": {"results": [{"url": "https://acerosdelbajio.com.mx/contacto?ref=search",
                                  "content": "Contacto: ventas@acerosdelbajio.com.mx", "publishedAt": "2026-09-01"}],
                     "organizationId": "org_2Kx9Lp4Rt8"}},
    }


def test_envelope_spans_are_exact_and_replacing_them_gives_redacted_in_quotes():
    doc, findings = scan_bytes(dump(leaky_envelope()), "tavily/search/gs-001.json")
    got = {doc.text[f.start:f.end]: (f.rule_id, f.entity) for f in findings}
    assert got == {
        "abc123": ("SEC005", "API_KEY"),
        "Bearer " + TVLY: ("SEC001", "AUTH_HEADER"),
        EXA_KEY: ("SEC002", "API_KEY"),
        COOKIE: ("SEC003", "COOKIE"),
        "Qx7mP2vL9kR4tW8z/1": ("SEC008", "API_KEY"),
        "73915024": ("SEC010", "ACCOUNT_ID"),
        "__cf_bm=Zk3vQ9x2Lw8Rt5Yp1Hn6; path=/": ("SEC003", "COOKIE"),
        "lang=es": ("SEC003", "COOKIE"),
        "org-Q8vN2kLm5Rt7Xw3Zp9Hb4Jc6": ("SEC004", "ACCOUNT_ID"),
        "org_2Kx9Lp4Rt8": ("SEC010", "ACCOUNT_ID"),
    }, got
    assert [f.start for f in findings] == sorted(f.start for f in findings)
    for f in findings:
        assert f.kind == "secret" and f.severity == "error" and re.fullmatch(r"SEC\d{3}", f.rule_id)
        secret = doc.text[f.start:f.end]
        out = json.dumps(f.to_json(), ensure_ascii=False)
        assert secret not in f.evidence and secret not in out and "REDACTED" == f.extra["replacement"].strip('"')
        line, col = f.line, f.column
        offset = sum(len(x) + 1 for x in doc.text.split("\n")[:line - 1]) + col - 1
        assert offset == f.start
    redacted = redact_text(doc, findings)
    value = json.loads(redacted)
    req = value["request"]
    assert req["headers"]["Authorization"] == "REDACTED" and req["headers"]["X-API-KEY"] == "REDACTED"
    assert req["headers"]["Cookie"] == "REDACTED"
    assert req["url"] == "https://api.example/search?q=Bajío&api_key=REDACTED&lang=es"
    assert req["body"] == {"query": "Aceros del Bajío — «planta»", "apiKey": "REDACTED", "account_id": "REDACTED"}
    assert value["response"]["headers"]["x-request-id"] == "req_7f3a9c2e1b5d8f4a6c0e"
    assert value["response"]["headers"]["date"] == "Fri, 02 Oct 2026 14:11:09 GMT"
    assert value["response"]["body"]["results"][0]["url"] == "https://acerosdelbajio.com.mx/contacto?ref=search"
    assert SCANNER.scan(load_bytes(redacted.encode(), "tavily/search/gs-001.json")) == []


def test_spans_through_json_escapes():
    raw = ('{"request": {"method": "GET", "url": "https:\\/\\/api.example\\/v1\\/search?q=caf\\u00e9&token=t0K3n9Zq", '
           '"headers": {"authorization": "Basic cmFkYXI6czNjcjN0\\u002dcGFzcw=="}}, "response": null}')
    doc, findings = scan_bytes(raw, "e.json")
    assert spans(doc, findings) == {"t0K3n9Zq": "SEC006", "Basic cmFkYXI6czNjcjN0\\u002dcGFzcw==": "SEC001"}
    assert json.loads(redact_text(doc, findings))["request"]["headers"]["authorization"] == "REDACTED"


def test_secret_inside_a_json_string_body_keeps_the_envelope_valid():
    body = json.dumps({"api_key": TVLY, "query": "acero", "org_id": 4417})
    env = {"request": {"method": "POST", "url": "https://api.tavily.com/search",
                       "headers": {"content-type": "application/json"}, "body": body},
           "response": {"status": 200, "headers": {}, "body": {}}}
    doc, findings = scan_bytes(dump(env), "b.json")
    assert sorted(doc.text[f.start:f.end] for f in findings) == ["4417", TVLY]
    number = next(f for f in findings if doc.text[f.start:f.end] == "4417")
    assert number.extra["replacement"] == '\\"REDACTED\\"'
    value = json.loads(redact_text(doc, findings))
    assert json.loads(value["request"]["body"]) == {"api_key": "REDACTED", "query": "acero", "org_id": "REDACTED"}


def test_header_forms_and_capitalisation():
    secret = "Zk3vQ9x2Lw8Rt5Yp1Hn6Bc4"
    har = {"log": {"entries": [{
        "request": {"method": "GET", "url": "https://api.example/q",
                    "headers": [{"name": "AUTHORIZATION", "value": "Token " + secret},
                                {"name": "X-Api-Key", "value": secret + "k"},
                                {"name": "Accept", "value": "application/json"}],
                    "cookies": [{"name": "sid", "value": "c" + secret}]},
        "response": {"status": 200, "headers": [["Set-Cookie", "s=" + secret + "; Secure"], ["Date", "Fri, 02 Oct 2026"]],
                     "content": {"mimeType": "application/json", "text": "{}"}}}]}}
    doc, findings = scan_bytes(dump(har), "c.har")
    assert spans(doc, findings) == {"Token " + secret: "SEC001", secret + "k": "SEC002", "c" + secret: "SEC003",
                                    "s=" + secret + "; Secure": "SEC003"}
    plain = {"headers": {"Authorization": "Bearer " + secret, "Cookie": "a=" + secret}}   # not an envelope
    doc, findings = scan_bytes(dump(plain), "p.json")
    assert spans(doc, findings) == {"Bearer " + secret: "SEC001", "a=" + secret: "SEC003"}


def test_query_parameter_value_only_in_links_and_text():
    page = ('<p>Caf&eacute; &amp; más: <a href="https://serpapi.com/search.json?engine=google&amp;q=acero&amp;'
            'api_key=3b7e9d2f4a6c8e0b1d3f">ver</a> o https://api.example/search?q=x&access_token=ya29Zk3vQ9x2Lw8.</p>')
    doc, findings = scan_bytes(page, "p.html")
    assert spans(doc, findings) == {"3b7e9d2f4a6c8e0b1d3f": "SEC005", "ya29Zk3vQ9x2Lw8": "SEC005"}
    redacted = redact_text(doc, findings)
    assert 'href="https://serpapi.com/search.json?engine=google&amp;q=acero&amp;api_key=REDACTED"' in redacted
    assert "https://api.example/search?q=x&access_token=REDACTED." in redacted


def test_bearer_in_html_text_after_a_character_reference():
    token = "eQm9Lx2Kp7Rt4Wz8Vb1Nc5Hd0Fg6Js"
    page = f"<html><body>\n<p>Caf&eacute; &#x26; t&eacute; &mdash; usa Bearer {token} y listo</p></body></html>"
    doc, findings = scan_bytes(page, "bearer.html")
    (f,) = findings
    assert doc.text[f.start:f.end] == token and f.rule_id == "SEC024"
    assert (f.line, f.column) == (2, page.split("\n")[1].index(token) + 1)
    assert token not in f.evidence


def test_header_lines_in_text():
    text = ("GET /search?q=acero HTTP/1.1\nHost: api.example\nAuthorization: Bearer " + TVLY +
            "\nCookie: " + COOKIE + "\nx-api-key: " + EXA_KEY + "\nDate: Fri, 02 Oct 2026 14:11:09 GMT\n")
    doc, findings = scan_bytes(text, "dump.txt")
    assert spans(doc, findings) == {"Bearer " + TVLY: "SEC001", COOKIE: "SEC003", EXA_KEY: "SEC002"}


def test_scripts_are_read_only_for_keys_never_meant_to_be_public():
    page = ('<script>var maps = "AIzaSyQ8vN2kLm5Rt7Xw3Zp9Hb4Jc6Dd1Fg0Ks2"; var t = "Bearer Zk3vQ9x2Lw8Rt5Yp1Hn6";'
            f' var leaked = "{TVLY}"; var cfg = {{"apiKey": "Zk3vQ9x2Lw8Rt5Yp1Hn6Bc4"}};</script>')
    doc, findings = scan_bytes(page, "s.html")
    assert spans(doc, findings) == {TVLY: "SEC011"}
    assert findings[0].channel == Channel.SCRIPT.value


def test_numbers_under_sensitive_names():
    env = {"request": {"method": "GET", "url": "https://api.example/q", "headers": {"x-account-id": 99120}},
           "response": {"status": 200, "headers": {"content-length": 2054},
                        "body": {"account": {"accountId": 73915024, "credits": 12, "costDollars": {"total": 0.5}},
                                 "password": 1234}}}
    doc, findings = scan_bytes(dump(env), "n.json")
    assert spans(doc, findings) == {"99120": "SEC004", "73915024": "SEC010", "1234": "SEC008"}
    assert all(f.extra["replacement"] == '"REDACTED"' for f in findings)
    value = json.loads(redact_text(doc, findings))
    assert value["response"]["body"]["account"] == {"accountId": "REDACTED", "credits": 12, "costDollars": {"total": 0.5}}


# --- kept, and already redacted ----------------------------------------------------------------------------

KEPT_HEADERS = {
    "date": "Fri, 02 Oct 2026 14:11:09 GMT", "last-modified": "Fri, 20 Mar 2026 19:41:00 GMT",
    "expires": "Sat, 03 Oct 2026 14:11:09 GMT", "retry-after": "1", "x-ratelimit-limit": "10",
    "x-ratelimit-remaining": "0", "x-ratelimit-reset": "1759414270", "x-ratelimit-policy": "10;w=1",
    "ratelimit-limit": "100", "ratelimit-remaining": "99", "ratelimit-reset": "30", "ratelimit-policy": "100;w=60",
    "x-ratelimit-remaining-tokens": "149984", "x-ratelimit-reset-tokens": "6ms",
    "x-request-id": "5be02e6c23c958795a06c607baa573218Qx7mP2vL9kR4", "request-id": "req_011CTm7xQ8vN2kLm5Rt7Xw3Zp9",
    "cf-ray": "8c1f2a3b4d5e6f70-MEX", "etag": 'W/"8f2a7c9e1b4d6f3a0c5e7b9d2f4a6c8eZk3vQ9"',
    "content-type": "application/json; charset=utf-8", "content-length": "2054",
    "x-amz-cf-id": "Zk3vQ9x2Lw8Rt5Yp1Hn6Bc4Md7Fg0Js2Kp9QxLm==", "x-amzn-trace-id": "Root=1-67891233-abcdef0123456789Zk3vQ9",
    "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "x-cache": "Hit from cloudfront",
    "age": "12", "vary": "Accept-Encoding", "server": "cloudflare", "cache-control": "max-age=0, private",
    "location": "https://api.tavily.com/search?page=2", "link": '<https://api.example/q?cursor=Zk3vQ9x2Lw8Rt5Yp1Hn6Bc4>; rel="next"',
    "x-cloud-trace-context": "105445aa7843bc8bf206b12000100000/1;o=1", "www-authenticate": 'Bearer realm="api"',
}
KEPT_BODY = {
    "requestId": "abdc35047623dc26512d3a7bc6bf74a8Qx7mP2vL9", "request_id": "123e4567-e89b-12d3-a456-426614174000",
    "publishedAt": "2026-09-01T00:00:00.000Z", "retrievedAt": "2026-10-02T14:11:09Z", "cacheAgeSeconds": 3600,
    "url": "https://www.gob.mx/cofepris/documentos/registros?page=2&sort=fecha", "id": "https://www.gob.mx/cofepris",
    "sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "sha256_original": "hmac-sha256:3b7e9d2f4a6c8e0b1d3f5a7c9e2b4d6f8a0c1e3b5d7f9a2c4e6b8d0f1a3c5e7b",
    "score": 0.8589, "credits": 1, "costDollars": {"total": 0.005, "search": {"neural": 0.005}},
    "traceId": "4bf92f3577b34da6a3ce929d0e0e4736", "spanId": "00f067aa0ba902b7Zk3vQ9x2",
    "nextPageToken": "Q8vN2kLm5Rt7Xw3Zp9Hb4Jc6Dd1Fg0Ks", "cursor": "Zk3vQ9x2Lw8Rt5Yp1Hn6Bc4Md7Fg0Js",
    "usage": {"input_tokens": 1200, "output_tokens": 310, "total_tokens": 1510},
    "author": "Redacción El Financiero", "keywords": "acero, Celaya, planta", "token_type": "bearer",
    "title": "Authorization: pending review", "results": [{"id": "https://acerosdelbajio.com.mx/contacto",
                                                            "highlightScores": [0.41]}],
}


def test_kept_items_are_never_findings():
    env = {"request": {"method": "POST", "url": "https://api.exa.ai/search",
                       "headers": {"x-api-key": "REDACTED", "content-type": "application/json",
                                   "user-agent": "RadarWebSearch/0.1 (+https://radar.example.test/bot)",
                                   "idempotency-key": "8f2a7c9e1b4d6f3a0c5e7b9d2f4a6c8eQx7"},
                       "body": {"query": "acero"}},
           "response": {"status": 200, "headers": KEPT_HEADERS, "body": KEPT_BODY}}
    doc, findings = scan_bytes(dump(env), "exa/search/gs-001.json")
    assert findings == [], [(f.rule_id, f.locator, doc.text[f.start:f.end]) for f in findings]


def test_base64_pdf_body_is_not_a_secret():
    pdf = (EXAMPLE_TREE / "_shared/pdf/epo-ventas-por-segmento-2025.pdf").read_bytes()
    env = {"request": {"method": "GET", "url": "https://x.example/a.pdf", "headers": {}},
           "response": {"status": 200, "headers": {"content-type": "application/pdf"},
                        "body": base64.b64encode(pdf * 40).decode(), "body_encoding": "base64"}}
    doc, findings = scan_bytes(dump(env), "fetch/a.json")
    assert findings == []


@pytest.mark.parametrize("value", ["REDACTED", "Bearer REDACTED", "Basic REDACTED", "redacted", "***", "<redacted>",
                                   "[REDACTED]", "xxx…", "xxxxxxxxxxxx", "tvly-REDACTED", "sk-ant-REDACTED",
                                   "[FILTERED]", "session=REDACTED; Path=/; HttpOnly", ""])
def test_already_redacted_values_are_not_findings(value):
    env = {"request": {"method": "POST", "url": f"https://api.example/q?api_key={value}&token={value}",
                       "headers": {"Authorization": value, "x-api-key": value, "Cookie": value},
                       "body": {"api_key": value, "password": value, "account_id": value, "note": f"Bearer {value}"}},
           "response": {"status": 200, "headers": {"set-cookie": [value]}, "body": {}}}
    doc, findings = scan_bytes(dump(env), "r.json")
    assert findings == [], [(f.rule_id, doc.text[f.start:f.end]) for f in findings]


# --- the example tree and the real pages ----------------------------------------------------------------------

def test_example_tree_is_already_redacted():
    scanned = 0
    for path in iter_files([EXAMPLE_TREE]):
        try:
            with pdfmemo.active(shared_pdf_memo()):       # the same PDF bytes laid out once (conftest)
                doc = load_path(path)
        except LoadError as exc:
            assert exc.code in ("format_tables_ocr", "encrypted"), exc
            continue
        scanned += 1
        findings = SCANNER.scan(doc)
        assert findings == [], (path, [(f.rule_id, f.locator, f.evidence) for f in findings])
    assert scanned >= 90


def realdata_html() -> list[Path]:
    folder = REALDATA / "html"
    if not folder.is_dir():
        pytest.skip("../shared/realdata/html is not present")
    return sorted(p for p in folder.iterdir() if p.is_file())


# Measured on the 37 pages: six findings, all SEC007 (a 32-hex `token` in a URL parameter or a hidden form
# field: Drupal bookmark links on emotion.de, a form token on elmostrador.cl). Keys in <script> (a Firebase
# `AIza…` browser key and an Elasticsearch key on scmp.com, an `apikey=` in a script URL on publinews.gt) are
# third-party public browser keys and are not read; a signed JWT of article metadata (la-nacion) carries no
# identity claim and is not a credential.
EXPECTED_REAL = {("traf__emotion.de.selfcare.html", "SEC007"): 5, ("traf__elmostrador.cl-congreso.html", "SEC007"): 1}


def test_real_pages():
    paths = realdata_html()
    docs = [load_path(p) for p in paths]
    results = [SCANNER.scan(d) for d in docs]      # its speed: `make bench` (bench/run.py secret)
    counts: dict = {}
    for path, doc, findings in zip(paths, docs, results):
        for f in findings:
            counts[(path.name, f.rule_id)] = counts.get((path.name, f.rule_id), 0) + 1
            assert f.channel != Channel.SCRIPT.value
            secret = doc.text[f.start:f.end]
            assert re.fullmatch(r"[0-9a-f]{32}", secret) and secret not in f.evidence
        again = load_bytes(redact_text(doc, findings).encode(doc.encoding or "utf-8"), doc.path)
        assert SCANNER.scan(again) == []
    if len(paths) == 37:
        assert counts == EXPECTED_REAL
    print(f"\nsecret scan of {len(docs)} real pages ({sum(len(d.text) for d in docs) / 1e6:.1f} M chars, "
          f"{sum(len(d.units) for d in docs)} units): {sum(counts.values())} findings {counts}")


def test_pdf_text_finding_is_positioned_on_its_page():
    pdf = make_pdf([[TextRun("Informe anual 2025", 72, 720, 12, 0, (0, 0, 0), None)],
                    [TextRun("Clave de servicio: " + TVLY, 72, 700, 12, 0, (0, 0, 0), None)]])
    doc, findings = scan_bytes(pdf, "informe.pdf")
    (f,) = findings
    assert f.page == 2 and f.rule_id == "SEC011"
    assert doc.pages[1].text[f.start:f.end] == TVLY and TVLY not in f.evidence


# --- properties --------------------------------------------------------------------------------------------

SENSITIVE_HEADERS = ["authorization", "proxy-authorization", "x-api-key", "api-key", "x-subscription-token",
                     "ocp-apim-subscription-key", "cookie", "set-cookie", "openai-organization", "x-goog-api-key"]
SENSITIVE_PARAMS = ["api_key", "apiKey", "access_token", "client_secret", "X-Amz-Security-Token"]
TOKEN = st.text(alphabet="ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0123456789-_.", min_size=6, max_size=64)


def _capitalise(name: str, flips: list[bool]) -> str:
    return "".join(c.upper() if flips[i % len(flips)] else c.lower() for i, c in enumerate(name))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(header=st.sampled_from(SENSITIVE_HEADERS), flips=st.lists(st.booleans(), min_size=1, max_size=8),
       param=st.sampled_from(SENSITIVE_PARAMS), secret=TOKEN, other=TOKEN,
       form=st.sampled_from(["object", "har", "pairs"]))
def test_any_secret_under_a_sensitive_name_is_found_exactly_and_redaction_is_final(header, flips, param, secret,
                                                                                   other, form):
    assume(not is_redacted(secret) and not is_redacted(other))
    name = _capitalise(header, flips)
    kept = {"date": "Fri, 02 Oct 2026 14:11:09 GMT", "x-request-id": "req_" + other, "x-ratelimit-remaining": "7"}
    headers = {name: secret, **kept}
    if form == "har":
        headers = [{"name": k, "value": v} for k, v in headers.items()]
    elif form == "pairs":
        headers = [[k, v] for k, v in headers.items()]
    url = f"https://api.example/v1/search?q={other}&{param}={secret}&page=2"
    env = {"request": {"method": "GET", "url": url, "headers": headers}, "response": None}
    doc, findings = scan_bytes(dump(env), "p.json")
    assert sorted(doc.text[f.start:f.end] for f in findings) == [secret, secret]
    value = json.loads(redact_text(doc, findings))
    assert value["request"]["url"] == f"https://api.example/v1/search?q={other}&{param}=REDACTED&page=2"
    got = value["request"]["headers"]
    pairs = got.items() if isinstance(got, dict) else [(h["name"], h["value"]) if isinstance(h, dict) else h for h in got]
    assert dict(pairs) == {name: "REDACTED", **kept}
    assert SCANNER.scan(load_bytes(json.dumps(value).encode(), "p.json")) == []


def _gate_oracle(scanner: SecretScanner, units) -> set[int]:
    """The units each gate finds a keyword in, one search a unit (what `_unit` did before the joined search)."""
    from scanner.secrets.detect import _NEVER

    out = set()
    for u in units:
        gate = scanner._script_gate if u.channel is Channel.SCRIPT else scanner._gate
        if u.channel not in _NEVER and u.text and gate is not None and gate.search(u.text.lower()):
            out.add(id(u))
    return out


# whole keywords of both gates, halves that make one only side by side, case and neighbour-dependent lower case
_GATE_WORDS = ["key", "ke", "y", "s", "k-", "SK_", "live_", "@", "EyJ", "private key-----", "ya29.", "xox", "tok",
               "bear", "er", "x", "ΣΑΣ", "İ", " ", "\n", "\x00", "="]


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.lists(st.sampled_from(_GATE_WORDS), max_size=6),
                          st.sampled_from([Channel.VISIBLE_TEXT, Channel.SCRIPT, Channel.COMMENT, Channel.ATTRIBUTE])),
                max_size=12))
def test_the_joined_gate_finds_the_units_each_search_found(parts):
    """Keywords at unit edges, overlapping one another, split across two units, in scripts and elsewhere,
    letters whose lower case depends on their neighbours."""
    from scanner.units import TextUnit

    scanner = SecretScanner()
    units = [TextUnit("".join(words), ch, 0, 0, None) for words, ch in parts]
    assert scanner._gate_hits(units) == _gate_oracle(scanner, units)


def test_the_joined_gate_on_the_real_pages():
    pages = sorted((REALDATA / "html").glob("*.html"))
    if not pages:
        pytest.skip("../shared/realdata absent")
    scanner = SecretScanner()
    total = 0
    for p in pages:
        doc = load_bytes(p.read_bytes(), p.name)
        hits = scanner._gate_hits(doc.units)
        assert hits == _gate_oracle(scanner, doc.units), p.name
        total += len(hits)
    assert total > 100


def test_a_gate_keyword_holding_a_nul_is_searched_unit_by_unit(monkeypatch):
    """Joined by NUL, a keyword that holds one could match across two units and hide the second one's keyword."""
    from scanner import rx
    from scanner.units import TextUnit

    scanner = SecretScanner()
    monkeypatch.setattr(scanner, "_gate", rx.compile("a\x00b|bkey"))
    units = [TextUnit(t, Channel.VISIBLE_TEXT, 0, 0, None) for t in ("xa", "bkey", "plain")]
    assert scanner._gate_hits(units) == _gate_oracle(scanner, units) == {id(units[1])}
