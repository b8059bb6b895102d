"""Adapters built from real libraries (httpx, tenacity, pybreaker; `realclients.py`) driven against
`centinela serve` in a subprocess, judged by `verify-run` on the serve log and the run records they wrote:
the good adapter passes every check in every repetition, each bad one fails the check meant for it.

No assertion on elapsed time: the checks judge order and lower bounds (retry-after, the breaker's open
interval), which a loaded machine only makes easier to meet, and jitter as a unitless spread of waits whose
spread the good adapter makes wide (0–100 ms after a 100 ms retry-after) and the bad one's fixed delay
(500 ms) keeps narrow.
"""

from __future__ import annotations

import json

import pytest

from conftest import EXAMPLE_TREE
import exercises
from realclients import (
    DishonestPartial, IgnoresRetryAfter, NoAbort, NoBackoff, NoBreaker, NoJitter, Replay, ReplayLog, TavilyAdapter,
    concurrently, exercise_together,
)
from scanner.score.verify_run import format_text, verify_run

Q1 = "registro sanitario COFEPRIS Laboratorios Sierra Madre"
PARTIAL_URLS = json.loads((EXAMPLE_TREE / "tavily/extract/gs-005-partial.json").read_text())["request"]["body"]["urls"]
BEHAVIOUR = ("retry_after", "breaker", "timeout", "partial", "error_classes")
# Last in the run (tests/conftest.py): the exercises run in the background from the session's start
# (tests/exercises.py) and are long done by then.
pytestmark = pytest.mark.background_exercises


def exercise(adapter_class, tmp_path, **options):
    """Every behaviour class against one server: ten concurrent calls through a 429, a call that times out,
    the partial extract, and four calls into a 5xx storm. Returns verify-run's result."""
    with Replay(tmp_path) as replay:
        adapter = adapter_class(replay.base_url, **options)
        try:
            records = {"gs-001": [], "gs-005": []}
            replay.scenario("search:429x10")
            for calls in concurrently(adapter.search, [Q1] * 10):
                records["gs-001"] += calls
            replay.scenario("search:timeout")
            records["gs-001"] += adapter.search(Q1)
            replay.scenario()
            records["gs-005"] += adapter.extract(PARTIAL_URLS)
            replay.scenario("search:5xx*")         # last: the breaker stays open for the rest of the test
            # Jitter is judged on the 429s only: the storm's retries need no 0.8 s of it (order and count are
            # what the breaker check reads), so the adapters that draw it draw 50 ms there.
            adapter.jitter = min(adapter.jitter, 0.05)
            for _ in range(4):
                records["gs-001"] += adapter.search(Q1)
        finally:
            adapter.close()
    return judge(tmp_path, replay.log_path, records)


def judge(tmp_path, log_path, records, **options):
    run = tmp_path / "run"
    (run / "tavily").mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"id": "adapter-test", "mode": "replay"}))
    for case, calls in records.items():
        (run / "tavily" / f"{case}.json").write_text(json.dumps(
            {"case": case, "provider": "tavily", "calls": calls, "outcome": "honest_no_data"}))
    return verify_run(EXAMPLE_TREE, run, log_path, **options)


def statuses(result) -> dict:
    return {b["name"]: b["status"] for b in result["behaviour"]["checks"]}


def key(item):
    """The exercise a test reads: ("good", repetition), ("bad", adapter class) or ("scenario", its function)."""
    if item.originalname in SCENARIOS:
        return ("scenario", SCENARIOS[item.originalname])
    params = getattr(item, "callspec", None) and item.callspec.params
    if not params:
        return None
    return ("bad", params["adapter_class"]) if "adapter_class" in params else ("good", params["repetition"])


def run_exercise(k, folder):
    kind, what = k
    if kind == "scenario":
        return what(folder)
    return exercise(TavilyAdapter if kind == "good" else what, folder)


def alone(k) -> bool:
    return k == ("bad", NoJitter)


def key_id(k) -> str:
    return f"{k[0]}-{k[1]}" if k[0] == "good" else f"{k[0]}-{k[1].__name__}"


def encode(k, value):
    """An exercise's outcome as JSON: verify-run's result, or a scenario's (replay, records) as its log's path
    and the records."""
    if k[0] != "scenario":
        return value
    replay, records = value
    return {"log_path": str(replay.log_path), "records": records}


def decode(k, data):
    return (ReplayLog(data["log_path"]), data["records"]) if k[0] == "scenario" else data


@pytest.fixture(scope="module")
def exercised(request, tmp_path_factory):
    """Every exercise the module's selected tests read: from the background runner (tests/exercises.py), else
    run here a few at a time (realclients.exercise_together); each with its own server, folder and adapter, as
    when each test ran its own in turn."""
    from conftest import shared_dir

    return exercises.exercised(request, shared_dir(),
                               lambda: exercise_together(request, key, run_exercise, tmp_path_factory, alone=alone))


REPETITIONS = range(5)


@pytest.mark.parametrize("repetition", REPETITIONS)
def test_good_adapter_passes_every_check(exercised, repetition):
    result = exercised[("good", repetition)].result()
    # every failure shows verify-run's whole account (a fresh-clone run once failed here; its output was not kept)
    shown = format_text(result)
    assert result["ok"], shown
    assert statuses(result) == dict.fromkeys(BEHAVIOUR, "pass"), shown
    assert result["providers"]["tavily"]["checks"]["status"] == "pass", shown
    assert result["providers"]["tavily"]["checks"]["honest_partial"] == "pass", shown
    # the open breaker refused calls (nothing sent; 3 unless a busy server made an attempt time out)
    assert result["providers"]["tavily"]["calls_not_sent"] >= 1, shown


