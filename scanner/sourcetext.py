"""Bytes to text, and text offsets to 1-based line/column.

Every position centinela reports is a character offset into the *decoded* text of a file, so how a file is
decoded is part of the contract: BOM first, then a charset the caller declares (an HTTP `content-type`, an
HTML `<meta charset>`), then strict UTF-8, then windows-1252 for a file with no valid multi-byte UTF-8 at
all, and otherwise UTF-8 with U+FFFD for each invalid byte. Nothing here raises on bad bytes: what was
replaced is said in `DecodedText.problems`.
"""

from __future__ import annotations

import bisect
import codecs
import re
import zlib
from dataclasses import dataclass, field

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# WHATWG Encoding: these labels mean windows-1252 in a browser, so they mean it here too.
_WHATWG_ALIASES = {
    "latin1": "cp1252", "latin-1": "cp1252", "iso-8859-1": "cp1252", "iso8859-1": "cp1252",
    "iso_8859-1": "cp1252", "l1": "cp1252", "us-ascii": "cp1252", "ascii": "cp1252",
    "windows-1252": "cp1252", "x-cp1252": "cp1252", "utf8": "utf-8", "unicode-1-1-utf-8": "utf-8",
}

_MULTIBYTE_UTF8 = re.compile(rb"[\xc2-\xf4][\x80-\xbf]+")


@dataclass
class DecodedText:
    text: str
    encoding: str
    bom: bool = False
    problems: list[str] = field(default_factory=list)


def normalise_charset(label: str | None) -> str | None:
    """A codec name Python knows for a charset label, or None when the label names nothing known."""
    if not label:
        return None
    label = label.strip().strip("\"'").lower()
    label = _WHATWG_ALIASES.get(label, label)
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def decode_bytes(data: bytes, declared: str | None = None) -> DecodedText:
    """Decode file bytes by the rule in the module docstring; never raises."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return _decode_with(data[len(bom):], name, bom=True)
    problems: list[str] = []
    if declared:
        codec = normalise_charset(declared)
        if codec is not None:
            return _decode_with(data, codec)
        problems.append(f"unknown charset {declared!r}, decoded as UTF-8")
    try:
        return DecodedText(data.decode("utf-8"), "utf-8", problems=problems)
    except UnicodeDecodeError as exc:
        first_bad = exc.start
    if not _MULTIBYTE_UTF8.search(data):
        decoded = _decode_with(data, "cp1252")
        decoded.problems[:0] = problems + [f"not UTF-8 (invalid byte at {first_bad}); decoded as windows-1252"]
        return decoded
    decoded = _decode_with(data, "utf-8")
    decoded.problems[:0] = problems
    return decoded


def _decode_with(data: bytes, codec: str, bom: bool = False) -> DecodedText:
    try:
        return DecodedText(data.decode(codec), codec, bom=bom)
    except UnicodeDecodeError as exc:
        text = data.decode(codec, errors="replace")
        bad = _count_replacements(data, codec)
        return DecodedText(
            text, codec, bom=bom,
            problems=[f"invalid {codec} bytes: {bad} replaced by U+FFFD (first at byte {exc.start})"],
        )


def _count_replacements(data: bytes, codec: str) -> int:
    count = 0

    def handler(err: UnicodeDecodeError):
        nonlocal count
        count += 1
        return ("\ufffd", err.end)

    name = f"centinela-count-{id(handler)}"
    codecs.register_error(name, handler)
    data.decode(codec, errors=name)
    return count


class LineIndex:
    """Maps a character offset to a 1-based (line, column). Lines end at \\n, \\r\\n or a lone \\r."""

    __slots__ = ("_starts",)
    _BREAK = re.compile(r"\r\n|\r|\n")

    def __init__(self, text: str):
        self._starts = [0]
        self._starts.extend(m.end() for m in self._BREAK.finditer(text))

    def line_col(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self._starts, offset) - 1
        return line + 1, offset - self._starts[line] + 1

    def offset(self, line: int, column: int) -> int:
        return self._starts[line - 1] + column - 1

    @property
    def line_count(self) -> int:
        return len(self._starts)


class SourceText:
    """What the pipeline keeps of a scanned file for its outputs, so that none of them reads the file again.

    `text` is the decoded text the loader built the document from (`Document.text`: every finding's offsets
    index it), None for a PDF; `github` is the file's bytes as GitHub's upload action reads them (UTF-8, U+FFFD
    per invalid sequence, BOM kept: the text of SARIF line hashes), None when no output needs it. Both are
    often the same string. The line index is built once, on first use, and shared by every output.

    A run keeps this for every file with a finding until its outputs are written, so a text of `PACK_CHARS` or
    more is held zlib-compressed (real pages shrink 5-10x; a tree's peak memory stays nearly flat in its size)
    and decompressed when an output asks for it; the last `_RECENT` texts asked for stay decompressed, so an
    output going through a file's findings one after another decompresses it once. The text given is the text
    returned, character for character (lone surrogates included)."""

    __slots__ = ("_text", "_github", "_same", "_index", "_plain")

    def __init__(self, text: str | None, github: str | None = None):
        self._same = github is not None and (github is text or github == text)
        self._text = _pack(text)
        self._github = None if self._same else _pack(github)
        self._index: LineIndex | None = None
        self._plain: tuple | None = None          # (text, github) while among the recently used

    @property
    def text(self) -> str | None:
        return self._unpacked()[0]

    @property
    def github(self) -> str | None:
        return self._unpacked()[1]

    @property
    def index(self) -> LineIndex | None:
        if self._index is None and self._text is not None:
            self._index = LineIndex(self.text)
        return self._index

    def _unpacked(self) -> tuple:
        plain = self._plain
        if plain is not None:
            return plain
        text = _unpack(self._text)
        plain = (text, text if self._same else _unpack(self._github))
        if isinstance(self._text, bytes) or isinstance(self._github, bytes):
            self._plain = plain
            _recent.append(self)
            if len(_recent) > _RECENT:
                _recent.pop(0)._evict()
        return plain

    def _evict(self) -> None:
        """Out of the recently used: drop the decompressed texts and the line index built from them (rebuilt,
        the same, when asked for again), so a tree's kept texts stay compressed in memory."""
        self._plain = None
        self._index = None

    def __eq__(self, other):
        if not isinstance(other, SourceText):
            return NotImplemented
        return (self.text, self.github) == (other.text, other.github)

    __hash__ = None

    def __repr__(self) -> str:
        text = self.text
        return f"SourceText({len(text) if text is not None else None} characters)"

    def __getstate__(self):                      # sent from a worker compressed; the index is rebuilt where used
        return (self._text, self._github, self._same)

    def __setstate__(self, state):
        self._text, self._github, self._same = state
        self._index = None
        self._plain = None


PACK_CHARS = 16 << 10
_RECENT = 4
_recent: list[SourceText] = []


def _pack(text: str | None):
    """`text` as it is when short (or None), else its UTF-8 (surrogates passed through) compressed."""
    if text is None or len(text) < PACK_CHARS:
        return text
    return zlib.compress(text.encode("utf-8", "surrogatepass"), 1)


def _unpack(packed) -> str | None:
    if isinstance(packed, bytes):
        return zlib.decompress(packed).decode("utf-8", "surrogatepass")
    return packed
