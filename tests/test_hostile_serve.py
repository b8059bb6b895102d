"""`centinela serve` under hostile clients: huge scenario repeat counts, oversized and deeply nested control
bodies, idle and half-sent connections, huge request bodies, a request the server cannot decide. Each one a
4xx/5xx with a message and a log entry (or a closed idle connection), never a blocked server or a dropped,
unlogged request — and the timeout fixture still holds its connection open."""

from __future__ import annotations

import asyncio
import json

import pytest

from conftest import EXAMPLE_TREE
from scanner.serve import ServeError, ServerThread, build_server, parse_schedule
from scanner.serve.scenarios import MAX_REPEAT, MAX_SCHEDULES, MAX_STEPS
from scanner.serve.server import CONTROL_MAX_BODY, KEY_SHOWN_CHARS
from test_serve import Q1, exchange, fetch, run_cli, wait_until


def serving(**options):
    return ServerThread(build_server(EXAMPLE_TREE, "tavily", **options))


def _post_scenarios(base_url, body):
    status, _, payload = fetch(base_url, "POST", "/_centinela/scenario", body)
    return status, json.loads(payload)


@pytest.mark.parametrize("texts, message", [
    (["search:429x400000000"], f"repeats more than {MAX_REPEAT:,} times"),
    (["search:429x99999999999999"], "repeats more than"),
    (["search:429x" + "9" * 5000], "longer than 4096 characters"),
    (["search:" + ",".join(["429x999999"] * 3)], f"more than {MAX_STEPS:,} steps in all"),
    (["search:ok"] * (MAX_SCHEDULES + 1), f"at most {MAX_SCHEDULES}"),
    (["search:429x0"], "repeats zero times"),
])
def test_scenario_bounds_are_a_400_with_a_message(loopback, texts, message):
    with serving() as thread:
        status, data = _post_scenarios(thread.base_url, {"scenarios": texts})
        assert status == 400 and message in data["error"], data
        # the server is not blocked and still answers
        assert fetch(thread.base_url, "POST", "/search", {"query": Q1})[0] == 200
    entry = thread.server.log.entries[0]
    assert entry["control"] is True and entry["status"] == 400


def test_repeats_are_kept_as_counts_not_expanded(loopback):
    with serving() as thread:
        status, _ = _post_scenarios(thread.base_url, {"scenarios": [f"search:429x{MAX_REPEAT - 1},ok"]})
        assert status == 200
        (schedule,) = thread.server.scenarios.schedules
        assert schedule.runs == [("429", MAX_REPEAT - 1), ("ok", 1)]
        assert [fetch(thread.base_url, "POST", "/search", {"query": Q1})[0] for _ in range(3)] == [429] * 3
        assert schedule.positions["tavily"] == (0, 3)
    s = parse_schedule("search:502x2,ok,503-empty*")
    assert [s.take("p") for _ in range(6)] == ["502", "502", "ok", "503-empty", "503-empty", "503-empty"]


def test_control_body_over_the_limit_is_413_before_it_is_read(loopback):
    with serving() as thread:
        body = json.dumps({"scenarios": ["search:ok"] * 10_000}).encode()
        assert len(body) > CONTROL_MAX_BODY
        status, _, payload = fetch(thread.base_url, "POST", "/_centinela/scenario", body)
        assert status == 413 and "at most 65,536 bytes" in json.loads(payload)["error"]
    assert [e["status"] for e in thread.server.log.entries] == [413]


def test_deeply_nested_control_body_is_a_logged_400(loopback):
    with serving() as thread:
        body = b"[" * 30_000 + b"]" * 30_000
        status, _, payload = fetch(thread.base_url, "POST", "/_centinela/scenario", body)
        assert status == 400 and "nested deeper" in json.loads(payload)["error"]
        deep = ('{"scenarios": ' * 20 + '"x"' + "}" * 20).encode()
        assert fetch(thread.base_url, "POST", "/_centinela/scenario", deep)[0] == 400
    assert [(e["status"], e.get("control")) for e in thread.server.log.entries] == [(400, True), (400, True)]


