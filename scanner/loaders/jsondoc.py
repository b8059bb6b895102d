"""JSON, JSON Lines and recorded HTTP exchanges in JSON → text units with JSON pointers and exact offsets.

Every key and string becomes a unit with its pointer (`json_positions` reads iteratively, so 100,000 levels of
nesting are fine). A file that `scanner.exchanges` recognises as a recording (our envelope, a list of them,
HAR, a VCR.py JSON cassette, nock's recorder output) is read by `scanner.loaders.recorded`: header names and
values, URLs and bodies become units of their own.
"""

from __future__ import annotations

from scanner.exchanges import Source, read_value
from scanner.exchanges.source import parse_json
from scanner.loaders.json_positions import JsonString, JsonSyntaxError, iter_strings
from scanner.loaders.recorded import load_recording
from scanner.loaders.strings import value_units
from scanner.sourcetext import decode_bytes
from scanner.units import Document, LoadError


def _strings(text: str, path: str, start: int = 0, end: int | None = None) -> list[JsonString]:
    """Every non-empty key and string value (an empty string carries nothing to scan)."""
    try:
        return [s for s in iter_strings(text, start, end) if s.text]
    except JsonSyntaxError as exc:
        raise LoadError(path, f"invalid JSON: {exc}") from None


def _parse_value(text: str, path: str):
    try:
        return parse_json(text)     # None for a structure too deep for json.loads; positions were read iteratively
    except ValueError as exc:
        raise LoadError(path, f"invalid JSON: {exc}") from None


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
    recording = read_value(value)
    if recording is not None:
        doc.kind = "http"
        doc.problems.extend(recording.problems)
        load_recording(doc, Source("json", text, value, _strings=strings), strings, recording)
    else:
        for s in strings:
            value_units(doc, s)
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
            value_units(doc, s, prefix)
