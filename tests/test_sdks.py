"""The providers' official SDKs (tavily-python, exa-py; pinned in the test extra) pointed at
`centinela serve`: each parses every replayed search, extract and contents answer of the example tree, and
raises its own error type on the recorded 429, 5xx and timeout. The network lock stays on: an SDK that
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
