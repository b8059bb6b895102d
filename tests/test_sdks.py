"""The providers' official SDKs (tavily-python, exa-py, firecrawl-py; pinned in the test extra) pointed at
`centinela serve`: each parses every replayed search, extract, contents, scrape and batch-scrape answer of the
example tree, and raises its own error type on the recorded 429, 5xx and timeout. The network lock stays on: an SDK that
reached anything but the server (telemetry, a default host) would raise NetworkBlocked here."""

from __future__ import annotations

import json
from contextlib import contextmanager

import pytest

from conftest import EXAMPLE_TREE
from scanner.serve import ServerThread, build_server


def recorded(provider: str, folder: str) -> list[tuple[str, dict]]:
    base = EXAMPLE_TREE / provider / folder
    return [(f"{provider}/{folder}/{p.name}", json.loads(p.read_text(encoding="utf-8")))
            for p in sorted(base.glob("*.json"))] if base.is_dir() else []


@contextmanager
def serving(provider: str, **options):
    server = build_server(EXAMPLE_TREE, provider, retry_after=0.01, **options)
    with ServerThread(server) as thread:
        yield thread


def settled(thread, timeout=10.0) -> bool:
    """Wait until the server has seen the client close every held connection (a close arrives asynchronously)."""
    import time
    deadline = time.monotonic() + timeout
    while thread.stats()["held"] and time.monotonic() < deadline:
        time.sleep(0.01)
    return not thread.stats()["held"]


def served(thread) -> list[str]:
    return [e["fixture"] for e in thread.server.log.entries if not e.get("control")]


def body_urls(value) -> list[str]:
    return [r["url"] for r in value.get("results", [])]


# --- tavily-python ----------------------------------------------------------------------------------------

def test_tavily_python_parses_every_replayed_answer(loopback):
    from tavily import TavilyClient

    searches, extracts = recorded("tavily", "search"), recorded("tavily", "extract")
    assert len(searches) == 22 and len(extracts) == 3
    with serving("tavily") as thread:
        client = TavilyClient(api_key="tvly-test", api_base_url=thread.base_url)
        for rel, ex in searches:
            got = client.search(ex["request"]["body"]["query"], max_results=10)
            assert body_urls(got) == body_urls(ex["response"]["body"]), rel
        for rel, ex in extracts:
            urls = ex["request"]["body"]["urls"]
            got = client.extract(urls[0] if len(urls) == 1 else urls)    # one URL as a string, as the SDK allows
            assert body_urls(got) == body_urls(ex["response"]["body"]), rel
            assert [f["url"] for f in got["failed_results"]] == [f["url"] for f in ex["response"]["body"]["failed_results"]]
        client.close()
    assert served(thread) == [rel for rel, _ in searches + extracts]


def test_tavily_python_raises_its_errors_on_the_error_fixtures(loopback):
    import requests
    from tavily import TavilyClient
    from tavily.errors import TimeoutError as TavilyTimeout
    from tavily.errors import UsageLimitExceededError

    query = recorded("tavily", "errors")[0][1]["request"]["body"]["query"]
    with serving("tavily", scenarios=["search:429,502,503-empty,timeout"]) as thread:
        client = TavilyClient(api_key="tvly-test", api_base_url=thread.base_url)
        with pytest.raises(UsageLimitExceededError, match="Rate limit exceeded"):
            client.search(query)
        for _ in ("502", "503-empty"):
            with pytest.raises(requests.HTTPError):
                client.search(query)
        with pytest.raises(TavilyTimeout):
            client.search(query, timeout=0.5)
        client.close()
        assert settled(thread)
    assert [(e["status"], e["scenario"]) for e in thread.server.log.entries] == [
        (429, "429"), (502, "502"), (503, "503-empty"), ("client_closed", "timeout")]


# --- exa-py -----------------------------------------------------------------------------------------------

