"""JSON, JSON Lines and recorded HTTP exchanges → text units with JSON pointers and exact offsets.

A recorded HTTP exchange is a JSON envelope (our fixture format, see docs in README "Fixture formats"):
`{"request": {"method", "url", "headers", "body"}, "response": {"status", "headers", "body",
"body_encoding"?}}`, headers as an object or as a list of `{"name", "value"}` / `[name, value]` pairs.
A HAR file (`log.entries[]`) is read the same way. Header names and values become units of their own; a
body is decoded by its content type — embedded JSON is walked in place, a JSON or HTML string body is
parsed with positions mapped through the string's escapes into the envelope, a base64 PDF goes to the
PDF loader (its offsets are then page offsets, as for any PDF).
"""

from __future__ import annotations

import base64
import binascii
import json
import re

from scanner.loaders.json_positions import JsonString, JsonSyntaxError, iter_strings
from scanner.offsetmap import OffsetMap
from scanner.sourcetext import decode_bytes
from scanner.units import Channel, Document, LoadError, TextUnit

_CHARSET = re.compile(r"charset\s*=\s*\"?([^\s;\"]+)", re.I)
# A string value that holds markup (a provider's raw_content, an HTML snippet) is read as HTML in place, so its
# comments, hidden elements and attributes are channels of their own, not plain text.
_HTML_IN_STRING = re.compile(
    r"<!--|<(?:html|head|body|div|p|span|section|article|main|header|footer|nav|script|style|meta|img|a|table|"
    r"h[1-6]|ul|ol|li|noscript|template|svg|iframe|br)\b[^<>]*>", re.I)


def _value_units(doc: Document, s: JsonString, prefix: str = "", base_map=None, container: str = "") -> None:
    """Units of one JSON string value: HTML read in place when the value holds markup, else one unit."""
    if not s.is_key and _HTML_IN_STRING.search(s.text):
        from scanner.loaders.html import build_units

        umap = s.map if base_map is None else s.map.then(base_map)
        build_units(doc, s.text, base_map=umap, container=(container + "#" if container else "") + prefix + s.pointer)
        return
    doc.units.append(_unit(s, Channel.JSON_KEY if s.is_key else Channel.JSON_STRING, prefix, base_map, container))


def _strings(text: str, path: str, start: int = 0, end: int | None = None) -> list[JsonString]:
    """Every non-empty key and string value (an empty string carries nothing to scan)."""
    try:
        return [s for s in iter_strings(text, start, end) if s.text]
    except JsonSyntaxError as exc:
        raise LoadError(path, f"invalid JSON: {exc}") from None


def _parse_value(text: str, path: str):
    try:
        return json.loads(text)
    except RecursionError:
        # Positions were read iteratively; only the structure is too deep for json.loads.
        return None
    except ValueError as exc:
        raise LoadError(path, f"invalid JSON: {exc}") from None


def _unit(s: JsonString, channel: Channel, prefix: str = "", base_map=None, container: str = "") -> TextUnit:
    umap = s.map if base_map is None else s.map.then(base_map)
    start, end = (s.start, s.end) if base_map is None else base_map.span(s.start, s.end)
    return TextUnit(s.text, channel, start, end, umap, locator=prefix + s.pointer,
                    attrs={"key": s.key}, container=container)


def load_json(data: bytes, path: str) -> Document:
    decoded = decode_bytes(data, "utf-8" if not data[:4].count(b"\x00") else None)
    text = decoded.text
    doc = Document(path=path, kind="json", text=text, encoding=decoded.encoding)
    doc.problems.extend(decoded.problems)
    if path.lower().endswith((".jsonl", ".ndjson")):
        _load_lines(doc, text)
        return doc
    strings = _strings(text, path)
    value = _parse_value(text, path)
    envelope = _envelope(value)
    if envelope is not None:
        doc.kind = "http"
        _load_exchanges(doc, strings, envelope)
    else:
        for s in strings:
            _value_units(doc, s)
    doc.meta["value"] = value
    return doc


