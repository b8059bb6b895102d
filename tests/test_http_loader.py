"""Recorded HTTP exchanges: headers as units, bodies decoded by content type, positions in the envelope."""

from __future__ import annotations

import base64
import html
import json

from scanner.loaders import load_bytes
from scanner.units import Channel


def envelope(body, ctype="application/json", headers_form="object", encoding=None, extra_headers=None):
    response_headers = {"date": "Fri, 02 Oct 2026 14:11:09 GMT", "content-type": ctype, **(extra_headers or {})}
    if headers_form == "list":
        response_headers = [{"name": k, "value": v} for k, v in response_headers.items()]
    resp = {"status": 200, "headers": response_headers, "body": body}
    if encoding:
        resp["body_encoding"] = encoding
    return {"request": {"method": "POST", "url": "https://api.tavily.com/search",
                        "headers": {"Authorization": "Bearer tvly-REDACTED", "content-type": "application/json"},
                        "body": {"query": "Aceros del Bajío"}},
            "response": resp}


def load_env(value):
    raw = json.dumps(value, ensure_ascii=False, indent=2).encode("utf-8")
    return load_bytes(raw, "tavily/fetch/gs-001.json")


def test_headers_are_name_and_value_units():
    doc = load_env(envelope({"results": []}))
    assert doc.kind == "http"
    names = [u.text for u in doc.units if u.channel == Channel.HTTP_HEADER_NAME]
    values = {u.locator: u.text for u in doc.units if u.channel == Channel.HTTP_HEADER_VALUE}
    assert names == ["Authorization", "content-type", "date", "content-type"]
    assert values["/request/headers/Authorization"] == "Bearer tvly-REDACTED"
    assert values["/response/headers/date"] == "Fri, 02 Oct 2026 14:11:09 GMT"
    (url,) = [u for u in doc.units if u.channel == Channel.HTTP_URL]
    assert doc.text[url.start:url.end] == "https://api.tavily.com/search"


def test_har_style_header_list():
    doc = load_env(envelope({"results": []}, headers_form="list"))
    names = [u.text for u in doc.units if u.channel == Channel.HTTP_HEADER_NAME]
    assert names[-2:] == ["date", "content-type"]
    values = [u.text for u in doc.units if u.channel == Channel.HTTP_HEADER_VALUE]
    assert "application/json" in values


def test_embedded_json_body_strings_keep_pointers():
    doc = load_env(envelope({"results": [{"url": "https://acme.com.mx", "content": "Planta en Querétaro"}]}))
    (u,) = [u for u in doc.units if u.locator == "/response/body/results/0/content" and u.channel == Channel.JSON_STRING]
    assert u.text == "Planta en Querétaro"
    assert doc.text[u.start:u.end] == "Planta en Querétaro"


def test_html_string_body_maps_through_json_escapes_into_the_envelope():
    page = '<html><body><p class="x">Caf&eacute; "dicho"</p><!-- nota\tpara el asistente --></body></html>'
    doc = load_env(envelope(page, ctype="text/html; charset=utf-8"))
    comment = next(u for u in doc.units if u.channel == Channel.COMMENT)
    assert comment.text == " nota\tpara el asistente "
    assert comment.container == "/response/body"
    raw = doc.text[comment.start:comment.end]
    assert raw == " nota\\tpara el asistente "          # JSON-escaped in the envelope
    assert json.loads('"' + raw + '"') == comment.text
    para = next(u for u in doc.units if u.channel == Channel.VISIBLE_TEXT)
    assert para.text == 'Café "dicho"'
    s, e = para.source_span(para.text.index('"'), para.text.index('"') + 1)
    assert doc.text[s:e] == '\\"'
    s, e = para.source_span(3, 4)
    assert doc.text[s:e] == "&eacute;"
    assert html.unescape(json.loads('"' + doc.text[para.start:para.end] + '"')) == para.text


def test_json_string_body_is_parsed_with_positions():
    body = json.dumps({"results": [{"title": "Acme é"}]}, ensure_ascii=True)
    doc = load_env(envelope(body))
    (u,) = [u for u in doc.units if u.text == "Acme é"]
    assert u.locator == "/response/body#/results/0/title"
    raw = doc.text[u.start:u.end]
    assert json.loads('"' + json.loads('"' + raw + '"') + '"') == "Acme é"


def test_base64_html_body_points_at_the_whole_body():
    page = "<p>Hola</p>".encode("utf-8")
    doc = load_env(envelope(base64.b64encode(page).decode(), ctype="text/html", encoding="base64"))
    (u,) = [u for u in doc.units if u.channel == Channel.VISIBLE_TEXT]
    assert u.text == "Hola"
    assert doc.text[u.start:u.end] == base64.b64encode(page).decode()


def test_timeout_envelope_without_response():
    value = {"request": {"method": "GET", "url": "https://api.exa.ai/search", "headers": {}},
             "response": None, "error": {"type": "timeout", "after_ms": 30000}}
    doc = load_env(value)
    assert doc.kind == "http"
    assert [u.text for u in doc.units if u.channel == Channel.HTTP_URL] == ["https://api.exa.ai/search"]


def test_har_file():
    har = {"log": {"version": "1.2", "entries": [{
        "startedDateTime": "2026-10-02T14:11:09Z",
        "request": {"method": "GET", "url": "https://acme.com.mx/", "headers": [{"name": "Cookie", "value": "sid=abc"}]},
        "response": {"status": 200, "headers": [{"name": "Content-Type", "value": "text/html"}],
                     "content": {"mimeType": "text/html", "text": "<p>Hola &amp; adiós</p>"}}}]}}
    doc = load_bytes(json.dumps(har).encode(), "capture.har")
    assert doc.kind == "http"
    assert [u.text for u in doc.units if u.channel == Channel.HTTP_HEADER_NAME] == ["Cookie", "Content-Type"]
    (p,) = [u for u in doc.units if u.channel == Channel.VISIBLE_TEXT]
    assert p.text == "Hola & adiós"
    assert json.loads('"' + doc.text[p.start:p.end] + '"') == "Hola &amp; adi\u00f3s"


def test_plain_json_is_not_an_envelope():
    doc = load_bytes(b'{"response": "ok", "name": "x"}', "data.json")
    assert doc.kind == "json"


def test_jsonl_lines():
    doc = load_bytes(b'{"a": "uno"}\n\n{"a": "dos"}\nnot json\n', "c.jsonl")
    assert [(u.locator, u.text) for u in doc.units if u.channel == Channel.JSON_STRING] == [
        ("line 1:/a", "uno"), ("line 3:/a", "dos")]
    assert doc.problems and doc.problems[0].startswith("line 4: invalid JSON")
