"""What a redaction plan changes in a file, in the file's own format.

The plan says which spans of the decoded text hold a datum and what replaces it. Most replacements go in as
they are (inside a JSON string, a quoted YAML scalar, an HTML text). Three cases need the format:

- **A YAML plain scalar** that the replacement would turn into something else (`[nombre redactado]` at its
  start is a flow sequence, `@` cannot start a plain scalar, a `,` inside a flow collection ends it): that
  scalar is written double-quoted with its new value; every other scalar keeps its style.
- **An encoded body** (base64, hex, Polly/nock chunk lists, YAML `!!binary`, gzip/deflate/br inside them): the
  body is decoded, redacted as a document of its own (`BodyPlan`), compressed and encoded back the same way
  (a chunk list becomes one chunk), and written where the stored body was.
- **Length fields**: a `Content-Length` header, HAR `content.size` / `bodySize`, that stated a body's length
  (stored or decoded) before a redaction changed it now state the new one. A length that was already wrong is
  left as it was (never invented).

`same_recording` is the check before writing: the new file reads back as the same recording (format,
exchanges, the place of every header and body, every YAML scalar where it was).
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, field

from scanner.exchanges import RecordingError, parse_text
from scanner.exchanges.bodies import BodyError, compress, encode_transfer

_YAML_INDICATORS = set("-?:,[]{}#&*!|>'\"%@`")
_FLOW_SPECIAL = set(",[]{}")


@dataclass(frozen=True)
class Edit:
    start: int
    end: int
    text: str


@dataclass
class BodyPlan:
    """The redactions of one encoded body, in its decoded text's offsets."""
    region: object                          # scanner.loaders.recorded.EncodedBody
    redactions: list = field(default_factory=list)   # scanner.redact.Redaction, offsets into region.text


def apply_edits(text: str, edits: list[Edit]) -> str:
    pieces, pos = [], 0
    for e in edits:
        pieces.append(text[pos:e.start])
        pieces.append(e.text)
        pos = e.end
    pieces.append(text[pos:])
    return "".join(pieces)


def apply_replacements(text: str, redactions) -> str:
    """The text with each redaction's span replaced (redactions sorted, not overlapping)."""
    pieces, pos = [], 0
    for r in redactions:
        pieces.append(text[pos:r.start])
        pieces.append(r.replacement)
        pos = r.end
    pieces.append(text[pos:])
    return "".join(pieces)


def map_back(start: int, end: int, edits: list[Edit]) -> tuple[int | None, int | None]:
    """Offsets in the edited text back to the original; None when the span touches an edit."""
    shift = 0
    for e in edits:
        new_start = e.start + shift
        new_end = new_start + len(e.text)
        if end <= new_start:
            break
        if start < new_end:
            return None, None
        shift += len(e.text) - (e.end - e.start)
    return start - shift, end - shift


def plan_edits(doc, redactions, bodies=()) -> list[Edit]:
    """The edits of the plain redactions (each its replacement, or a re-quoted YAML scalar) and of the encoded
    bodies, sorted and without overlaps."""
    edits: list[Edit] = []
    if _is_yaml(doc) and redactions:
        edits += _yaml_edits(doc, redactions)
    else:
        edits += [Edit(r.start, r.end, r.replacement) for r in redactions]
    for plan in bodies:
        if plan.redactions:
            edits.append(_body_edit(doc, plan))
    return sorted(edits, key=lambda e: e.start)


def _is_yaml(doc) -> bool:
    return doc.kind == "http" and doc.path.lower().endswith((".yaml", ".yml"))


# --- YAML scalars ----------------------------------------------------------------------------------------------

def _source(text: str, path: str):
    source = parse_text(text, path).source
    source.strings()
    return source


