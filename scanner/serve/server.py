"""The replay server: asyncio streams on loopback, one coroutine per connection and no thread per
connection, so a connection held open by the timeout fixture costs a parked coroutine and its buffers. HTTP/1.1
is parsed and written by h11 (`scanner.serve.wire`, which also holds the head and body bounds).

It never opens a connection of its own: every answer comes from the catalogs loaded at start-up.

Bounds: a control request's body is at most CONTROL_MAX_BODY bytes (a 413 before it is read when its length is
declared, at the first byte past the limit when it is chunked) and its JSON at most CONTROL_MAX_DEPTH deep (a 400); a request the server cannot decide is a logged 500, never a dropped
connection. A connection that holds nothing for the timeout fixture and sends no complete request for
`idle_timeout` seconds (or does not read what it is sent for as long) is closed — with a logged 408 when it
had started a request; a connection held by the timeout fixture is never timed out (that is the fixture).
"""

from __future__ import annotations

import asyncio
import difflib
import hashlib
import ipaddress
import itertools
import json
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

from scanner import jsonsafe
from scanner.serve.catalog import Catalog, Fixture, ServeError
from scanner.serve import wire
from scanner.serve.listener import close, listen, origin
from scanner.serve.wire import Request
from scanner.serve.matching import normalise_path, request_key
from scanner.serve.scenarios import OK, Scenarios
from scanner.terminal import json_text

CONTROL_PREFIX = "/_centinela/"
SCENARIO_HEADER = "x-centinela-scenario"
RETRY_AFTER_HEADER = "x-centinela-retry-after"
CALL_HEADER = "x-centinela-call"
REQUEST_ID_HEADER = "x-centinela-request-id"
_HOLD = object()
CONTROL_MAX_BODY = 64 * 1024
CONTROL_MAX_DEPTH = 8
DEFAULT_IDLE_TIMEOUT = 60.0
KEY_SHOWN_CHARS = 4096
CLOSEST_CHARS = 512
_LOOPBACK_NAMES = {"localhost": "127.0.0.1", "ip6-localhost": "::1"}


def loopback_host(host: str) -> str:
    """The address to bind for HOST, which must be a loopback address written as one (127.0.0.1, ::1, any
    of 127.0.0.0/8); a name, even `localhost` (which resolves as the system says), is refused."""
    text = host.strip()
    try:
        ok = ipaddress.ip_address(text.strip("[]")).is_loopback
    except ValueError:
        ok = False
    if not ok:
        raise ServeError(f"--host {text}: the replay server listens on loopback only (127.0.0.1 or ::1)")
    return text.strip("[]")


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _seconds_text(value: float) -> str:
    return f"{value:.6f}".rstrip("0").rstrip(".") or "0"


# Log fields a client writes (the request line, its body, its headers): a credential sent in them (an
# `api_key=` in the query string, a key in the JSON body, a token in a header) must not land in the log.
_CLIENT_FIELDS = ("key", "call", "path", "scenario")


def public_entry(entry: dict) -> dict:
    """The entry as logged: every secret in what the client sent replaced by REDACTED (`scanner.scrub`)."""
    from scanner.scrub import scrub_request

    out = dict(entry)
    for name in _CLIENT_FIELDS:
        if isinstance(out.get(name), str):
            out[name] = scrub_request(out[name])
    return out


class RequestLog:
    """Every request as one JSON line, written when the request is over (answered, or its held connection
    closed). Without a path the entries are kept in memory (`entries`). Secrets a client sent are replaced
    by REDACTED first (`public_entry`), in the file and in memory alike."""

    def __init__(self, path: Path | None = None):
        self.path = path
        self.entries: list[dict] = []
        self._fh = None
        public_entry({"key": "GET / ?api_key=warm-up"})   # load the rules now, not during the first request
        if path is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                self._fh = open(path, "w", encoding="utf-8")
            except OSError as exc:
                raise ServeError(f"{path}: cannot write the request log: {exc.strerror or exc}") from None

    def write(self, entry: dict) -> None:
        entry = public_entry(entry)
        if self._fh is None:
            self.entries.append(entry)
            return
        self._fh.write(json_text(json.dumps(entry, ensure_ascii=False, sort_keys=True)) + "\n")
        self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


class _Response:
    def __init__(self, status: int, headers: list[tuple[str, str]], body: bytes):
        self.status, self.headers, self.body = status, headers, body


def _json_response(status: int, data: dict) -> _Response:
    return _Response(status, [("content-type", "application/json")],
                     json.dumps(data, ensure_ascii=False, indent=2).encode("utf-8"))


