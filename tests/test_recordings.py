"""Cassettes and recordings as fixtures: the one reader of recorded exchanges (`scanner.exchanges`) on real files
from VCR.py, pytest-recording, Polly.js and nock, exact offsets into their decoded text, scanning, the manifest,
the provider adapters, and YAML read safely. Provenance of every file: tests/data/recordings/PROVENANCE.md."""

from __future__ import annotations

import base64
import gzip
import json
import re
from pathlib import Path

import pytest
import yaml

from scanner.exchanges import BodyError, RecordingError, parse_bytes, parse_text
from scanner.exchanges.bodies import b64decode, decompress
from scanner.fixtures.tree import infer_class, recorded_capture_time
from scanner.loaders import is_scannable, load_bytes, load_path
from scanner.scan import Scanner
from scanner.units import Channel, LoadError
from scanner.pipeline.run import scan_paths

DATA = Path(__file__).parent / "data" / "recordings"
REAL = sorted(p for sub in ("vcrpy", "pytest-recording", "pollyjs", "nock") for p in (DATA / sub).iterdir()
              if p.name != "old_cassette.yaml")
WRITTEN = sorted((DATA / "written").iterdir())


def parsed(path: Path):
    return parse_bytes(path.read_bytes(), path.name)


# --- the reader ---------------------------------------------------------------------------------------------

def test_real_files_are_recognised_with_their_exchanges():
    seen = {p.name: (parsed(p).recording.format, len(parsed(p).recording.exchanges)) for p in REAL}
    assert seen == {
        "gzip_requests.yaml": ("vcr", 1), "gzip_httpx_old_format.yaml": ("vcr", 1), "new_cassette.yaml": ("vcr", 1),
        "new_cassette.json": ("vcr", 1), "domain_redirect.yaml": ("vcr", 2),
        "test_tornado_with_decorator_use_cassette.yaml": ("vcr", 1),
        "get.yaml": ("vcr", 1), "ip.yaml": ("vcr", 1),
        "node-fetch-compressed-response.har": ("har", 1), "jest-node-fetch-should-return-post.har": ("har", 1),
        "content_length_test.json": ("nock", 1), "filtered_by_id_requests.json": ("nock", 2),
    }


def test_vcr_cassette_exchange_fields():
    ex = parsed(DATA / "vcrpy" / "gzip_requests.yaml").recording.exchanges[0]
    assert (ex.request.method, ex.request.url, ex.response.status) == ("GET", "https://httpbin.org/gzip", 200)
    # headers in the recorded order and case
    assert [h.name for h in ex.request.headers] == ["Accept", "Accept-Encoding", "Connection", "User-Agent"]
    assert ex.response.header_map["content-encoding"] == "gzip"
    body = ex.response.body
    assert body.yaml_binary and body.compression == "gzip"
    assert json.loads(body.content())["gzipped"] is True
    assert ex.capture_time() == "Sun, 12 Jun 2022 18:08:44 GMT"
    # the httpx shape: `content` and `status_code`; the body is stored decoded under Content-Encoding: gzip
    ex = parsed(DATA / "vcrpy" / "gzip_httpx_old_format.yaml").recording.exchanges[0]
    assert ex.response.status == 200 and ex.response.body.compression is None
    assert json.loads(ex.response.body.content())["headers"]["Host"] == "httpbin.org"
    # Python 2 cassettes: !!python/unicode bodies, headers as !!python/tuple [name, [values]]
    ex = parsed(DATA / "vcrpy" / "test_tornado_with_decorator_use_cassette.yaml").recording.exchanges[0]
    assert ex.response.body.content() == b"not actually google"
    assert ex.response.header_map["date"] == "Thu, 30 Jul 2015 08:41:40 GMT"


