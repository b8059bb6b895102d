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