class ReplayServer:
    def __init__(self, catalogs: dict[str, Catalog], *, prefixed: bool, scenarios: Scenarios | None = None,
                 log: RequestLog | None = None, retry_after: float | None = None,
                 host: str = "127.0.0.1", port: int = 0, idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT):
        if not catalogs:
            raise ServeError("no provider to serve")
        if not prefixed and len(catalogs) != 1:
            raise ServeError("serving several providers needs a path prefix per provider")
        if retry_after is not None and not (0 <= retry_after <= 86400):
            raise ServeError("--retry-after must be between 0 and 86400 seconds")
        if idle_timeout is not None and not (0 <= idle_timeout <= 86400):
            raise ServeError("--idle-timeout must be between 0 (off) and 86400 seconds")
        self.catalogs = catalogs
        self.prefixed = prefixed
        self.scenarios = scenarios or Scenarios()
        self.scenarios.validate(catalogs)
        self.log = log if log is not None else RequestLog()
        self.retry_after = retry_after
        self.idle_timeout = idle_timeout or None          # 0: never time out
        self._idle_closed = 0
        self.host = loopback_host(host)
        self.port = port
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task] = set()
        self._ids = itertools.count(1)
        self._conn_ids = itertools.count(1)
        self._held = 0
        self._requests = 0

    # --- life cycle -------------------------------------------------------------------------------------

    async def start(self) -> None:
        try:
            self._server = await listen(self._connection, self.host, self.port)
        except OSError as exc:
            raise ServeError(f"cannot listen on {self.host}:{self.port}: {exc.strerror or exc}") from None
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        await close(self._server, self._tasks)
        self.log.close()

    @property
    def origin(self) -> str:
        return origin(self.host, self.port)

    @property
    def base_urls(self) -> dict[str, str]:
        if not self.prefixed:
            return {next(iter(self.catalogs)): self.origin}
        return {p: f"{self.origin}/{p}" for p in sorted(self.catalogs)}

    def stats(self) -> dict:
        return {"connections": len(self._tasks), "held": self._held, "requests": self._requests,
                "idle_closed": self._idle_closed}

    # --- one connection ---------------------------------------------------------------------------------

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._tasks.add(task)
        conn = next(self._conn_ids)
        http = wire.Connection(reader, writer)
        held: list[dict] = []          # requests on this connection that will never be answered
        current: dict | None = None
        ending = "client_closed"
        try:
            while True:
                try:
                    if held or self.idle_timeout is None:
                        request = await http.next_request(self._body_limit)
                    else:
                        request = await wire.within(http.next_request(self._body_limit), self.idle_timeout)
                except (asyncio.TimeoutError, TimeoutError):
                    self._idle_closed += 1
                    if http.started and http.can_answer:    # a request was started and never finished: say so
                        entry = self._begin(None, conn)
                        entry["idle_timeout"] = True
                        response = _json_response(408, {"error": f"no complete request within "
                                                                 f"{_seconds_text(self.idle_timeout)} s"})
                        writer.write(http.response(408, response.headers, response.body, close=True))
                        self._finish(entry, 408)
                    break
                except wire.BadRequest as exc:
                    if held or not http.can_answer:
                        break
                    entry = self._begin(None, conn)
                    response = _json_response(exc.status, {"error": str(exc)})
                    writer.write(http.response(response.status, response.headers, response.body, close=True))
                    await self._drain(writer)
                    self._finish(entry, exc.status)
                    await http.discard_rest()
                    break
                if request is None:
                    break
                current = self._begin(request, conn)
                if held:
                    current["on_held_connection"] = True
                    self._hold(current, held)
                    http.skip_response()
                    current = None
                    continue
                try:
                    response = self._decide(request, current)
                except Exception as exc:           # a bug must not drop the connection unlogged
                    response = _json_response(500, {"error": f"the replay server could not answer: "
                                                             f"{type(exc).__name__}"})
                if response is _HOLD:
                    self._hold(current, held)
                    http.skip_response()
                    current = None
                    continue
                response.headers.append((REQUEST_ID_HEADER, current["id"]))
                head_only = request.method == "HEAD"
                try:
                    data = http.response(response.status, response.headers, response.body, head_only=head_only)
                except ValueError as exc:          # a recorded header h11 will not send (a control character)
                    response = _json_response(500, {"error": f"the recorded response cannot be sent: {exc}"})
                    response.headers.append((REQUEST_ID_HEADER, current["id"]))
                    data = http.response(500, response.headers, response.body, head_only=head_only)
                writer.write(data)
                taken = await self._drain(writer)
                self._finish(current, response.status)
                current = None
                if not taken or not http.next_cycle():
                    break
        except asyncio.CancelledError:
            ending = "held"              # the server stopped while these were still held open
        except ConnectionError:
            pass
        finally:
            if current is not None:
                self._finish(current, "client_closed" if ending == "client_closed" else "server_stopped")
            for entry in held:
                self._held -= 1
                self._finish(entry, ending)
            writer.close()
            self._tasks.discard(task)

    async def _drain(self, writer: asyncio.StreamWriter) -> bool:
        """Wait for the client to take what was written; False (close it) when it takes nothing for
        `idle_timeout` seconds."""
        if self.idle_timeout is None:
            await writer.drain()
            return True
        try:
            await wire.within(writer.drain(), self.idle_timeout)
        except (asyncio.TimeoutError, TimeoutError):
            self._idle_closed += 1
            writer.transport.abort()
            return False
        return True

    @staticmethod
    def _body_limit(target: str) -> int:
        path = target.split("?", 1)[0]
        if path.startswith(("http://", "https://")):
            path = "/" + path.split("//", 1)[1].partition("/")[2]
        return CONTROL_MAX_BODY if path.startswith(CONTROL_PREFIX) else 1 << 62

    def _hold(self, entry: dict, held: list[dict]) -> None:
        held.append(entry)
        self._held += 1

    def _begin(self, request: Request | None, conn: int) -> dict:
        self._requests += 1
        path, _ = request.path_and_query if request is not None else ("", "")
        body = request.body if request is not None else b""
        return {"id": f"req-{next(self._ids):06d}", "connection": conn, "t_start": time.time(),
                "method": request.method if request is not None else None, "path": path, "provider": None,
                "op": None, "key": None, "call": None, "fixture": None, "scenario": None,
                "scenario_source": None, "retry_after": None, "requested_urls": None, "missing": None,
                "body_sha256": hashlib.sha256(body).hexdigest()}

    def _finish(self, entry: dict, status) -> None:
        end = time.time()
        start = entry.pop("t_start")
        entry.update(ts_start=_iso(start), ts_end=_iso(end), duration_ms=round((end - start) * 1000, 3),
                     status=status)
        self.log.write(entry)

    # --- what to answer ---------------------------------------------------------------------------------

    def _route(self, path: str) -> tuple[str | None, str]:
        if not self.prefixed:
            return next(iter(self.catalogs)), path
        first, _, rest = path.lstrip("/").partition("/")
        if first in self.catalogs:
            return first, "/" + rest
        return None, path

    def _decide(self, request: Request, entry: dict):
        path, query = request.path_and_query
        if path.startswith(CONTROL_PREFIX):
            entry["control"] = True
            return self._control(request, path)
        provider, inner = self._route(path)
        if provider is None:
            return _json_response(404, {"error": f"no provider at {path}: serving {', '.join(self.base_urls.values())}"})
        catalog = self.catalogs[provider]
        op = normalise_path(inner).lstrip("/")
        method = "GET" if request.method == "HEAD" else request.method    # HEAD: the GET's answer, headers only
        key = request_key(provider, method, inner, query, request.body)
        shown = _clip(key)
        entry.update(provider=provider, op=op, key=shown, call=_clip(request.header(CALL_HEADER) or "") or shown)
        step_source = "header"
        step = (request.header(SCENARIO_HEADER) or "").strip() or None
        if step is None:
            step, step_source = self.scenarios.step_for(provider, op)
        if step is not None and step != OK:
            fixture = catalog.scenarios.get(step)
            if fixture is None:
                return _json_response(400, {"error": f"{provider} has no scenario fixture {step!r}",
                                            "available": catalog.scenario_names()})
            entry.update(scenario=step, scenario_source=step_source, fixture=fixture.path)
            if fixture.kind == "timeout":
                return _HOLD
            return self._replay(fixture, request, entry)
        fixture, problem = self._lookup(catalog, key, request)
        if fixture is None:
            return _json_response(404, problem)
        entry["fixture"] = fixture.path
        if fixture.requested_urls:
            entry.update(requested_urls=len(fixture.requested_urls), missing=list(fixture.missing))
        return self._replay(fixture, request, entry)

    def _lookup(self, catalog: Catalog, key: str, request: Request) -> tuple[Fixture | None, dict]:
        candidates = catalog.answers.get(key, [])
        host = request.absolute_host or _named_host(request.header("host"))
        if host is not None and len(candidates) > 1:      # the host only chooses among hosts of one request
            candidates = [f for f in candidates if f.host == host] or candidates
        if len(candidates) == 1:
            return candidates[0], {}
        if len(candidates) > 1:
            return None, {"error": "the same request was recorded for several hosts; send it in absolute form "
                                   "or with a Host header naming one",
                          "key": _clip(key), "fixtures": [f.path for f in candidates]}
        return None, {"error": "no recorded exchange matches this request", "provider": catalog.provider,
                      "key": _clip(key), "closest": _closest(catalog, key)}

    def _replay(self, fixture: Fixture, request: Request, entry: dict) -> _Response:
        headers = list(fixture.headers)
        override = request.header(RETRY_AFTER_HEADER)
        value = None
        if override is not None:
            try:
                value = float(override)
            except ValueError:
                value = None
            if value is None or not 0 <= value <= 86400:       # NaN fails both comparisons
                return _json_response(400, {"error": f"{RETRY_AFTER_HEADER}: not a number of seconds from 0 "
                                                     f"to 86400: {override[:40]!r}"})
        elif self.retry_after is not None:
            value = self.retry_after
        for i, (name, text) in enumerate(headers):
            if name.lower() == "retry-after":
                if value is not None:
                    text = _seconds_text(value)
                    headers[i] = (name, text)
                entry["retry_after"] = text
        headers.append(("x-centinela-fixture", fixture.path))
        return _Response(fixture.status, headers, fixture.body)

    def _control(self, request: Request, path: str) -> _Response:
        if path == CONTROL_PREFIX + "stats":
            return _json_response(200, self.stats())
        if path == CONTROL_PREFIX + "scenario" and request.method in ("POST", "PUT"):
            try:
                try:
                    data = jsonsafe.loads(request.body or b"{}", max_depth=CONTROL_MAX_DEPTH)
                except jsonsafe.JsonRefused:
                    raise
                except (ValueError, RecursionError):
                    raise ServeError('the body is not JSON: expected {"scenarios": ["OP:STEP,…", …]}') from None
                texts = data.get("scenarios", []) if isinstance(data, dict) else None
                if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
                    raise ServeError('expected {"scenarios": ["OP:STEP,…", …]}')
                scenarios = Scenarios.parse(texts)
                scenarios.validate(self.catalogs)
            except (ValueError, ServeError) as exc:
                return _json_response(400, {"error": str(exc)})
            self.scenarios = scenarios
            return _json_response(200, {"scenarios": [s.text for s in scenarios.schedules]})
        return _json_response(404, {"error": f"no control endpoint {request.method} {path}",
                                    "endpoints": ["GET /_centinela/stats", "POST /_centinela/scenario"]})


