"""The one reader of recorded HTTP exchanges, for the loaders, the provider adapters, `serve` and the manifest.

    parse_text(text, path)  -> Parsed(source, recording)   the loader's entry: the decoded text it indexes
    parse_bytes(data, path) -> Parsed                       strict UTF-8 (a BOM allowed)
    read_value(value)       -> Recording | None             a value already parsed as JSON

A file is read as YAML when its name ends in `.yaml` or `.yml`, else as JSON. `Parsed.recording` is None for a
file that is valid JSON or YAML but no recording (a bare provider body, a golden set). A file whose syntax is
broken, or that looks like a recording but is not one, raises `RecordingError` with `code`:
`encoding` (not UTF-8), `syntax` (invalid JSON or YAML, or YAML refused: aliases, depth, size) or `format`.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from scanner.exchanges.bodies import BodyError
from scanner.exchanges.formats import detect, is_envelope, is_har, read_value
from scanner.exchanges.model import Body, Exchange, Header, LengthField, Recording, RecordingError, Request, Response
from scanner.exchanges.source import Source, parse_json

__all__ = ["Body", "BodyError", "Exchange", "Header", "LengthField", "Parsed", "Recording", "RecordingError",
           "Request", "Response", "Source", "detect", "is_envelope", "is_har", "is_yaml_name", "parse_bytes",
           "parse_text", "read_value"]

YAML_EXT = (".yaml", ".yml")


def is_yaml_name(path: str) -> bool:
    return str(path).lower().endswith(YAML_EXT)


@dataclass
class Parsed:
    source: Source
    recording: Recording | None


def _error(code: str, message: str) -> RecordingError:
    err = RecordingError(message)
    err.code = code
    return err


def parse_text(text: str, path: str) -> Parsed:
    if is_yaml_name(path):
        from scanner.exchanges.yamltext import plain_value, read_nodes

        try:
            root, value = read_nodes(text)
        except yaml.constructor.ConstructorError as exc:
            if "python/object" in str(exc):
                raise _error("format", "a VCR.py cassette in the format before 1.0 (Python objects): convert it "
                                       "with `python -m vcr.migration PATH` first") from None
            raise _error("syntax", f"invalid YAML: {_first_line(exc)}") from None
        except yaml.YAMLError as exc:
            raise _error("syntax", f"invalid YAML: {_first_line(exc)}") from None
        source = Source("yaml", text, value, root=root)
        try:
            recording = read_value(_jsonish(value, plain_value), "yaml")
        except RecordingError as exc:
            raise _error("format", str(exc)) from None
        return Parsed(source, recording)
    try:
        value = parse_json(text)
    except ValueError as exc:
        raise _error("syntax", f"invalid JSON: {exc}") from None
    return Parsed(Source("json", text, value), read_value(value, "json"))


def parse_bytes(data: bytes, path: str) -> Parsed:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _error("encoding", "not UTF-8 text") from None
    return parse_text(text, path)


def _first_line(exc: Exception) -> str:
    """The parser's message in one line, any character a terminal could act on escaped (it may quote the file)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = "; ".join(lines[:3]) if lines else type(exc).__name__
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)[:300]


def _jsonish(value, leaf):
    """Dates in a YAML value as ISO strings (the readers compare strings), iteratively."""
    if not isinstance(value, (dict, list)):
        return leaf(value)
    root = [value]
    stack = [(root, 0)]
    while stack:
        container, key = stack.pop()
        item = container[key]
        if isinstance(item, dict):
            for k in list(item):
                stack.append((item, k))
        elif isinstance(item, list):
            stack.extend((item, i) for i in range(len(item)))
        else:
            container[key] = leaf(item)
    return root[0]