def _yaml_edits(doc, redactions) -> list[Edit]:
    source = _source(doc.text, doc.path)
    scalars = sorted((sc for sc in source.scalars.values() if sc.exact), key=lambda sc: sc.content_start)
    strings = {(s.start, s.end): s for s in source.strings() if not s.is_key}
    starts = [sc.content_start for sc in scalars]
    grouped: dict[int, list] = {}
    loose = []
    for r in redactions:
        i = bisect.bisect_right(starts, r.start) - 1
        sc = scalars[i] if i >= 0 else None
        if sc is not None and sc.content_start <= r.start and r.end <= sc.content_end:
            grouped.setdefault(i, []).append(r)
        else:
            loose.append(r)
    edits = [Edit(r.start, r.end, r.replacement) for r in loose]
    for i, rs in grouped.items():
        sc = scalars[i]
        js = strings.get((sc.content_start, sc.content_end))
        if js is not None and _needs_quoting(doc.text, sc, rs):
            new_value = _new_value(js, rs)
            if new_value is not None:
                edits.append(Edit(sc.content_start, sc.content_end, _double_quoted(new_value)))
                continue
        edits += [Edit(r.start, r.end, r.replacement) for r in rs]
    return edits


def _needs_quoting(text: str, sc, rs) -> bool:
    for r in rs:
        span = text[r.start:r.end]
        if sc.style in ("|", ">"):
            if any(c in span for c in "\r\n\x85\u2028\u2029"):
                return True
            continue
        if sc.style == '"' and any(c in r.replacement for c in '"\\'):
            return True
        if sc.style == "'" and "'" in r.replacement:
            return True
    if sc.style != "":
        return False
    edited = apply_edits(text[sc.content_start:sc.content_end],
                         [Edit(r.start - sc.content_start, r.end - sc.content_start, r.replacement) for r in rs])
    return not _plain_safe(edited, sc.flow)


def _plain_safe(value: str, flow: bool) -> bool:
    """A plain scalar text that reads back as the same string."""
    import yaml

    if not value or value != value.strip() or value[0] in _YAML_INDICATORS:
        return False
    if ": " in value or " #" in value or value.endswith(":") or "\t" in value:
        return False
    if flow and any(c in _FLOW_SPECIAL for c in value):
        return False
    tag = yaml.resolver.Resolver().resolve(yaml.ScalarNode, value, (True, False))
    return tag == "tag:yaml.org,2002:str"


def _new_value(js, rs) -> str | None:
    """The scalar's value with the redactions applied (their spans taken back through its offset map)."""
    value = js.text
    spans = []
    for r in rs:
        d = _derived_span(js, r.start, r.end)
        if d is None:
            return None
        spans.append((d, r.replacement))
    for (i, j), repl in sorted(spans, reverse=True):
        value = value[:i] + repl + value[j:]
    return value


def _derived_span(js, start: int, end: int) -> tuple[int, int] | None:
    """The characters of the value whose source is exactly [start, end), or None."""
    n = len(js.text)
    i = 0
    while i < n and js.map.span(i, i + 1)[0] < start:
        i += 1
    j = i
    while j < n and js.map.span(j, j + 1)[1] <= end:
        j += 1
    return (i, j) if j > i and js.map.span(i, j) == (start, end) else None


def _double_quoted(value: str) -> str:
    out = ['"']
    for ch in value:
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ch in "\x7f\x85\u2028\u2029\ufeff":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


# --- encoded bodies --------------------------------------------------------------------------------------------

def _body_edit(doc, plan: BodyPlan) -> Edit:
    region = plan.region
    new_text = apply_replacements(region.text, plan.redactions)
    data = new_text.encode(region.charset or "utf-8")
    if region.compression:
        data = compress(data, region.compression)
    body = region.body
    if body.yaml_binary or region.style in ("|", ">"):
        return Edit(region.start, region.end, _yaml_block(doc.text, region, encode_transfer(data, "base64")))
    if region.quotes_included:                  # chunk strings that are items of a JSON list (nock): one chunk
        one = "hex" if body.transfer == "hex-chunks" else "base64"
        return Edit(region.start, region.end, json.dumps(encode_transfer(data, one)))
    stored = encode_transfer(data, body.transfer)
    if region.syntax == "json":
        stored = json.dumps(stored, ensure_ascii=False)[1:-1]
    return Edit(region.start, region.end, stored)