def test_har_and_nock_exchange_fields():
    ex = parsed(DATA / "pollyjs" / "node-fetch-compressed-response.har").recording.exchanges[0]
    assert ex.request.header_map["content-type"] == "application/json"     # a Polly 1.x array value
    assert ex.response.body.transfer == "hex-chunks" and ex.response.body.content() == b'{"foo":"bar"}'
    assert ex.capture_time() == "2019-01-23T23:48:25.861Z"
    ex = parsed(DATA / "nock" / "content_length_test.json").recording.exchanges[0]
    assert (ex.request.method, ex.request.url) == ("GET", "http://example.test:80/api/data")
    assert [(h.name, h.value) for h in ex.response.headers] == [("Content-Type", "application/json"),
                                                               ("Content-Length", "63")]
    assert json.loads(ex.response.body.content()) == {"name": "John Doe", "age": 30, "city": "New York"}
    ex = parsed(DATA / "nock" / "filtered_by_id_requests.json").recording.exchanges[1]
    assert [h.value[:5] for h in ex.response.headers if h.name == "set-cookie"] == ["PREF=", "NID=6"]


def test_base64_is_strict_everywhere():
    assert b64decode("aGVs\nbG8=") == b"hello"          # whitespace, as YAML folds !!binary, is ignored
    for bad in ("aGVs*bG8=", "aGVsbG8", "%%%"):
        with pytest.raises(BodyError):
            b64decode(bad)
    envelope = {"request": {"method": "GET", "url": "https://a.mx/"},
                "response": {"status": 200, "headers": {"content-type": "text/html"}, "body": "PHA+aG9sYTwvcD4*",
                             "body_encoding": "base64"}}
    doc = load_bytes(json.dumps(envelope).encode(), "fetch.json")
    assert any("invalid base64 body" in p for p in doc.problems)
    from scanner.providers.envelope import exchanges_of

    assert "response body is not valid base64" in exchanges_of(envelope)[0].problems


def test_the_pre_1_0_vcr_format_is_refused_with_the_migration_hint():
    with pytest.raises(RecordingError, match=r"vcr\.migration") as info:
        parse_bytes((DATA / "vcrpy" / "old_cassette.yaml").read_bytes(), "old_cassette.yaml")
    assert info.value.code == "format"
    with pytest.raises(RecordingError, match="before 1.0"):
        parse_text("- request: {uri: 'http://a'}\n  response: {status: {code: 200}}\n", "old.yaml")


# --- exact offsets ------------------------------------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z0-9]{3,}")


def _exact_units(doc):
    blocks = [(r.start, r.end) for r in doc.regions]
    for u in doc.units:
        if u.page is None and not any(s <= u.start and u.end <= e for s, e in blocks):
            yield u


@pytest.mark.parametrize("path", REAL + WRITTEN, ids=lambda p: p.name)
def test_every_word_of_every_unit_maps_to_the_same_characters_in_the_file(path):
    doc = load_path(path)
    assert doc.kind == "http"
    checked = 0
    for u in _exact_units(doc):
        assert 0 <= u.start <= u.end <= len(doc.text)
        for m in _WORD.finditer(u.text):
            s, e = u.source_span(m.start(), m.end())
            assert doc.text[s:e] == m.group(0), (u.locator, m.group(0), doc.text[s:e])
            checked += 1
    assert checked > 10


@pytest.mark.parametrize("path", [p for p in REAL + WRITTEN if p.suffix == ".yaml"], ids=lambda p: p.name)
def test_a_word_replaced_at_its_mapped_span_changes_exactly_that_word_of_the_value(path):
    """What redaction relies on: the span a YAML string's unit gives for a word is where that word is written,
    through quoting, escapes, folding and block indentation."""
    doc = load_path(path)
    source = parse_text(doc.text, path.name).source
    values = {s.pointer: s.text for s in source.strings() if not s.is_key}
    tried = 0
    for u in _exact_units(doc):
        if u.channel not in (Channel.JSON_STRING, Channel.HTTP_HEADER_VALUE, Channel.HTTP_URL) or u.locator not in values:
            continue
        for m in list(_WORD.finditer(u.text))[:3]:
            s, e = u.source_span(m.start(), m.end())
            new = parse_text(doc.text[:s] + "Qz" + doc.text[e:], path.name).source
            got = {x.pointer: x.text for x in new.strings() if not x.is_key}[u.locator]
            assert got == u.text[:m.start()] + "Qz" + u.text[m.end():]
            tried += 1
    assert tried >= 3


