"""Text normalisation for matching, with a map back to the original characters.

Rules match on a folded form of the text — lower case, no accents ("ESTA EMPRESA ESTÁ VERIFICADA" →
"esta empresa esta verificada"), compatibility forms folded (NFKC: fullwidth "ｉｇｎｏｒａ" → "ignora"),
invisible format characters removed (zero-width spaces inside a word), and common confusable letters
(Cyrillic "а", Greek "ο") read as the Latin letters they imitate. A match found in the folded text maps back
to the exact original characters through `Normalized.span()`.

Speed: most text folds one character to one character, which `str.translate` does at C speed with an
identity map. Only text holding a character that folds to zero or several characters takes the per-character
path.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# Invisible characters an attacker uses to split words ("ig\u200bnora"): removed before matching.
INVISIBLE = frozenset(
    [0x00AD, 0x034F, 0x061C, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180E, 0x200B, 0x200C, 0x200D, 0x200E, 0x200F,
     0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0x2066, 0x2067, 0x2068,
     0x2069, 0x206A, 0x206B, 0x206C, 0x206D, 0x206E, 0x206F, 0x3164, 0xFE00, 0xFE0F, 0xFEFF, 0xFFA0]
    + list(range(0xFE00, 0xFE10)) + list(range(0xE0000, 0xE0080))
)

# Letters from other scripts that look like Latin ones (a subset of Unicode's confusables.txt that covers
# the Cyrillic and Greek homoglyphs used against keyword filters).
CONFUSABLES = {
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t",
    "у": "y", "х": "x", "ѕ": "s", "і": "i", "ї": "i", "ј": "j", "ԁ": "d", "ɡ": "g", "һ": "h", "ӏ": "l", "ԛ": "q",
    "ԝ": "w", "ո": "n", "ս": "u", "α": "a", "ο": "o", "ρ": "p", "ν": "v", "τ": "t", "ι": "i", "κ": "k", "υ": "u",
    "χ": "x", "ε": "e", "η": "n", "ϲ": "c", "ϳ": "j", "ɑ": "a", "ı": "i", "ℓ": "l", "ⅰ": "i",
}



def _fold_char(ch: str) -> str:
    if ord(ch) in INVISIBLE:
        return ""
    text = unicodedata.normalize("NFKC", ch).casefold()
    out = []
    for c in unicodedata.normalize("NFD", text):
        if unicodedata.combining(c):
            continue
        out.append(CONFUSABLES.get(c, c))
    return "".join(out)


def _char_class(codepoints) -> str:
    cps = sorted(codepoints)
    parts = []
    i = 0
    while i < len(cps):
        j = i
        while j + 1 < len(cps) and cps[j + 1] == cps[j] + 1:
            j += 1
        parts.append(re.escape(chr(cps[i])) + ("-" + re.escape(chr(cps[j])) if j > i else ""))
        i = j + 1
    return "".join(parts)


def _slow_path_class(complex_) -> str:
    return "[" + _char_class(complex_) + "\u3000-\uF8FF\U00010000-\U0010FFFF]"


def _two_pass(simple: dict[int, str], needs_slow_path: re.Pattern) -> bool:
    # See `normalize_text`: the table's outputs are left as they are by the second pass.
    return all(needs_slow_path.search(v) is None or _fold_char(v) == v for v in simple.values())


def _build_tables() -> tuple[dict[int, str], set[int], bool]:
    # every code point below U+3000, and U+F900–FFFF (compatibility ideographs, presentation forms, fullwidth
    # and halfwidth forms, specials): a character in neither is folded on the slow path
    simple: dict[int, str] = {}
    complex_: set[int] = set()
    ranges = [(0x80, 0x2FFF), (0xF900, 0xFFFF)]
    for cp in range(0x41, 0x5B):
        simple[cp] = chr(cp + 32)
    for lo, hi in ranges:
        for cp in range(lo, hi + 1):
            ch = chr(cp)
            folded = _fold_char(ch)
            if len(folded) == 1:
                if folded != ch:
                    simple[cp] = folded
            else:
                complex_.add(cp)
    complex_.update(INVISIBLE)
    return simple, complex_, _two_pass(simple, re.compile(_slow_path_class(complex_)))


def _tables() -> tuple[dict[int, str], set[int], bool]:
    """The tables and the two-pass check below, kept between runs like the rule packs (scanner.packcache: keyed
    by Python's version, which fixes its Unicode database, and by the package's sources): building them folds
    15,000 characters, about 15 ms of every start."""
    from scanner import packcache

    simple, complex_, two_pass = packcache.cached("fold-tables", [], _build_tables)
    return dict(simple), set(complex_), two_pass is True


_SIMPLE_TABLE, _COMPLEX, _two_pass_checked = _tables()
# Any character the fast path cannot fold one-to-one: a complex one, or anything beyond the tables' ranges. (The
# tables cover U+F900–FFFF too: a character there folds the same whether or not another one sends the text down
# the slow path.)
_NEEDS_SLOW_PATH = re.compile(_slow_path_class(_COMPLEX))


@dataclass(slots=True)
class Normalized:
    text: str                      # the folded text
    original: str
    index: list[int] | None        # folded index -> original index (None: identity)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Original span covering the folded span [start, end)."""
        if self.index is None:
            return start, end
        if end <= start:
            pos = self.index[start] if start < len(self.index) else len(self.original)
            return pos, pos
        s = self.index[start]
        e = self.index[end - 1] + 1
        # a character folded into several (ﬁ → fi) maps each piece to the same original character
        return s, e


