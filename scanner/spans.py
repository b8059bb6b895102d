"""The span grammar of claims and expected observations (contract, Run records), parsed and applied.

- `offset:START-END` — characters of the artifact file's decoded source (for HTML, the markup itself);
- `selector:CSS` — the text content of the first element the selector matches;
- `page:N` or `page:N:START-END` — a PDF page's extracted text (1-based page), or a slice of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# At most 18 digits: offsets and pages fit, and int() of a 5,000-digit string is refused by Python (an error).
_OFFSET = re.compile(r"^offset:(\d{1,18})-(\d{1,18})$")
_PAGE = re.compile(r"^page:(\d{1,18})(?::(\d{1,18})-(\d{1,18}))?$")


class SpanError(ValueError):
    pass


@dataclass(frozen=True)
class Span:
    kind: str                    # offset | selector | page
    start: int | None = None
    end: int | None = None
    selector: str | None = None
    page: int | None = None


def _shown(text: str) -> str:
    return repr(text if len(text) <= 80 else text[:77] + "...")


def parse_span(text: str) -> Span:
    text = (text or "").strip()
    m = _OFFSET.match(text)
    if m:
        start, end = int(m.group(1)), int(m.group(2))
        if end < start:
            raise SpanError(f"span {_shown(text)}: end before start")
        return Span("offset", start, end)
    m = _PAGE.match(text)
    if m:
        page = int(m.group(1))
        if page < 1:
            raise SpanError(f"span {_shown(text)}: pages are 1-based")
        if m.group(2) is None:
            return Span("page", page=page)
        start, end = int(m.group(2)), int(m.group(3))
        if end < start:
            raise SpanError(f"span {_shown(text)}: end before start")
        return Span("page", start, end, page=page)
    if text.startswith("selector:") and text[len("selector:"):].strip():
        return Span("selector", selector=text[len("selector:"):].strip())
    raise SpanError(f"span {_shown(text)}: not offset:START-END, selector:CSS, page:N or page:N:START-END")


def normalise_ws(text: str) -> str:
    return " ".join(text.split())


def select_text(html_text: str, selector: str) -> str | None:
    """Text content of the first element `selector` matches in the HTML, or None."""
    from bs4 import BeautifulSoup

    try:
        soup = BeautifulSoup(html_text, "lxml")
        el = soup.select_one(selector)
    except Exception as exc:  # soupsieve raises on invalid selectors
        raise SpanError(f"selector {selector!r}: {exc}") from None
    return None if el is None else el.get_text()


def apply_span(span: Span, source_text: str | None = None, page_texts: list[str] | None = None) -> str | None:
    """The text a span returns from an artifact (decoded source text, or PDF page texts), None when out of range."""
    if span.kind == "offset":
        if source_text is None or span.end > len(source_text):
            return None
        return source_text[span.start:span.end]
    if span.kind == "selector":
        return None if source_text is None else select_text(source_text, span.selector)
    if page_texts is None or span.page > len(page_texts):
        return None
    text = page_texts[span.page - 1]
    if span.start is None:
        return text
    if span.end > len(text):
        return None
    return text[span.start:span.end]
