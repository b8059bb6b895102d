"""Recognise a parsed file's recording format and read its exchanges, with the pointer of every part.

Formats (README, "Fixture formats"):

- **envelope**: our fixture format, `{"request", "response", "error"?, "recorded_at"?}`; and **envelopes**, a
  JSON list of them (a Firecrawl batch and its status calls).
- **har**: HAR 1.2 (`log.entries[]`) as browsers and Polly.js write it: headers as `{name, value}` (Polly 1.x
  arrays as values too), `postData.text`, `content.text` plain, `encoding: "base64"`, Polly's JSON-stringified
  chunk lists of a content-encoded body (hex before 6.0, base64 since), `_isBinary` hex.
- **vcr**: VCR.py / pytest-recording cassettes (`interactions:`, `version: 1`; request `uri`, header lists,
  `body` a string or `!!binary`, response `body: {string: …}` and `status: {code, message}`; the older httpx
  shape `content` / `status_code`), and Ruby VCR's `http_interactions` with `recorded_at` per interaction. VCR.py's
  pre-1.0 format (a top-level list) is refused with the migration hint.
- **nock**: the recorder's objects (`nock.recorder.rec({output_objects: true})`, `nock.back` fixtures): `scope`,
  `method`, `path`, `body`, `status`, `response` (JSON, text, hex with `responseIsBinary`, or a list of hex
  chunks of a content-encoded body), `rawHeaders` (a flat list, or an object since v14), `headers` (older
  releases), `reqheaders`.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from scanner.exchanges.bodies import BASE64, BASE64_CHUNKS, HEX, HEX_CHUNKS, TEXT, chunk_list, is_hex
from scanner.exchanges.model import (
    Body, Exchange, Header, LengthField, Message, Recording, RecordingError, Request, Response,
)

ENVELOPE_RESPONSE_KEYS = frozenset({"status", "headers", "body"})


def tok(name: Any) -> str:
    return str(name).replace("~", "~0").replace("/", "~1")


# --- recognition --------------------------------------------------------------------------------------------

def is_envelope(value: Any) -> bool:
    """An object with a `response` that is null (nothing came back) or an object, and a `request` object — or a
    response object that says what it is (status, headers or body) without a request."""
    if not isinstance(value, dict) or "response" not in value:
        return False
    response, request = value["response"], value.get("request")
    if response is None:
        return isinstance(request, dict)
    return isinstance(response, dict) and (isinstance(request, dict) or bool(ENVELOPE_RESPONSE_KEYS & response.keys()))


def is_har(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("log"), dict) and isinstance(value["log"].get("entries"), list)


def _vcr_list(value: Any) -> tuple[str, list] | None:
    if isinstance(value, dict):
        for key in ("interactions", "http_interactions"):
            items = value.get(key)
            if isinstance(items, list):
                return key, items
    return None


def is_nock(value: Any) -> bool:
    return (isinstance(value, list) and bool(value)
            and all(isinstance(v, dict) and isinstance(v.get("scope"), str) and "method" in v for v in value))


def detect(value: Any, syntax: str = "json") -> str | None:
    """The recording format of a parsed file, or None when it is not a recording."""
    if syntax == "yaml":
        if _vcr_list(value) is not None:
            return "vcr"
        if isinstance(value, list) and value and isinstance(value[0], dict) and "request" in value[0]:
            raise RecordingError("a VCR.py cassette in the format before 1.0 (a top-level list): convert it with "
                                 "`python -m vcr.migration PATH` first")
        return None
    if is_har(value):
        return "har"
    if _vcr_list(value) is not None and all(isinstance(i, dict) and "request" in i for i in _vcr_list(value)[1]):
        return "vcr"
    if is_envelope(value):
        return "envelope"
    if isinstance(value, list) and value and all(is_envelope(v) for v in value):
        return "envelopes"
    if is_nock(value):
        return "nock"
    return None


def read_value(value: Any, syntax: str = "json") -> Recording | None:
    """The exchanges of a parsed file, or None when it is not a recording."""
    fmt = detect(value, syntax)
    if fmt is None:
        return None
    rec = Recording(format=fmt, value=value)
    if fmt == "envelope":
        rec.exchanges.append(read_envelope(value, "", 0))
    elif fmt == "envelopes":
        rec.exchanges.extend(read_envelope(v, f"/{i}", i) for i, v in enumerate(value))
    elif fmt == "har":
        rec.exchanges.extend(read_har_entry(e, f"/log/entries/{i}", i)
                             for i, e in enumerate(value["log"]["entries"]) if isinstance(e, dict))
    elif fmt == "vcr":
        key, items = _vcr_list(value)
        version = value.get("version")
        if key == "interactions" and version is not None and version != 1:
            rec.problems.append(f"cassette version {version!r}: read as version 1")
        rec.exchanges.extend(read_vcr_interaction(item, f"/{key}/{i}", i)
                             for i, item in enumerate(items) if isinstance(item, dict))
    elif fmt == "nock":
        rec.exchanges.extend(read_nock_call(item, f"/{i}", i) for i, item in enumerate(value))
    return rec


# --- headers ------------------------------------------------------------------------------------------------

def _headers(msg: Message, obj: Any, at: str, join_repeats: bool = False) -> None:
    """Fill `msg.headers` and `msg.header_map` from an object (`{name: value or [values]}`), a list of
    `{name, value}` or a list of `[name, value]` pairs. The map is lower-cased name → value; list values of one
    name are joined with ", "; a name repeated in a list keeps its last value (joined instead with
    `join_repeats`, for formats where a repeat is the same header sent twice)."""
    out: dict[str, str] = {}

    def put(name: str, value: str) -> None:
        low = name.lower()
        out[low] = f"{out[low]}, {value}" if join_repeats and low in out else value

    if obj is None:
        return
    if isinstance(obj, dict):
        for k, v in obj.items():
            p = f"{at}/{tok(k)}"
            if isinstance(v, list):
                for i, x in enumerate(v):
                    msg.headers.append(Header(str(k), str(x), p, f"{p}/{i}", True))
                put(str(k), ", ".join(map(str, v)))
            else:
                msg.headers.append(Header(str(k), v if isinstance(v, str) else str(v), p, p, True))
                put(str(k), v if isinstance(v, str) else str(v))
    elif isinstance(obj, list):
        for i, item in enumerate(obj):
            p = f"{at}/{i}"
            if isinstance(item, dict) and "name" in item:
                name, value = str(item["name"]), item.get("value", "")
                if isinstance(value, list):          # Polly.js 1.x: the values of one header as a list
                    for j, x in enumerate(value):
                        msg.headers.append(Header(name, str(x), f"{p}/name", f"{p}/value/{j}"))
                    put(name, ", ".join(map(str, value)))
                else:
                    msg.headers.append(Header(name, str(value), f"{p}/name", f"{p}/value"))
                    put(name, str(value))
            elif isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[1], list):
                # VCR.py under Python 2: `!!python/tuple [name, [values]]`
                for j, x in enumerate(item[1]):
                    msg.headers.append(Header(str(item[0]), str(x), f"{p}/0", f"{p}/1/{j}"))
                put(str(item[0]), ", ".join(map(str, item[1])))
            elif isinstance(item, (list, tuple)) and len(item) == 2:
                msg.headers.append(Header(str(item[0]), str(item[1]), f"{p}/0", f"{p}/1"))
                put(str(item[0]), str(item[1]))
            else:
                msg.headers_problem = msg.headers_problem or "an entry is neither {name, value} nor a [name, value] pair"
    else:
        msg.headers_problem = "must be an object or a list"
    msg.header_map = out


def _flat_headers(msg: Message, items: list, at: str) -> None:
    """nock's `rawHeaders` as Node gives them: a flat list `[name, value, name, value, …]`."""
    out: dict[str, str] = {}
    for k in range(0, len(items) - 1, 2):
        name, value = str(items[k]), str(items[k + 1])
        msg.headers.append(Header(name, value, f"{at}/{k}", f"{at}/{k + 1}"))
        low = name.lower()
        out[low] = f"{out[low]}, {value}" if low in out else value
    if len(items) % 2:
        msg.headers_problem = "a flat header list of odd length"
    msg.header_map = out


