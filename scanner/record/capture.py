"""One forwarded exchange as our fixture envelope, built in memory with the request's credentials already out.

What the client sent to authenticate is never part of the envelope: the credential headers (`Authorization`,
`x-api-key`, `Cookie`…), credential parameters of the query string (`api_key=`, `token=`…) and credential
fields of a JSON or form body (`"api_key": …`) are written `REDACTED`, and a response's `Set-Cookie` too. And
since the proxy knows those values, every other place they occur — an upstream echoing the key in a header or
a body, a `next` URL that carries it — is written `REDACTED` as well (a key with no format of its own, a bare
UUID, is invisible to any detector); a binary body holding one is refused (`CaptureRefused`), never written.
The redactor (`scanner.redact`) then runs over the whole envelope for everything else, still in memory.

Bodies are stored as the example tree stores them: JSON embedded as a value, text as a string, anything else
(a PDF, bytes that are not UTF-8) as base64 with `"body_encoding": "base64"`. A response is stored decoded
(its `content-encoding` undone), so that header, the length and the hop-by-hop headers are not kept.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from urllib.parse import parse_qsl, quote, quote_plus, unquote_plus, urlsplit, urlunsplit

from scanner import jsonsafe

REDACTED = "REDACTED"
CREDENTIAL_HEADERS = frozenset({
    "authorization", "proxy-authorization", "x-api-key", "api-key", "apikey", "x-subscription-token",
    "x-auth-token", "x-access-token", "x-goog-api-key", "cookie", "cookie2",
})
SECRET_RESPONSE_HEADERS = frozenset({"set-cookie", "set-cookie2"})
CREDENTIAL_PARAMS = frozenset({
    "api_key", "apikey", "api-key", "key", "token", "access_token", "auth_token", "auth", "password", "secret",
    "client_secret", "signature", "sig",
})
CREDENTIAL_FIELDS = frozenset({
    "api_key", "apikey", "api-key", "access_token", "auth_token", "token", "secret", "client_secret", "password",
    "authorization",
})
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding",
                        "upgrade"})
# Not part of what the adapter asked: the proxy's own hop, lengths recomputed, and encodings it negotiated.
DROPPED_REQUEST_HEADERS = HOP_BY_HOP | {"host", "content-length", "accept-encoding", "expect"}
DROPPED_RESPONSE_HEADERS = HOP_BY_HOP | {"content-length", "content-encoding"}
CONTROL_HEADER_PREFIX = "x-centinela-"
TEXT_TYPES = ("text/", "json", "xml", "javascript", "html", "x-www-form-urlencoded", "csv", "yaml")
MIN_KNOWN_SECRET = 8          # a shorter credential is redacted where it was sent, not searched for elsewhere


class CaptureRefused(ValueError):
    """The exchange cannot be written without a credential in it (a binary body that holds one)."""


@dataclass
class Exchange:
    """What went over the wire, as received: the client's request (as it was forwarded, to `url`) and the
    upstream's answer with its body decoded; `status` None when the upstream never answered in time."""

    method: str
    url: str                                   # the upstream URL the request went to, with its query string
    request_headers: list[tuple[str, str]]
    request_body: bytes
    started_at: datetime
    status: int | None = None
    response_headers: list[tuple[str, str]] = field(default_factory=list)
    response_body: bytes = b""
    after_ms: int | None = None                # for a timeout: how long the upstream was waited for

    def response_header(self, name: str) -> str | None:
        name = name.lower()
        return next((v for k, v in self.response_headers if k.lower() == name), None)


def captured_at(ex: Exchange) -> str:
    """When the answer was made, as ISO 8601 UTC: the response's `Date` header, else (no answer, or no date
    that parses) the moment the request was sent."""
    text = ex.response_header("date") if ex.status is not None else None
    when = None
    if text:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            when = None
    if when is None:
        when = ex.started_at
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def redact_query(query: str) -> str:
    """The query string with the value of every credential parameter written REDACTED, the rest as sent."""
    if not query:
        return query
    out = []
    for part in query.split("&"):
        name, sep, _ = part.partition("=")
        if sep and unquote_plus(name).strip().lower() in CREDENTIAL_PARAMS:
            part = f"{name}={REDACTED}"
        out.append(part)
    return "&".join(out)


def redact_url(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(query=redact_query(parts.query), fragment=""))


def known_secrets(ex: Exchange) -> list[str]:
    """Every credential value the client sent (header, query parameter, body field, cookie value), in the
    spellings a file could hold it (as sent, percent-encoded), longest first."""
    found: set[str] = set()
    for name, value in ex.request_headers:
        low = name.strip().lower()
        if low not in CREDENTIAL_HEADERS:
            continue
        found.add(value.strip())
        if low in ("cookie", "cookie2"):
            found.update(part.partition("=")[2].strip() for part in value.split(";"))
            continue
        scheme, _, token = value.strip().partition(" ")
        if token:
            found.add(token.strip())
            if scheme.lower() == "basic":
                try:
                    user_pass = base64.b64decode(token.strip(), validate=True).decode("utf-8")
                except (ValueError, UnicodeDecodeError):
                    user_pass = ""
                found.update((user_pass, user_pass.partition(":")[2]))
    query = urlsplit(ex.url).query
    ctype = next((v.lower() for k, v in ex.request_headers if k.lower() == "content-type"), "")
    forms = [query] + ([ex.request_body.decode("utf-8", "replace")] if "x-www-form-urlencoded" in ctype else [])
    for text in forms:
        found.update(v for k, v in parse_qsl(text, keep_blank_values=True) if k.strip().lower() in CREDENTIAL_PARAMS)
    try:
        body = jsonsafe.loads(ex.request_body) if ex.request_body.lstrip()[:1] in (b"{", b"[") else None
    except ValueError:
        body = None
    stack = [body]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for k, v in item.items():
                if isinstance(k, str) and k.strip().lower() in CREDENTIAL_FIELDS and isinstance(v, (str, int)) \
                        and not isinstance(v, bool):
                    found.add(str(v))
                elif isinstance(v, (dict, list)):
                    stack.append(v)
        elif isinstance(item, list):
            stack.extend(item)
    spelled = {f for v in found if len(v) >= MIN_KNOWN_SECRET for f in (v, quote(v, safe=""), quote_plus(v))}
    return sorted(spelled, key=lambda v: (-len(v), v))