def test_json_inside_a_yaml_string_maps_through_both():
    doc = load_path(DATA / "vcrpy" / "gzip_httpx_old_format.yaml")
    (u,) = [u for u in doc.units if u.locator == "/interactions/0/response/content#/headers/X-Amzn-Trace-Id"
            and u.channel == Channel.JSON_STRING]
    assert u.text == "Root=1-62a62a8d-5f39b5c50c744da821d6ea99"
    assert doc.text[u.start:u.end] == u.text
    (key,) = [u for u in doc.units if u.locator == "/interactions/0/response/content#/gzipped"
              and u.channel == Channel.JSON_KEY]
    assert doc.text[key.start - 2:key.end + 2] == '\\"gzipped\\"'


def test_compressed_and_encoded_bodies_point_at_the_whole_stored_body():
    doc = load_path(DATA / "vcrpy" / "domain_redirect.yaml")       # a gzip HTML page as !!binary
    (region,) = doc.regions
    assert region.compression == "gzip" and region.body.yaml_binary
    assert "<html" in region.text.lower()
    texts = [u for u in doc.units if u.container == region.container]
    assert texts and all(region.start <= u.start and u.end <= region.end for u in texts)
    assert doc.text[region.start:region.start + 10] == "!!binary |"
    doc = load_path(DATA / "pollyjs" / "node-fetch-compressed-response.har")
    assert [r.body.transfer for r in doc.regions] == ["hex-chunks"]


def test_header_units_and_channels_per_format():
    doc = load_path(DATA / "written" / "nock.json")
    names = [u.text for u in doc.units if u.channel == Channel.HTTP_HEADER_NAME]
    assert "Set-Cookie" in names or "set-cookie" in names
    assert "authorization" in names                                 # reqheaders keys
    values = [u for u in doc.units if u.channel == Channel.HTTP_HEADER_VALUE]
    assert all(u.attrs.get("header") for u in values)
    urls = sorted(u.text for u in doc.units if u.channel == Channel.HTTP_URL)
    assert urls[:2] == ["/extract", "/search"] and "https://api.tavily.com:443" in urls


# --- scanning -----------------------------------------------------------------------------------------------

def test_cookies_in_real_polly_and_nock_recordings_are_found():
    result = scan_paths(Scanner(kinds=("secret",)), [DATA / "pollyjs", DATA / "nock"])
    got = sorted((f.path, f.rule_id, f.locator) for f in result.findings)
    assert got == [
        ("filtered_by_id_requests.json", "SEC003", "/0/headers/set-cookie/0"),
        ("filtered_by_id_requests.json", "SEC003", "/0/headers/set-cookie/1"),
        ("filtered_by_id_requests.json", "SEC003", "/1/headers/set-cookie/0"),
        ("filtered_by_id_requests.json", "SEC003", "/1/headers/set-cookie/1"),
        ("jest-node-fetch-should-return-post.har", "SEC003", "/log/entries/0/response/cookies/0/value"),
        ("jest-node-fetch-should-return-post.har", "SEC003", "/log/entries/0/response/headers/13/value"),
    ]


@pytest.mark.parametrize("name", ["cassette.yaml", "recording.har", "nock.json"])
def test_written_recordings_hold_every_kind_of_datum(name):
    result = scan_paths(Scanner(kinds=("secret", "pii")), [DATA / "written" / name])
    entities = {f.entity for f in result.findings}
    assert {"AUTH_HEADER", "COOKIE", "EMAIL_PERSONAL"} <= entities, entities
    # a datum inside a compressed or base64 body is reported where the stored body is
    doc = load_path(DATA / "written" / name)
    inside = [f for f in result.findings for r in doc.regions if r.start <= f.start and f.end <= r.end]
    assert inside and all(f.entity == "EMAIL_PERSONAL" for f in inside)


def test_only_cassettes_among_yaml_files_are_scanned(tmp_path):
    (tmp_path / "cases.yaml").write_text("cases:\n- id: gs-001\n  contact: maria.lopez@gmail.com\n")
    (tmp_path / "cassette.yml").write_bytes((DATA / "vcrpy" / "new_cassette.yaml").read_bytes())
    assert not is_scannable(tmp_path / "cases.yaml") and is_scannable(tmp_path / "cassette.yml")
    result = scan_paths(Scanner(kinds=("pii",)), [tmp_path])
    assert [d["path"] for d in result.documents] == ["cassette.yml"]
    assert load_path(tmp_path / "cases.yaml").kind == "text"      # named explicitly: read as text, as before


