"""One recorded call, read from whatever form it was stored in.

Forms: our HTTP envelope (`{"request", "response", "error"?, "recorded_at"?}`), a HAR file (`log.entries`), a
JSON list of envelopes (a sequence of calls, e.g. a Firecrawl batch submit and its status), or a bare response
body (no request, no status). Bodies are embedded JSON, a string (JSON text, HTML, plain text) or base64.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from scanner import jsonsafe
from scanner.loaders.jsondoc import header_map


@dataclass
class Exchange:
    method: str | None = None
    url: str | None = None
    request_headers: dict[str, str] = field(default_factory=dict)
    request_body: Any = None
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None  # dict/list for JSON, str for text, bytes for binary, None for no response
    transport_error: dict | None = None  # the envelope's `error` when no response came
    recorded_at: str | None = None
    bare: bool = False
    problems: list[str] = field(default_factory=list)

    @property
    def host(self) -> str:
        return host_of(self.url or "")

    @property
    def path(self) -> str:
        return urlsplit(self.url or "").path or "/"

    @property
    def params(self) -> dict[str, str]:
        """The request's query-string parameters (first value of each)."""
        return {k: v[0] for k, v in parse_qs(urlsplit(self.url or "").query, keep_blank_values=True).items()}

    @property
    def json_body(self) -> dict:
        """The response body when it is a JSON object, else an empty dict."""
        return self.body if isinstance(self.body, dict) else {}

    @property
    def json_request(self) -> dict:
        return self.request_body if isinstance(self.request_body, dict) else {}

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()


def host_of(url: str) -> str:
    """Lower-case host without port or user-info; IDNA left as written. Empty when there is none."""
    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        return ""
    return unquote(host or "").lower()


def is_envelope(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    response = value.get("response", ...)
    return isinstance(value.get("request"), dict) and (response is None or isinstance(response, dict))


def is_har(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("log"), dict) and isinstance(value["log"].get("entries"), list)


def exchanges_of(value: Any) -> list[Exchange]:
    """Every recorded call in a parsed fixture file, in recorded order."""
    if is_har(value):
        return [_from_har(e) for e in value["log"]["entries"] if isinstance(e, dict)]
    if isinstance(value, list) and value and all(is_envelope(v) for v in value):
        return [_from_envelope(v) for v in value]
    if is_envelope(value):
        return [_from_envelope(value)]
    return [Exchange(body=value, bare=True)]


def _from_envelope(env: dict) -> Exchange:
    req = env["request"]
    ex = Exchange(
        method=str(req.get("method") or "GET").upper(),
        url=req.get("url") if isinstance(req.get("url"), str) else None,
        request_headers=header_map(req.get("headers")),
        recorded_at=_text(env.get("recorded_at")) or _text(env.get("captured_at")),
    )
    ex.request_body = _decode_body(req.get("body"), req.get("body_encoding"), ex.request_headers, ex.problems, "request")
    response = env.get("response")
    if response is None:
        ex.transport_error = env.get("error") if isinstance(env.get("error"), dict) else {"type": "no_response"}
        return ex
    ex.headers = header_map(response.get("headers"))
    ex.status = _status(response.get("status"), ex.problems)
    ex.body = _decode_body(response.get("body"), response.get("body_encoding"), ex.headers, ex.problems, "response")
    return ex


def _from_har(entry: dict) -> Exchange:
    req = entry.get("request") if isinstance(entry.get("request"), dict) else {}
    res = entry.get("response") if isinstance(entry.get("response"), dict) else None
    ex = Exchange(
        method=str(req.get("method") or "GET").upper(),
        url=req.get("url") if isinstance(req.get("url"), str) else None,
        request_headers=header_map(req.get("headers")),
        recorded_at=_text(entry.get("startedDateTime")),
    )
    post = req.get("postData") if isinstance(req.get("postData"), dict) else {}
    ex.request_body = _decode_body(post.get("text"), None, ex.request_headers, ex.problems, "request")
    # HAR writes status 0 (and no content) for a request that never got an answer.
    if res is None or res.get("status") in (0, None):
        ex.transport_error = {"type": "no_response"}
        return ex
    ex.headers = header_map(res.get("headers"))
    ex.status = _status(res.get("status"), ex.problems)
    content = res.get("content") if isinstance(res.get("content"), dict) else {}
    ex.body = _decode_body(content.get("text", ""), content.get("encoding"), ex.headers, ex.problems, "response")
    return ex


def _status(value: Any, problems: list[str]) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    problems.append(f"response status {value!r} is not an HTTP status")
    return None


def _decode_body(body: Any, encoding: Any, headers: dict[str, str], problems: list[str], which: str) -> Any:
    if body is None or isinstance(body, (dict, list, int, float, bool)):
        return body
    if not isinstance(body, str):
        problems.append(f"{which} body of type {type(body).__name__} ignored")
        return None
    if str(encoding or "").lower() == "base64":
        try:
            raw = base64.b64decode(body, validate=False)
        except (binascii.Error, ValueError):
            problems.append(f"{which} body is not valid base64")
            return body
        if not raw.lstrip().startswith((b"{", b"[")):
            return raw
        body = raw.decode("utf-8", errors="replace")
    mime = headers.get("content-type", "").lower()
    stripped = body.lstrip()
    if stripped.startswith(("{", "[")) or "json" in mime:
        try:
            return jsonsafe.loads(body, finite=False)
        except ValueError:
            if "json" in mime and stripped:
                problems.append(f"{which} body is declared JSON but does not parse")
    return body


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def parse_instant(value: Any) -> datetime | None:
    """An ISO 8601 date-time (trailing Z allowed) or an HTTP date, as an aware UTC datetime; naive ones are
    taken as UTC. None when it is neither."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    ts: datetime | None
    try:
        ts = datetime.fromisoformat(text[:-1] + "+00:00" if text[-1] in "Zz" else text)
    except ValueError:
        try:
            ts = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=timezone.utc)
    return ts.astimezone(timezone.utc)


def iso_utc(ts: datetime) -> str:
    return ts.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
