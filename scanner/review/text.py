"""Fixture text made safe to print in the reviewer page: escaped, and nothing invisible left to act.

Every string that comes from a fixture (text, paths, locators, messages that quote it) goes through `html()`
for element content or `attr()` for attribute values. Both escape HTML (`html.escape`, quotes included), and
both replace what a reader cannot see but a browser obeys or a model reads — bidi embeddings, overrides and
isolates, zero-width and other invisible characters, Unicode tag characters, C0/C1 controls, lone surrogates
— by their names (`⟨RLO⟩`, `⟨ZWSP ×12⟩`, `⟨58 tag characters⟩`), so an override cannot reorder the page and a
hidden payload is visible as such. A ZWJ inside an emoji sequence is kept.
"""

from __future__ import annotations

import re
from html import escape

_HIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5"
                     "\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufeff\ufff9-\ufffb"
                     "\U000e0000-\U000e007f\U000e0100-\U000e01ef\ud800-\udfff]+")
_NAMES = {0x00: "NUL", 0x1B: "ESC", 0x7F: "DEL", 0xAD: "SHY", 0x061C: "ALM", 0x200B: "ZWSP", 0x200C: "ZWNJ",
          0x200D: "ZWJ", 0x200E: "LRM", 0x200F: "RLM", 0x202A: "LRE", 0x202B: "RLE", 0x202C: "PDF", 0x202D: "LRO",
          0x202E: "RLO", 0x2060: "WJ", 0x2066: "LRI", 0x2067: "RLI", 0x2068: "FSI", 0x2069: "PDI", 0xFEFF: "ZWNBSP"}
_SPACES = re.compile(r"[ \t\n]+")
MARKER_TITLE = "invisible or direction-control characters, shown by name"


def _name(c: str) -> str:
    return _NAMES.get(ord(c)) or f"U+{ord(c):04X}"


def describe(run: str) -> str:
    """The visible stand-in of a run of invisible characters."""
    if len(run) > 1 and all(0xE0000 <= ord(c) <= 0xE007F for c in run):
        return f"⟨{len(run)} tag characters⟩"
    names = [_name(c) for c in run]
    if len(names) > 1 and len(set(names)) == 1:
        return f"⟨{names[0]} ×{len(names)}⟩"
    if len(names) > 6:
        return f"⟨{' '.join(names[:6])} … {len(names)} invisible characters⟩"
    return f"⟨{' '.join(names)}⟩"


def _emoji_joiner(s: str, start: int, end: int) -> bool:
    """A lone ZWJ between two pictographs (👩‍💻) is part of the emoji, not a hidden character."""
    if s[start:end] != "\u200d" or start == 0 or end >= len(s):
        return False
    before, after = s[start - 1], s[end]
    return ord(before) >= 0x2190 and ord(after) >= 0x2190 and not before.isalpha() and not after.isalpha()


def pieces(value, collapse: bool = False) -> list[tuple[bool, str]]:
    """(is a stand-in, text) pieces of a fixture string, line breaks normalised (and collapsed, for HTML text)."""
    s = str(value).replace("\r\n", "\n").replace("\r", "\n").replace("\u2028", "\n").replace("\u2029", "\n")
    if collapse:
        s = _SPACES.sub(" ", s)
    out: list[tuple[bool, str]] = []
    pos = 0
    for m in _HIDDEN.finditer(s):
        if _emoji_joiner(s, m.start(), m.end()):
            continue
        if m.start() > pos:
            out.append((False, s[pos:m.start()]))
        out.append((True, describe(m.group(0))))
        pos = m.end()
    if pos < len(s):
        out.append((False, s[pos:]))
    return out


def html(value, collapse: bool = False) -> str:
    """Element content: escaped, invisible characters as marked stand-ins."""
    return "".join(f'<span class="ctl" title="{MARKER_TITLE}">{escape(text)}</span>' if marker else escape(text)
                   for marker, text in pieces(value, collapse))


def attr(value) -> str:
    """An attribute value (inside double quotes): escaped, invisible characters as stand-ins."""
    return escape("".join(text for _, text in pieces(value, collapse=True)), quote=True)