# --- YAML read safely ---------------------------------------------------------------------------------------

def test_yaml_aliases_depth_and_size_are_refused(tmp_path, monkeypatch):
    bomb = "interactions:\n- &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"- &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
    with pytest.raises(LoadError, match="aliases"):
        load_bytes(bomb.encode(), "bomb.yaml")
    deep = "interactions:\n- request:\n" + "".join("  " * (i + 2) + f"k{i}:\n" for i in range(80)) + "  " * 82 + "v\n"
    with pytest.raises(LoadError, match="nested deeper"):
        load_bytes(deep.encode(), "deep.yaml")
    from scanner.exchanges import yamltext

    monkeypatch.setattr(yamltext, "MAX_CHARS", 1000)
    with pytest.raises(LoadError, match="larger than"):
        load_bytes(b"interactions:\n" + b"- request: {uri: 'http://a'}\n" * 100, "big.yaml")


def test_a_compression_bomb_is_an_error_of_the_file_not_a_full_memory():
    bomb = gzip.compress(b"\0" * (80 << 20))                        # 80 MB in about 80 KB
    cassette = yaml.dump({"interactions": [{"request": {"method": "GET", "uri": "https://a.mx/", "headers": {}},
                                            "response": {"status": {"code": 200}, "headers": {
                                                "Content-Encoding": ["gzip"]}, "body": {"string": bomb}}}],
                          "version": 1})
    doc = load_bytes(cassette.encode(), "bomb.yaml")
    (err,) = doc.meta["body_errors"]
    assert err["code"] == "too_large"
    with pytest.raises(BodyError):
        decompress(bomb, "gzip", limit=1 << 20)


# --- the manifest -------------------------------------------------------------------------------------------

def test_capture_times_and_classes_from_recordings(tmp_path):
    root = tmp_path / "tree"
    (root / "exa" / "errors").mkdir(parents=True)
    (root / "exa" / "fetch").mkdir(parents=True)
    assert recorded_capture_time(DATA / "vcrpy" / "gzip_requests.yaml") == "2022-06-12T18:08:44Z"
    assert recorded_capture_time(DATA / "pollyjs" / "jest-node-fetch-should-return-post.har") == "2018-10-18T18:31:55Z"
    assert recorded_capture_time(DATA / "nock" / "content_length_test.json") is None      # nothing says when
    ruby = ("---\nhttp_interactions:\n- request:\n    method: get\n    uri: https://api.exa.ai/search\n"
            "    body: {encoding: UTF-8, string: ''}\n    headers: {}\n  response:\n    status: {code: 429, message: Too Many}\n"
            "    headers:\n      Retry-After: ['12']\n    body: {encoding: UTF-8, string: '{}'}\n"
            "  recorded_at: Sun, 01 Mar 2026 09:30:01 GMT\nrecorded_with: VCR 6.2.0\n")
    (root / "exa" / "errors" / "rate.yml").write_text(ruby)
    assert recorded_capture_time(root / "exa" / "errors" / "rate.yml") == "2026-03-01T09:30:01Z"
    assert infer_class(root, "exa/errors/rate.yml") == "429"
    (root / "exa" / "fetch" / "page.yaml").write_bytes((DATA / "vcrpy" / "domain_redirect.yaml").read_bytes())
    assert infer_class(root, "exa/fetch/page.yaml") == "html"      # the first exchange whose type says


def test_manifest_update_lists_cassettes_hars_and_nock_files(tmp_path):
    from scanner.fixtures.update import update_manifest

    root = tmp_path / "tree"
    (root / "tavily" / "search").mkdir(parents=True)
    for f in WRITTEN:
        (root / "tavily" / "search" / f.name).write_bytes(f.read_bytes())
    result = update_manifest(root)
    assert not result.skipped
    got = {a["path"]: (a["class"], a["captured_at"]) for a in result.added}
    assert got == {"tavily/search/cassette.yaml": ("results", "2026-10-02T14:11:09Z"),
                   "tavily/search/nock.json": ("results", "2026-10-02T14:11:09Z"),
                   "tavily/search/recording.har": ("results", "2026-10-02T14:11:09Z")}


# --- the provider adapters ----------------------------------------------------------------------------------