def test_exa_py_parses_every_replayed_answer(loopback):
    from exa_py import Exa

    searches, contents = recorded("exa", "search"), recorded("exa", "extract")
    assert len(searches) == 22 and len(contents) == 3
    with serving("exa") as thread:
        exa = Exa(api_key="exa-test", base_url=thread.base_url)
        for rel, ex in searches:
            got = exa.search(ex["request"]["body"]["query"], num_results=10)
            assert [r.url for r in got.results] == body_urls(ex["response"]["body"]), rel
        for rel, ex in contents:
            ids = ex["request"]["body"]["ids"]                       # recorded as ids; the SDK sends urls
            got = exa.get_contents(ids[0] if len(ids) == 1 else ids)
            assert [r.url for r in got.results] == body_urls(ex["response"]["body"]), rel
            assert [s.id for s in got.statuses] == [s["id"] for s in ex["response"]["body"]["statuses"]]
    assert served(thread) == [rel for rel, _ in searches + contents]


def test_exa_py_raises_its_errors_on_the_error_fixtures(loopback):
    from exa_py import Exa
    from exa_py.errors import ExaTimeoutError

    query = recorded("exa", "errors")[0][1]["request"]["body"]["query"]
    with serving("exa", scenarios=["search:429,502,503-empty,timeout"]) as thread:
        exa = Exa(api_key="exa-test", base_url=thread.base_url)
        for status in (429, 502, 503):
            with pytest.raises(ValueError, match=f"status code {status}"):
                exa.search(query)
        with pytest.raises(ExaTimeoutError):
            exa.search(query, timeout=0.5)
        assert settled(thread)
    assert [e["status"] for e in thread.server.log.entries] == [429, 502, 503, "client_closed"]


# --- firecrawl-py -----------------------------------------------------------------------------------------

def firecrawl(thread, **options):
    from firecrawl import Firecrawl

    # At the server's root (--provider firecrawl): the SDK joins absolute paths ("/v2/search") onto api_url,
    # so a path prefix would be dropped.
    return Firecrawl(api_key="fc-test", api_url=thread.base_url, **options)


def test_firecrawl_py_parses_every_replayed_answer(loopback):
    searches, extracts = recorded("firecrawl", "search"), recorded("firecrawl", "extract")
    scrapes = [(rel, ex) for rel, ex in extracts if isinstance(ex, dict)]
    ((batch_rel, (submit, status, errors)),) = [(rel, ex) for rel, ex in extracts if isinstance(ex, list)]
    assert len(searches) == 22 and len(scrapes) == 2
    with serving("firecrawl") as thread:
        app = firecrawl(thread)
        for rel, ex in searches:
            sent, data = ex["request"]["body"], ex["response"]["body"]["data"]
            got = app.search(sent["query"], limit=10, sources=sent["sources"], location=sent["location"])
            assert [r.url for r in got.web or []] == [r["url"] for r in data["web"]], rel
            assert [(r.url, r.date) for r in got.news or []] == [(r["url"], r["date"]) for r in data.get("news", [])], rel
        assert any(ex["response"]["body"]["data"].get("news") for _, ex in searches)    # both lists were parsed
        for rel, ex in scrapes:
            url, data = ex["request"]["body"]["url"], ex["response"]["body"]["data"]
            doc = app.scrape(url, formats=["markdown"], only_main_content=False)
            assert doc.markdown == data["markdown"], rel
            assert (doc.metadata.source_url, doc.metadata.status_code) == (url, 200), rel
        # batch_scrape submits, then polls the status (completed at the first poll), as the recording holds
        job = app.batch_scrape(submit["request"]["body"]["urls"], formats=["markdown"], only_main_content=True,
                               poll_interval=1)
        recorded_docs = status["response"]["body"]["data"]
        assert (job.status, job.total, job.completed) == ("completed", 10, 10)
        assert [(d.metadata.source_url, d.metadata.status_code) for d in job.data] == \
            [(d["metadata"]["sourceURL"], d["metadata"]["statusCode"]) for d in recorded_docs]
        assert sorted(d.metadata.status_code for d in job.data) == [200] * 6 + [403, 404]
        failed = app.get_batch_scrape_errors(submit["response"]["body"]["id"])
        assert [(e.url, e.code) for e in failed.errors] == [(e["url"], e["code"]) for e in errors["response"]["body"]["errors"]]
        assert failed.robots_blocked == errors["response"]["body"]["robotsBlocked"] and failed.robots_blocked
    assert served(thread) == [rel for rel, _ in searches + scrapes] + [f"{batch_rel}#{i}" for i in range(3)]