def _yaml_block(text: str, region, b64: str) -> str:
    """A YAML block scalar holding base64 (a `!!binary` body, or a Ruby VCR `base64_string` block), in 76-character
    lines at the original indentation, with the original line endings and trailing blank lines."""
    original = text[region.start:region.end]
    newline = "\r\n" if "\r\n" in original else "\n"
    tail = re.search(r"(?:(?:\r\n|\n)[ \t]*)*\Z", original).group(0)
    header = "!!binary |" if region.body.yaml_binary else "|"
    lines = [b64[i:i + 76] for i in range(0, len(b64), 76)] or [""]
    indent = " " * max(region.indent, 1)
    return header + newline + newline.join(indent + line for line in lines) + (tail or newline)


# --- the rewritten file is the same recording -----------------------------------------------------------------

def same_recording(doc, new_bytes: bytes, path: str) -> str | None:
    """A rewritten recording must read back as the same recording: same format, same exchanges, the same
    places (a YAML scalar that became a list would move a header value out of its header)."""
    try:
        old = parse_text(doc.text, path)
        new = parse_text(new_bytes.decode(doc.encoding or "utf-8"), path)
    except (RecordingError, UnicodeDecodeError) as exc:
        return f"redacted file would not read back as a recording ({exc}); not written"
    if old.recording is None:
        return None
    if new.recording is None or new.recording.format != old.recording.format or \
            len(new.recording.exchanges) != len(old.recording.exchanges):
        return "redacted file would not read back as the same recording; not written"
    if _places(old) != _places(new):
        return "redacted file would change the structure of the recording; not written"
    return None


def _places(parsed) -> set:
    """What each part of the exchanges is and where, and in YAML every scalar's pointer (a number that becomes
    the string "REDACTED" in JSON is a datum's place, not a change of structure)."""
    source = parsed.source
    source.strings()
    out = {(p, "scalar") for p in source.scalars}
    for ex in parsed.recording.exchanges:
        for msg in (ex.request, ex.response):
            if msg is not None:
                out |= {(h.name.lower(), h.value_at) for h in msg.headers}
                out.add(("body", msg.body.at, msg.body.transfer, msg.body.yaml_binary))
    return out


# --- length fields ---------------------------------------------------------------------------------------------

def length_edits(old_text: str, new_text: str, path: str) -> list[Edit]:
    """Edits of `new_text` that make the length fields of changed bodies state their new lengths."""
    try:
        old, new = parse_text(old_text, path), parse_text(new_text, path)
    except RecordingError:
        return []
    if old.recording is None or new.recording is None or len(old.recording.exchanges) != len(new.recording.exchanges):
        return []
    edits: list[Edit] = []
    for oex, nex in zip(old.recording.exchanges, new.recording.exchanges):
        for omsg, nmsg in ((oex.request, nex.request), (oex.response, nex.response)):
            if omsg is None or nmsg is None:
                continue
            before, after = _measures(omsg.body), _measures(nmsg.body)
            if before is None or after is None or before == after:
                continue
            for lf in nmsg.body.lengths:
                value = {before[0]: after[0], before[1]: after[1]}.get(lf.value)
                if value is None or value == lf.value:
                    continue
                span = _span(new.source, lf)
                if span is not None:
                    edits.append(Edit(span[0], span[1], str(value)))
    return sorted(set(edits), key=lambda e: e.start)


def _measures(body) -> tuple[int, int] | None:
    """(stored length, decoded length) in bytes; None for a body whose wire form is not known here."""
    if body.json_at or body.value is None:
        return None
    try:
        if body.encoded:
            stored = body.stored_bytes() or b""
            return len(stored), len(body.content() or b"")
        m = re.search(r"charset\s*=\s*\"?([^\s;\"]+)", body.mime, re.I)
        data = str(body.value).encode(m.group(1) if m else "utf-8", errors="replace")
        return len(data), len(data)
    except (BodyError, LookupError):
        return None


def _span(source, lf) -> tuple[int, int] | None:
    if lf.is_string:
        s = source.string_at(lf.at)
        return (s.start, s.end) if s is not None and s.text.strip().isdigit() and s.text == s.text.strip() else None
    return source.number_span(lf.at)
