"""Sets of code points, and the exact set a Python engine (`re` or `regex`) matches for one character node.

RE2 spells `\\w`, `\\d`, `\\s` and `\\b` in ASCII, and folds case by Unicode's simple case folding; Python's
`re` means `\\w` = `str.isalnum()` or `_`, `\\d` = `str.isdecimal()`, `\\s` = `str.isspace()`, and folds `i`
with `İ` and `ı`; the `regex` module (which Presidio runs) has its own Unicode definitions. So a character
class is not passed to RE2 as written: the code points the Python engine itself matches are computed here —
by running that engine over every code point once, for the three categories, and over every character with a
case mapping for a case-insensitive class — and kept as ranges (RE2 gets them through scanner.rx.alphabet).
"""

from __future__ import annotations

import array
import bisect
from functools import lru_cache

MAX_CP = 0x10FFFF


class CharSet:
    """An immutable set of code points as sorted, disjoint, non-adjacent inclusive ranges."""

    __slots__ = ("ranges", "_starts", "_hash", "_comp")

    def __init__(self, ranges=()):
        self._set(_merge(sorted(ranges)))

    def _set(self, ranges: list) -> "CharSet":
        self.ranges = tuple(ranges)
        self._starts = None
        self._hash = None
        self._comp = None
        return self

    @classmethod
    def _sorted(cls, ranges: list) -> "CharSet":
        """From ranges already sorted by start (merged here)."""
        return cls.__new__(cls)._set(_merge(ranges))

    @classmethod
    def of(cls, *codepoints: int) -> "CharSet":
        if len(codepoints) == 1:
            return cls.__new__(cls)._set([(codepoints[0], codepoints[0])])
        return cls((c, c) for c in codepoints)

    def __contains__(self, cp: int) -> bool:
        if self._starts is None:
            self._starts = [lo for lo, _ in self.ranges]
        i = bisect.bisect_right(self._starts, cp) - 1
        return i >= 0 and self.ranges[i][1] >= cp

    def __bool__(self) -> bool:
        return bool(self.ranges)

    def __eq__(self, other) -> bool:
        return isinstance(other, CharSet) and self.ranges == other.ranges

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(self.ranges)
        return self._hash

    def __repr__(self) -> str:
        return f"CharSet({self.ranges[:4]}{'…' if len(self.ranges) > 4 else ''})"

    def __or__(self, other: "CharSet") -> "CharSet":
        if not other.ranges:
            return self
        if not self.ranges:
            return other
        a, b, out, i, j = self.ranges, other.ranges, [], 0, 0
        while i < len(a) and j < len(b):
            if a[i][0] <= b[j][0]:
                out.append(a[i])
                i += 1
            else:
                out.append(b[j])
                j += 1
        out.extend(a[i:])
        out.extend(b[j:])
        return CharSet._sorted(out)

    def complement(self) -> "CharSet":
        if self._comp is None:
            self._comp = self._complement()
            self._comp._comp = self
        return self._comp

    def _complement(self) -> "CharSet":
        out, nxt = [], 0
        for lo, hi in self.ranges:
            if lo > nxt:
                out.append((nxt, lo - 1))
            nxt = hi + 1
        if nxt <= MAX_CP:
            out.append((nxt, MAX_CP))
        return CharSet.__new__(CharSet)._set(out)

    def __and__(self, other: "CharSet") -> "CharSet":
        a, b, out, i, j = self.ranges, other.ranges, [], 0, 0
        while i < len(a) and j < len(b):
            lo = a[i][0] if a[i][0] > b[j][0] else b[j][0]
            hi = a[i][1] if a[i][1] < b[j][1] else b[j][1]
            if lo <= hi:
                out.append((lo, hi))
            if a[i][1] < b[j][1]:
                i += 1
            else:
                j += 1
        return CharSet._sorted(out)

    def __sub__(self, other: "CharSet") -> "CharSet":
        return self & other.complement()

    def issubset(self, other: "CharSet") -> bool:
        return not (self - other)

    def isdisjoint(self, other: "CharSet") -> bool:
        a, b, i, j = self.ranges, other.ranges, 0, 0
        while i < len(a) and j < len(b):
            if max(a[i][0], b[j][0]) <= min(a[i][1], b[j][1]):
                return False
            if a[i][1] < b[j][1]:
                i += 1
            else:
                j += 1
        return True

    def first(self) -> int:
        return self.ranges[0][0]

    def size(self) -> int:
        return sum(hi - lo + 1 for lo, hi in self.ranges)


def _merge(ranges: list) -> list:
    merged: list[tuple[int, int]] = []
    for lo, hi in ranges:
        if lo > hi:
            continue
        if merged and lo <= merged[-1][1] + 1:
            if hi > merged[-1][1]:
                merged[-1] = (merged[-1][0], hi)
        else:
            merged.append((lo, hi))
    return merged


ALL = CharSet([(0, MAX_CP)])
EMPTY = CharSet()
NEWLINE = CharSet.of(0x0A)


# --- what a Python engine matches ---------------------------------------------------------------------

def _universe() -> str:
    """Every code point, in order: U[i] == chr(i)."""
    return array.array("I", range(MAX_CP + 1)).tobytes().decode("utf-32-le", "surrogatepass")


_U: list[str] = []


def _scan(engine, source: str, flags: int) -> CharSet:
    """The code points `source` (a one-character pattern) matches, run by the engine itself."""
    if not _U:
        _U.append(_universe())
    rx = engine.compile(f"(?:{source})+", flags)
    return CharSet((m.start(), m.end() - 1) for m in rx.finditer(_U[0]))


@lru_cache(maxsize=None)
def category(engine_name: str, source: str, flags: int) -> CharSet:
    """`\\w`, `\\d`, `\\s` (or their negations) as the engine means them under `flags`."""
    return _scan(_engine(engine_name), source, flags)


@lru_cache(maxsize=1)
def _cased() -> tuple[str, CharSet]:
    """Every character case-insensitive matching can relate to another: anything with a case mapping."""
    chars = [chr(cp) for cp in range(0x20000)]          # no cased character lies beyond plane 1
    maps = zip(chars, map(str.lower, chars), map(str.upper, chars), map(str.casefold, chars), map(str.title, chars))
    cased = "".join(c for c, a, b, d, e in maps if a != c or b != c or d != c or e != c)
    return cased, CharSet.of(*map(ord, cased))


@lru_cache(maxsize=4096)
def fold(engine_name: str, source: str, flags: int, literal: CharSet) -> CharSet:
    """The set a one-character node matches under IGNORECASE: its case-sensitive set `literal`, with every
    character that has a case mapping decided by the engine itself."""
    cased, cased_set = _cased()
    rx = _engine(engine_name).compile(source, flags)
    hits = CharSet.of(*(ord(m.group()) for m in rx.finditer(cased)))
    return (literal - cased_set) | hits


def _engine(name: str):
    if name == "re":
        import re

        return re
    import regex

    return regex