def _load_lines(doc: Document, text: str) -> None:
    pos = 0
    for lineno, line in enumerate(text.splitlines(keepends=True), 1):
        start, end = pos, pos + len(line.rstrip("\r\n"))
        pos += len(line)
        if not text[start:end].strip():
            continue
        try:
            strings = [s for s in iter_strings(text, start, end) if s.text]
        except JsonSyntaxError as exc:
            doc.problems.append(f"line {lineno}: invalid JSON: {exc}")
            continue
        prefix = f"line {lineno}:"
        for s in strings:
            _value_units(doc, s, prefix)


def _envelope(value) -> list[tuple[str, dict]] | None:
    """The exchanges of a recorded-HTTP envelope or HAR file as (pointer prefix, exchange), or None."""
    if not isinstance(value, dict):
        return None
    log = value.get("log")
    if isinstance(log, dict) and isinstance(log.get("entries"), list):
        return [(f"/log/entries/{i}", e) for i, e in enumerate(log["entries"]) if isinstance(e, dict)]
    response = value.get("response", ...)
    request = value.get("request")
    if (isinstance(response, dict) and ({"status", "headers", "body"} & response.keys())) or (
        response is None and isinstance(request, dict)
    ):
        return [("", value)]
    return None


def header_map(obj) -> dict[str, str]:
    """Lower-cased header name → value, from an object, a HAR list, or a list of pairs."""
    out: dict[str, str] = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            out[str(k).lower()] = v if isinstance(v, str) else ", ".join(map(str, v)) if isinstance(v, list) else str(v)
    elif isinstance(obj, list):
        for item in obj:
            if isinstance(item, dict) and "name" in item:
                out[str(item["name"]).lower()] = str(item.get("value", ""))
            elif isinstance(item, (list, tuple)) and len(item) == 2:
                out[str(item[0]).lower()] = str(item[1])
    return out


def _load_exchanges(doc: Document, strings: list[JsonString], exchanges: list[tuple[str, dict]]) -> None:
    header_keys: set[str] = set()      # object form: the member's key is the header name
    header_names: set[str] = set()     # HAR and pair forms: a string value is the header name
    header_values: set[str] = set()
    urls: set[str] = set()
    bodies: dict[str, tuple[str, dict]] = {}   # pointer of a string body → (content type, part)
    for prefix, ex in exchanges:
        for side in ("request", "response"):
            part = ex.get(side)
            if not isinstance(part, dict):
                continue
            base = f"{prefix}/{side}"
            hdrs = part.get("headers")
            if isinstance(hdrs, dict):
                for name, value in hdrs.items():
                    p = f"{base}/headers/{_tok(name)}"
                    header_keys.add(p)
                    header_values.add(p)
                    if isinstance(value, list):
                        header_values.update(f"{p}/{i}" for i in range(len(value)))
            elif isinstance(hdrs, list):
                for i, item in enumerate(hdrs):
                    if isinstance(item, dict):
                        header_names.add(f"{base}/headers/{i}/name")
                        header_values.add(f"{base}/headers/{i}/value")
                    elif isinstance(item, list) and len(item) == 2:
                        header_names.add(f"{base}/headers/{i}/0")
                        header_values.add(f"{base}/headers/{i}/1")
            if isinstance(part.get("url"), str):
                urls.add(f"{base}/url")
            ctype = header_map(hdrs).get("content-type", "")
            if isinstance(part.get("body"), str):
                bodies[f"{base}/body"] = (ctype, part)
            content = part.get("content")  # HAR: response.content.text / .encoding / .mimeType
            if isinstance(content, dict) and isinstance(content.get("text"), str):
                har_part = {"body_encoding": content.get("encoding"), "body": content["text"]}
                bodies[f"{base}/content/text"] = (content.get("mimeType") or ctype, har_part)
            post = part.get("postData")
            if isinstance(post, dict) and isinstance(post.get("text"), str):
                bodies[f"{base}/postData/text"] = (post.get("mimeType") or ctype, {"body": post["text"]})
    for s in strings:
        p = s.pointer
        if s.is_key:
            doc.units.append(_unit(s, Channel.HTTP_HEADER_NAME if p in header_keys else Channel.JSON_KEY))
        elif p in header_names:  # HAR "name" / pair [0]
            doc.units.append(_unit(s, Channel.HTTP_HEADER_NAME))
        elif p in header_values:
            doc.units.append(_unit(s, Channel.HTTP_HEADER_VALUE))
        elif p in urls:
            doc.units.append(_unit(s, Channel.HTTP_URL))
        elif p in bodies:
            ctype, part = bodies[p]
            _load_body(doc, s, ctype, part)
        else:
            _value_units(doc, s)


