"""HTTP/1.1 on one asyncio connection, parsed and written by h11 (the sans-IO protocol library under httpx and
uvicorn): this module only moves bytes between the socket and h11 and enforces the bounds.

Bounds: a request head (request line and headers) is at most MAX_HEAD bytes (h11's incomplete-event limit: a
431), a body at most MAX_BODY bytes or the lower limit a target has (`body_limit`), told from Content-Length
before a byte of it is read and counted chunk by chunk for a chunked body (a 413). A head h11 refuses — a bad
request line, a negative or malformed Content-Length, no Host — is a 400 (`BadRequest`, with h11's status
hint). The server answers such a request and closes the connection (`discard_rest` first).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from http import HTTPStatus
from urllib.parse import urlsplit

import h11

MAX_HEAD = 64 * 1024
MAX_BODY = 32 * 1024 * 1024
READ_CHUNK = 64 * 1024
MESSAGE_CHARS = 200          # an h11 message can quote the client's bytes: echoed this far at most


class BadRequest(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


@dataclass
class Request:
    method: str
    target: str
    version: str
    headers: list[tuple[str, str]] = field(default_factory=list)    # as sent: names in their case, in order
    body: bytes = b""

    def header(self, name: str, default: str | None = None) -> str | None:
        name = name.lower()
        for k, v in self.headers:
            if k.lower() == name:
                return v
        return default

    @property
    def absolute_host(self) -> str | None:
        """The host of an absolute-form target (`GET https://host/path`, as a proxy client sends)."""
        if self.target.startswith(("http://", "https://")):
            return (urlsplit(self.target).hostname or "").lower()
        return None

    @property
    def path_and_query(self) -> tuple[str, str]:
        target = self.target
        if self.absolute_host is not None:
            parts = urlsplit(target)
            return parts.path or "/", parts.query
        path, _, query = target.partition("?")
        return path or "/", query


def reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


def _message(exc: h11.ProtocolError) -> str:
    text = str(exc) or type(exc).__name__
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return text if len(text) <= MESSAGE_CHARS else text[:MESSAGE_CHARS] + "…"


def _content_length(request: h11.Request) -> int | None:
    """The declared body length (h11 has checked it is digits and that repeats agree), or None."""
    for name, value in request.headers:
        if name == b"content-length":
            return int(value)
    return None


class Connection:
    """One client connection: requests read through h11, responses written through it."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader, self.writer = reader, writer
        self._h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)
        self._eof = False

    # --- reading ----------------------------------------------------------------------------------------

    async def next_request(self, body_limit=None) -> Request | None:
        """The next whole request, or None when the client closed the connection (also mid-request).
        `body_limit(target)` may lower MAX_BODY for a target. Raises BadRequest (431, 413, 400…)."""
        request: Request | None = None
        body = bytearray()
        limit = MAX_BODY
        while True:
            try:
                event = self._h11.next_event()
            except h11.RemoteProtocolError as exc:
                if self._eof:
                    return None                 # closed in the middle of a request
                status = exc.error_status_hint
                if status == 431:
                    raise BadRequest(431, f"request head too large (at most {MAX_HEAD:,} bytes)") from None
                raise BadRequest(status, f"bad request: {_message(exc)}") from None
            if event is h11.NEED_DATA:
                if request is not None and self._h11.they_are_waiting_for_100_continue:
                    go_on = h11.InformationalResponse(status_code=100, headers=[], reason=b"Continue")
                    self.writer.write(self._h11.send(go_on))
                await self._receive()
            elif event is h11.PAUSED:
                self._fresh()                   # the request before was never answered (a held connection)
            elif isinstance(event, h11.Request):
                target = event.target.decode("latin-1")
                request = Request(event.method.decode("latin-1").upper(), target,
                                  "HTTP/" + event.http_version.decode("latin-1"),
                                  [(k.decode("latin-1"), v.decode("latin-1")) for k, v in event.headers.raw_items()])
                if body_limit is not None:
                    limit = min(MAX_BODY, body_limit(target))
                length = _content_length(event)
                if length is not None and length > limit:
                    raise BadRequest(413, f"request body too large (at most {limit:,} bytes here)")
            elif isinstance(event, h11.Data):
                body += event.data
                if len(body) > limit:
                    raise BadRequest(413, f"request body too large (at most {limit:,} bytes here)")
            elif isinstance(event, h11.EndOfMessage):
                request.body = bytes(body)
                return request
            elif isinstance(event, h11.ConnectionClosed):
                return None

    async def _receive(self) -> None:
        try:
            data = await self.reader.read(READ_CHUNK)
        except ConnectionError:
            data = b""
        if not data:
            self._eof = True
        self._h11.receive_data(data)

    def _fresh(self) -> None:
        """A new protocol state for the next request, fed what was already received: the one before is never
        answered (held by the timeout fixture), and h11 would otherwise wait for its answer."""
        pending, closed = self._h11.trailing_data
        self._h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)
        if pending:
            self._h11.receive_data(pending)
        if closed:
            self._h11.receive_data(b"")

    def skip_response(self) -> None:
        """The request just read will never be answered: read the next one on the connection."""
        self._fresh()

    @property
    def started(self) -> bool:
        """Whether the client sent bytes of a request not yet read whole (a head or body it never finished)."""
        return self._h11.their_state is not h11.IDLE or bool(self._h11.trailing_data[0])

    # --- writing ----------------------------------------------------------------------------------------

    def response(self, status: int, headers, body: bytes, *, head_only: bool = False, close: bool = False) -> bytes:
        """The bytes of a whole response (h11 validates every header: ValueError for one it cannot send).
        HEAD, 204 and 304 carry no body; Content-Length is always the body's length."""
        fields = [(name, value) for name, value in headers]
        fields.append(("content-length", str(len(body))))
        if close:
            fields.append(("connection", "close"))
        try:
            event = h11.Response(status_code=status, reason=reason(status),
                                 headers=[(n.encode("latin-1", "replace"), v.encode("latin-1", "replace"))
                                          for n, v in fields])
        except h11.LocalProtocolError as exc:
            raise ValueError(_message(exc)) from None
        data = self._h11.send(event)
        if body and not head_only and status not in (204, 304):
            data += self._h11.send(h11.Data(data=body))
        return data + self._h11.send(h11.EndOfMessage())

    @property
    def can_answer(self) -> bool:
        """Whether a response may still be sent (h11 has not sent one for this request, nor failed)."""
        return self._h11.our_state in (h11.IDLE, h11.SEND_RESPONSE)

    def next_cycle(self) -> bool:
        """After a response: ready for the next request on the connection (False: it must be closed)."""
        if self._h11.our_state is h11.DONE and self._h11.their_state is h11.DONE:
            self._h11.start_next_cycle()
            return True
        return False

    async def discard_rest(self) -> None:
        """After an early answer (413, 431, 400) the client may still be sending what was refused: say we are
        done (FIN) and read and drop up to 1 MB of it for up to a second, so closing with unread data does not
        reset the connection (RST) before the client has read the answer."""
        async def drop() -> None:
            dropped = 0
            while dropped < (1 << 20):
                chunk = await self.reader.read(READ_CHUNK)
                if not chunk:
                    return
                dropped += len(chunk)

        try:
            if self.writer.can_write_eof():
                self.writer.write_eof()
            await within(drop(), 1.0)
        except (OSError, asyncio.TimeoutError, TimeoutError):
            pass


async def within(awaitable, seconds: float):
    """`awaitable`, cancelled after `seconds` (TimeoutError). asyncio.timeout (Python 3.11) runs it in this
    task; wait_for, before 3.11, wraps it in a new one."""
    if hasattr(asyncio, "timeout"):
        async with asyncio.timeout(seconds):
            return await awaitable
    return await asyncio.wait_for(awaitable, seconds)
