"""`centinela serve`: the recorded exchanges replayed on loopback, matched per provider, with error scenarios,
held connections, a request log, and start-up errors that name the file."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import EXAMPLE_TREE
from scanner.serve import ServeError, ServerThread, build_server, load_catalog, parse_schedule
from scanner.serve.matching import request_key
from scanner.serve.server import loopback_host

Q1 = "registro sanitario COFEPRIS Laboratorios Sierra Madre"
PARTIAL_MISSING_TAVILY = [
    "https://www.milenio.com/negocios/aceros-del-bajio-invertira-120-mdd-en-celaya",
    "https://expansion.mx/empresas/2025/11/03/acereras-del-bajio-enfrentan-importaciones",
    "https://www.linkedin.com/posts/aceros-del-bajio_celaya-ampliacion-activity-7301",
    "https://www.eluniversal.com.mx/cartera/el-acero-mexicano-ante-los-aranceles-de-2026/",
]


def recorded(rel: str) -> dict:
    return json.loads((EXAMPLE_TREE / rel).read_text(encoding="utf-8"))


@contextmanager
def serving(provider="tavily", **options):
    server = build_server(EXAMPLE_TREE, provider, **options)
    with ServerThread(server) as thread:
        yield thread


async def exchange(base_url: str, method: str, path: str, body=None, headers=(), target=None):
    """One request on a fresh connection: (status, headers, body bytes)."""
    host, port = base_url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
    prefix = "/" + base_url.split("//", 1)[1].split("/", 1)[1] if base_url.count("/") > 2 else ""
    reader, writer = await asyncio.open_connection(host, int(port))
    data = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    own_host = [] if any(k.lower() == "host" for k, _ in headers) else [f"host: {host}:{port}"]
    lines = [f"{method} {target or prefix + path} HTTP/1.1", *own_host, f"content-length: {len(data)}",
             "connection: close", *[f"{k}: {v}" for k, v in headers]]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + data)
    await writer.drain()
    raw = await reader.read()
    writer.close()
    head, _, payload = raw.partition(b"\r\n\r\n")
    head_lines = head.decode("latin-1").split("\r\n")
    hdrs = {}
    for line in head_lines[1:]:
        k, _, v = line.partition(":")
        hdrs.setdefault(k.strip().lower(), v.strip())
    return int(head_lines[0].split()[1]), hdrs, payload


def fetch(base_url, method, path, body=None, headers=(), target=None):
    return asyncio.run(exchange(base_url, method, path, body, headers, target))


def wait_until(predicate, timeout=60.0):
    """Poll until the predicate holds (it returns at once when it does: the timeout only bounds a real failure)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return False


# --- matching rules ---------------------------------------------------------------------------------------

def test_match_keys_per_provider():
    assert request_key("tavily", "post", "/search", "", b'{"query": " ' + Q1.encode() + b'", "max_results": 3}') \
        == f'POST /search query="{Q1}"'
    # Exa /contents accepts ids or urls: one field, and a URL list is a set
    assert request_key("exa", "POST", "/contents", "", {"ids": ["b", "a"], "text": True}) \
        == request_key("exa", "POST", "/contents", "", {"urls": ["a", "b"]}) == 'POST /contents urls=["a","b"]'
    # one URL sent as a string is the list of that URL (tavily-python's extract("https://…"))
    assert request_key("tavily", "POST", "/extract", "", {"urls": "https://a.mx/"}) \
        == request_key("tavily", "POST", "/extract", "", {"urls": ["https://a.mx/"]}) == 'POST /extract urls=["https://a.mx/"]'
    assert request_key("exa", "POST", "/contents", "", {"ids": "https://a.mx/"}) == 'POST /contents urls=["https://a.mx/"]'
    assert request_key("firecrawl", "POST", "/v2/batch/scrape", "", {"urls": "https://a.mx/"}) \
        == 'POST /v2/batch/scrape urls=["https://a.mx/"]'
    assert request_key("brave", "GET", "/res/v1/web/search", "q=acero&count=10") == 'GET /res/v1/web/search q="acero"'
    assert request_key("serpapi", "GET", "/search.json", "engine=google&q=acero&api_key=x") == 'GET /search.json q="acero"'
    assert request_key("serper", "POST", "/search", "", {"q": "acero", "gl": "mx"}) == 'POST /search q="acero"'
    assert request_key("firecrawl", "POST", "/v2/scrape", "", {"url": "https://a.mx/", "formats": ["markdown"]}) \
        == 'POST /v2/scrape url="https://a.mx/"'
    assert request_key("jina", "GET", "/https://a.mx/p", "b=2&a=1") == "GET /https://a.mx/p ?a=1&b=2"
    assert request_key("jina", "GET", "/https%3A%2F%2Fa.mx%2Fp", "") == "GET /https://a.mx/p"
    # no provider rule, or none of its fields: method, path, canonical query and canonical JSON body
    assert request_key("acme", "POST", "/v1/find/", "z=1&a=2", b'{"b": 1, "a": [2]}') \
        == 'POST /v1/find ?a=2&z=1 body={"a":[2],"b":1}'
    assert request_key("tavily", "GET", "/contacto", "") == "GET /contacto"