def _without(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def _scrub_known(value, secrets: list[str]):
    """Every string of a JSON-like value (keys too) with the known credentials written REDACTED."""
    if not secrets:
        return value
    root = [value]
    stack = [(root, 0)]
    while stack:
        container, key = stack.pop()
        item = container[key]
        if isinstance(item, str):
            container[key] = _without(item, secrets)
        elif isinstance(item, dict):
            renamed = {_without(k, secrets) if isinstance(k, str) else k: v for k, v in item.items()}
            item.clear()
            item.update(renamed)
            stack.extend((item, k) for k in item)
        elif isinstance(item, list):
            stack.extend((item, i) for i in range(len(item)))
    return root[0]


def _redact_fields(value):
    """A JSON value with every credential field's scalar value written REDACTED (iteratively: it is bounded
    by jsonsafe's depth already, but a walk costs nothing of the stack)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for k, v in item.items():
                if isinstance(k, str) and k.strip().lower() in CREDENTIAL_FIELDS and not isinstance(v, (dict, list)) \
                        and v is not None:
                    item[k] = REDACTED
                elif isinstance(v, (dict, list)):
                    stack.append(v)
        elif isinstance(item, list):
            stack.extend(v for v in item if isinstance(v, (dict, list)))
    return value


def _headers(pairs: list[tuple[str, str]], dropped: frozenset[str], secret: frozenset[str]) -> dict:
    """Headers as the envelope writes them: lower-case names in first-seen order, a repeated one as a list."""
    out: dict[str, object] = {}
    for name, value in pairs:
        low = name.strip().lower()
        if low in dropped or low.startswith(CONTROL_HEADER_PREFIX):
            continue
        if low in secret:
            value = REDACTED
        if low in out:
            prev = out[low]
            out[low] = (prev if isinstance(prev, list) else [prev]) + [value]
        else:
            out[low] = value
    return out


def _is_text(ctype: str) -> bool:
    return any(t in ctype for t in TEXT_TYPES)


def _body(data: bytes, ctype: str, as_value: bool, request: bool) -> dict:
    """The envelope fields of a body: `{"body": …}` or `{"body": base64, "body_encoding": "base64"}`."""
    if not data:
        return {} if request else {"body": ""}
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None:
        stripped = text.lstrip()
        if as_value and ("json" in ctype or stripped.startswith(("{", "["))):
            try:
                value = jsonsafe.loads(text)
            except ValueError:
                value = None
            if isinstance(value, (dict, list)):
                return {"body": _redact_fields(value) if request else value}
        if _is_text(ctype) or (not ctype and "\x00" not in text):
            if request and "x-www-form-urlencoded" in ctype:
                text = redact_query(text)
            return {"body": text}
    return {"body": base64.b64encode(data).decode("ascii"), "body_encoding": "base64"}


def envelope(ex: Exchange, embed_json: bool = True) -> dict:
    """The fixture envelope of the exchange (credentials already REDACTED). With `embed_json` False a JSON
    response body is stored as a string (so a body over 512 KB can be cut: `scanner.redact` truncates a string
    body, never an embedded value)."""
    req_ctype = next((v.lower() for k, v in ex.request_headers if k.lower() == "content-type"), "")
    request = {"method": ex.method.upper(), "url": redact_url(ex.url),
               "headers": _headers(ex.request_headers, DROPPED_REQUEST_HEADERS, CREDENTIAL_HEADERS)}
    request.update(_body(ex.request_body, req_ctype, True, True))
    if ex.status is None:
        return _scrub_known({"request": request, "response": None,
                             "error": {"type": "timeout", "after_ms": ex.after_ms},
                             "recorded_at": ex.started_at.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")},
                            known_secrets(ex))
    ctype = (ex.response_header("content-type") or "").lower()
    response = {"status": ex.status,
                "headers": _headers(ex.response_headers, DROPPED_RESPONSE_HEADERS, SECRET_RESPONSE_HEADERS)}
    response.update(_body(ex.response_body, ctype, embed_json, False))
    secrets = known_secrets(ex)
    for raw, part in ((ex.request_body, request), (ex.response_body, response)):
        if part.get("body_encoding") == "base64" and any(s.encode("utf-8") in raw for s in secrets):
            raise CaptureRefused("a binary body holds a credential the client sent: not written")
    return _scrub_known({"request": request, "response": response}, secrets)


def envelope_bytes(value: dict) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
