"""Truncation of large bodies (spec §3: the first relevant block plus 2 KB of context) and the expected
observations a redaction would invalidate (their spans are re-captured, never adjusted by hand)."""

from __future__ import annotations

import json
from pathlib import Path

from scanner.fixtures.tree import SHARED_DIR
from scanner.loaders.json_positions import iter_strings
from scanner.spans import SpanError, apply_span, normalise_ws, parse_span
from scanner.units import Channel, Document

CONTEXT_CHARS = 2048


def truncation_point(doc: Document, root: Path | None, rel: str) -> int | None:
    """Where a large body is cut: after the first relevant block plus 2 KB of context.

    The first relevant block is, in order: the span of the earliest expected observation citing this file; the
    first paragraph-sized (≥ 200 characters) visible text; the first visible text at all. In an HTTP envelope the
    cut stays inside the body string so the envelope remains valid JSON.
    """
    block_end = None
    if root is not None:
        spans = [s for s in _observations(root) if s[1] == rel]
        offsets = []
        for _, _, span_text, _ in spans:
            try:
                span = parse_span(span_text)
            except SpanError:
                continue
            if span.kind == "offset":
                offsets.append(span.end)
        if offsets:
            block_end = min(offsets)
    if block_end is None:
        visible = [u for u in doc.units if u.channel in (Channel.VISIBLE_TEXT, Channel.JSON_STRING, Channel.PLAIN_TEXT)]
        long = [u for u in visible if len(u.text.strip()) >= 200]
        unit = long[0] if long else (visible[0] if visible else None)
        block_end = unit.end if unit is not None else 0
    cut = block_end + CONTEXT_CHARS
    body = _body_span(doc)
    if body is not None:
        b_start, b_end = body
        cut = max(min(cut, b_end), b_start)
        cut = _safe_json_cut(doc.text, b_start, cut)
    return cut if cut < len(doc.text) else None


def _body_span(doc: Document) -> tuple[int, int] | None:
    """The span of an HTTP envelope's string body in the file, if the file is one."""
    if doc.kind != "http":
        return None
    for s in iter_strings(doc.text):
        if not s.is_key and s.pointer.endswith(("/response/body", "/content/text")):
            return s.start, s.end
    return None


def _safe_json_cut(text: str, start: int, cut: int) -> int:
    """Move a cut back so it does not split a JSON escape sequence."""
    i = cut
    while i > start:
        back = text.rfind("\\", max(start, i - 6), i)
        if back < 0:
            break
        # an escape starting at `back` spans 2 chars, or 6 for \\uXXXX
        length = 6 if text.startswith("\\u", back) else 2
        if back + length > i:
            i = back
            continue
        break
    return i


def truncation_tail(doc: Document, cut: int) -> str:
    """What follows the cut: the rest of the envelope after its body string, or nothing."""
    body = _body_span(doc)
    if body is not None and body[0] <= cut <= body[1]:
        return doc.text[body[1]:]
    return ""


# --- expected observations ----------------------------------------------------------------------------

def _observations(root: Path):
    """(file, artifact, span, text) of every observation under _shared/expected/."""
    folder = root / SHARED_DIR / "expected"
    if not folder.is_dir():
        return []
    out = []
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            continue
        for obs in data.get("observations", []) if isinstance(data, dict) else []:
            if isinstance(obs, dict) and {"artifact", "span", "text"} <= obs.keys():
                out.append((f"{path.relative_to(root).as_posix()}#{obs.get('id', '?')}", obs["artifact"],
                            obs["span"], obs["text"]))
    return out


def invalidated_spans(root: Path, rel: str, new_text: str) -> list[str]:
    out = []
    for ref, artifact, span_text, expected in _observations(root):
        if artifact != rel:
            continue
        try:
            span = parse_span(span_text)
        except SpanError:
            out.append(ref)
            continue
        if span.kind == "page":
            continue
        got = apply_span(span, source_text=new_text)
        if got is None or normalise_ws(got) != normalise_ws(expected):
            out.append(ref)
    return out
