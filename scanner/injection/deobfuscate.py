"""The learned rule's de-obfuscated reading: text as an attacker meant it to be read past a keyword filter.

Obfuscated attacks read plainly to a language model and not to n-grams: letters spaced, dotted or hyphenated
apart («I g n o r a   l a s   i n s t r u c c i o n e s», «I.g.n.o.r.e y.o.u.r g.u.i.d.e.l.i.n.e.s»,
«i-g-n-o-r-a l-a-s r-e-g-l-a-s») and digits standing for letters («1gn0r3 4ll pr3v10u5 1n5truct10n5»). In
blind29, read after the thirty-fifth round, 6 of the 24 attacks the shipped rules missed in every hidden carrier
were written so (two more were written backwards, which this does not undo).

`deobfuscate` works on text already folded by `scanner.normalize` (lower case, accents and look-alikes folded)
and returns the text the model's features are computed from (`features.prepare_normalized`), so training, the
rule and the prefilter's screen read the same thing. Offsets are never taken from it: a finding's span is the
window as written.

- A run of three or more single letters or digits, each apart from the next by the same one separator (space,
  dot, hyphen, underscore, asterisk, bar or slash), is joined: "i g n o r a" → "ignora"; a wider gap (the
  spaced form's word break) stays, so «i g n o r a   l a s» → "ignora   las". Two letters ("s.a.", "e.g.")
  and words of several letters ("y a la") are left alone; three are a word («S.A.B.» → "sab.").
- In a word of letters and digits with at least two letters, where every digit is one of 0 1 3 4 5 7, the digits
  are read as the letters they imitate (o i e a s t): "pr3v10u5" → "previous", "d3l" → "del". A word holding
  2, 6, 8 or 9 is a code, a date or a model number and stays as written ("covid19", "pegj850101a18", "4x4").

Both patterns are RE2 programs (`scanner.rx`): linear in the text whatever it holds.
"""

from __future__ import annotations

import re
from functools import lru_cache

from scanner import rx

_SEPARATORS = " .-_*|/"
_LEET = str.maketrans("013457", "oieast")
_CODE_DIGITS = frozenset("2689")


@lru_cache(maxsize=None)
def _patterns():
    """(singles, leet): compiled on first use, so a scan that never scores a window never compiles them."""
    runs = "|".join(f"[a-z0-9](?:{re.escape(s)}[a-z0-9]){{2,}}" for s in _SEPARATORS)
    singles = rx.compile(f"(?<![a-z0-9])(?:{runs})(?![a-z0-9])")
    leet = rx.compile(r"(?<![a-z0-9])[a-z0-9]*[013457][a-z0-9]*(?![a-z0-9])")
    return singles, leet


def _join(m) -> str:
    run = m.group(0)
    return run[::2]


def _leet(m) -> str:
    word = m.group(0)
    if sum(c.isalpha() for c in word) < 2 or not _CODE_DIGITS.isdisjoint(word):
        return word
    return word.translate(_LEET)


# Necessary conditions, searched first (most windows hold neither): three single characters apart by separators
# (whichever: a superset of the same separator thrice), and a letter beside one of the digits read as letters (a
# word of letters and such digits has one). Windows are a few hundred characters and neither pattern can backtrack
# more than a few characters, so `re` serves here; the exact work is RE2's.
_SEPARATOR = f"[{re.escape(_SEPARATORS)}]"
_MAY_JOIN = re.compile(f"(?<![a-z0-9])[a-z0-9]{_SEPARATOR}[a-z0-9]{_SEPARATOR}[a-z0-9](?![a-z0-9])")
_MAY_READ = re.compile(r"[a-z][013457]|[013457][a-z]")


def could_change(text: str) -> bool:
    """Cheap test: False when `deobfuscate(text)` is `text` for certain."""
    return _MAY_JOIN.search(text) is not None or _MAY_READ.search(text) is not None


def deobfuscate(text: str) -> str:
    """The de-obfuscated reading of folded text (see the module's docstring); `text` itself when nothing applies."""
    if _MAY_JOIN.search(text) is not None:
        text = _patterns()[0].sub(_join, text)
    if _MAY_READ.search(text) is not None:
        text = _patterns()[1].sub(_leet, text)
    return text