def test_huge_bodies_on_answer_paths_are_matched_and_logged_bounded(loopback):
    with serving() as thread:
        body = json.dumps({"query": "registro sanitario " * 60_000}).encode()      # 1.1 MB
        status, _, payload = fetch(thread.base_url, "POST", "/search", body)
        data = json.loads(payload)
        assert status == 404 and data["closest"]["fixture"].startswith("tavily/search/")
        assert len(data["key"]) <= KEY_SHOWN_CHARS + 40
        deep = b"[" * 100_000 + b"]" * 100_000
        assert fetch(thread.base_url, "POST", "/search", deep)[0] == 404
    for entry in thread.server.log.entries:
        assert len(entry["key"]) <= KEY_SHOWN_CHARS + 40 and len(entry["call"]) <= KEY_SHOWN_CHARS + 40


def test_a_request_the_server_cannot_decide_is_a_logged_500(loopback, monkeypatch):
    import scanner.serve.server as server_module

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(server_module, "request_key", broken)
    with serving() as thread:
        status, _, payload = fetch(thread.base_url, "POST", "/search", {"query": Q1})
        assert status == 500 and "RuntimeError" in json.loads(payload)["error"]
    assert [e["status"] for e in thread.server.log.entries] == [500]


def test_idle_connections_are_closed_but_held_ones_are_not(loopback):
    async def scenario(thread):
        host, port = thread.server.host, thread.server.port
        held_reader, held_writer = await asyncio.open_connection(host, port)
        body = json.dumps({"query": Q1}).encode()
        held_writer.write(b"POST /search HTTP/1.1\r\nhost: x\r\nx-centinela-scenario: timeout\r\n"
                          b"content-length: %d\r\n\r\n%s" % (len(body), body))
        await held_writer.drain()
        idle_reader, idle_writer = await asyncio.open_connection(host, port)          # sends nothing
        half_reader, half_writer = await asyncio.open_connection(host, port)          # starts a request
        half_writer.write(b"POST /search HTTP/1.1\r\nhost: x\r\n")
        await half_writer.drain()
        assert await asyncio.wait_for(idle_reader.read(), 30) == b""                  # closed, nothing sent
        answer = await asyncio.wait_for(half_reader.read(), 30)
        assert answer.startswith(b"HTTP/1.1 408 ")
        # the idle timer has fired for both: the held connection is still open and silent
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(held_reader.read(1), 0.3)
        stats = await asyncio.to_thread(thread.stats)
        assert stats["held"] == 1 and stats["idle_closed"] == 2
        held_writer.close()
        await held_writer.wait_closed()
        assert await asyncio.to_thread(wait_until, lambda: thread.stats()["connections"] == 0, 10)

    with serving(idle_timeout=0.2) as thread:
        asyncio.run(scenario(thread))
    statuses = sorted(str(e["status"]) for e in thread.server.log.entries)
    assert statuses == ["408", "client_closed"]


def test_idle_timeout_off(loopback):
    async def scenario(thread):
        reader, writer = await asyncio.open_connection(thread.server.host, thread.server.port)
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(reader.read(1), 0.5)
        status, _, _ = await exchange(thread.base_url, "GET", "/_centinela/stats")
        assert status == 200
        writer.close()

    with serving(idle_timeout=0) as thread:
        asyncio.run(scenario(thread))
        assert thread.stats()["idle_closed"] == 0


@pytest.mark.parametrize("args, message", [
    (["--scenario", "search:429x400000000"], "repeats more than 1,000,000 times"),
    (["--scenario", "search:429x" + "9" * 5000], "longer than 4096"),
    (["--idle-timeout", "-1"], "--idle-timeout"),
    (["--retry-after", "nan"], "--retry-after"),
])
def test_command_line_bounds_are_usage_errors(tmp_path, args, message):
    proc = run_cli(str(EXAMPLE_TREE), "--log", str(tmp_path / "log.jsonl"), *args)
    assert proc.returncode == 2, proc.stderr
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1 and message in err[0] and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stdout == "" and not (tmp_path / "log.jsonl").exists()


def test_retry_after_header_must_be_a_sane_number(loopback):
    with serving() as thread:
        for value in ("nan", "inf", "1e999", "-1"):
            status, _, payload = fetch(thread.base_url, "POST", "/search", {"query": Q1},
                                       headers=[("x-centinela-scenario", "429"), ("x-centinela-retry-after", value)])
            assert status == 400 and "not a number of seconds" in json.loads(payload)["error"]


