"""The text of each file a result points at, from what the scan kept (`ScanResult.sources`): positions in
UTF-16 columns from the loader's decoding, and GitHub's line hashes from the bytes as GitHub reads them."""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import Callable, Optional

from scanner.fingerprint import github_text, line_hashes, without_data
from scanner.loaders import load_bytes, sniff_kind
from scanner.sourcetext import LineIndex
from scanner.units import LoadError


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le", errors="surrogatepass")) // 2


_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


class Source:
    """One file's text for positions (as the loader decoded it) and for GitHub's line hash (as GitHub reads it).

    `data` are the (datum, replacement) pairs of the file's secret and personal-data findings: the line hashes
    are computed over the text with them replaced (`scanner.fingerprint.without_data`), never over a line
    that holds one."""

    def __init__(self, text: Optional[str], hash_text: Optional[str], index: Optional[LineIndex] = None):
        self.text = text
        self.hash_text = hash_text
        self.data: list[tuple[str, str]] = []
        self._index = index if index is not None else LineIndex(text) if text is not None else None
        self._astral = bool(text is not None and _ASTRAL.search(text))
        self._hashes: Optional[list[str]] = None

    def hashes(self) -> list[str]:
        if self._hashes is None:
            text = self.hash_text
            self._hashes = line_hashes(without_data(text, self.data)) if text is not None else []
        return self._hashes

    def line_col16(self, offset: int) -> tuple[int, int]:
        """1-based line and UTF-16 column of a character offset."""
        line, col = self._index.line_col(offset)
        if self._astral:
            line_start = self._index.offset(line, 1)
            col = _utf16_len(self.text[line_start:offset]) + 1
        return line, col

    def region(self, start: int, end: int) -> tuple[int, int, int, int]:
        """startLine, startColumn, endLine, endColumn (exclusive) of [start, end); a trailing break is left out
        so the region ends on the line of its last character."""
        e = end
        while e > start and self.text[e - 1] in "\r\n":
            e -= 1
        sl, sc = self.line_col16(start)
        el, ec = self.line_col16(e)
        return sl, sc, el, ec


def _document_text(data: bytes, path: str) -> Optional[str]:
    """The decoded text the scanner's offsets index (`Document.text`) of bytes a caller passed (`text_of`);
    None for a PDF or an unloadable file."""
    if sniff_kind(path, data) in ("pdf", "binary"):
        return None
    try:
        return load_bytes(data, path).text
    except LoadError:
        return None


class Sources:
    """`Source` of each path: from `text_of` when the caller gives one (bytes or decoded text, for a result
    built by hand), else from the texts the scan kept; a path with neither has no text.

    The `RECENT` sources last asked for are kept, not all of them: a run over a large tree holds each kept text
    compressed (`scanner.sourcetext.SourceText`), and a `Source` holds it decoded with its line index and
    hashes, so keeping every one would hold the whole tree in memory while the output is written. Findings come
    file by file (sorted by path), so each file's `Source` is made once; one asked for again after it left is
    made again, the same."""

    RECENT = 8

    def __init__(self, result, text_of: Optional[Callable[[str], "str | bytes | None"]] = None):
        self.kept = result.sources
        self.text_of = text_of
        self._made: "OrderedDict[str, Source]" = OrderedDict()
        self._data: dict[str, list[tuple[str, str]]] = {}

    def __call__(self, path: str) -> Source:
        made = self._made
        src = made.get(path)
        if src is None:
            src = made[path] = self._make(path)
            src.data = self._data.get(path, [])
            if len(made) > self.RECENT:
                made.popitem(last=False)
        else:
            made.move_to_end(path)
        return src

    def set_data(self, path: str, data: list[tuple[str, str]]) -> None:
        """The (datum, replacement) pairs of `path`'s secret and personal-data findings (`Source.data`)."""
        self._data[path] = data
        src = self._made.get(path)
        if src is not None:
            src.data = data

    def text(self, path: str) -> Optional[str]:
        return self(path).text

    def _make(self, path: str) -> Source:
        if self.text_of is None:
            kept = self.kept.get(path)
            return Source(kept.text, kept.github, kept.index) if kept is not None else Source(None, None)
        content = self.text_of(path)
        if isinstance(content, (bytes, bytearray)):
            return Source(_document_text(bytes(content), path), github_text(bytes(content)))
        return Source(content, content)
