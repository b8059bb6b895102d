"""A small reference client for the worked example: what an adapter's `withRetry`, `CircuitBreaker` and
`AbortSignal` should do, in a few dozen lines each, plus the bad clients the behaviour checks must catch.

- Retries 429 and 5xx with exponential backoff, never sooner than `retry-after`, plus random jitter.
- A circuit breaker: after `threshold` consecutive failures it stops sending for `cooldown` seconds.
- A deadline per attempt: on expiry the call is cancelled — the connection is aborted, the call ends, and
  `cancel()` is idempotent (a second cancel does nothing).
- Every attempt becomes a call record with the behaviour fields (`call_id`, `attempt`, `error_class`,
  `retryable`, `request_id` from the server's `x-centinela-request-id`; `sent: false` when the open breaker
  refused it, `answered: false` when it timed out).

It speaks just enough HTTP/1.1 over asyncio streams, one connection per attempt.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from urllib.parse import urlsplit

RETRYABLE = frozenset({429, 500, 502, 503, 504})


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self):
        return json.loads(self.body or b"null")


class PendingCall:
    """One attempt in flight; `cancel()` aborts its connection, once."""

    def __init__(self):
        self.cancelled = False
        self.writer: asyncio.StreamWriter | None = None

    def cancel(self) -> bool:
        if self.cancelled:
            return False
        self.cancelled = True
        if self.writer is not None:
            self.writer.transport.abort()
        return True


class CircuitBreaker:
    def __init__(self, threshold: int = 5, cooldown: float = 30.0, clock=time.monotonic):
        self.threshold, self.cooldown, self.clock = threshold, cooldown, clock
        self.failures = 0
        self.opened_at: float | None = None

    def allow(self) -> bool:
        if self.opened_at is None:
            return True
        if self.clock() - self.opened_at >= self.cooldown:
            self.opened_at = None           # half-open: one probe; its failure opens the breaker again
            self.failures = self.threshold - 1
            return True
        return False

    def success(self) -> None:
        self.failures, self.opened_at = 0, None

    def failure(self) -> None:
        self.failures += 1
        if self.failures >= self.threshold:
            self.opened_at = self.clock()


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class Outcome:
    status: str
    records: list[dict] = field(default_factory=list)
    body: object = None
    pending: PendingCall | None = None     # the attempt that timed out, if one did


class RefClient:
    """Talks to a Tavily-shaped API (POST /search {query}, POST /extract {urls})."""

    def __init__(self, base_url: str, *, max_attempts: int = 4, base_delay: float = 0.05, max_delay: float = 1.0,
                 deadline: float = 5.0, breaker: CircuitBreaker | None = None, seed: int = 7):
        self.base_url = base_url.rstrip("/")
        parts = urlsplit(self.base_url)
        self.host, self.port, self.prefix = parts.hostname, parts.port, parts.path
        self.max_attempts, self.base_delay, self.max_delay = max_attempts, base_delay, max_delay
        self.deadline = deadline
        self.breaker = breaker or CircuitBreaker()
        self.rng = random.Random(seed)
        self._calls = itertools.count(1)

    # --- policy: what the bad clients change ------------------------------------------------------------

    def delay(self, attempt: int, retry_after: float | None) -> float:
        backoff = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        return max(retry_after or 0.0, backoff) + self.rng.uniform(0, backoff)

    def breaker_allows(self) -> bool:
        return self.breaker.allow()

    def on_deadline(self, pending: PendingCall, op: str, path: str, body: dict, call_id: str):
        pending.cancel()

    # --- operations -------------------------------------------------------------------------------------

    async def search(self, query: str, **headers) -> Outcome:
        return await self._call("search", "/search", {"query": query}, headers)

    async def extract(self, urls: list[str], **headers) -> Outcome:
        outcome = await self._call("extract", "/extract", {"urls": urls}, headers)
        if outcome.status == "ok":
            returned = {r.get("url") for r in (outcome.body or {}).get("results", [])}
            missing = [u for u in urls if u not in returned]
            self.record_partial(outcome.records[-1], len(urls), len(urls) - len(missing), missing)
        return outcome

    def record_partial(self, record: dict, requested: int, returned: int, missing: list[str]) -> None:
        record.update(requested_urls=requested, returned_urls=returned, partial=bool(missing), missing=missing)

    async def _call(self, op: str, path: str, body: dict, headers: dict) -> Outcome:
        call_id = f"call-{next(self._calls)}"
        outcome = Outcome("error")
        for attempt in range(1, self.max_attempts + 1):
            record = {"op": op, "at": _now(), "call_id": call_id, "attempt": attempt}
            outcome.records.append(record)
            if not self.breaker_allows():
                record.update(status="error", error_class="circuit_open", retryable=False, sent=False)
                outcome.status = "error"
                return outcome
            pending = PendingCall()
            started = time.monotonic()
            try:
                response = await asyncio.wait_for(self._send(pending, path, body, call_id, headers), self.deadline)
            except asyncio.TimeoutError:
                record.update(status="timeout", error_class="timeout", retryable=False, answered=False,
                              latency_ms=round((time.monotonic() - started) * 1000, 1))
                self.on_deadline(pending, op, path, body, call_id)
                outcome.status, outcome.pending = "timeout", pending
                return outcome
            record.update(latency_ms=round((time.monotonic() - started) * 1000, 1),
                          request_id=response.headers.get("x-centinela-request-id"))
            if response.status < 400:
                self.breaker.success()
                record.update(status="ok")
                outcome.status, outcome.body = "ok", response.json()
                return outcome
            retryable = response.status in RETRYABLE
            if response.status == 429:
                record.update(status="rate_limited", error_class="rate_limit", retryable=True)
            elif response.status >= 500:
                self.breaker.failure()
                record.update(status="server_error", error_class="server", retryable=retryable)
            else:
                record.update(status="error", error_class="client", retryable=False)
            outcome.status = record["status"]
            if not retryable or attempt == self.max_attempts:
                return outcome
            retry_after = response.headers.get("retry-after")
            await asyncio.sleep(self.delay(attempt, float(retry_after) if retry_after else None))
        return outcome

    async def _send(self, pending: PendingCall, path: str, body: dict, call_id: str, headers: dict) -> Response:
        reader, writer = await asyncio.open_connection(self.host, self.port)
        pending.writer = writer
        data = json.dumps(body).encode()
        head = [f"POST {self.prefix}{path} HTTP/1.1", f"host: {self.host}:{self.port}",
                "content-type: application/json", f"content-length: {len(data)}", f"x-centinela-call: {call_id}",
                "connection: close"]
        head += [f"{k.replace('_', '-')}: {v}" for k, v in headers.items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + data)
        await writer.drain()
        status_line = await reader.readuntil(b"\r\n")
        raw_headers = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        parsed = {}
        for line in raw_headers.split("\r\n"):
            if ":" in line:
                k, _, v = line.partition(":")
                parsed[k.strip().lower()] = v.strip()
        payload = await reader.readexactly(int(parsed.get("content-length", "0")))
        writer.close()
        return Response(int(status_line.split()[1]), parsed, payload)


# --- the bad clients ------------------------------------------------------------------------------------

class NoWaitClient(RefClient):
    """Retries at once, whatever retry-after says."""

    def delay(self, attempt, retry_after):
        return 0.0


class NoJitterClient(RefClient):
    """Waits exactly what retry-after (or the backoff) says: every client retries in lockstep."""

    def delay(self, attempt, retry_after):
        return max(retry_after or 0.0, min(self.max_delay, self.base_delay * 2 ** (attempt - 1)))


class NoBreakerClient(RefClient):
    """Retries 5xx on every call and never stops sending."""

    def breaker_allows(self):
        return True


class DeadConnectionClient(RefClient):
    """Gives up waiting at the deadline but never closes the connection."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.kept: list[asyncio.StreamWriter] = []

    def on_deadline(self, pending, op, path, body, call_id):
        pending.cancelled = True
        self.kept.append(pending.writer)


class ResendingCancelClient(RefClient):
    """cancel() aborts the connection, and a second cancel() sends the request again (not idempotent)."""

    def on_deadline(self, pending, op, path, body, call_id):
        client = self
        original = pending.cancel

        def cancel():
            if pending.cancelled:
                asyncio.get_running_loop().create_task(client._resend(path, body, call_id))
                return True
            return original()

        pending.cancel = cancel
        pending.cancel()

    async def _resend(self, path, body, call_id):
        spare = PendingCall()
        try:
            await asyncio.wait_for(self._send(spare, path, body, call_id, {}), self.deadline)
        except asyncio.TimeoutError:
            spare.cancel()


class DishonestPartialClient(RefClient):
    """Returns what it got and says nothing was missing."""

    def record_partial(self, record, requested, returned, missing):
        record.update(requested_urls=requested, returned_urls=returned, partial=False, missing=[])
