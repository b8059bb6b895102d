"""Adapters built from real libraries, as a team would write them: httpx for HTTP, tenacity for retries
(Retry-After honoured, plus up to 0.8 s of random jitter), pybreaker for the circuit breaker — and
the bad variants the behaviour checks must catch. Each attempt becomes a call record with the behaviour
fields (README "Run records: behaviour fields").

`Replay` starts `centinela serve` as a subprocess, as an adapter's test suite in any language would.
"""

from __future__ import annotations

import concurrent.futures
import itertools
import json
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import httpx
import pybreaker
import tenacity

from conftest import EXAMPLE_TREE

REQUEST_ID = "x-centinela-request-id"


class Replay:
    """`centinela serve` in a subprocess: `base_url`, `scenario(...)`, `stop()` (SIGTERM; held requests
    are logged then), `log` (the entries)."""

    def __init__(self, tmp_path: Path, *args: str, provider: str = "tavily", retry_after: str = "0.1"):
        self.log_path = tmp_path / "serve.jsonl"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "scanner", "serve", str(EXAMPLE_TREE), "--provider", provider,
             "--retry-after", retry_after, "--log", str(self.log_path), *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().split()
        if len(line) != 2:
            self.proc.kill()
            raise RuntimeError(f"centinela serve did not start: {self.proc.stderr.read()}")
        self.base_url = line[1]

    def scenario(self, *schedules: str) -> None:
        httpx.post(f"{self.base_url}/_centinela/scenario", json={"scenarios": list(schedules)}).raise_for_status()

    def stop(self) -> list[dict]:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.communicate(timeout=30)
        return self.log

    @property
    def log(self) -> list[dict]:
        return [json.loads(line) for line in self.log_path.read_text(encoding="utf-8").splitlines() if line.strip()]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class ReplayLog:
    """A finished `Replay`'s log, read from its file: what an exercise run by tests/exercises.py hands back."""

    def __init__(self, log_path):
        self.log_path = Path(log_path)

    log = Replay.log


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


class ProviderError(Exception):
    def __init__(self, status: int, retry_after: float | None, request_id: str | None):
        super().__init__(f"HTTP {status}")
        self.status, self.retry_after, self.request_id = status, retry_after, request_id

    @property
    def retryable(self) -> bool:
        return self.status == 429 or self.status >= 500


class RateLimited(ProviderError):
    """Excluded from the breaker's failures: a rate limit says nothing about the provider's health."""


class wait_retry_after(tenacity.wait.wait_base):
    """Wait what the last 429 asked for (0 for anything else)."""

    def __call__(self, retry_state) -> float:
        exc = retry_state.outcome.exception() if retry_state.outcome else None
        return getattr(exc, "retry_after", None) or 0.0


