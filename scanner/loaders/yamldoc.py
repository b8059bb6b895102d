"""YAML files: a VCR.py / pytest-recording (or Ruby VCR) cassette is a recording, read with exact offsets
through YAML's quoting, folding and block scalars (`scanner.exchanges.yamltext`); any other YAML file is read
as plain text, as before (paragraph units)."""

from __future__ import annotations

import re

from scanner.exchanges import RecordingError, parse_text
from scanner.loaders.recorded import load_recording
from scanner.sourcetext import decode_bytes
from scanner.units import Document, LoadError

# A cassette says so near its top: `interactions:` (VCR.py sorts it before `version`) or `http_interactions:`.
_CASSETTE = re.compile(rb"^(?:http_)?interactions:", re.M)
SNIFF_BYTES = 64 * 1024


def looks_like_cassette(head: bytes) -> bool:
    return _CASSETTE.search(head[:SNIFF_BYTES].lstrip(b"\xef\xbb\xbf")) is not None


def load_yaml(data: bytes, path: str) -> Document:
    if not looks_like_cassette(data):
        from scanner.loaders.text import load_text

        return load_text(data, path)
    decoded = decode_bytes(data, "utf-8")
    try:
        parsed = parse_text(decoded.text, path)
    except RecordingError as exc:
        raise LoadError(path, str(exc)) from None
    if parsed.recording is None:
        from scanner.loaders.text import load_text

        return load_text(data, path)
    doc = Document(path=path, kind="http", text=decoded.text, encoding=decoded.encoding)
    doc.problems.extend(decoded.problems)
    doc.problems.extend(parsed.recording.problems)
    strings = [s for s in parsed.source.strings() if s.text]
    load_recording(doc, parsed.source, strings, parsed.recording)
    return doc