def test_example_tree_catalog():
    catalog = load_catalog(EXAMPLE_TREE, "tavily")
    assert len(catalog.answers) == 32      # 22 searches, 3 extracts, 7 fetches
    assert catalog.scenario_names() == ["429", "502", "503", "503-empty", "5xx", "errors/429", "errors/502",
                                        "errors/503-empty", "errors/timeout", "timeout"]
    assert catalog.scenarios["5xx"].path == "tavily/errors/502.json"
    assert catalog.scenarios["timeout"].after_ms == 30000 and catalog.scenarios["timeout"].status is None
    partial = next(f for fs in catalog.answers.values() for f in fs if f.path == "tavily/extract/gs-005-partial.json")
    assert len(partial.requested_urls) == 10 and list(partial.missing) == PARTIAL_MISSING_TAVILY


def test_schedule_grammar():
    s = parse_schedule("search:429x2,ok,503-empty*")
    assert (s.provider, s.op, s.steps, s.forever) == (None, "search", ["429", "429", "ok", "503-empty"], True)
    assert [s.take("tavily") for _ in range(6)] == ["429", "429", "ok", "503-empty", "503-empty", "503-empty"]
    assert s.take("exa") == "429"              # each provider consumes its own copy
    s = parse_schedule("exa:v2/*:timeout")
    assert (s.provider, s.op, s.steps, s.forever) == ("exa", "v2/*", ["timeout"], False)
    assert s.applies("exa", "v2/scrape") and not s.applies("tavily", "v2/scrape") and not s.applies("exa", "search")
    assert s.take("exa") == "timeout" and s.take("exa") is None
    for bad in ("429", "search:", "search:429*,ok", "a:b:c:d", "search:4 29"):
        with pytest.raises(ServeError):
            parse_schedule(bad)


def test_only_loopback_addresses_are_accepted():
    assert loopback_host("127.0.0.1") == "127.0.0.1"
    assert loopback_host("::1") == "::1" and loopback_host("[::1]") == "::1"
    # a name is refused, localhost included: what it resolves to is the system's choice, not loopback by rule
    for host in ("localhost", "ip6-localhost", "0.0.0.0", "192.168.1.10", "::", "example.com", ""):
        with pytest.raises(ServeError, match="loopback only"):
            loopback_host(host)


# --- start-up errors name the file ------------------------------------------------------------------------

def _tree_with(tmp_path, rel, content) -> Path:
    root = tmp_path / "tree"
    shutil.copytree(EXAMPLE_TREE / "tavily", root / "tavily")
    target = root / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return root


@pytest.mark.parametrize("content, problem", [
    ("{not json", "not a recorded HTTP exchange: invalid JSON"),
    ({"request": {"method": "GET"}, "response": {"status": 200, "headers": {}, "body": ""}}, "request.url is missing"),
    ({"request": {"method": "GET", "url": "https://a.mx/x"}, "response": None}, 'error.type is not "timeout"'),
    ({"request": {"method": "GET", "url": "https://a.mx/x"}, "response": {"status": 200, "body": "%%%",
                                                                          "body_encoding": "base64"}},
     "response.body is not valid base64"),
    ({"request": {"method": "GET", "url": "https://a.mx/x"}, "response": {"status": 42}},
     "response.status must be an HTTP status code (got 42)"),
    ({"request": {"method": "GET", "url": "https://a.mx/x"}, "response": {"status": 200, "headers": 7}},
     "response.headers must be an object or a list"),
])
def test_bad_fixture_stops_the_start_up_naming_it(tmp_path, content, problem):
    root = _tree_with(tmp_path, "tavily/fetch/zz-bad.json", content)
    with pytest.raises(ServeError) as info:
        build_server(root, "tavily")
    assert str(info.value).startswith("tavily/fetch/zz-bad.json: ")
    assert problem in str(info.value)


