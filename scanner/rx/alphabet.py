"""One byte per character: the alphabet RE2 reads texts in.

Python's classes are large in Unicode (its `\\w` is some 700 ranges of code points), and RE2 writes every
class it is given as an automaton over UTF-8 bytes: one lexicon group became a 650 KB program. But no pattern
tells apart two characters that every class of every compiled pattern either holds or lacks together. So the
non-ASCII code points are cut into *atoms* — the coarsest parts no class splits (a few dozen for all of
centinela's rules) — and a text is read as one byte per character: an ASCII character as itself, any other as
0x80 + the number of its atom. RE2 runs in Latin-1 mode on those bytes, with every class written as the bytes
of its ASCII characters and atoms. A match then means exactly what it meant on the text, the programs stay
small, and byte offsets are character offsets.

The alphabet is shared by every pattern (one encoding per text) and refined as patterns are compiled; a
pattern written for an older alphabet is written again on its next use. More than 128 atoms cannot be
written in a byte: the pattern that would need the 129th is refused.
"""

from __future__ import annotations

import threading

import numpy as np

from scanner.rx.charset import MAX_CP, CharSet

MAX_ATOMS = 128
_CHUNK = 1 << 20
_SMALL = 256                 # below this many characters `str.translate` encodes faster than numpy


class _Table(dict):
    """code point -> byte, filled on demand (for `str.translate`): ASCII as itself, any other as 0x80 + atom."""

    def __init__(self, starts, labels):
        super().__init__()
        self.starts, self.labels = starts, labels

    def __missing__(self, cp: int) -> int:
        b = cp if cp < 0x80 else 0x80 + int(self.labels[int(np.searchsorted(self.starts, cp, side="right")) - 1])
        self[cp] = b
        return b


class AlphabetFull(ValueError):
    pass


