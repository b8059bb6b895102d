"""Recorded HTTP exchanges (any format `scanner.exchanges` reads) → text units with exact offsets.

Header names and values, URLs (nock's `scope` and `path` too) and bodies are units of their own; every other
string is a JSON string unit, as in any structured file. A body is decoded by its content type: embedded
JSON is walked in place, a JSON or HTML string body is parsed with positions mapped through the string's
escapes (JSON) or quoting and folding (YAML) into the file. A base64, hex or chunked body — compressed or
not — has no character-exact place in the file: its units point at the whole stored body, and the body is
listed in `Document.regions` (`EncodedBody`) so the redactor can decode it, redact it and encode it back.
A PDF body goes to the PDF loader (its offsets are then page offsets, as for any PDF).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scanner.exchanges import Body, BodyError, Recording, Source
from scanner.exchanges.bodies import compression_of, decompress
from scanner.loaders.html import build_units, sniff_charset
from scanner.loaders.json_positions import JsonString, JsonSyntaxError, iter_strings
from scanner.loaders.strings import string_unit, value_units
from scanner.offsetmap import OffsetMap
from scanner.sourcetext import decode_bytes
from scanner.units import Channel, Document, LoadError, TextUnit

_CHARSET = re.compile(r"charset\s*=\s*\"?([^\s;\"]+)", re.I)


@dataclass
class EncodedBody:
    """A body whose stored text is not its text (base64, hex, chunks, maybe compressed): what the redactor
    needs to rewrite it in the file's own format."""
    container: str          # the body's pointer
    start: int              # the span of the file text a rewrite replaces
    end: int
    text: str               # the decoded body text the units were read from
    mime: str
    charset: str            # the codec `text` was decoded with
    lossless: bool          # decoding replaced no byte (else a rewrite would lose them)
    body: Body              # how it is stored (transfer, compression, YAML binary)
    syntax: str             # "json" or "yaml"
    style: str = ""         # YAML: the scalar's style ("", "'", '"', "|", ">")
    indent: int = 0         # YAML block scalar: the indentation of its lines
    quotes_included: bool = False   # the span includes the quotes of JSON strings (a nock chunk list)
    compression: str | None = None


def load_recording(doc: Document, source: Source, strings: list[JsonString], rec: Recording) -> None:
    """Units of every string of a recording, by what each one is (see the module docstring)."""
    header_keys: set[str] = set()          # object form: the member's key is the header name
    header_names: set[str] = set()         # list and pair forms: a string value is the header name
    header_values: dict[str, str] = {}     # pointer → the header's name
    urls: set[str] = set()
    bodies: dict[str, Body] = {}           # pointer of a string body (or its first chunk) → body
    chunk_rest: set[str] = set()           # the other chunks of a chunk-list body
    for ex in rec.exchanges:
        for msg in (ex.request, ex.response):
            if msg is None:
                continue
            for h in msg.headers:
                if h.name_at:
                    (header_keys if h.name_is_key else header_names).add(h.name_at)
                if h.value_at:
                    header_values[h.value_at] = h.name
            url_at = getattr(msg, "url_at", None)
            if url_at:
                urls.add(url_at)
            urls.update(getattr(msg, "url_parts_at", ()))
            b = msg.body
            if b.at:
                bodies[b.at] = b
            elif b.chunks_at:
                bodies[b.chunks_at[0]] = b
                chunk_rest.update(b.chunks_at[1:])
    for s in strings:
        p = s.pointer
        if s.is_key:
            doc.units.append(string_unit(s, Channel.HTTP_HEADER_NAME if p in header_keys else Channel.JSON_KEY))
        elif p in header_names:
            doc.units.append(string_unit(s, Channel.HTTP_HEADER_NAME))
        elif p in header_values:
            doc.units.append(string_unit(s, Channel.HTTP_HEADER_VALUE, attrs={"header": header_values[p]}))
        elif p in urls:
            doc.units.append(string_unit(s, Channel.HTTP_URL))
        elif p in chunk_rest:
            continue
        elif p in bodies:
            _load_body(doc, source, s, bodies[p])
        else:
            value_units(doc, s)