def test_the_adapters_read_a_cassette_of_a_provider(tmp_path):
    from scanner.providers import read_fixture

    cassette = yaml.safe_load((DATA / "written" / "cassette.yaml").read_text())
    for i, name in enumerate(("search", "extract")):
        one = yaml.dump({"interactions": [cassette["interactions"][i]], "version": 1})
        path = tmp_path / f"{name}.yaml"
        path.write_text(one)
        got = read_fixture(path, provider="tavily")
        assert got.outcome == "ok", got
        if name == "search":
            assert [r.url for r in got.results] == ["https://www.gob.mx/cofepris/acciones-y-programas"]
        else:                           # the gzip body of the extract answer, decoded
            assert len(got.results) == 1 and got.results[0].url.endswith("/vcr/contacto")


def test_envelope_base64_bodies_still_decode_for_adapters_and_serve():
    page = "<html><body><p>Hola</p></body></html>".encode()
    env = {"request": {"method": "GET", "url": "https://a.mx/"},
           "response": {"status": 200, "headers": {"content-type": "text/html"},
                        "body": base64.b64encode(page).decode(), "body_encoding": "base64"}}
    rec = parse_text(json.dumps(env), "a.json").recording
    assert rec.exchanges[0].response.body.content() == page


# --- serve --------------------------------------------------------------------------------------------------

def test_serve_replays_real_cassettes_with_bodies_decoded(tmp_path, loopback):
    from scanner.serve import ServerThread, build_server
    from test_serve import fetch

    root = tmp_path / "tree"
    (root / "acme" / "fetch").mkdir(parents=True)
    for name in ("gzip_requests.yaml", "domain_redirect.yaml"):
        (root / "acme" / "fetch" / name).write_bytes((DATA / "vcrpy" / name).read_bytes())
    (root / "acme" / "fetch" / "post.har").write_bytes((DATA / "pollyjs" / "jest-node-fetch-should-return-post.har").read_bytes())
    with ServerThread(build_server(root, "acme", log_path=None)) as server:
        status, headers, body = fetch(server.base_url, "GET", "/gzip")
        assert status == 200 and "content-encoding" not in headers       # served decoded, length recomputed
        assert json.loads(body)["gzipped"] is True and headers["x-centinela-fixture"] == "acme/fetch/gzip_requests.yaml"
        # one cassette, two hosts, the same path: the Host header chooses
        status, headers, body = fetch(server.base_url, "GET", "/", headers=[("Host", "moz.com")])
        assert status == 200 and b"<html" in body.lower()
        assert headers["x-centinela-fixture"] == "acme/fetch/domain_redirect.yaml#1"
        status, headers, body = fetch(server.base_url, "GET", "/", headers=[("Host", "seomoz.org")])
        assert status == 301 and headers["location"] == "http://moz.com/"
        status, headers, body = fetch(server.base_url, "GET", "/posts/1")
        assert status == 200 and json.loads(body)["userId"] == 1


def test_serve_names_the_exchange_it_cannot_serve(tmp_path):
    from scanner.serve import ServeError, build_server

    root = tmp_path / "tree"
    (root / "acme" / "fetch").mkdir(parents=True)
    har = json.loads((DATA / "pollyjs" / "jest-node-fetch-should-return-post.har").read_text())
    har["log"]["entries"][0]["response"]["status"] = 0          # a browser's "no answer"
    (root / "acme" / "fetch" / "x.har").write_text(json.dumps(har))
    with pytest.raises(ServeError, match=r"^acme/fetch/x\.har: log\.entries\[0\]: no response was recorded"):
        build_server(root, "acme", log_path=None)
    (root / "acme" / "fetch" / "x.har").unlink()
    (root / "acme" / "fetch" / "c.yaml").write_text("interactions:\n- request: {method: GET}\n  response: {status: {code: 200}}\n")
    with pytest.raises(ServeError, match=r"^acme/fetch/c\.yaml: interactions\[0\]\.request\.uri is missing"):
        build_server(root, "acme", log_path=None)
    (root / "acme" / "fetch" / "c.yaml").write_text("interactions: &a [*a]\n")
    with pytest.raises(ServeError, match=r"^acme/fetch/c\.yaml: not a recorded HTTP exchange: invalid YAML"):
        build_server(root, "acme", log_path=None)