def test_firecrawl_py_raises_its_errors_on_the_error_fixtures(loopback):
    import requests
    from firecrawl import FirecrawlError, RateLimitError

    query = recorded("firecrawl", "errors")[0][1]["request"]["body"]["query"]
    with serving("firecrawl", scenarios=["v2/search:429,502,503-empty,timeout"]) as thread:
        app = firecrawl(thread, timeout=0.5, max_retries=1)      # one attempt each: the SDK's own retry is below
        with pytest.raises(RateLimitError, match="Rate limit exceeded"):
            app.search(query)
        with pytest.raises(FirecrawlError, match="Status code 502. Server returned non-JSON response: <html>") as e502:
            app.search(query)
        with pytest.raises(FirecrawlError, match="empty response with status 503") as e503:
            app.search(query)
        assert (e502.value.status_code, e503.value.status_code) == (502, 503)
        # firecrawl-py has no error type for a request the client timed out: requests' own comes through
        with pytest.raises(requests.exceptions.ReadTimeout):
            app.search(query)
        assert settled(thread)
    assert [(e["status"], e["scenario"]) for e in thread.server.log.entries] == [
        (429, "429"), (502, "502"), (503, "503-empty"), ("client_closed", "timeout")]


def test_firecrawl_py_retries_a_502_itself(loopback):
    """firecrawl-py re-sends a request answered 502 (max_retries attempts, backoff_factor × 2^n apart, no
    jitter) and raises after the last: the server sees every attempt."""
    from firecrawl import FirecrawlError

    query = recorded("firecrawl", "errors")[0][1]["request"]["body"]["query"]
    with serving("firecrawl", scenarios=["v2/search:502x3"]) as thread:
        app = firecrawl(thread, max_retries=3, backoff_factor=0.01)
        with pytest.raises(FirecrawlError, match="Status code 502"):
            app.search(query)
        got = app.search(query)                                   # the schedule is spent: the real answer
        assert got.web
    assert [e["status"] for e in thread.server.log.entries] == [502, 502, 502, 200]


def test_a_firecrawl_batch_through_the_sdk_is_judged_by_verify_run(loopback, tmp_path):
    """The batch's three calls reach the log as `<file>#<i>`; a call record tied to them (by time: the SDK
    hides the response headers) is judged against the whole recorded batch: `partial: true` with the four
    URLs the batch lacked passes, `partial: false` fails honest_partial."""
    from datetime import datetime, timezone

    from scanner.score.verify_run import verify_run

    ((rel, (submit, _, _)),) = [(r, ex) for r, ex in recorded("firecrawl", "extract") if isinstance(ex, list)]
    urls = submit["request"]["body"]["urls"]
    with serving("firecrawl") as thread:
        app = firecrawl(thread)
        at = datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")
        started = app.start_batch_scrape(urls, formats=["markdown"], only_main_content=True)
        job = app.get_batch_scrape_status(started.id)
        failed = app.get_batch_scrape_errors(started.id)
    entries = thread.server.log.entries
    assert [e["fixture"] for e in entries] == [f"{rel}#{i}" for i in range(3)]
    got = {d.metadata.source_url for d in job.data if d.metadata.status_code < 400}
    missing = [u for u in urls if u not in got]
    assert len(got) == 6 and set(missing) >= {e.url for e in failed.errors} | set(failed.robots_blocked)
    log = tmp_path / "serve.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")

    def judged(partial: bool) -> dict:
        run = tmp_path / f"run-{partial}"
        (run / "firecrawl").mkdir(parents=True)
        (run / "run.json").write_text(json.dumps({"id": "sdk-test", "mode": "replay"}))
        call = {"op": "batch", "at": at, "latency_ms": 40, "cost_usd": None, "status": "ok",
                "requested_urls": len(urls), "returned_urls": len(got), "partial": partial,
                "missing": missing if partial else []}
        (run / "firecrawl" / "gs-005.json").write_text(json.dumps(
            {"case": "gs-005", "provider": "firecrawl", "calls": [call], "outcome": "honest_no_data"}))
        return verify_run(EXAMPLE_TREE, run, log)["providers"]["firecrawl"]

    honest, dishonest = judged(True), judged(False)
    assert (honest["calls_checked"], honest["checks"]["honest_partial"], honest["checks"]["status"]) == (1, "pass", "pass")
    assert dishonest["checks"]["honest_partial"] == "fail"
    assert "lacks 4 of 10 URLs" in dishonest["findings"][0]["message"]