def _load_body(doc: Document, source: Source, s: JsonString, b: Body) -> None:
    """A string body, loaded by its content type, with positions mapped into the file."""
    mime = b.mime.split(";", 1)[0].strip().lower()
    container = s.pointer
    if not b.encoded:
        _load_text_body(doc, s.text, mime, s.map, container, fallback=s)
        return
    start, end, extra = _region(source, s, b)
    try:
        raw = b.stored_bytes() or b""
    except BodyError as exc:
        doc.problems.append(f"{container}: invalid {b.transfer} body: {exc}")
        doc.units.append(string_unit(s, Channel.JSON_STRING))
        return
    method = compression_of(raw, b.content_encoding)
    if method is not None:
        try:
            raw = decompress(raw, method)
        except BodyError as exc:
            _body_error(doc, container, exc.code, f"{method}-compressed body not decoded: {exc}")
            return
    if raw.startswith(b"%PDF") or mime == "application/pdf":
        _load_pdf_body(doc, raw, container)
        return
    m = _CHARSET.search(b.mime)
    body = decode_bytes(raw, m.group(1) if m else (sniff_charset(raw) if "html" in mime else None))
    doc.problems.extend(f"{container}: {p}" for p in body.problems)
    # Decoded bytes have no character-exact place in the file: every unit points at the whole stored body.
    us, ue = s.start, s.end
    block = OffsetMap([(0, us, len(body.text), ue - us, False)], len(body.text), us, ue)
    doc.regions.append(EncodedBody(container, start, end, body.text, mime, body.encoding, not body.problems, b,
                                   source.syntax, compression=method, **extra))
    _load_text_body(doc, body.text, mime, block, container)


def _region(source: Source, s: JsonString, b: Body) -> tuple[int, int, dict]:
    """The file span a rewrite of this body replaces, and how to write it there."""
    if source.syntax == "yaml":
        sc = source.scalars.get(s.pointer)
        if sc is not None:
            if sc.style in ("|", ">") or b.yaml_binary:
                return sc.start, sc.end, {"style": sc.style, "indent": _indent_of(source.text, sc.content_start)}
            return sc.content_start, sc.content_end, {"style": sc.style}
    if b.chunks_at:
        last = source.string_at(b.chunks_at[-1])
        end = (last.end if last is not None else s.end) + 1
        return s.start - 1, end, {"quotes_included": True}
    return s.start, s.end, {}


def _indent_of(text: str, content_start: int) -> int:
    i = content_start
    while i < len(text) and text[i] == " ":
        i += 1
    return i - content_start


def _body_error(doc: Document, container: str, code: str, message: str) -> None:
    doc.problems.append(f"{container}: {message}")
    doc.meta.setdefault("body_errors", []).append({"container": container, "code": code, "message": message})


def _load_pdf_body(doc: Document, raw: bytes, container: str) -> None:
    from scanner.loaders.pdf import load_pdf   # pdfminer: loaded only when a recording holds a PDF

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


def _load_text_body(doc: Document, text: str, mime: str, base_map, container: str, fallback: JsonString | None = None) -> None:
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
                value_units(doc, js, prefix=container + "#", base_map=base_map, container=container)
            return
    if fallback is not None and base_map is fallback.map:
        doc.units.append(string_unit(fallback, Channel.JSON_STRING))
        return
    start, end = base_map.span(0, len(text))
    doc.units.append(TextUnit(text, Channel.PLAIN_TEXT, start, end, base_map, locator=container, container=container))


def body_document(region: EncodedBody, text: str, path: str) -> Document:
    """An encoded body as a document of its own (offsets into `text`, the decoded body): what the redactor
    plans on, then checks again after redacting."""
    doc = Document(path=f"{path}#{region.container}", kind="http", text=text, encoding=region.charset)
    _load_text_body(doc, text, region.mime, OffsetMap.identity(0, len(text)), region.container)
    return doc
