"""The worked example: a reference client driven against `centinela serve` passes every behaviour check,
and each bad client is caught by the check meant for it. Then the checks alone, on hand-written logs."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timezone

import pytest

from conftest import EXAMPLE_TREE
from refclient import (
    CircuitBreaker, DeadConnectionClient, DishonestPartialClient, NoBreakerClient, NoJitterClient, NoWaitClient,
    RefClient, ResendingCancelClient,
)
from scanner.behaviour import (
    BehaviourError, behaviour_checks, check_breaker, check_error_classes, check_partial, check_retry_after,
    check_timeout, read_log,
)
from scanner.fixtures.models import RunRecord
from scanner.serve import ServerThread, build_server

Q1 = "registro sanitario COFEPRIS Laboratorios Sierra Madre"
PARTIAL_URLS = json.loads((EXAMPLE_TREE / "tavily/extract/gs-005-partial.json").read_text())["request"]["body"]["urls"]


def drive(client_class, scenarios, work, retry_after=0.05, settle=30.0, **client_options):
    """Run `work(client)` against a server with these scenarios; returns (log entries, call records)."""
    server = build_server(EXAMPLE_TREE, "tavily", scenarios=scenarios, retry_after=retry_after)
    thread = ServerThread(server).__enter__()
    records: list[dict] = []

    async def main():
        client = client_class(thread.base_url, **client_options)
        try:
            for outcome in await work(client):
                records.extend(outcome.records)
        finally:
            await asyncio.to_thread(_settle, thread, settle)
            await asyncio.to_thread(thread.stop)          # held entries are logged when the server stops
            for writer in getattr(client, "kept", []):
                writer.close()
    try:
        asyncio.run(main())
    finally:
        thread.stop()
    return server.log.entries, records


def _settle(thread, timeout):
    """Let the server see the clients' closes before it stops (an abort reaches it asynchronously; it returns
    as soon as nothing is held, so a generous timeout costs nothing)."""
    import time
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and thread.stats()["held"]:
        time.sleep(0.01)


def by_name(results):
    return {r.name: r for r in results}


# --- 429: retry-after and jitter --------------------------------------------------------------------------

def three_searches(client):
    async def work():
        return [await client.search(Q1) for _ in range(3)]
    return work()


RATE_LIMITED = ["search:429,ok,429,ok,429,ok"]
# Times far above the scheduling noise of a loaded machine (tens of ms): retry-after 500 ms, so a retry at once
# is far short of it; backoff 500 ms, so the reference client's seeded jitter spreads its three retries over
# 250 ms while the lockstep client's differ by noise alone, judged against a 150 ms floor.
SLOW_429 = {"retry_after": 0.5, "base_delay": 0.5}


def test_reference_client_honours_retry_after_with_jitter(loopback):
    log, records = drive(RefClient, RATE_LIMITED, three_searches, **SLOW_429)
    assert [e["status"] for e in log] == [429, 200] * 3
    results = by_name(behaviour_checks(log, records))
    assert results["retry_after"].status == "pass", results["retry_after"].details
    assert results["retry_after"].details[-1].startswith("jitter: 3 calls retried at attempt 2 spread over")
    assert results["error_classes"].status == "pass"
    assert [(r["call_id"], r["attempt"], r["status"], r.get("error_class"), r.get("retryable"))
            for r in records[:2]] == [("call-1", 1, "rate_limited", "rate_limit", True), ("call-1", 2, "ok", None, None)]
    assert records[0]["request_id"] == log[0]["id"]
    RunRecord.model_validate({"case": "gs-001", "provider": "tavily", "calls": records, "outcome": "claims"})


def test_client_that_retries_without_waiting_is_caught(loopback):
    log, records = drive(NoWaitClient, RATE_LIMITED, three_searches, **SLOW_429)
    result = check_retry_after(log, "tavily")
    assert result.status == "fail"
    assert result.details[0].startswith(f"{log[1]['id']} retried {log[0]['id']}'s 429 after ")
    assert result.details[0].endswith("; retry-after was 500.0 ms")


def test_client_without_jitter_is_caught(loopback):
    log, records = drive(NoJitterClient, RATE_LIMITED, three_searches, **SLOW_429)
    result = check_retry_after(log, "tavily", jitter_min_ms=150)
    assert result.status == "fail"
    assert result.details[-1].startswith("no jitter: 3 calls retried at attempt 2 after retry-after + ")


# --- 5xx: the circuit breaker -----------------------------------------------------------------------------

def four_searches(client):
    async def work():
        return [await client.search(Q1) for _ in range(4)]
    return work()


def test_reference_breaker_stops_at_its_threshold(loopback):
    log, records = drive(RefClient, ["search:5xx*"], four_searches, max_attempts=3, base_delay=0.005,
                         breaker=CircuitBreaker(threshold=5, cooldown=60))
    assert [e["status"] for e in log] == [502] * 5
    assert [r.get("error_class") for r in records] == ["server"] * 5 + ["circuit_open"] * 3
    result = check_breaker(log, 5, "tavily")
    assert result.status == "pass"
    assert result.details == [f"longest run of consecutive 5xx: 5 ({log[0]['id']} … {log[4]['id']}), threshold 5"]
    assert check_error_classes(log, records, "tavily").status == "pass"


def test_client_that_never_opens_a_breaker_is_caught(loopback):
    log, _ = drive(NoBreakerClient, ["search:5xx*"], four_searches, max_attempts=3, base_delay=0.005)
    assert len(log) == 12
    result = check_breaker(log, 5, "tavily")
    assert result.status == "fail"
    assert result.details == [f"12 consecutive 5xx ({log[0]['id']} … {log[11]['id']}): "
                              + ", ".join(e["id"] for e in log[5:]) + " sent after the threshold of 5"]


def test_5xx_with_and_without_body_both_count(loopback):
    log, _ = drive(NoBreakerClient, ["search:502,503-empty*"], four_searches, max_attempts=2, base_delay=0.005)
    assert [e["status"] for e in log] == [502] + [503] * 7
    assert check_breaker(log, 5, "tavily").status == "fail"
    assert check_breaker(log, 8, "tavily").status == "pass"


# --- timeout: abort and an idempotent cancel --------------------------------------------------------------

def timed_out_search(client, cancel_twice=True):
    async def work():
        outcome = await client.search(Q1, x_centinela_scenario="timeout")
        assert outcome.status == "timeout"
        if cancel_twice:
            outcome.pending.cancel()                     # the second cancel must send nothing
            await asyncio.sleep(0.2)
            for task in list(getattr(client, "resends", [])):
                await task
        return [outcome]
    return work()


def test_reference_client_aborts_and_cancel_is_idempotent(loopback):
    log, records = drive(RefClient, [], timed_out_search, deadline=0.5)
    assert [(e["status"], e["scenario"]) for e in log] == [("client_closed", "timeout")]
    # held until the client's deadline: the request reached the server well within the first half of it
    assert log[0]["duration_ms"] >= 250
    result = check_timeout(log, "tavily")
    assert result.status == "pass"
    assert result.details[0].startswith(f"{log[0]['id']}: aborted by the client after ")
    assert records == [{**records[0], "status": "timeout", "error_class": "timeout", "retryable": False, "attempt": 1}]


def test_client_that_keeps_the_dead_connection_is_caught(loopback):
    log, _ = drive(DeadConnectionClient, [], timed_out_search, deadline=0.5, settle=0.5)   # held, on purpose
    assert [e["status"] for e in log] == ["held"]
    result = check_timeout(log, "tavily")
    assert result.status == "fail"
    assert "the connection was still open when the server stopped" in result.details[0]
    assert result.details[0].endswith("the client never aborted it")


def test_client_whose_second_cancel_resends_is_caught(loopback):
    log, _ = drive(ResendingCancelClient, [], timed_out_search, deadline=0.5)
    assert [e["status"] for e in log] == ["client_closed", 200]
    result = check_timeout(log, "tavily")
    assert result.status == "fail"
    (detail,) = result.details
    prefix = f"{log[1]['id']}: sent for the call of {log[0]['id']} after it timed out (aborted at "
    assert detail.startswith(prefix) and detail.endswith(" ms)")
    # the check measures the abort from the log's timestamps; duration_ms was rounded on its own
    assert abs(float(detail[len(prefix):-4]) - log[0]["duration_ms"]) <= 0.15


# --- partial ----------------------------------------------------------------------------------------------

def one_extract(client):
    async def work():
        return [await client.extract(PARTIAL_URLS)]
    return work()


def test_reference_client_reports_the_partial_answer(loopback):
    log, records = drive(RefClient, [], one_extract)
    assert records[0]["partial"] is True and len(records[0]["missing"]) == 4
    result = check_partial(log, records, "tavily")
    assert (result.status, result.details) == ("pass", [f"{log[0]['id']}: partial: true with the 4 missing URLs"])


def test_client_hiding_a_partial_answer_is_caught(loopback):
    log, records = drive(DishonestPartialClient, [], one_extract)
    result = check_partial(log, records, "tavily")
    assert (result.status, result.details) == (
        "fail", [f"{log[0]['id']}: the answer lacked 4 of 10 URLs but the call says partial: false"])


# --- the checks on hand-written logs ----------------------------------------------------------------------

T0 = datetime(2026, 10, 2, 14, 0, tzinfo=timezone.utc).timestamp()


def entry(n, status, start, end, call="c1", provider="tavily", **extra):
    iso = lambda t: datetime.fromtimestamp(T0 + t, timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")
    return {"id": f"req-{n:06d}", "provider": provider, "call": call, "status": status,
            "ts_start": iso(start), "ts_end": iso(end), **extra}


def test_retry_after_as_an_http_date():
    when = datetime.fromtimestamp(T0 + 2.0, timezone.utc).strftime("%a, %d %b %Y %H:%M:%S GMT")
    log = [entry(1, 429, 0.0, 0.0, retry_after=when), entry(2, 200, 1.5, 1.6)]
    result = check_retry_after(log)
    assert (result.status, result.details[0]) == ("fail", "req-000002 retried req-000001's 429 after 1500.0 ms; "
                                                          "retry-after was 2000.0 ms")
    log[1] = entry(2, 200, 2.0, 2.1)
    assert check_retry_after(log).status == "pass"


def test_breaker_half_open_probes_are_allowed_only_when_asked():
    log = [entry(i, 502, i * 0.1, i * 0.1 + 0.01) for i in range(1, 6)] + [entry(6, 503, 5.0, 5.01)]
    assert check_breaker(log, 5).status == "fail"
    result = check_breaker(log, 5, half_open_after_ms=1000)
    assert (result.status, result.details) == (
        "pass", ["longest run of consecutive 5xx: 6 (req-000001 … req-000006), threshold 5; 1 half-open probe(s)"])
    # a success closes the run; 429s and held connections neither open nor close it
    log = [entry(1, 502, 0, 0.1), entry(2, 429, 0.2, 0.3), entry(3, 502, 0.4, 0.5), entry(4, 200, 0.6, 0.7),
           entry(5, 502, 0.8, 0.9), entry(6, "client_closed", 1.0, 1.5), entry(7, 502, 1.6, 1.7)]
    assert check_breaker(log, 2).status == "pass" and check_breaker(log, 1).status == "fail"


def test_request_on_a_held_connection_is_caught():
    log = [entry(1, "client_closed", 0, 1.0, connection=1),
           entry(2, "client_closed", 0.5, 1.0, call="c2", connection=1, on_held_connection=True)]
    result = check_timeout(log)
    assert result.status == "fail"
    assert result.details[0] == "req-000002: sent on connection 1, which never answered"


def test_error_classes_compare_what_the_call_said():
    log = [entry(1, 429, 0, 0.1), entry(2, 503, 0.2, 0.3), entry(3, "client_closed", 0.4, 0.9)]
    calls = [{"op": "search", "status": "error", "retryable": False, "request_id": "req-000001"},
             {"op": "search", "status": "server_error", "retryable": True, "request_id": "req-000002"},
             {"op": "search", "status": "timeout", "request_id": "req-000003"}]
    result = check_error_classes(log, calls)
    assert (result.status, result.details) == (
        "fail", ["req-000001 (429): status 'error', expected 'rate_limited'; retryable false, expected true"])
    assert check_error_classes(log, None).status == "n/a"


def test_behaviour_checks_per_provider_and_run_records(tmp_path):
    log = [entry(1, 200, 0, 0.1, provider="exa", requested_urls=2, missing=["https://b.mx/"]),
           entry(2, 200, 0, 0.1, provider="tavily"), {"id": "req-000003", "control": True, "provider": None,
                                                      "status": 200, "ts_start": "2026-10-02T14:00:00Z",
                                                      "ts_end": "2026-10-02T14:00:00Z"}]
    run = RunRecord.model_validate({"case": "gs-005", "provider": "exa", "outcome": "claims", "calls": [
        {"op": "extract", "status": "ok", "requested_urls": 2, "returned_urls": 1, "partial": True,
         "missing": ["https://b.mx/"], "request_id": "req-000001", "call_id": "x", "attempt": 1}]})
    results = behaviour_checks(log, [run])
    assert [(r.provider, r.name, r.status) for r in results] == [
        ("exa", "retry_after", "n/a"), ("exa", "breaker", "n/a"), ("exa", "timeout", "n/a"),
        ("exa", "partial", "pass"), ("exa", "error_classes", "n/a"),
        ("tavily", "retry_after", "n/a"), ("tavily", "breaker", "n/a"), ("tavily", "timeout", "n/a"),
        ("tavily", "partial", "n/a"), ("tavily", "error_classes", "n/a")]
    assert results[3].to_json() == {"name": "partial", "provider": "exa", "status": "pass",
                                    "details": ["req-000001: partial: true with the 1 missing URLs"]}


def test_read_log_names_the_bad_line(tmp_path):
    path = tmp_path / "serve.jsonl"
    path.write_text(json.dumps(entry(1, 200, 0, 1)) + "\n{oops\n", encoding="utf-8")
    with pytest.raises(BehaviourError, match=rf"^{path}:2: not a JSON object"):
        read_log(path)
    path.write_text(json.dumps(entry(1, 200, 0, 1)) + "\n", encoding="utf-8")
    assert read_log(path)[0]["id"] == "req-000001"


def test_jitter_is_judged_when_calls_are_told_apart_only_by_their_key():
    # three calls of the same query without X-Centinela-Call: each a 429 then an answer
    log = []
    for k, extra in enumerate((0.010, 0.080, 0.045)):
        t = k * 1.0
        log += [entry(2 * k + 1, 429, t, t + 0.001, call="POST /search q", retry_after="0.05"),
                entry(2 * k + 2, 200, t + 0.051 + extra, t + 0.2, call="POST /search q")]
    result = check_retry_after(log)
    assert (result.status, result.details[-1]) == ("pass", "jitter: 3 calls retried at attempt 2 spread over "
                                                           "70.0 ms beyond retry-after")
    assert result.details[0] == "req-000002 (attempt 2) retried req-000001's 429 after 60.0 ms, retry-after 50.0 ms"


def test_verify_run_reads_the_server_log(loopback, tmp_path):
    """verify-run --log adds the behaviour checks and fails the run when one fails."""
    from scanner.score.verify_run import verify_run

    log, _ = drive(NoWaitClient, RATE_LIMITED, three_searches, **SLOW_429)
    path = tmp_path / "serve-log.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in log))
    example_run = EXAMPLE_TREE.parent / "example-run"
    got = verify_run(EXAMPLE_TREE, example_run, path)
    assert not got["ok"]
    statuses = {c["name"]: c["status"] for c in got["behaviour"]["checks"]}
    assert statuses["retry_after"] == "fail"
    good, _ = drive(RefClient, RATE_LIMITED, three_searches, **SLOW_429)
    path.write_text("".join(json.dumps(e) + "\n" for e in good))
    got = verify_run(EXAMPLE_TREE, example_run, path)
    assert got["ok"], got["behaviour"]