def _content_length(msg: Message) -> list[LengthField]:
    out = []
    for h in msg.headers:
        if h.name.lower() == "content-length" and h.value_at and h.value.strip().isdigit():
            out.append(LengthField(h.value_at, True, int(h.value.strip())))
    return out


def _number(obj: dict, key: str, at: str) -> list[LengthField]:
    v = obj.get(key)
    if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
        return [LengthField(f"{at}/{key}", False, v)]
    return []


def _mime(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(map(str, value))
    return value if isinstance(value, str) else ""


# --- our envelope -------------------------------------------------------------------------------------------

def _text(value: Any) -> str | None:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    return value if isinstance(value, str) and value.strip() else None


def _envelope_body(part: dict, at: str, msg: Message, which: str, problems: list[str]) -> Body:
    body = part.get("body")
    declared = part.get("body_encoding")
    label = str(declared or part.get("encoding") or "").lower()
    if declared is not None and str(declared).lower() != "base64":
        problems.append(f"{which}.body_encoding {declared!r} is not supported (only base64)")
    b = Body(value=body, mime=msg.header_map.get("content-type", ""),
             content_encoding=msg.header_map.get("content-encoding", ""), lengths=_content_length(msg))
    if isinstance(body, str):
        b.at = f"{at}/body"
        b.transfer = BASE64 if label == "base64" else TEXT
    elif isinstance(body, (dict, list, int, float, bool)):
        b.json_at = f"{at}/body"
        if label == "base64":
            problems.append(f"{which}.body must be a string when body_encoding is base64")
    return b


def read_envelope(value: dict, at: str, index: int) -> Exchange:
    ex = Exchange("envelope", index, at, recorded_at=_text(value.get("recorded_at")) or _text(value.get("captured_at")))
    req = value.get("request")
    if isinstance(req, dict):
        r = Request(method=req.get("method"), url=req.get("url"), url_at=f"{at}/request/url")
        _headers(r, req.get("headers"), f"{at}/request/headers")
        r.body = _envelope_body(req, f"{at}/request", r, "request", ex.problems)
        ex.request = r
    response = value.get("response")
    if isinstance(response, dict):
        s = Response(status=response.get("status"))
        _headers(s, response.get("headers"), f"{at}/response/headers")
        s.body = _envelope_body(response, f"{at}/response", s, "response", ex.problems)
        ex.response = s
    elif response is None:
        ex.error = value.get("error")
    else:
        ex.problems.append("response must be an object or null")
    return ex


# --- HAR ----------------------------------------------------------------------------------------------------

def read_har_entry(entry: dict, at: str, index: int) -> Exchange:
    ex = Exchange("har", index, at, recorded_at=_text(entry.get("startedDateTime")))
    req = entry.get("request") if isinstance(entry.get("request"), dict) else {}
    r = Request(method=req.get("method"), url=req.get("url"), url_at=f"{at}/request/url")
    _headers(r, req.get("headers"), f"{at}/request/headers")
    post = req.get("postData") if isinstance(req.get("postData"), dict) else {}
    r.body = Body(value=post.get("text") if isinstance(post.get("text"), str) else None,
                  mime=_mime(post.get("mimeType")) or r.header_map.get("content-type", ""),
                  content_encoding=r.header_map.get("content-encoding", ""),
                  lengths=_content_length(r) + _number(req, "bodySize", f"{at}/request"))
    if isinstance(post.get("text"), str):
        r.body.at = f"{at}/request/postData/text"
    ex.request = r
    res = entry.get("response")
    # HAR writes status 0 (and no content) for a request that never got an answer.
    if not isinstance(res, dict) or res.get("status") in (0, None):
        ex.error = {"type": "no_response"}
        return ex
    s = Response(status=res.get("status"))
    _headers(s, res.get("headers"), f"{at}/response/headers")
    content = res.get("content") if isinstance(res.get("content"), dict) else {}
    text = content.get("text", "")
    ce = s.header_map.get("content-encoding", "")
    b = Body(value=text, mime=_mime(content.get("mimeType")) or s.header_map.get("content-type", ""),
             content_encoding=ce,
             lengths=_content_length(s) + _number(content, "size", f"{at}/response/content")
             + _number(res, "bodySize", f"{at}/response"))
    if isinstance(text, str):
        b.at = f"{at}/response/content/text"
        encoding = str(content.get("encoding") or "").lower()
        chunks = chunk_list(text) if ce.strip() else None
        if encoding == "base64":
            b.transfer = BASE64_CHUNKS if chunks is not None else BASE64
        elif content.get("_isBinary") is True:
            b.transfer = HEX
        elif chunks is not None and all(is_hex(c) for c in chunks):
            b.transfer = HEX_CHUNKS                  # Polly.js before 6.0: a content-encoded body's chunks
    s.body = b
    ex.response = s
    return ex


# --- VCR.py / pytest-recording (and Ruby VCR) ---------------------------------------------------------------

def _vcr_body(value: Any, at: str, msg: Message) -> Body:
    b = Body(mime=msg.header_map.get("content-type", ""), content_encoding=msg.header_map.get("content-encoding", ""),
             lengths=_content_length(msg))
    if isinstance(value, dict):                  # {string: …} (VCR.py), {encoding, string | base64_string} (Ruby)
        if "base64_string" in value and isinstance(value["base64_string"], str):
            b.value, b.at, b.transfer = value["base64_string"], f"{at}/base64_string", BASE64
            return b
        value, at = value.get("string"), f"{at}/string"
    b.value = value
    if isinstance(value, (bytes, bytearray)):
        b.at, b.yaml_binary = at, True
    elif isinstance(value, str):
        b.at = at
    return b


def read_vcr_interaction(item: dict, at: str, index: int) -> Exchange:
    ex = Exchange("vcr", index, at, recorded_at=_text(item.get("recorded_at")))
    req = item.get("request") if isinstance(item.get("request"), dict) else {}
    method = req.get("method")
    r = Request(method=method.upper() if isinstance(method, str) else method, url=req.get("uri"),
                url_at=f"{at}/request/uri")
    _headers(r, req.get("headers"), f"{at}/request/headers")
    r.body = _vcr_body(req.get("body"), f"{at}/request/body", r)
    ex.request = r
    res = item.get("response")
    if not isinstance(res, dict):
        ex.problems.append("interaction without a response")
        return ex
    status = res.get("status")
    s = Response(status=status.get("code") if isinstance(status, dict) else res.get("status_code", status))
    _headers(s, res.get("headers"), f"{at}/response/headers")
    if "body" in res:
        s.body = _vcr_body(res.get("body"), f"{at}/response/body", s)
    else:                                        # the httpx shape of older VCR.py: `content`
        s.body = _vcr_body(res.get("content"), f"{at}/response/content", s)
    ex.response = s
    return ex


# --- nock ---------------------------------------------------------------------------------------------------

def read_nock_call(item: dict, at: str, index: int) -> Exchange:
    ex = Exchange("nock", index, at)
    scope, path = item.get("scope"), item.get("path")
    url = scope.rstrip("/") + path if isinstance(scope, str) and isinstance(path, str) else None
    r = Request(method=item.get("method"), url=url, url_parts_at=(f"{at}/scope", f"{at}/path"))
    _headers(r, item.get("reqheaders"), f"{at}/reqheaders", join_repeats=True)
    body = item.get("body")
    r.body = Body(value=body, mime=r.header_map.get("content-type", ""))
    if isinstance(body, str):
        r.body.at = f"{at}/body"
    elif body is not None:
        r.body.json_at = f"{at}/body"
    ex.request = r
    s = Response(status=item.get("status"))
    raw = item.get("rawHeaders")
    if isinstance(raw, list):
        _flat_headers(s, raw, f"{at}/rawHeaders")
    elif raw is not None:
        _headers(s, raw, f"{at}/rawHeaders", join_repeats=True)        # nock 14: an object
    else:
        _headers(s, item.get("headers"), f"{at}/headers", join_repeats=True)
    response = item.get("response")
    ce = s.header_map.get("content-encoding", "")
    b = Body(value=response, mime=s.header_map.get("content-type", ""), content_encoding=ce,
             lengths=_content_length(s))
    if isinstance(response, str):
        b.at = f"{at}/response"
        if item.get("responseIsBinary") is True:
            b.transfer = HEX
    elif (isinstance(response, list) and response and ce.strip()
          and all(isinstance(c, str) and is_hex(c) for c in response)):
        b.transfer = HEX_CHUNKS
        b.chunks_at = tuple(f"{at}/response/{i}" for i in range(len(response)))
    elif response is not None:
        b.json_at = f"{at}/response"
    s.body = b
    ex.response = s
    return ex
