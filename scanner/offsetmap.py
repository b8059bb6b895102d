"""Exact positions from derived text back to its source.

A unit's text is often not a plain slice of the file: `caf&eacute;` in HTML becomes `café`, `"caf\\u00e9"`
in JSON becomes `café`. An `OffsetMap` records, piece by piece, where each run of derived characters came
from, so a match at derived offsets [i, j) maps to the exact source span that produced it. An escape maps
as a whole: a match that touches any character of `&eacute;` covers the whole reference.
"""

from __future__ import annotations

import bisect
from typing import Iterable


class OffsetMap:
    """Piecewise map from offsets in a derived string to offsets in its source string.

    Pieces are (derived_start, source_start, derived_len, source_len). A piece whose two lengths are equal
    and that is marked `literal` maps character by character; any other piece is an escape and maps as a block.
    """

    __slots__ = ("_d_starts", "_s_starts", "_d_lens", "_s_lens", "_literal", "derived_len", "source_start", "source_end")

    def __init__(self, pieces: Iterable[tuple[int, int, int, int, bool]], derived_len: int, source_start: int, source_end: int):
        self._d_starts: list[int] = []
        self._s_starts: list[int] = []
        self._d_lens: list[int] = []
        self._s_lens: list[int] = []
        self._literal: list[bool] = []
        for d, s, dl, sl, literal in pieces:
            self._d_starts.append(d)
            self._s_starts.append(s)
            self._d_lens.append(dl)
            self._s_lens.append(sl)
            self._literal.append(literal)
        self.derived_len = derived_len
        self.source_start = source_start
        self.source_end = source_end

    @classmethod
    def identity(cls, source_start: int, length: int) -> "OffsetMap":
        return IdentityMap(source_start, length)

    def _piece(self, i: int) -> int:
        return max(bisect.bisect_right(self._d_starts, i) - 1, 0)

    def char_start(self, i: int) -> int:
        """Source offset where derived character i starts (i == len maps to the source end)."""
        if i >= self.derived_len:
            return self.source_end
        p = self._piece(i)
        if self._literal[p]:
            return self._s_starts[p] + (i - self._d_starts[p])
        return self._s_starts[p]

    def char_end(self, i: int) -> int:
        """Source offset just past derived character i."""
        p = self._piece(i)
        if self._literal[p]:
            return self._s_starts[p] + (i - self._d_starts[p]) + 1
        return self._s_starts[p] + self._s_lens[p]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Source span [s, e) of the derived span [start, end)."""
        if end <= start:
            s = self.char_start(start)
            return s, s
        return self.char_start(start), self.char_end(end - 1)

    def then(self, outer: "OffsetMap") -> "ComposedMap":
        """This map followed by `outer` (whose derived string is this map's source string)."""
        return ComposedMap((self, outer))


class IdentityMap(OffsetMap):
    """The map of a derived string that is a plain slice of its source: one literal piece, computed, not stored
    (most units are plain slices, so this is the map almost every unit gets). Same answers as the general map."""

    __slots__ = ()

    def __init__(self, source_start: int, length: int):
        self.derived_len = length
        self.source_start = source_start
        self.source_end = source_start + length

    def char_start(self, i: int) -> int:
        return self.source_end if i >= self.derived_len else self.source_start + i

    def char_end(self, i: int) -> int:
        return self.source_start + i + 1

    def span(self, start: int, end: int) -> tuple[int, int]:
        if end <= start:
            s = self.source_end if start >= self.derived_len else self.source_start + start
            return s, s
        s0 = self.source_start
        return (self.source_end if start >= self.derived_len else s0 + start), s0 + end


class ComposedMap:
    """Several maps applied in turn: text inside a JSON string inside an HTTP envelope, for example."""

    __slots__ = ("maps",)

    def __init__(self, maps: tuple):
        flat: list[OffsetMap] = []
        for m in maps:
            flat.extend(m.maps if isinstance(m, ComposedMap) else (m,))
        self.maps = tuple(flat)

    @property
    def derived_len(self) -> int:
        return self.maps[0].derived_len

    def span(self, start: int, end: int) -> tuple[int, int]:
        for m in self.maps:
            start, end = m.span(start, end)
        return start, end

    def then(self, outer) -> "ComposedMap":
        return ComposedMap((self, outer))


class PieceBuilder:
    """Builds an OffsetMap while a decoder walks its source: add literal runs and escapes in order."""

    __slots__ = ("pieces", "derived", "_dlen")

    def __init__(self):
        self.pieces: list[tuple[int, int, int, int, bool]] = []
        self.derived: list[str] = []
        self._dlen = 0

    def literal(self, text: str, source_start: int) -> None:
        if not text:
            return
        self.pieces.append((self._dlen, source_start, len(text), len(text), True))
        self.derived.append(text)
        self._dlen += len(text)

    def escape(self, decoded: str, source_start: int, source_len: int) -> None:
        if not decoded:
            # An escape that decodes to nothing still occupies source; nothing in the derived text points at it.
            return
        self.pieces.append((self._dlen, source_start, len(decoded), source_len, False))
        self.derived.append(decoded)
        self._dlen += len(decoded)

    def build(self, source_start: int, source_end: int) -> tuple[str, OffsetMap]:
        text = "".join(self.derived)
        if not self.pieces:
            return text, OffsetMap([(0, source_start, 0, 0, True)], 0, source_start, source_end)
        return text, OffsetMap(self.pieces, len(text), source_start, source_end)
