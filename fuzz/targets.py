"""Fuzz targets: each takes bytes and raises only on a real defect (an exception other than the documented
LoadError/SpanError, or a broken invariant). Shared by the atheris harness (fuzz/run.py) and by the regression
test that replays every input the fuzzer ever crashed on (tests/test_fuzz_regressions.py).

Invariants checked on every document that loads:
- every unit's source span lies inside the file (or its PDF page) and `source_span(0, len(text))` is exactly
  the unit's span; any sub-span maps inside it;
- scanning the document (injection, secret, personal data without NER) raises nothing, and every finding's
  span lies inside the text it indexes.
"""

from __future__ import annotations

import json
from functools import lru_cache

TARGETS = ("html", "pdf", "json", "http", "recording", "spans")
_SPAN_HTML = "<html><body><p id=a class='c d'>caf&eacute; <b>uno</b></p><div>dos</div></body></html>"
_SPAN_PAGES = ["primera página\n\n", "", "tercera\n"]


@lru_cache(maxsize=1)
def _scanners():
    from scanner.pii import PiiScanner
    from scanner.scan import Scanner

    return Scanner(("injection", "secret")), PiiScanner(use_ner=False)


def _check_document(doc) -> None:
    pages = {(p.number, getattr(p, "container", "") or ""): len(p.text) for p in doc.pages}
    for u in doc.units:
        if u.channel.value == "pdf_metadata":
            continue
        limit = len(doc.text) if u.page is None else pages.get((u.page, u.container or ""))
        assert limit is not None, (u.locator, u.page)
        assert 0 <= u.start <= u.end <= limit, (u.locator, u.start, u.end, limit)
        assert u.source_span(0, len(u.text)) == (u.start, u.end), u.locator
        if len(u.text) > 1:
            s, e = u.source_span(1, len(u.text) - 1)
            assert u.start <= s <= e <= u.end, (u.locator, s, e)
    injection_secret, pii = _scanners()
    findings = injection_secret.scan_document(doc) + pii.scan(doc)
    for f in findings:
        assert 0 <= f.start <= f.end, (f.rule_id, f.start, f.end)
        if f.page is None:
            assert f.end <= len(doc.text), (f.rule_id, f.end, len(doc.text))


def _load(data: bytes, name: str) -> None:
    from scanner.loaders import load_bytes
    from scanner.units import LoadError

    try:
        doc = load_bytes(data, name)
    except LoadError as exc:
        assert exc.message and "\n" not in exc.message, exc.message
        return
    _check_document(doc)


def fuzz_html(data: bytes) -> None:
    _load(data, "fuzz.html")


def fuzz_pdf(data: bytes) -> None:
    _load(data, "fuzz.pdf")


def fuzz_json(data: bytes) -> None:
    _load(data, "fuzz.json")


def fuzz_http(data: bytes) -> None:
    """The bytes become an HTTP envelope's body (string, embedded JSON or base64) so the envelope decoding
    of every content type is reached, whatever the mutation."""
    if not data:
        return
    selector, body = data[0], data[1:]
    ctype = ("text/html; charset=utf-8", "application/json", "application/pdf", "text/plain",
             "text/html; charset=windows-1252")[selector % 5]
    text = body.decode("utf-8", "replace")
    envelope = {"request": {"method": "GET", "url": "https://example.test/p?q=1", "headers": {"accept": "*/*"}},
                "response": {"status": 200, "headers": {"content-type": ctype}, "body": text}}
    if selector & 0x08:
        try:
            envelope["response"]["body"] = json.loads(text)
        except ValueError:
            pass
    if selector & 0x10:
        import base64

        envelope["response"]["body"] = base64.b64encode(body).decode("ascii")
        envelope["response"]["body_encoding"] = "base64"
    if selector & 0x20:
        envelope["response"]["headers"] = [{"name": "content-type", "value": ctype}, {"name": "x", "value": text[:50]}]
    _load(json.dumps(envelope, ensure_ascii=bool(selector & 0x40)).encode("utf-8"), "fuzz-envelope.json")
    _load(data, "fuzz.har")          # and the raw bytes as a recorded exchange file


def fuzz_recording(data: bytes) -> None:
    """The bytes as a YAML cassette (raw, after `interactions:`, so the cassette path is taken), and as the body of
    a VCR.py cassette (text or `!!binary`, under gzip or not), a nock recording (hex chunks, a string) and a
    Polly.js HAR (a base64 chunk list), so every stored form of a body is decoded whatever the mutation."""
    import base64

    import yaml

    _load(data, "fuzz.yaml")
    _load(b"interactions:\n" + data, "fuzz.yaml")
    if not data:
        return
    selector, body = data[0], data[1:]
    ctype = ("text/html; charset=utf-8", "application/json", "text/plain")[selector % 3]
    headers = {"Content-Type": [ctype], **({"Content-Encoding": ["gzip"]} if selector & 0x04 else {})}
    text = body.decode("utf-8", "replace")
    stored = body if selector & 0x08 else text
    cassette = {"interactions": [{"request": {"method": "POST", "uri": "https://api.example.test/search?q=1",
                                              "headers": {"Authorization": ["Bearer x"]}, "body": text[:80]},
                                  "response": {"status": {"code": 200, "message": "OK"}, "headers": headers,
                                               "body": {"string": stored}}}], "version": 1}
    style = (None, "'", '"', "|", ">")[selector >> 4 & 3 if selector & 0x40 else 0]
    try:
        dumped = yaml.dump(cassette, default_style=style, allow_unicode=bool(selector & 0x80))
    except yaml.YAMLError:
        dumped = yaml.dump(cassette)
    _load(dumped.encode("utf-8"), "fuzz-cassette.yaml")
    half = len(body) // 2
    nock = [{"scope": "https://api.example.test:443", "method": "GET", "path": "/p?token=1", "body": "", "status": 200,
             "response": [body[:half].hex(), body[half:].hex()] if selector & 0x10 else text,
             "rawHeaders": ["Content-Type", ctype] + (["Content-Encoding", "gzip"] if selector & 0x04 else [])}]
    _load(json.dumps(nock).encode(), "fuzz-nock.json")
    har = {"log": {"entries": [{"request": {"method": "GET", "url": "https://example.test/", "headers": []},
                                "response": {"status": 200, "headers": [{"name": "content-encoding", "value": "gzip"}],
                                             "content": {"mimeType": ctype, "encoding": "base64", "text": json.dumps(
                                                 [base64.b64encode(body[:half]).decode(),
                                                  base64.b64encode(body[half:]).decode()])}}}]}}
    _load(json.dumps(har).encode(), "fuzz.har")


def fuzz_spans(data: bytes) -> None:
    from scanner.spans import SpanError, apply_span, parse_span

    text = data.decode("utf-8", "replace")
    try:
        span = parse_span(text)
    except SpanError as exc:
        assert "\n" not in str(exc) or "\n" in text
        return
    assert span.kind in ("offset", "selector", "page")
    if span.start is not None:
        assert 0 <= span.start <= span.end
    try:
        got = apply_span(span, source_text=_SPAN_HTML, page_texts=_SPAN_PAGES)
    except SpanError:
        return
    assert got is None or isinstance(got, str)
    if span.kind == "offset" and got is not None:
        assert got == _SPAN_HTML[span.start:span.end]


FUNCTIONS = {"html": fuzz_html, "pdf": fuzz_pdf, "json": fuzz_json, "http": fuzz_http, "recording": fuzz_recording,
             "spans": fuzz_spans}