BAD_ADAPTERS = [
    (NoBackoff, "retry_after", " retried "),
    (IgnoresRetryAfter, "retry_after", "; retry-after was 100.0 ms"),
    (NoJitter, "retry_after", "no jitter: 10 calls retried at attempt 2 after "),
    (NoBreaker, "breaker", " opened the breaker (5 consecutive failures "),
    (NoAbort, "timeout", "the client never aborted it"),
    (DishonestPartial, "partial", "the answer lacked 4 of 10 URLs but the call says partial: false"),
]


@pytest.mark.parametrize("adapter_class, check, reason", BAD_ADAPTERS)
def test_each_bad_adapter_fails_the_check_meant_for_it(exercised, adapter_class, check, reason, tmp_path):
    result = exercised[("bad", adapter_class)].result()
    if result["ok"] and alone(("bad", adapter_class)):
        # Jitter is judged from timing: on a machine loaded by the rest of the suite, the stretched waits of a
        # no-jitter client once read as jitter (2026-12-06, 1 run in 5). Its exercise runs once more here, and
        # both outcomes are shown if that one passes too.
        first = format_text(result)
        result = exercise(adapter_class, tmp_path)
        assert not result["ok"], f"twice judged jittered:\n{first}\n---\n{format_text(result)}"
    assert not result["ok"], format_text(result)
    failed = {b["name"]: b for b in result["behaviour"]["checks"] if b["status"] == "fail"}
    assert check in failed, format_text(result)
    assert reason in failed[check]["reason"], failed[check]
    # the text output leads with that reason
    line = next(x for x in format_text(result).splitlines() if x.startswith(f"behaviour tavily: {check} fail"))
    assert line == f"behaviour tavily: {check} fail: {failed[check]['reason']}"
    if adapter_class is DishonestPartial:
        assert result["providers"]["tavily"]["checks"]["honest_partial"] == "fail"


def half_open(tmp_path):
    """pybreaker reset_timeout=0.5: after the breaker opens, one probe goes out once 0.5 s have passed; it
    fails (5xx), the breaker opens again; after another 0.5 s a probe succeeds and closes it."""
    import time

    with Replay(tmp_path) as replay:
        adapter = TavilyAdapter(replay.base_url, attempts=1, reset_timeout=0.5)
        records = []
        replay.scenario("search:5xx*")
        for _ in range(7):
            records += adapter.search(Q1)             # 5 failures open it; 2 refused
        time.sleep(0.6)
        records += adapter.search(Q1)                 # the probe: a 502, open again
        records += adapter.search(Q1)                 # refused
        replay.scenario()
        time.sleep(0.6)
        records += adapter.search(Q1)                 # the probe: 200, closed
        records += adapter.search(Q1)
        adapter.close()
    return replay, records


def test_pybreaker_half_open_probe_passes_with_its_open_interval(exercised, tmp_path):
    replay, records = exercised[("scenario", half_open)].result()
    log = [e for e in replay.log if not e.get("control")]
    assert [e["status"] for e in log] == [502] * 6 + [200, 200]
    strict = judge(tmp_path, replay.log_path, {"gs-001": records})
    assert statuses(strict)["breaker"] == "fail"
    assert "it never half-opens unless --half-open-after-ms is given" in strict["behaviour"]["checks"][1]["reason"]
    allowed = judge(tmp_path / "again", replay.log_path, {"gs-001": records}, half_open_after_ms=500)
    assert allowed["ok"], format_text(allowed)
    assert statuses(allowed)["breaker"] == "pass"
    assert allowed["providers"]["tavily"]["calls_not_sent"] == 3


def without_request_ids(tmp_path):
    with Replay(tmp_path) as replay:
        adapter = TavilyAdapter(replay.base_url)
        replay.scenario("search:429,ok")
        records = adapter.search(Q1)
        replay.scenario("search:5xx*")
        records += adapter.search(Q1)
        adapter.close()
    return replay, records


def test_records_without_request_ids_are_tied_by_call_id_and_time(exercised, tmp_path):
    """A run whose records carry no request_id (an adapter that cannot read response headers) is judged
    the same way: by X-Centinela-Call, else by the record's time."""
    replay, records = exercised[("scenario", without_request_ids)].result()
    for r in records:
        r.pop("request_id", None)
    by_call = judge(tmp_path, replay.log_path, {"gs-001": records})
    assert by_call["ok"], format_text(by_call)
    assert statuses(by_call)["error_classes"] == "pass"
    for r in records:
        r.pop("call_id")
    by_time = judge(tmp_path / "again", replay.log_path, {"gs-001": records})
    assert by_time["ok"], format_text(by_time)
    assert statuses(by_time)["error_classes"] == "pass"
    # a record that lies about what it was answered is caught either way
    records[0]["status"] = "ok"
    lying = judge(tmp_path / "lying", replay.log_path, {"gs-001": records})
    assert not lying["ok"] and statuses(lying)["error_classes"] == "fail"
    assert lying["providers"]["tavily"]["checks"]["status"] == "fail"


SCENARIOS = {"test_pybreaker_half_open_probe_passes_with_its_open_interval": half_open,
             "test_records_without_request_ids_are_tied_by_call_id_and_time": without_request_ids}
# Every exercise of the module, as tests/exercises.py runs them.
EXERCISES = ([("good", r) for r in REPETITIONS] + [("bad", cls) for cls, _, _ in BAD_ADAPTERS]
             + [("scenario", fn) for fn in SCENARIOS.values()])
