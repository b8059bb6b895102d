"""Plain text and Markdown → one unit per paragraph; Markdown's HTML comments are their own channel."""

from __future__ import annotations

import re

from scanner import rx
from scanner.offsetmap import OffsetMap
from scanner.sourcetext import decode_bytes
from scanner.units import Channel, Document, TextUnit

# A paragraph runs to a blank line (nothing but spaces and tabs, and a \r before its \n); lines are consumed
# whole. A line goes on the paragraph when it holds something else: a character that is not a space, a tab, \r
# or \n, or a \r not followed by \n. (Written without a lookahead, for RE2: scanner.rx.)
_PARAGRAPH = rx.compile(r"\S[^\n]*(?:\n[ \t]*(?:[^ \t\r\n]|\r(?:[^\n]|\Z))[^\n]*)*")
_MD_COMMENT = rx.compile(r"<!--(.*?)(?:-->|\Z)", re.S)


def load_text(data: bytes, path: str) -> Document:
    decoded = decode_bytes(data)
    text = decoded.text
    doc = Document(path=path, kind="text", text=text, encoding=decoded.encoding)
    doc.problems.extend(decoded.problems)
    markdown = path.lower().endswith((".md", ".markdown"))
    pos = 0
    if markdown:
        for m in _MD_COMMENT.finditer(text):
            _paragraphs(doc, text, pos, m.start())
            if m.group(1).strip():
                doc.units.append(TextUnit(m.group(1), Channel.COMMENT, m.start(1), m.end(1),
                                          OffsetMap.identity(m.start(1), len(m.group(1))), locator="comment"))
            pos = m.end()
    _paragraphs(doc, text, pos, len(text))
    return doc


def _paragraphs(doc: Document, text: str, start: int, end: int) -> None:
    for m in _PARAGRAPH.finditer(text, start, end):
        s, e = m.start(), m.end()
        chunk = text[s:e].rstrip()
        e = s + len(chunk)
        doc.units.append(TextUnit(chunk, Channel.PLAIN_TEXT, s, e, OffsetMap.identity(s, e - s),
                                  locator=f"line {doc.line_col(s)[0]}"))