class TavilyAdapter:
    """POST /search {query}, POST /extract {urls} — retries 429 and 5xx (never timeouts: an aborted call
    sends nothing more), a pybreaker breaker around every attempt, an httpx deadline per attempt."""

    # jitter up to 0.8 s on top of retry-after, drawn afresh at every attempt: far above what a stalled, busy
    # machine squeezes out of it (at 0.2 s a load of 10 once brought the spread of ten retries to 0.09, under the
    # check's 0.1), and wide against the ~150 ms over which a busy machine refuses nine concurrent calls, so
    # their retries come in another order (with exponential jitter of 0.3 s at the first retry, a CI run once
    # saw them keep their order, Kendall tau 0.83)
    def __init__(self, base_url: str, *, attempts: int = 4, jitter: float = 0.8, timeout: float = 0.3,
                 fail_max: int = 5, reset_timeout: float = 60.0, breaker: bool = True):
        self.http = httpx.Client(base_url=base_url, timeout=httpx.Timeout(timeout, connect=5.0))
        self.breaker = pybreaker.CircuitBreaker(fail_max=fail_max, reset_timeout=reset_timeout,
                                                exclude=[RateLimited]) if breaker else None
        self.attempts, self.jitter = attempts, jitter
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def close(self):
        self.http.close()

    # --- policy: what the bad clients change ------------------------------------------------------------

    def wait(self):
        return wait_retry_after() + tenacity.wait_random(0, self.jitter)

    def send(self, path: str, body: dict, call_id: str) -> httpx.Response:
        return self.http.post(path, json=body, headers={"x-centinela-call": call_id})

    def record_partial(self, record: dict, urls: list[str], returned: set[str]) -> None:
        missing = [u for u in urls if u not in returned]
        record.update(requested_urls=len(urls), returned_urls=len(urls) - len(missing), partial=bool(missing),
                      missing=missing)

    # --- one logical call ---------------------------------------------------------------------------------

    def search(self, query: str) -> list[dict]:
        records, _ = self._call("search", "/search", {"query": query})
        return records

    def extract(self, urls: list[str]) -> list[dict]:
        records, body = self._call("extract", "/extract", {"urls": urls})
        if body is not None:
            self.record_partial(records[-1], urls, {r.get("url") for r in body.get("results", [])})
        return records

    def _call(self, op: str, path: str, body: dict):
        with self._lock:
            call_id = f"call-{next(self._ids)}"
        records: list[dict] = []

        def attempt():
            record = {"op": op, "at": _now(), "call_id": call_id, "attempt": len(records) + 1}
            records.append(record)
            sent = []

            def once():
                sent.append(True)
                started = time.monotonic()
                try:
                    response = self.send(path, body, call_id)
                except httpx.TimeoutException:
                    record.update(status="timeout", error_class="timeout", retryable=False, answered=False,
                                  latency_ms=round((time.monotonic() - started) * 1000, 1))
                    raise
                record.update(latency_ms=round((time.monotonic() - started) * 1000, 1),
                              request_id=response.headers.get(REQUEST_ID))
                if response.status_code >= 400:
                    ra = response.headers.get("retry-after")
                    kind = RateLimited if response.status_code == 429 else ProviderError
                    raise kind(response.status_code, float(ra) if ra else None, record["request_id"])
                record.update(status="ok")
                return response.json()

            try:
                return once() if self.breaker is None else self.breaker.call(once)
            except pybreaker.CircuitBreakerError as exc:
                if not sent:          # refused by the open breaker: nothing reached the wire
                    record.update(status="error", error_class="circuit_open", retryable=False, sent=False)
                    raise
                cause = exc.__cause__ or exc.__context__
                self._classify(record, cause)
                raise cause if isinstance(cause, ProviderError) else exc
            except ProviderError as exc:
                self._classify(record, exc)
                raise

        retrying = tenacity.Retrying(stop=tenacity.stop_after_attempt(self.attempts), wait=self.wait(),
                                     retry=tenacity.retry_if_exception(
                                         lambda e: isinstance(e, ProviderError) and e.retryable),
                                     reraise=True)
        try:
            return records, retrying(attempt)
        except (ProviderError, pybreaker.CircuitBreakerError, httpx.TimeoutException):
            return records, None

    @staticmethod
    def _classify(record: dict, exc) -> None:
        if not isinstance(exc, ProviderError):
            record.update(status="error", error_class="client", retryable=False)
        elif exc.status == 429:
            record.update(status="rate_limited", error_class="rate_limit", retryable=True)
        elif exc.status >= 500:
            record.update(status="server_error", error_class="server", retryable=True)
        else:
            record.update(status="error", error_class="client", retryable=False)


# --- the bad clients ------------------------------------------------------------------------------------

class NoBackoff(TavilyAdapter):
    """Retries at once."""

    def wait(self):
        return tenacity.wait_none()


class IgnoresRetryAfter(TavilyAdapter):
    """Backs off with jitter, but a few ms — never what retry-after says."""

    def wait(self):
        return tenacity.wait_random(0, 0.01)