class Alphabet:
    def __init__(self):
        self.lock = threading.RLock()
        self.version = 0
        self.starts = np.array([0x80], dtype=np.int64)   # elementary intervals of the non-ASCII code points
        self.labels = np.array([0], dtype=np.int64)      # the atom of each interval
        self.count = 1
        self._seen: set = set()
        self._reps: list[int] = [0x80]                   # a code point of each atom
        self._masks: dict = {}
        self._texts: dict = {}
        self._table = _Table(self.starts, self.labels)

    # -- refining ------------------------------------------------------------------------------------

    def refine(self, sets) -> None:
        """Cut the atoms so that none straddles a set of `sets` (AlphabetFull past MAX_ATOMS atoms)."""
        with self.lock:
            fresh = [s for s in set(sets) if s not in self._seen and any(hi >= 0x80 for _, hi in s.ranges)]
            if not fresh:
                return
            starts, labels, count = self.starts, self.labels, self.count
            for s in fresh:
                starts, labels = _cut(starts, labels, s)
                member = _membership(starts, s)
                keyed = labels * 2 + member
                uniq, inverse = np.unique(keyed, return_inverse=True)
                if len(uniq) != count:
                    if len(uniq) > MAX_ATOMS:
                        raise AlphabetFull(f"more than {MAX_ATOMS} different sets of non-ASCII characters among "
                                           "all compiled patterns")
                    labels, count = inverse.astype(np.int64), len(uniq)
                else:
                    labels = inverse.astype(np.int64)
            self._seen.update(fresh)
            if count != self.count:      # the atoms were renumbered: patterns written before are stale
                self._renumber(starts, labels, count)
            else:
                self.starts, self.labels = starts, labels
                self._table = _Table(starts, labels)    # cut again without renumbering: the same bytes, new cuts

    def install(self, starts, labels, count: int) -> bool:
        """Take atoms computed before (scanner.rx.stored), only into an alphabet nothing has refined yet."""
        with self.lock:
            if self.version != 0 or self.count != 1 or self._seen:
                return False
            self._renumber(starts, labels, count)
            return True

    def _renumber(self, starts, labels, count: int) -> None:
        """Take atoms numbered anew (the caller holds the lock): every class and text written before is stale."""
        reps = [0] * count
        for i in range(len(starts) - 1, -1, -1):
            reps[int(labels[i])] = int(starts[i])
        self.starts, self.labels, self.count = starts, labels, count
        self._reps = reps
        self._masks = {}
        self._texts = {}
        self._table = _Table(starts, labels)
        self.version += 1

    # -- writing classes -----------------------------------------------------------------------------

    def mask(self, cs: CharSet) -> int:
        """The set as a bitmask over byte values: ASCII code points, and 0x80 + atom for each atom inside."""
        m = self._masks.get(cs)
        if m is None:
            m = 0
            for lo, hi in cs.ranges:
                if lo >= 0x80:
                    break
                m |= ((1 << (min(hi, 0x7F) + 1)) - 1) ^ ((1 << lo) - 1)
            for k, rep in enumerate(self._reps):
                if rep in cs:
                    m |= 1 << (0x80 + k)
            self._masks[cs] = m
        return m

    @property
    def universe(self) -> int:
        return (1 << (0x80 + self.count)) - 1

    def write(self, m: int) -> str:
        """RE2 (Latin-1) syntax for a byte set given as a mask."""
        m &= self.universe
        text = self._texts.get(m)
        if text is None:
            text = self._texts[m] = self._write(m)
        return text

    def _write(self, m: int) -> str:
        if not m:
            return r"[^\x00-\xff]"
        if m == self.universe:
            return r"(?s:.)"
        parts = []
        bits = bin(m)[:1:-1]                 # bit i of m is bits[i]
        b, n = bits.find("1"), len(bits)
        while b >= 0:
            e = bits.find("0", b)
            e = n - 1 if e < 0 else e - 1
            parts.append(_byte(b) if b == e else _byte(b) + ("" if e == b + 1 else "-") + _byte(e))
            b = bits.find("1", e + 1)
        if m & (m - 1) == 0:                 # one byte
            return parts[0]
        return "[" + "".join(parts) + "]"

    def cls(self, cs: CharSet) -> str:
        return self.write(self.mask(cs))

    # -- reading texts -------------------------------------------------------------------------------

    def encode(self, text: str) -> bytes:
        """The text, one byte per character."""
        if text.isascii():
            return text.encode("ascii")
        if len(text) < _SMALL:
            return text.translate(self._table).encode("latin-1")
        out = bytearray()
        starts, labels = self.starts, self.labels
        for i in range(0, len(text), _CHUNK):
            codes = np.frombuffer(text[i:i + _CHUNK].encode("utf-32-le", "surrogatepass"), dtype="<u4")
            wide = codes >= 0x80
            b = codes.astype(np.uint8)
            if wide.any():
                idx = np.searchsorted(starts, codes[wide], side="right") - 1
                b[wide] = (0x80 + labels[idx]).astype(np.uint8)
            out += b.tobytes()
        return bytes(out)


def _byte(b: int) -> str:
    ch = chr(b)
    if ch.isascii() and ch.isalnum():
        return ch
    return "\\x%02x" % b


def _cut(starts, labels, s: CharSet):
    """Intervals cut at the set's boundaries (a new interval keeps the atom of the one it was cut from)."""
    cuts = []
    for lo, hi in s.ranges:
        if hi < 0x80:
            continue
        cuts.append(max(lo, 0x80))
        if hi + 1 <= MAX_CP:
            cuts.append(hi + 1)
    new = np.setdiff1d(np.array(cuts, dtype=np.int64), starts)
    if not len(new):
        return starts, labels
    merged = np.union1d(starts, new)
    owner = np.searchsorted(starts, merged, side="right") - 1
    return merged, labels[owner]


def _membership(starts, s: CharSet):
    """1 for each interval inside the set, 0 outside (the set's boundaries are interval boundaries)."""
    member = np.zeros(len(starts), dtype=np.int64)
    for lo, hi in s.ranges:
        if hi < 0x80:
            continue
        a = np.searchsorted(starts, max(lo, 0x80), side="left")
        b = np.searchsorted(starts, hi, side="right")
        member[a:b] = 1
    return member


ALPHABET = Alphabet()
