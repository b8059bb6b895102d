"""Just enough HTTP/1.1 over asyncio streams for a replay server: read a request (Content-Length or chunked
body, `Expect: 100-continue`), write a response. Persistent connections as HTTP/1.1 has them by default."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from http import HTTPStatus
from urllib.parse import urlsplit

MAX_HEAD = 64 * 1024
MAX_BODY = 32 * 1024 * 1024


class BadRequest(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


@dataclass
class Request:
    method: str
    target: str
    version: str
    headers: list[tuple[str, str]] = field(default_factory=list)
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

    @property
    def keep_alive(self) -> bool:
        connection = (self.header("connection") or "").lower()
        if self.version == "HTTP/1.0":
            return "keep-alive" in connection
        return "close" not in connection


async def _read_chunked(reader: asyncio.StreamReader, limit: int = MAX_BODY) -> bytes:
    body = bytearray()
    while True:
        line = await reader.readuntil(b"\r\n")
        size_text = line.split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise BadRequest(400, "bad chunk size") from None
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":   # trailers
                pass
            return bytes(body)
        if len(body) + size > limit:
            raise BadRequest(413, f"request body too large (at most {limit:,} bytes here)")
        body += await reader.readexactly(size)
        if await reader.readexactly(2) != b"\r\n":
            raise BadRequest(400, "bad chunk terminator")


async def read_request(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                       body_limit=None) -> Request | None:
    """The next request on the connection, or None when the client closed it (also mid-request).
    `body_limit(target)` may lower MAX_BODY for a target: a larger body is a 413 before it is read."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        while head.startswith(b"\r\n"):                # tolerated empty lines between requests
            head = head[2:]
            if not head:
                head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    except asyncio.LimitOverrunError:
        raise BadRequest(431, "request head too large") from None
    except ConnectionError:
        return None
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise BadRequest(400, f"bad request line {lines[0][:80]!r}")
    method, target, version = parts
    headers: list[tuple[str, str]] = []
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip():
            raise BadRequest(400, f"bad header line {line[:80]!r}")
        headers.append((name, value.strip()))
    request = Request(method.upper(), target, version, headers)
    limit = min(MAX_BODY, body_limit(target)) if body_limit is not None else MAX_BODY
    try:
        if (request.header("expect") or "").lower() == "100-continue":
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            await writer.drain()
        if "chunked" in (request.header("transfer-encoding") or "").lower():
            request.body = await _read_chunked(reader, limit)
        else:
            length_text = request.header("content-length")
            if length_text:
                try:
                    length = int(length_text)
                except ValueError:
                    raise BadRequest(400, "bad content-length") from None
                if length < 0:
                    raise BadRequest(400, "bad content-length")
                if length > limit:
                    raise BadRequest(413, f"request body too large (at most {limit:,} bytes here)")
                request.body = await reader.readexactly(length)
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    except asyncio.LimitOverrunError:
        raise BadRequest(400, "bad chunked body") from None
    return request


def reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


def encode_response(status: int, headers, body: bytes, *, head_only: bool = False, close: bool = False) -> bytes:
    lines = [f"HTTP/1.1 {status} {reason(status)}"]
    lines += [f"{name}: {value}" for name, value in headers]
    lines.append(f"content-length: {len(body)}")
    if close:
        lines.append("connection: close")
    data = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", errors="replace")
    return data if head_only else data + body
