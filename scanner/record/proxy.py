"""The recording proxy: an adapter's tests point their base URL at it (loopback only), it forwards each request
to the one upstream `--upstream` names (httpx), records the exchange (`store.Recorder`, in one worker thread,
before the answer is relayed: when the client has its answer the fixture is on disk) and relays the upstream's
answer as it came (decoded; lengths recomputed).

The same HTTP code as `serve` (`scanner.serve.wire`, h11 under asyncio, a coroutine per connection) with the
same bounds and idle timeout. The network lock lets exactly the upstream's host and port through
(`netlock.allow_host`) while the proxy runs; a request in absolute form (`GET https://other.host/…`, as a proxy
client sends) is refused, never forwarded elsewhere. An upstream that does not answer within
`upstream_timeout` seconds is recorded as the timeout fixture and answered 504; one that cannot be reached is a
502, not recorded. An upstream body over MAX_UPSTREAM_BODY bytes (decoded) is a 502, not recorded.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from http.cookiejar import CookieJar, DefaultCookiePolicy
from urllib.parse import urlsplit

from scanner.record.capture import CONTROL_HEADER_PREFIX, DROPPED_REQUEST_HEADERS, DROPPED_RESPONSE_HEADERS, Exchange
from scanner.record.store import Outcome, Recorder, RecordError, check_case, check_class
from scanner.serve import wire
from scanner.serve.listener import close, listen, origin
from scanner.serve.server import CONTROL_PREFIX, DEFAULT_IDLE_TIMEOUT, RequestLog, loopback_host

MAX_UPSTREAM_BODY = 64 * 1024 * 1024
DEFAULT_UPSTREAM_TIMEOUT = 30.0
CASE_HEADER = "x-centinela-case"
CLASS_HEADER = "x-centinela-class"
RECORDED_HEADER = "x-centinela-recorded"


class _TooLarge(Exception):
    pass


def parse_upstream(text: str) -> tuple[str, str, int, str]:
    """(scheme, host, port, origin) of --upstream, which must be an http(s) origin and nothing more."""
    parts = urlsplit((text or "").strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RecordError("--upstream: an http:// or https:// origin, e.g. https://api.tavily.com")
    if parts.username is not None or parts.password is not None:
        raise RecordError("--upstream: credentials in the URL are refused (the adapter sends its own)")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise RecordError("--upstream: an origin only (scheme, host and port): the adapter's requests keep their "
                          "own paths, as they do against serve")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise RecordError("--upstream: the port is not a number from 0 to 65535") from None
    host = parts.hostname.lower()
    shown = f"[{host}]" if ":" in host else host
    origin = f"{parts.scheme}://{shown}" + (f":{parts.port}" if parts.port else "")
    return parts.scheme, host, port, origin


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _json(status: int, data: dict) -> tuple[int, list[tuple[str, str]], bytes]:
    return status, [("content-type", "application/json")], json.dumps(data, ensure_ascii=False, indent=2).encode()


class RecordServer:
    def __init__(self, recorder: Recorder, upstream: str, *, host: str = "127.0.0.1", port: int = 0,
                 log: RequestLog | None = None, idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
                 upstream_timeout: float = DEFAULT_UPSTREAM_TIMEOUT, say=None):
        self.recorder = recorder
        self.scheme, self.upstream_host, self.upstream_port, self.upstream = parse_upstream(upstream)
        if not 0 < upstream_timeout <= 3600:
            raise RecordError("--upstream-timeout must be between 0 and 3600 seconds")
        if idle_timeout is not None and not (0 <= idle_timeout <= 86400):
            raise RecordError("--idle-timeout must be between 0 (off) and 86400 seconds")
        try:
            self.host = loopback_host(host)
        except Exception as exc:
            raise RecordError(str(exc).replace("replay server", "recording proxy")) from None
        self.port = port
        self.log = log if log is not None else RequestLog()
        self.idle_timeout = idle_timeout or None
        self.upstream_timeout = upstream_timeout
        self.say = say or (lambda line: None)
        self._server: asyncio.AbstractServer | None = None
        self._client = None
        self._worker: ThreadPoolExecutor | None = None
        self._tasks: set[asyncio.Task] = set()
        self._ids = itertools.count(1)
        self._conn_ids = itertools.count(1)
        self._counts = {"requests": 0, "recorded": 0, "not_recorded": 0}
        self._said: set[str] = set()
        from scanner.scrub import scrub_text

        scrub_text("/warm-up?key=0", ("secret", "pii"), as_url=True)   # load the detectors now, not on a request

    # --- life cycle -------------------------------------------------------------------------------------

    async def start(self) -> None:
        import httpx

        from scanner import netlock

        netlock.allow_host(self.upstream_host, self.upstream_port)
        # No cookie jar: a Set-Cookie of one answer must never ride along on another client's request.
        no_jar = CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))
        self._client = httpx.AsyncClient(trust_env=False, follow_redirects=False, cookies=no_jar,
                                         timeout=httpx.Timeout(self.upstream_timeout,
                                                               connect=min(10.0, self.upstream_timeout)))
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="centinela-record")
        try:
            self._server = await listen(self._connection, self.host, self.port)
        except OSError as exc:
            await self._close_client()
            raise RecordError(f"cannot listen on {self.host}:{self.port}: {exc.strerror or exc}") from None
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        await close(self._server, self._tasks)
        await self._close_client()
        self.log.close()

    async def _close_client(self) -> None:
        from scanner import netlock

        if self._client is not None:
            await self._client.aclose()
            self._client = None
        if self._worker is not None:
            self._worker.shutdown(wait=True)      # an exchange being written is finished, never cut
            self._worker = None
        netlock.forget_host(self.upstream_host, self.upstream_port)

    @property
    def origin(self) -> str:
        return origin(self.host, self.port)

    @property
    def base_urls(self) -> dict[str, str]:
        return {self.recorder.provider: self.origin}

    def stats(self) -> dict:
        return {"connections": len(self._tasks), **self._counts}

    # --- one connection ---------------------------------------------------------------------------------

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._tasks.add(task)
        conn = next(self._conn_ids)
        http = wire.Connection(reader, writer)
        try:
            while True:
                try:
                    if self.idle_timeout is None:
                        request = await http.next_request()
                    else:
                        request = await wire.within(http.next_request(), self.idle_timeout)
                except (asyncio.TimeoutError, TimeoutError):
                    if http.started and http.can_answer:
                        status, headers, body = _json(408, {"error": "no complete request in time"})
                        writer.write(http.response(status, headers, body, close=True))
                    break
                except wire.BadRequest as exc:
                    if http.can_answer:
                        status, headers, body = _json(exc.status, {"error": str(exc)})
                        writer.write(http.response(status, headers, body, close=True))
                        await self._drain(writer)
                        await http.discard_rest()
                    break
                if request is None:
                    break
                status, headers, body = await self._answer(request, conn)
                head_only = request.method == "HEAD"
                try:
                    data = http.response(status, headers, body, head_only=head_only)
                except ValueError as exc:            # a header of the upstream's that h11 will not send
                    status, headers, body = _json(502, {"error": f"the upstream's answer cannot be relayed: {exc}"})
                    data = http.response(status, headers, body, head_only=head_only)
                writer.write(data)
                if not await self._drain(writer) or not http.next_cycle():
                    break
        except (asyncio.CancelledError, ConnectionError):
            pass
        finally:
            writer.close()
            self._tasks.discard(task)

    async def _drain(self, writer: asyncio.StreamWriter) -> bool:
        if self.idle_timeout is None:
            await writer.drain()
            return True
        try:
            await wire.within(writer.drain(), self.idle_timeout)
        except (asyncio.TimeoutError, TimeoutError):
            writer.transport.abort()
            return False
        return True

    # --- one exchange -----------------------------------------------------------------------------------

    async def _answer(self, request: wire.Request, conn: int):
        from scanner.scrub import scrub_text

        self._counts["requests"] += 1
        t0 = time.time()
        path, _ = request.path_and_query
        entry = {"id": f"rec-{next(self._ids):06d}", "connection": conn, "method": request.method,
                 "path": scrub_text(path, ("secret", "pii"), as_url=True), "upstream_status": None,
                 "recorded": False, "fixture": None, "class": None, "case": None, "truncated": None,
                 "replaced": None, "reason": None}
        status, headers, body, outcome = await self._forward(request, entry)
        if outcome is not None:
            entry.update(recorded=outcome.recorded, fixture=outcome.rel, reason=outcome.reason, **{"class": outcome.cls},
                         case=outcome.case, truncated=outcome.truncated, replaced=outcome.replaced)
            if outcome.warnings:
                entry["warnings"] = outcome.warnings
            self._counts["recorded" if outcome.recorded else "not_recorded"] += 1
        end = time.time()
        entry.update(ts_start=_iso(t0), ts_end=_iso(end), duration_ms=round((end - t0) * 1000, 3), status=status)
        for name in ("reason", "warnings"):
            if entry.get(name):
                entry[name] = scrub_text(entry[name]) if isinstance(entry[name], str) else \
                    [scrub_text(w) for w in entry[name]]
        self.log.write(entry)
        self._tell(entry)
        if outcome is not None and outcome.recorded:
            headers = headers + [(RECORDED_HEADER, outcome.rel)]
        return status, headers, body

    def _tell(self, entry: dict) -> None:
        if entry["recorded"]:
            what = entry["class"] + (f", case {entry['case']}" if entry["case"] else "")
            extra = "; truncated" if entry["truncated"] else ""
            extra += f"; replaces {entry['replaced']}" if entry["replaced"] else ""
            self.say(f"recorded {entry['fixture']} ({what}; {entry['upstream_status'] or 'timeout'}{extra})")
        elif entry["reason"]:
            self.say(f"not recorded: {entry['method']} {entry['path']}: {entry['reason']}")
        for warning in entry.get("warnings") or ():
            if warning not in self._said:           # said once here; the log names every file it concerns
                self._said.add(warning)
                self.say(f"warning: {entry['fixture']}: {warning} (said once; the log lists every file)")

    async def _forward(self, request: wire.Request, entry: dict):
        """(status, headers, body, Outcome or None) for the client."""
        import httpx

        from scanner import netlock

        path, query = request.path_and_query
        if request.absolute_host is not None or not request.target.startswith("/"):
            entry["reason"] = "absolute-form target refused"
            return (*_json(400, {"error": f"record forwards to {self.upstream} only: send the path (origin form), "
                                          "not a URL"}), None)
        if path.startswith(CONTROL_PREFIX):
            if path == CONTROL_PREFIX + "stats":
                return (*_json(200, self.stats()), None)
            return (*_json(404, {"error": "no control endpoint here", "endpoints": ["GET /_centinela/stats"]}), None)
        try:
            case = check_case(request.header(CASE_HEADER))
            cls = check_class(request.header(CLASS_HEADER))
        except ValueError as exc:
            entry["reason"] = str(exc)
            return (*_json(400, {"error": str(exc)}), None)
        url = self.upstream + request.target
        sent = [(k, v) for k, v in request.headers
                if k.lower() not in DROPPED_REQUEST_HEADERS and not k.lower().startswith(CONTROL_HEADER_PREFIX)]
        started = datetime.now(timezone.utc)
        t0 = time.monotonic()
        ex = Exchange(request.method, url, sent, request.body, started)
        try:
            wire_headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in sent]   # as the client sent them
            async with self._client.stream(request.method, url, headers=wire_headers,
                                           content=request.body if request.body else None) as answer:
                got = bytearray()
                async for chunk in answer.aiter_bytes():
                    got += chunk
                    if len(got) > MAX_UPSTREAM_BODY:
                        raise _TooLarge()
                ex.status = answer.status_code
                ex.response_headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in answer.headers.raw]
                ex.response_body = bytes(got)
        except httpx.PoolTimeout:
            entry["reason"] = "no connection to the upstream was free in time"
            return (*_json(503, {"error": entry["reason"]}), None)
        except httpx.TimeoutException:
            ex.after_ms = int((time.monotonic() - t0) * 1000)
        except _TooLarge:
            entry["reason"] = f"the upstream's body is over {MAX_UPSTREAM_BODY:,} bytes: not relayed, not recorded"
            return (*_json(502, {"error": entry["reason"]}), None)
        except (httpx.HTTPError, netlock.NetworkBlocked, OSError) as exc:
            entry["reason"] = f"the upstream could not be reached: {type(exc).__name__}"
            return (*_json(502, {"error": f"{entry['reason']} ({self.upstream})"}), None)
        entry["upstream_status"] = ex.status
        if request.method == "HEAD":
            outcome = Outcome(False, reason="a HEAD answer has no body to replay: relayed, not recorded")
        else:
            loop = asyncio.get_running_loop()
            try:
                outcome = await loop.run_in_executor(self._worker, self.recorder.store, ex, case, cls)
            except Exception as exc:              # a bug must not drop the exchange unlogged; nothing half-written
                outcome = Outcome(False, reason=f"internal error while recording: {type(exc).__name__}")
        if ex.status is None:
            return (*_json(504, {"error": f"the upstream did not answer within {self.upstream_timeout:g} s"
                                          + (f"; recorded as {outcome.rel}" if outcome.recorded else "")}), outcome)
        headers = [(k, v) for k, v in ex.response_headers if k.lower() not in DROPPED_RESPONSE_HEADERS]
        return ex.status, headers, ex.response_body, outcome