def test_build_server_refuses_bad_timeouts():
    with pytest.raises(ServeError, match="idle-timeout"):
        build_server(EXAMPLE_TREE, "tavily", idle_timeout=float("nan"))


# --- the HTTP layer (h11) under abuse: each a status with a message, the server never blocked ----------------

def _early_answer(thread, head: bytes, rest: bytes = b"") -> tuple[int, bytes]:
    """Send `head` then `rest` from another thread (the server may answer before the rest is sent, and then
    refuse it) while reading the answer here: its status and body."""
    import socket
    import threading

    sock = socket.create_connection((thread.server.host, thread.server.port), timeout=60)

    def send():
        try:
            sock.sendall(head)
            for i in range(0, len(rest), 1 << 20):
                sock.sendall(rest[i:i + (1 << 20)])
        except OSError:
            pass                    # refused: the server stopped reading after its answer

    sender = threading.Thread(target=send)
    sender.start()
    raw = b""
    try:
        while b"\r\n\r\n" not in raw or len(raw.partition(b"\r\n\r\n")[2]) < _length(raw):
            chunk = sock.recv(65536)
            if not chunk:
                break
            raw += chunk
    finally:
        sender.join(60)
        sock.close()
    answer, _, body = raw.partition(b"\r\n\r\n")
    return int(answer.split()[1]), body[:_length(raw)]