class NoJitter(TavilyAdapter):
    """Honours retry-after and backs off by a fixed delay: every call retries in lockstep. (Long: a loaded
    machine spreads the retries of equal delays by tens of ms, which must stay small against the wait.)"""

    def wait(self):
        return wait_retry_after() + tenacity.wait_fixed(0.5)


class NoBreaker(TavilyAdapter):
    def __init__(self, base_url, **kw):
        super().__init__(base_url, breaker=False, **kw)


class NoAbort(TavilyAdapter):
    """Gives up waiting at its deadline without aborting the request (a thread left behind, as code that
    waits on a future with a timeout and forgets to cancel the connection does)."""

    def __init__(self, base_url, **kw):
        super().__init__(base_url, **kw)
        self.slow = httpx.Client(base_url=base_url, timeout=None)
        self.pool = concurrent.futures.ThreadPoolExecutor(2)
        self.deadline = kw.get("timeout", 0.3)

    def send(self, path, body, call_id):
        future = self.pool.submit(self.slow.post, path, json=body, headers={"x-centinela-call": call_id})
        try:
            return future.result(timeout=self.deadline)
        except concurrent.futures.TimeoutError:
            raise httpx.ReadTimeout("deadline") from None

    def close(self):
        super().close()
        self.pool.shutdown(wait=False, cancel_futures=True)


class DishonestPartial(TavilyAdapter):
    """Returns what it got and says nothing was missing."""

    def record_partial(self, record, urls, returned):
        record.update(requested_urls=len(urls), returned_urls=len(returned & set(urls)), partial=False, missing=[])


def concurrently(fn, args, workers: int = 10) -> list:
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        return list(pool.map(fn, args))


def exercise_together(request, key, run, tmp_path_factory, workers: int = 4, alone=lambda k: False) -> dict:
    """For a module-scoped fixture (`request`): `run(k, folder)` for the key `k = key(item)` of every test of
    the module selected in this session (None: a test that needs none), `run_batch`'s way, in this process;
    a run that raised raises in its own test (`futures[k].result()`). tests/exercises.py runs them in the
    background instead, wherever the session started with the module's tests selected."""
    import pytest

    from scanner import netlock

    keys = []
    for item in request.session.items:
        if item.getparent(pytest.Module) is request.node:
            k = key(item)
            if k is not None and k not in keys:
                keys.append(k)
    previous = netlock.set_loopback(True)       # the tests' `loopback`, for the whole batch
    try:
        return run_batch(keys, run, lambda i: tmp_path_factory.mktemp("exercise"), workers, alone)
    finally:
        netlock.set_loopback(previous)


def run_batch(keys, run, folder_for, workers: int = 4, alone=lambda k: False, on_done=None) -> dict:
    """{k: the future of `run(k, folder_for(i))`} for the i-th key `k` of `keys`, a few at a time in threads,
    all finished on return; `on_done(k, future)` as each ends.

    The exercises are mostly waiting (retry-after and jitter, the breaker, a held request, a server starting):
    one after another, the adapter tests spent about two thirds of their time with nothing to do. Each still
    has its own server, folder and adapter, judged on its own; `workers` at a time keeps the machine far from
    the load their jitter checks were tuned to withstand (the adapters' comments). A key for which `alone(k)`
    holds runs after the others, by itself: an exercise whose verdict rests on timing precision (an adapter
    without jitter must show lockstep retries; three exercises beside it in the same process once spread them
    enough to pass, on an idle machine, 2026-12-05)."""
    futures: dict = {}

    def submit(pool, i, k):
        futures[k] = future = pool.submit(run, k, folder_for(i))
        if on_done is not None:
            future.add_done_callback(lambda f, k=k: on_done(k, f))

    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        for i, k in enumerate(keys):
            if not alone(k):
                submit(pool, i, k)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:          # one at a time, in order
        for i, k in enumerate(keys):
            if alone(k):
                submit(pool, i, k)
    return futures