def test_two_fixtures_of_the_same_request_are_a_start_up_error(tmp_path):
    root = _tree_with(tmp_path, "tavily/search/gs-001-again.json", recorded("tavily/search/gs-001.json"))
    with pytest.raises(ServeError, match=r"^tavily/search/gs-001\.json: records the same request as "
                                         r"tavily/search/gs-001-again\.json"):
        build_server(root, "tavily")


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "scanner", "serve", *args], capture_output=True, text=True,
                          timeout=300)


def test_cli_start_up_errors_are_one_line_exit_2(tmp_path):
    root = _tree_with(tmp_path, "tavily/errors/broken.json", "[1, 2")
    cases = [
        ([str(root), "--provider", "tavily"], "tavily/errors/broken.json: not a recorded HTTP exchange"),
        ([str(EXAMPLE_TREE), "--host", "0.0.0.0"], "--host 0.0.0.0: the replay server listens on loopback only"),
        ([str(EXAMPLE_TREE), "--host", "localhost"], "--host localhost: the replay server listens on loopback only"),
        ([str(EXAMPLE_TREE), "--provider", "brave"], "no such provider folder (providers: exa, firecrawl, tavily)"),
        ([str(EXAMPLE_TREE), "--scenario", "search:418"], "has no scenario fixture '418'"),
    ]
    for args, message in cases:
        proc = run_cli(*args, "--log", str(tmp_path / "log.jsonl"))
        assert proc.returncode == 2, (args, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1 and message in proc.stderr, proc.stderr
        assert proc.stdout == ""


# --- replay -----------------------------------------------------------------------------------------------

def test_answers_are_replayed_as_recorded(loopback):
    with serving() as server:
        status, headers, body = fetch(server.base_url, "POST", "/search", {"query": Q1, "max_results": 5})
        assert status == 200
        assert body == json.dumps(recorded("tavily/search/gs-001.json")["response"]["body"], ensure_ascii=False).encode()
        assert hashlib.sha256(body).hexdigest() == "a01787709298fd543973a36fccc1c2315830908b48e7885d0b588f67ec4b2ea0"
        assert headers["x-request-id"] == "820920fa-e2cc-5dc6-bf96-0c3cd3caf53d"
        assert headers["x-centinela-fixture"] == "tavily/search/gs-001.json"
        assert headers["content-length"] == "2464"
        # a PDF comes back as its bytes; a direct GET may use the absolute form a proxy client sends
        url = "https://www.labsierramadre.com.mx/inversionistas/informe-anual-2025.pdf"
        status, headers, pdf = fetch(server.base_url, "GET", "", target=url)
        assert status == 200 and headers["content-type"] == "application/pdf"
        assert pdf == base64.b64decode(recorded("tavily/fetch/gs-017-pdf.json")["response"]["body"])
        assert len(pdf) == 29093      # the 104-page informe anual
        # a partial answer is what was recorded: 6 results, 4 failures
        urls = recorded("tavily/extract/gs-005-partial.json")["request"]["body"]["urls"]
        status, _, body = fetch(server.base_url, "POST", "/extract", {"urls": list(reversed(urls))})
        data = json.loads(body)
        assert status == 200 and len(data["results"]) == 6 and len(data["failed_results"]) == 4
    entries = server.server.log.entries
    assert [e["fixture"] for e in entries] == ["tavily/search/gs-001.json", "tavily/fetch/gs-017-pdf.json",
                                               "tavily/extract/gs-005-partial.json"]
    assert entries[2]["requested_urls"] == 10 and entries[2]["missing"] == PARTIAL_MISSING_TAVILY


def test_unmatched_request_gets_404_naming_the_closest_fixture(loopback):
    with serving() as server:
        status, _, body = fetch(server.base_url, "POST", "/search", {"query": "registro sanitario COFEPRIS Sierra Madre"})
    data = json.loads(body)
    assert status == 404
    assert data["key"] == 'POST /search query="registro sanitario COFEPRIS Sierra Madre"'
    assert data["closest"]["fixture"] == "tavily/search/gs-001.json"
    assert data["closest"]["key"] == f'POST /search query="{Q1}"'
    assert server.server.log.entries[0]["status"] == 404 and server.server.log.entries[0]["fixture"] is None


def test_schedule_serves_errors_then_the_answer(loopback):
    with serving(scenarios=["search:429x2,ok", "extract:5xx*"], retry_after=0.05) as server:
        got = [fetch(server.base_url, "POST", "/search", {"query": Q1}) for _ in range(3)]
        assert [s for s, _, _ in got] == [429, 429, 200]
        assert got[0][1]["retry-after"] == "0.05" and got[0][1]["x-ratelimit-limit"] == "100"
        assert json.loads(got[0][2])["detail"]["error"].startswith("Rate limit exceeded")
        assert [fetch(server.base_url, "POST", "/extract", {"urls": ["x"]})[0] for _ in range(4)] == [502] * 4
        # a header decides one request without consuming the schedule; 503 as recorded: no body at all
        status, headers, body = fetch(server.base_url, "POST", "/search", {"query": Q1},
                                      headers=[("X-Centinela-Scenario", "503-empty")])
        assert (status, headers["content-length"], body) == (503, "0", b"")
        status, headers, _ = fetch(server.base_url, "POST", "/search", {"query": Q1},
                                   headers=[("X-Centinela-Scenario", "429"), ("X-Centinela-Retry-After", "0.2")])
        assert (status, headers["retry-after"]) == (429, "0.2")
        status, _, body = fetch(server.base_url, "POST", "/search", {"query": Q1},
                                headers=[("X-Centinela-Scenario", "418")])
        assert status == 400 and "no scenario fixture '418'" in json.loads(body)["error"]
        # the control endpoint replaces the schedules; a body that is not JSON gets a message saying what it wants
        status, _, body = fetch(server.base_url, "POST", "/_centinela/scenario", b"{scenarios: [")
        assert (status, json.loads(body)) == (400, {"error": 'the body is not JSON: expected {"scenarios": ["OP:STEP,…", …]}'})
        status, _, body = fetch(server.base_url, "POST", "/_centinela/scenario", {"scenarios": ["search:502"]})
        assert status == 200 and json.loads(body) == {"scenarios": ["search:502"]}
        assert [fetch(server.base_url, "POST", "/search", {"query": Q1})[0] for _ in range(2)] == [502, 200]
    log = [e for e in server.server.log.entries if not e.get("control")]
    assert [(e["status"], e["scenario"], e["scenario_source"]) for e in log[:3]] == [
        (429, "429", "search:429x2,ok"), (429, "429", "search:429x2,ok"), (200, None, None)]
    assert log[0]["retry_after"] == "0.05" and log[0]["fixture"] == "tavily/errors/429.json"


def test_every_provider_under_its_prefix(loopback):
    server = build_server(EXAMPLE_TREE, None)
    with ServerThread(server) as thread:
        urls = server.base_urls
        assert sorted(urls) == ["exa", "firecrawl", "tavily"] and urls["exa"].endswith("/exa")
        assert fetch(urls["exa"], "POST", "/search", {"query": Q1})[1]["x-centinela-fixture"] == "exa/search/gs-001.json"
        assert fetch(urls["tavily"], "POST", "/search", {"query": Q1})[1]["x-centinela-fixture"] == "tavily/search/gs-001.json"
        status, _, body = fetch(thread.server.origin, "POST", "/search", {"query": Q1})
        assert status == 404 and "no provider at /search" in json.loads(body)["error"]


def test_a_batch_recorded_as_one_file_is_served_call_by_call(loopback):
    """A Firecrawl batch scrape is one file of three calls (submit, status, errors): each is served on its own
    request, named `<path>#<i>`; the submit answers no page yet, so the log lists no URLs as missing for it."""
    rel = "firecrawl/extract/gs-005-partial.json"
    submit, status, errors = recorded(rel)
    job = submit["response"]["body"]["id"]
    urls = submit["request"]["body"]["urls"]
    with serving("firecrawl") as thread:
        code, headers, body = fetch(thread.base_url, "POST", "/v2/batch/scrape",
                                    {"urls": urls[::-1], "origin": "python-sdk@4.55.0"})
        assert (code, headers["x-centinela-fixture"]) == (200, rel + "#0")
        assert json.loads(body) == submit["response"]["body"]
        for path, ex, i in ((f"/v2/batch/scrape/{job}", status, 1), (f"/v2/batch/scrape/{job}/errors", errors, 2)):
            code, headers, body = fetch(thread.base_url, "GET", path)
            assert (code, headers["x-centinela-fixture"]) == (200, f"{rel}#{i}")
            assert json.loads(body) == ex["response"]["body"]
    entries = thread.server.log.entries
    assert [e["fixture"] for e in entries] == [rel + "#0", rel + "#1", rel + "#2"]
    assert [e["requested_urls"] for e in entries] == [None, None, None]


def test_timeout_holds_the_connection_until_the_client_closes_it(loopback):
    async def scenario(thread):
        host, port = thread.server.host, thread.server.port
        reader, writer = await asyncio.open_connection(host, port)
        body = json.dumps({"query": Q1}).encode()
        writer.write(b"POST /search HTTP/1.1\r\nhost: x\r\nx-centinela-scenario: timeout\r\n"
                     b"content-length: %d\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        # once the server holds the request, 0.3 s with no answer and no EOF: the log's duration covers them
        assert await asyncio.to_thread(wait_until, lambda: thread.stats()["held"] == 1)
        stats = await asyncio.to_thread(thread.stats)
        assert stats["held"] == 1 and stats["connections"] == 1
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(reader.read(1), 0.3)      # no answer, and no EOF either
        writer.close()
        await writer.wait_closed()
        assert await asyncio.to_thread(wait_until, lambda: thread.stats()["held"] == 0)

    with serving() as thread:
        asyncio.run(scenario(thread))
    (entry,) = thread.server.log.entries
    assert entry["status"] == "client_closed" and entry["scenario"] == "timeout"
    assert entry["fixture"] == "tavily/errors/timeout.json" and entry["duration_ms"] >= 300
    assert entry["body_sha256"] == hashlib.sha256(json.dumps({"query": Q1}).encode()).hexdigest()


def test_200_concurrent_connections_with_50_held(loopback):
    """Acceptance: 150 answered and 50 held open by the timeout fixture at once; the held ones stay open
    until their clients close them."""
    queries = [c["request"]["body"]["query"] for c in
               (recorded(f"tavily/search/{p.name}") for p in sorted((EXAMPLE_TREE / "tavily/search").iterdir()))]

    async def scenario(thread):
        host, port = thread.server.host, thread.server.port
        conns = await asyncio.gather(*(asyncio.open_connection(host, port) for _ in range(200)))
        held = [i for i in range(200) if i % 4 == 0]
        for i, (_, writer) in enumerate(conns):
            body = json.dumps({"query": queries[i % len(queries)]}).encode()
            extra = b"x-centinela-scenario: timeout\r\n" if i in held else b""
            writer.write(b"POST /search HTTP/1.1\r\nhost: x\r\n" + extra +
                         b"content-length: %d\r\n\r\n%s" % (len(body), body))
        await asyncio.gather(*(w.drain() for _, w in conns))

        async def status_of(reader):
            line = await reader.readuntil(b"\r\n")
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(next(h.split(b":")[1] for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")))
            await reader.readexactly(length)
            return int(line.split()[1])

        answered = await asyncio.wait_for(
            asyncio.gather(*(status_of(r) for i, (r, _) in enumerate(conns) if i not in held)), 120)
        assert answered == [200] * 150
        # the held requests are read as the server gets to them: wait for all 50 (returns as soon as they are)
        await asyncio.to_thread(wait_until, lambda: thread.stats()["held"] == 50)
        stats = await asyncio.to_thread(thread.stats)
        assert stats == {"connections": 200, "held": 50, "requests": 200, "idle_closed": 0}

        async def silent(reader):
            try:
                await asyncio.wait_for(reader.read(1), 0.2)
                return False
            except asyncio.TimeoutError:
                return True
        assert await asyncio.gather(*(silent(conns[i][0]) for i in held)) == [True] * 50
        for _, writer in conns:
            writer.close()
        assert await asyncio.to_thread(wait_until, lambda: thread.stats()["connections"] == 0)

    with serving() as thread:
        asyncio.run(scenario(thread))
    statuses = [e["status"] for e in thread.server.log.entries]
    assert statuses.count(200) == 150 and statuses.count("client_closed") == 50 and len(statuses) == 200


# --- the command ------------------------------------------------------------------------------------------

def _start(tmp_path, *args):
    log = tmp_path / "serve.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "scanner", "serve", str(EXAMPLE_TREE), "--provider", "tavily",
                             "--log", str(log), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = proc.stdout.readline().split()
    assert first[0] == "tavily" and first[1].startswith("http://127.0.0.1:"), proc.stderr.read()
    return proc, first[1], log


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_command_prints_its_base_url_and_stops_cleanly_on_a_signal(tmp_path, loopback, sig):
    proc, base, log = _start(tmp_path, "--scenario", "search:429", "--retry-after", "0.01")
    try:
        assert fetch(base, "POST", "/search", {"query": Q1})[0] == 429
        assert fetch(base, "POST", "/search", {"query": Q1})[0] == 200

        async def hold():
            host, port = base[len("http://"):].rsplit(":", 1)
            reader, writer = await asyncio.open_connection(host, int(port))
            writer.write(b"GET /contacto HTTP/1.1\r\nhost: x\r\nx-centinela-scenario: timeout\r\n\r\n")
            await writer.drain()
            await asyncio.sleep(1.0)        # for the server to read the request (it holds it, so nothing says when)
            proc.send_signal(sig)
            assert await asyncio.wait_for(reader.read(), 120) == b""   # closed by the server, never answered
            writer.close()
        asyncio.run(hold())
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "stopped after 3 requests (1 still held open were closed)" in err and "Traceback" not in err
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(e["status"], e["scenario"]) for e in entries] == [(429, "429"), (200, None), ("held", "timeout")]
    assert entries[0]["retry_after"] == "0.01"
    assert set(entries[0]) >= {"id", "ts_start", "ts_end", "method", "path", "fixture", "scenario", "status",
                               "duration_ms", "body_sha256", "call", "key", "connection"}


def test_the_host_chooses_between_hosts_of_one_request(tmp_path, loopback):
    page = recorded("tavily/fetch/gs-003.json")
    page["request"]["url"] = "https://www.otra-empresa.com.mx/contacto"
    page["response"]["body"] = "<p>otra</p>"
    root = _tree_with(tmp_path, "tavily/fetch/otra.json", page)
    with ServerThread(build_server(root, "tavily")) as thread:
        status, _, body = fetch(thread.base_url, "GET", "/contacto")
        assert status == 404 and json.loads(body)["fixtures"] == ["tavily/fetch/gs-003.json", "tavily/fetch/otra.json"]
        assert fetch(thread.base_url, "GET", "", target="https://www.otra-empresa.com.mx/contacto")[2] == b"<p>otra</p>"
        status, headers, _ = fetch(thread.base_url, "GET", "/contacto", headers=[("Host", "www.acerosdelbajio.com.mx")])
        assert headers["x-centinela-fixture"] == "tavily/fetch/gs-003.json"


def test_a_port_in_use_is_a_start_up_error(loopback):
    with serving() as first:
        with pytest.raises(ServeError, match=rf"cannot listen on 127\.0\.0\.1:{first.server.port}: "):
            with serving(port=first.server.port):
                pass


def test_keep_alive_chunked_bodies_and_bad_requests(loopback):
    async def scenario(thread):
        reader, writer = await asyncio.open_connection(thread.server.host, thread.server.port)
        body = json.dumps({"query": Q1}).encode()
        chunked = b"%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n" % (10, body[:10], len(body) - 10, body[10:])
        writer.write(b"POST /search HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n" + chunked
                     + b"HEAD /contacto HTTP/1.1\r\nhost: x\r\n\r\n"
                     + b"BROKEN\r\n\r\n")
        await writer.drain()
        raw = await asyncio.wait_for(reader.read(), 120)        # the bad request line closes the connection
        writer.close()
        return raw

    with serving() as thread:
        raw = asyncio.run(scenario(thread))
    assert raw.startswith(b"HTTP/1.1 200 OK\r\n")
    assert raw.count(b"HTTP/1.1 200 OK\r\n") == 2 and b"HTTP/1.1 400 Bad Request\r\n" in raw
    assert b"<!DOCTYPE html>" not in raw                          # HEAD: headers only
    log = thread.server.log.entries
    assert [(e["method"], e["status"], e["fixture"]) for e in log] == [
        ("POST", 200, "tavily/search/gs-001.json"), ("HEAD", 200, "tavily/fetch/gs-003.json"), (None, 400, None)]