def _length(raw: bytes) -> int:
    head = raw.partition(b"\r\n\r\n")[0]
    return int(next((line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")),
                    b"0"))


ABUSE = [
    ("a 10 MB header", b"GET /contacto HTTP/1.1\r\nhost: x\r\nx-big: ", b"a" * (10 << 20) + b"\r\n\r\n", 431,
     "request head too large"),
    ("100,000 headers", b"GET /contacto HTTP/1.1\r\nhost: x\r\n",
     b"".join(b"x-h%d: v\r\n" % i for i in range(100_000)) + b"\r\n", 431, "request head too large"),
    ("a body over 32 MB", b"POST /search HTTP/1.1\r\nhost: x\r\ncontent-length: 33554433\r\n\r\n", b"{" * 4096, 413,
     "at most 33,554,432 bytes"),
    ("a huge chunk", b"POST /search HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\nfffffffffff\r\n",
     b"x" * ((32 << 20) + (1 << 20)), 413, "at most 33,554,432 bytes"),
    ("a huge chunk on the control endpoint",
     b"POST /_centinela/scenario HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n7fffffff\r\n",
     b"x" * (1 << 20), 413, "at most 65,536 bytes"),
    ("a negative length", b"POST /search HTTP/1.1\r\nhost: x\r\ncontent-length: -1\r\n\r\n", b"", 400, "bad request"),
    ("a length that is not a number", b"POST /search HTTP/1.1\r\nhost: x\r\ncontent-length: 1e3\r\n\r\n", b"", 400,
     "bad request"),
    ("no Host header", b"GET /contacto HTTP/1.1\r\n\r\n", b"", 400, "Host"),
    ("a bad request line", b"GET /contacto\r\nhost: x\r\n\r\n", b"", 400, "bad request"),
    ("an unknown transfer coding", b"POST /search HTTP/1.1\r\nhost: x\r\ntransfer-encoding: gzip\r\n\r\n", b"", 501,
     "bad request"),
]


@pytest.mark.parametrize("what, head, rest, status, message", ABUSE, ids=[a[0] for a in ABUSE])
def test_abusive_requests_get_their_status_and_the_server_goes_on(loopback, what, head, rest, status, message):
    with serving() as thread:
        got, body = _early_answer(thread, head, rest)
        assert got == status and message in json.loads(body)["error"], (what, body[:300])
        assert fetch(thread.base_url, "POST", "/search", {"query": Q1})[0] == 200
    assert [e["status"] for e in thread.server.log.entries] == [status, 200]


def test_slow_clients_do_not_starve_the_others(loopback):
    """500 clients sending their requests a few bytes at a time; 20 others are answered while they dribble,
    and then every slow one is answered too."""
    body = json.dumps({"query": Q1}).encode()
    request = b"POST /search HTTP/1.1\r\nhost: x\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)

    async def scenario(thread):
        host, port = thread.server.host, thread.server.port
        slow = await asyncio.gather(*(asyncio.open_connection(host, port) for _ in range(500)))
        half = len(request) // 2
        for step in range(0, half, 8):                     # the first half, 8 bytes per round for every client
            for _, w in slow:
                w.write(request[step:min(step + 8, half)])
            await asyncio.gather(*(w.drain() for _, w in slow))
            await asyncio.sleep(0.005)
        quick = [await asyncio.wait_for(exchange(thread.base_url, "POST", "/search", {"query": Q1}), 60)
                 for _ in range(20)]
        assert [s for s, _, _ in quick] == [200] * 20
        for _, w in slow:
            w.write(request[half:])
        await asyncio.gather(*(w.drain() for _, w in slow))

        async def status_of(reader):
            head = await reader.readuntil(b"\r\n\r\n")
            return int(head.split()[1])
        statuses = await asyncio.wait_for(asyncio.gather(*(status_of(r) for r, _ in slow)), 120)
        for _, w in slow:
            w.close()
        return statuses

    with serving() as thread:
        assert asyncio.run(scenario(thread)) == [200] * 500
    assert len(thread.server.log.entries) == 520


def test_held_connections_cost_no_thread(loopback):
    """The timeout fixture holds 200 connections open: the server's threads are as many as before."""
    import threading

    async def scenario(thread):
        before = threading.active_count()
        host, port = thread.server.host, thread.server.port       # an address: no resolver thread either
        conns = await asyncio.gather(*(asyncio.open_connection(host, port) for _ in range(200)))
        for _, w in conns:
            w.write(b"GET /contacto HTTP/1.1\r\nhost: x\r\nx-centinela-scenario: timeout\r\n\r\n")
        await asyncio.gather(*(w.drain() for _, w in conns))
        assert await asyncio.to_thread(wait_until, lambda: thread.stats()["held"] == 200)
        during = threading.active_count()
        for _, w in conns:
            w.close()
        return before, during

    with serving() as thread:
        before, during = asyncio.run(scenario(thread))
    assert during <= before + 1, (before, during)        # +1: asyncio.to_thread's worker of the check itself


def test_requests_on_a_held_connection_are_read_and_never_answered(loopback):
    async def scenario(thread):
        reader, writer = await asyncio.open_connection(thread.server.host, thread.server.port)
        writer.write(b"GET /contacto HTTP/1.1\r\nhost: x\r\nx-centinela-scenario: timeout\r\n\r\n"
                     + b"GET /contacto HTTP/1.1\r\nhost: x\r\n\r\n" * 2)
        await writer.drain()
        assert await asyncio.to_thread(wait_until, lambda: thread.stats()["requests"] == 3)
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(reader.read(1), 0.3)
        writer.close()
        assert await asyncio.to_thread(wait_until, lambda: thread.stats()["connections"] == 0)

    with serving() as thread:
        asyncio.run(scenario(thread))
    entries = thread.server.log.entries
    assert [(e["status"], e.get("on_held_connection", False)) for e in entries] == [
        ("client_closed", False), ("client_closed", True), ("client_closed", True)]


def test_expect_100_continue_and_http_1_0(loopback):
    async def scenario(thread):
        body = json.dumps({"query": Q1}).encode()
        reader, writer = await asyncio.open_connection(thread.server.host, thread.server.port)
        writer.write(b"POST /search HTTP/1.1\r\nhost: x\r\nexpect: 100-continue\r\ncontent-length: %d\r\n\r\n" % len(body))
        await writer.drain()
        assert await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 60) == b"HTTP/1.1 100 Continue\r\n\r\n"
        writer.write(body + b"GET /contacto HTTP/1.0\r\n\r\n")          # then an HTTP/1.0 request: closed after
        await writer.drain()
        raw = await asyncio.wait_for(reader.read(), 60)
        writer.close()
        return raw

    with serving() as thread:
        raw = asyncio.run(scenario(thread))
    assert raw.startswith(b"HTTP/1.1 200 OK\r\n") and raw.count(b"HTTP/1.1 200 OK\r\n") == 2
    assert raw.rstrip().endswith(b"</html>") and b"connection: close\r\n" in raw.lower()
