"""One recorded call as the adapters read it, from whatever file it was recorded in.

The file is read by `scanner.exchanges` (our envelope, a JSON list of envelopes, HAR, VCR.py cassettes, nock's
recorder output); a file that is none of them is a bare response body (no request, no status). Here each
recorded exchange becomes the adapters' view: lower-cased header maps and bodies as values (JSON, text, bytes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from scanner.exchanges import is_envelope, is_har, read_value
from scanner.exchanges import Exchange as Recorded


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


__all__ = ["Exchange", "exchanges_of", "host_of", "is_envelope", "is_har", "iso_utc", "parse_instant"]


def exchanges_of(value: Any) -> list[Exchange]:
    """Every recorded call in a parsed fixture file, in recorded order."""
    recording = read_value(value)
    if recording is None:
        return [Exchange(body=value, bare=True)]
    return [_view(ex) for ex in recording.exchanges]


def _view(rx: Recorded) -> Exchange:
    req = rx.request
    ex = Exchange(recorded_at=rx.recorded_at)
    if req is not None:
        ex.method = str(req.method or "GET").upper()
        ex.url = req.url if isinstance(req.url, str) else None
        ex.request_headers = dict(req.header_map)
        ex.request_body = req.body.as_value(ex.problems, "request")
    else:
        ex.method = "GET"
    res = rx.response
    if res is None:
        ex.transport_error = rx.error if isinstance(rx.error, dict) else {"type": "no_response"}
        return ex
    ex.headers = dict(res.header_map)
    ex.status = _status(res.status, ex.problems)
    ex.body = res.body.as_value(ex.problems, "response")
    return ex


def _status(value: Any, problems: list[str]) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    problems.append(f"response status {value!r} is not an HTTP status")
    return None


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