def _tok(name: str) -> str:
    return str(name).replace("~", "~0").replace("/", "~1")


def _load_body(doc: Document, s: JsonString, ctype: str, part: dict) -> None:
    """A string body, loaded by its content type, with positions mapped into the envelope."""
    from scanner.loaders.html import sniff_charset
    from scanner.loaders.pdf import load_pdf

    mime = ctype.split(";", 1)[0].strip().lower()
    container = s.pointer
    encoding = str(part.get("body_encoding") or part.get("encoding") or "").lower()
    if encoding == "base64":
        try:
            raw = base64.b64decode(s.text, validate=False)
        except (binascii.Error, ValueError) as exc:
            doc.problems.append(f"{container}: invalid base64 body: {exc}")
            doc.units.append(_unit(s, Channel.JSON_STRING))
            return
        if raw.startswith(b"%PDF") or mime == "application/pdf":
            try:
                pdf = load_pdf(raw, f"{doc.path}#{container}")
            except LoadError as exc:
                doc.problems.append(f"{container}: {exc.message}")
                doc.meta.setdefault("body_errors", []).append({"container": container, "code": exc.code, "message": exc.message})
                return
            for u in pdf.units:
                u.container = container
            for page in pdf.pages:
                page.container = container
            doc.units.extend(pdf.units)
            doc.pages.extend(pdf.pages)
            doc.problems.extend(f"{container}: {p}" for p in pdf.problems)
            return
        m = _CHARSET.search(ctype)
        body = decode_bytes(raw, m.group(1) if m else (sniff_charset(raw) if "html" in mime else None))
        doc.problems.extend(f"{container}: {p}" for p in body.problems)
        # Decoded base64 has no character-exact place in the envelope: every unit points at the whole body.
        block = OffsetMap([(0, s.start, len(body.text), s.end - s.start, False)], len(body.text), s.start, s.end)
        _load_text_body(doc, body.text, mime, block, container)
        return
    _load_text_body(doc, s.text, mime, s.map, container, fallback=s)


def _load_text_body(doc: Document, text: str, mime: str, base_map, container: str, fallback: JsonString | None = None) -> None:
    from scanner.loaders.html import build_units

    looks_html = "html" in mime or (not mime and text.lstrip()[:15].lower().startswith(("<!doctype", "<html")))
    if looks_html:
        build_units(doc, text, base_map=base_map, container=container)
        return
    if "json" in mime:
        try:
            strings = [js for js in iter_strings(text) if js.text]
        except JsonSyntaxError as exc:
            doc.problems.append(f"{container}: body is not valid JSON ({exc}); scanned as text")
        else:
            for js in strings:
                _value_units(doc, js, prefix=container + "#", base_map=base_map, container=container)
            return
    if fallback is not None and base_map is fallback.map:
        doc.units.append(_unit(fallback, Channel.JSON_STRING))
        return
    start, end = base_map.span(0, len(text))
    doc.units.append(TextUnit(text, Channel.PLAIN_TEXT, start, end, base_map, locator=container, container=container))
