"""`centinela record`: the official SDKs (tavily-python, exa-py) and httpx record through the proxy from a fake
upstream on loopback that leaks credentials, cookies, keys, personal emails and phones (tests/fakeupstream.py).
The tree that comes out passes `manifest verify` and `redact --check` with nothing to redact, holds none of
those values in any file (nor does the log, nor what the command said), and `serve` replays it to the same SDKs.

The network lock stays on and loopback stays closed: only the fake upstream's port (which the proxy opens for
itself), the proxy's and the replay server's are let through, one by one."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import EXAMPLE_TREE
from fakeupstream import FakeUpstream
from scanner import netlock
from scanner.atomic import stale_temps
from scanner.record import RecordError, build_recorder, parse_upstream
from scanner.serve import ServerThread, build_server

TAVILY_KEY = "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"
EXA_KEY = "3f8a1b2c-4d5e-6f70-8192-a3b4c5d6e7f8"
CLIENT_COOKIE = "c0ffee00deadbeef1234abcd5678ef90"


def recorded(provider: str, rel: str) -> dict:
    return json.loads((EXAMPLE_TREE / provider / rel).read_text(encoding="utf-8"))


def new_tree(tmp_path: Path) -> Path:
    root = tmp_path / "web-search"
    root.mkdir()
    shutil.copytree(EXAMPLE_TREE / "golden", root / "golden")     # the golden set names the cases
    return root


@contextmanager
def recording(root: Path, upstream: FakeUpstream, provider: str, said: list[str], **options):
    server = build_recorder(root, provider, upstream.origin, log_path=root.parent / f"record-{provider}.jsonl",
                            upstream_timeout=1.0, say=said.append, **options)
    with ServerThread(server) as thread:
        netlock.allow_host(thread.server.host, thread.server.port)       # the client's way in, and nothing else
        yield thread


@contextmanager
def serving(root: Path, provider: str, **options):
    with ServerThread(build_server(root, provider, retry_after=0.01, log_path=None, **options)) as thread:
        netlock.allow_host(thread.server.host, thread.server.port)
        yield thread


def http_client(base_url: str, **headers):
    import httpx

    return httpx.Client(base_url=base_url, headers=headers, trust_env=False, timeout=30)


def fetch_path(provider: str, rel: str) -> str:
    from urllib.parse import urlsplit

    return urlsplit(recorded(provider, rel)["request"]["url"]).path


def record_tavily(root: Path, up: FakeUpstream, said: list[str]) -> dict:
    from tavily import TavilyClient

    got = {"searches": {}, "extracts": {}}
    with recording(root, up, "tavily", said) as thread:
        with pytest.raises(netlock.NetworkBlocked):                # the proxy's port and the upstream's: no other
            socket.create_connection(("127.0.0.1", 9), timeout=1)
        client = TavilyClient(api_key=TAVILY_KEY, api_base_url=thread.base_url)
        for n in ("001", "002", "003"):
            query = recorded("tavily", f"search/gs-{n}.json")["request"]["body"]["query"]
            got["searches"][query] = [r["url"] for r in client.search(query, max_results=10)["results"]]
        for rel in ("extract/gs-001-injection.json", "extract/gs-005-partial.json"):
            urls = recorded("tavily", rel)["request"]["body"]["urls"]
            got["extracts"][rel] = [r["url"] for r in client.extract(urls)["results"]]
        client.close()
        http = http_client(thread.base_url, authorization=f"Bearer {TAVILY_KEY}")
        contradictory = recorded("tavily", "search/gs-032-contradictory.json")["request"]["body"]
        assert http.post(f"/search?api_key={TAVILY_KEY}", json=contradictory,
                         headers={"x-centinela-class": "contradictory"}).status_code == 200
        legacy = dict(recorded("tavily", "search/gs-004.json")["request"]["body"], api_key=TAVILY_KEY)
        assert http.post("/search", json=legacy).status_code == 200          # the key in the body, as old SDKs sent it
        for rel, case in (("fetch/gs-003.json", "gs-003"), ("fetch/gs-017-pdf.json", "gs-017")):
            answer = http.get(fetch_path("tavily", rel), headers={"x-centinela-case": case, "cookie": f"sid={CLIENT_COOKIE}"})
            assert answer.status_code == 200 and answer.headers["x-centinela-recorded"].startswith("tavily/fetch/gs-0")
        query = contradictory["query"]
        for scenario, status in (("429", 429), ("502", 502), ("503-empty", 503), ("timeout", 504)):
            assert http.post("/search", json={"query": query}, headers={"x-fake-scenario": scenario}).status_code == status
        got["stats"] = thread.stats()
    return got


def record_exa(root: Path, up: FakeUpstream, said: list[str]) -> dict:
    from exa_py import Exa

    got = {"searches": {}, "contents": {}}
    with recording(root, up, "exa", said) as thread:
        exa = Exa(api_key=EXA_KEY, base_url=thread.base_url)
        for n in ("001", "002", "003"):
            query = recorded("exa", f"search/gs-{n}.json")["request"]["body"]["query"]
            got["searches"][query] = [r.url for r in exa.search(query, num_results=10).results]
        for rel in ("extract/gs-002-injection.json", "extract/gs-005-partial.json"):
            ids = recorded("exa", rel)["request"]["body"]["ids"]
            got["contents"][rel] = [r.url for r in exa.get_contents(ids).results]
        http = http_client(thread.base_url, **{"x-api-key": EXA_KEY})
        contradictory = recorded("exa", "search/gs-032-contradictory.json")["request"]["body"]
        assert http.post("/search", json=contradictory, headers={"x-centinela-class": "contradictory"}).status_code == 200
        for rel, case in (("fetch/gs-003.json", "gs-003"), ("fetch/gs-017-pdf.json", "gs-017")):
            assert http.get(fetch_path("exa", rel),
                            headers={"x-centinela-case": case, "cookie": f"sid={CLIENT_COOKIE}"}).status_code == 200
        for scenario, status in (("429", 429), ("502", 502), ("503-empty", 503), ("timeout", 504)):
            assert http.post("/search", json={"query": contradictory["query"]},
                             headers={"x-fake-scenario": scenario}).status_code == status
        got["stats"] = thread.stats()
    return got


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "scanner", *args], capture_output=True, text=True, timeout=900)


def forms(value: str) -> set[str]:
    """A datum as a file could hold it: as written, its digits alone (a phone), percent-encoded."""
    from urllib.parse import quote

    out = {value, quote(value, safe="")}
    digits = "".join(c for c in value if c.isdigit())
    if value.startswith("+") and len(digits) >= 10:
        out |= {digits, digits[-10:]}
    return out


def test_recorded_tree_verifies_redacts_clean_holds_no_datum_and_replays_to_the_sdks(tmp_path):
    root = new_tree(tmp_path)
    said: list[str] = []
    with FakeUpstream(EXAMPLE_TREE, "tavily", seed=11, stall=2.5) as tavily_up:
        tavily_up.remember(TAVILY_KEY, CLIENT_COOKIE)
        tavily = record_tavily(root, tavily_up, said)
    with FakeUpstream(EXAMPLE_TREE, "exa", seed=12, stall=2.5) as exa_up:
        exa_up.remember(EXA_KEY, CLIENT_COOKIE)
        exa = record_exa(root, exa_up, said)
    # the fake upstreams did send every leak, and the SDKs sent their keys
    assert any(r["headers"].get("authorization") == f"Bearer {TAVILY_KEY}" for r in tavily_up.requests)
    assert any(r["headers"].get("x-api-key") == EXA_KEY for r in exa_up.requests)
    assert tavily["stats"]["recorded"] == 13 and exa["stats"]["recorded"] == 12, (tavily["stats"], exa["stats"])

    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))["files"]
    for provider in ("tavily", "exa"):
        classes = sorted({e["class"] for rel, e in manifest.items() if rel.startswith(provider + "/")})
        assert classes == sorted(["results", "html", "pdf", "429", "5xx", "timeout", "partial", "prompt-injection",
                                  "contradictory"]), (provider, classes)
    assert manifest["tavily/search/gs-001.json"]["case"] == "gs-001"              # the golden case by its query
    assert manifest["tavily/search/gs-001.json"]["captured_at"] == "2026-10-02T14:11:09Z"    # the response's Date
    assert manifest["tavily/search/gs-032-contradictory.json"]["class"] == "contradictory"
    assert manifest["tavily/fetch/gs-017-pdf.json"]["class"] == "pdf"
    assert all(e["synthetic"] is False and e["truncated"] is False for e in manifest.values())
    for rel, entry in manifest.items():
        data = (root / rel).read_bytes()
        assert entry["sha256"] == hashlib.sha256(data).hexdigest(), rel
    # sha256_original: the digest of the body the upstream sent, before anything was redacted
    (sent,) = [r for r in tavily_up.requests if r["headers"].get("x-fake-scenario") == "429"]
    leaked_429 = tavily_up.answer("POST", "/search", sent["headers"], sent["body"])[2]
    assert manifest["tavily/errors/429.json"]["sha256_original"] == hashlib.sha256(leaked_429).hexdigest()
    assert stale_temps(root) == []

    verify = cli("manifest", "verify", str(root), "--format", "json")
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert json.loads(verify.stdout)["ok"] is True
    check = cli("redact", str(root), "--check", "--format", "json")
    assert check.returncode == 0, check.stdout + check.stderr
    assert json.loads(check.stdout)["files"] == []

    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "record-tavily.jsonl" for p in written)
    everything = b"\n".join(p.read_bytes() for p in written) + "\n".join(said).encode()
    for value in tavily_up.secrets + exa_up.secrets:
        for form in forms(value):
            assert form.encode() not in everything, f"{value!r} reached a file or the log"

    from tavily import TavilyClient
    from tavily.errors import UsageLimitExceededError

    with serving(root, "tavily", scenarios=["search:429,ok"]) as thread:
        client = TavilyClient(api_key="tvly-test", api_base_url=thread.base_url)
        with pytest.raises(UsageLimitExceededError):
            client.search(next(iter(tavily["searches"])))
        for query, urls in tavily["searches"].items():
            assert [r["url"] for r in client.search(query)["results"]] == urls
        for rel, urls in tavily["extracts"].items():
            assert [r["url"] for r in client.extract(recorded("tavily", rel)["request"]["body"]["urls"])["results"]] == urls
        client.close()
    assert [e["status"] for e in thread.server.log.entries] == [429, 200, 200, 200, 200, 200]

    from exa_py import Exa

    with serving(root, "exa", scenarios=["search:502,ok"]) as thread:
        client = Exa(api_key="exa-test", base_url=thread.base_url)
        with pytest.raises(ValueError, match="status code 502"):
            client.search(next(iter(exa["searches"])))
        for query, urls in exa["searches"].items():
            assert [r.url for r in client.search(query, num_results=10).results] == urls
        for rel, urls in exa["contents"].items():
            assert [r.url for r in client.get_contents(recorded("exa", rel)["request"]["body"]["ids"]).results] == urls
    assert [e["status"] for e in thread.server.log.entries] == [502, 200, 200, 200, 200, 200]
