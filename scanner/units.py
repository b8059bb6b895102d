"""The document model: a loaded file is a list of text units, each tied to an exact place in the file.

Data flows one way: a loader turns a file into a `Document` of `TextUnit`s; rules look only at units; findings
carry the unit's positions. A rule never reads a file.

Positions (`start`, `end`) are character offsets into the decoded text of the file (`Document.text`), so
`document.text[unit.start:unit.end] == unit.raw` always holds. A unit's `text` is what a reader of that
channel gets (character references and JSON escapes decoded); `unit.source_span(i, j)` maps a match inside
`text` back to the file. PDF units are the exception: their offsets are into the page's extracted text
(`page` set, 1-based), as the contract says.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Optional

from scanner.offsetmap import ComposedMap, OffsetMap
from scanner.sourcetext import LineIndex


class Channel(str, Enum):
    """Where a piece of text sits. Rules decide by channel whether a person would see it."""

    VISIBLE_TEXT = "visible_text"      # HTML text content outside the channels below
    TITLE = "title"                    # <title>
    COMMENT = "comment"                # <!-- … -->
    ATTRIBUTE = "attribute"            # alt, title, aria-label, placeholder, data-*, meta content, …
    LINK = "link"                      # href, src, action, srcset…: addresses, scanned for secrets and mailto: data
    JSON_LD = "json_ld"                # <script type="application/ld+json">
    SCRIPT = "script"                  # any other <script>
    STYLE = "style"                    # <style> blocks
    NOSCRIPT = "noscript"              # text inside <noscript>
    TEMPLATE = "template"              # text inside <template>
    SVG_TEXT = "svg_text"              # text inside <svg>
    TEXTAREA = "textarea"              # RCDATA of <textarea>
    JSON_STRING = "json_string"        # a JSON string value
    JSON_KEY = "json_key"              # a JSON object key
    HTTP_HEADER_NAME = "http_header_name"
    HTTP_HEADER_VALUE = "http_header_value"
    HTTP_URL = "http_url"              # a recorded request URL
    PDF_TEXT = "pdf_text"              # a run of a PDF page's extracted text sharing the same attributes
    PDF_METADATA = "pdf_metadata"      # the PDF document information dictionary
    PLAIN_TEXT = "plain_text"          # a line block of a text or Markdown file


@dataclass(eq=False)
class TextUnit:
    text: str
    channel: Channel
    start: int
    end: int
    map: OffsetMap | ComposedMap
    locator: str = ""                  # JSON pointer, attribute name, header name, …
    element: Any = None                # scanner.loaders.html.Element for HTML units
    page: Optional[int] = None         # 1-based, PDF only
    attrs: dict = field(default_factory=dict)  # loader-specific facts a rule needs (PDF char attributes, …)
    container: str = ""                # for nested content: what it is nested in ("/response/body", …)

    def source_span(self, i: int, j: int) -> tuple[int, int]:
        """The file span (or page-text span for PDF) of `text[i:j]`."""
        return self.map.span(i, j)


@dataclass(eq=False)
class Document:
    path: str                           # as given (or relative to the scan root)
    kind: str                           # html | pdf | json | http | text
    text: str = ""                      # decoded text of the file (empty for PDF)
    encoding: str = ""
    units: list[TextUnit] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)   # non-fatal: replaced bytes, recovered markup, …
    elements: list = field(default_factory=list)         # HTML elements in document order
    pages: list = field(default_factory=list)            # PDF pages (scanner.loaders.pdf.PdfPage)
    regions: list = field(default_factory=list)          # encoded bodies (scanner.loaders.recorded.EncodedBody)
    meta: dict = field(default_factory=dict)
    _lines: LineIndex | None = None
    _page_lines: dict = field(default_factory=dict)

    @property
    def lines(self) -> LineIndex:
        if self._lines is None:
            self._lines = LineIndex(self.text)
        return self._lines

    def line_col(self, offset: int) -> tuple[int, int]:
        return self.lines.line_col(offset)

    def unit_line_col(self, unit: TextUnit, offset: int) -> tuple[int, int]:
        """1-based line and column of `offset` in the unit's coordinates: the file, or its PDF page's text."""
        if unit.page is None:
            return self.line_col(offset)
        key = (unit.page, unit.container or "")
        index = self._page_lines.get(key)
        if index is None:
            page = next((p for p in self.pages if p.number == unit.page
                         and getattr(p, "container", "") == (unit.container or "")), None)
            index = self._page_lines[key] = LineIndex(page.text if page is not None else "")
        return index.line_col(offset)

    def raw(self, unit: TextUnit) -> str:
        return self.text[unit.start:unit.end]


class LoadError(Exception):
    """A file that cannot be loaded at all. `code` is stable (`unparsed`, `encrypted`, `format_tables_ocr`, …)."""

    def __init__(self, path: str, message: str, code: str = "unparsed"):
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message
        self.code = code