def _named_host(value: str | None) -> str | None:
    """The host a Host header names, unless it is the server's own loopback address."""
    if not value:
        return None
    host = value.strip().lower()
    host = host[1:host.index("]")] if host.startswith("[") and "]" in host else host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    if host in _LOOPBACK_NAMES:
        return None
    try:
        if ipaddress.ip_address(host).is_loopback:
            return None
    except ValueError:
        pass
    return host


def _clip(text: str) -> str:
    """A request key or header as logged and echoed: at most KEY_SHOWN_CHARS (a key holds the request's
    identifying fields, so a 32 MB body would otherwise be a 32 MB log line per request)."""
    return text if len(text) <= KEY_SHOWN_CHARS else text[:KEY_SHOWN_CHARS] + f"… ({len(text):,} characters)"


def _closest(catalog: Catalog, key: str) -> dict | None:
    # difflib is quadratic in the lengths: compare the keys' first CLOSEST_CHARS only (a 1 MB key took 131 s).
    key = key[:CLOSEST_CHARS]
    best, best_ratio = None, -1.0
    for candidate in catalog.keys:
        matcher = difflib.SequenceMatcher(None, key, candidate[:CLOSEST_CHARS], autojunk=False)
        if matcher.real_quick_ratio() <= best_ratio or matcher.quick_ratio() <= best_ratio:
            continue
        ratio = matcher.ratio()
        if ratio > best_ratio:
            best, best_ratio = candidate, ratio
    if best is None:
        return None
    return {"fixture": catalog.answers[best][0].path, "key": best, "similarity": round(best_ratio, 3)}


class ServerThread:
    """A replay server on its own event loop in a background thread (for tests and Python adapters)."""

    def __init__(self, server: ReplayServer):
        self.server = server
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="centinela-serve", daemon=True)

    def __enter__(self) -> "ServerThread":
        self._thread.start()
        try:
            asyncio.run_coroutine_threadsafe(self.server.start(), self.loop).result(timeout=10)
        except BaseException:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout=10)
            self.loop.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        if not self._thread.is_alive():
            return
        asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(timeout=10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=10)
        self.loop.close()

    def stats(self) -> dict:
        async def read():
            return self.server.stats()
        return asyncio.run_coroutine_threadsafe(read(), self.loop).result(timeout=10)

    @property
    def base_url(self) -> str:
        return next(iter(self.server.base_urls.values()))