class _FoldTable(dict):
    """Code point → its folded form ("" for an invisible character), filled on first sight: `str.translate`
    then folds any text at C speed, one character to what `normalize` folds it to."""

    def __missing__(self, cp: int) -> str:
        if cp < 0x80:
            folded = chr(cp).lower() if 0x41 <= cp <= 0x5A else chr(cp)
        elif cp in _SIMPLE_TABLE:
            folded = _SIMPLE_TABLE[cp]
        elif cp in _COMPLEX or cp >= 0x3000:
            folded = _fold_char(chr(cp))
        else:
            folded = chr(cp)
        self[cp] = folded
        return folded


_FOLD_TABLE = _FoldTable()
_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")       # one character class: linear in any engine


def fold_text(text: str) -> str:
    """`normalize(text).text` without the map back: what the rules match on, for a caller that needs no
    offsets (the injection prefilter)."""
    if text.isascii():
        return text.lower()
    # Per character, so piece by piece: `str.lower` (C speed) on the ASCII runs, the table on the rest (a
    # translate looks every character up; the real pages are mostly ASCII markup: twice as fast).
    out: list[str] = []
    pos = 0
    for m in _NON_ASCII_RUN.finditer(text):
        s, e = m.span()
        if s > pos:
            out.append(text[pos:s].lower())
        out.append(m.group().translate(_FOLD_TABLE))
        pos = e
    out.append(text[pos:].lower())
    return "".join(out)


def normalize(text: str) -> Normalized:
    if text.isascii():
        return Normalized(text.lower(), text, None)
    first = _NEEDS_SLOW_PATH.search(text)
    if first is None:
        return Normalized(text.translate(_SIMPLE_TABLE), text, None)
    # Each character folds on its own: the runs between the characters that fold to zero or several are
    # translated at C speed (one to one, so their map back is a range), only those characters one by one.
    out: list[str] = []
    index: list[int] = []
    pos = 0
    for m in _NEEDS_SLOW_PATH.finditer(text, first.start()):
        i = m.start()
        if i > pos:
            out.append(text[pos:i].translate(_SIMPLE_TABLE))
            index.extend(range(pos, i))
        folded = _FOLD_TABLE[ord(text[i])]
        if folded:
            out.append(folded)
            index.extend([i] * len(folded))
        pos = i + 1
    if pos < len(text):
        out.append(text[pos:].translate(_SIMPLE_TABLE))
        index.extend(range(pos, len(text)))
    return Normalized("".join(out), text, index)


def _normalize_by_character(text: str) -> Normalized:
    """`normalize` one character at a time (the reference tests/test_normalize_runs.py compares it with)."""
    out: list[str] = []
    index: list[int] = []
    for i, ch in enumerate(text):
        cp = ord(ch)
        if cp < 0x80:
            out.append(ch.lower() if "A" <= ch <= "Z" else ch)
            index.append(i)
            continue
        if cp in _SIMPLE_TABLE:
            out.append(_SIMPLE_TABLE[cp])
            index.append(i)
            continue
        folded = _fold_char(ch) if (cp in _COMPLEX or cp >= 0x3000) else ch
        for c in folded:
            out.append(c)
            index.append(i)
    return Normalized("".join(out), text, index)


def _fold_match(m: re.Match) -> str:
    return _fold_char(m.group())


# `normalize_text` folds in two C-level passes: the table, then the characters the table leaves to the slow path.
# That equals the per-character loop only if the second pass leaves every table output as it is (it is not such a
# character, or folding it again gives itself): checked once here.
_TWO_PASS = _two_pass_checked


def normalize_text(text: str) -> str:
    """`normalize(text).text` without the map back to the original (for screens that only need the folding)."""
    if text.isascii():
        return text.lower()
    if _NEEDS_SLOW_PATH.search(text) is None:
        return text.translate(_SIMPLE_TABLE)
    if not _TWO_PASS:  # pragma: no cover
        return normalize(text).text
    return _NEEDS_SLOW_PATH.sub(_fold_match, text.translate(_SIMPLE_TABLE))
