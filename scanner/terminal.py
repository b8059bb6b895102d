"""One sanitiser for every untrusted string bound for a terminal or a text output.

Provider folder names, case ids, file names, URLs and messages that quote fixture content are attacker-controlled:
a name holding `ESC[2J` clears the reader's screen, `ESC]52;c;…BEL` writes their clipboard, `ESC]8;;url…`
hides a link behind innocent text, NUL and DEL confuse pagers, and a right-to-left override (U+202E) makes
`gs-001` + U+202E + `lmth.exe` read as `gs-001exe.html`. So, whether stdout is a terminal or a pipe:

* `safe(value)` is for one field on one line (a path, an id, a URL, a message): every character below is
  written as a visible escape, line breaks and tabs included, so a name cannot fake a second line either.
* `safe_text(text)` is for a whole block of our own making (a command's output): the same, but `\\n` and
  `\\t` are kept (`\\r\\n` becomes `\\n`). With `keep_sgr=True` the SGR colour sequences (`ESC[…m`) that we
  add ourselves pass; the data inside must have gone through `safe()` first ("sanitise the data, then
  colour"), so any other sequence is still escaped.
* `json_text(serialized)` makes JSON text safe to print without changing what it means: `json.dumps`
  already writes C0 controls as `\\u00XX`, and this writes the rest (DEL, C1, bidi and other format
  characters, line/paragraph separators, lone surrogates) as `\\uXXXX` escapes too. A JSON reader gets the
  same strings back; a terminal shows only printable text.

What is escaped ("unsafe"): Unicode categories Cc (C0, DEL, C1), Cf (format characters: bidi embeddings,
overrides and isolates U+202A–202E and U+2066–2069, the marks U+200E/U+200F and U+061C, zero-width
characters, the BOM, soft hyphen, tag characters…), Zl and Zp (U+2028, U+2029) and Cs (lone surrogates,
which cannot even be written as UTF-8). The escapes are Python's: `\\n`, `\\r`, `\\t`, else `\\x1b` below
U+0100, `\\u202e` in the BMP, `\\U000e0041` above. A backslash is not escaped, so a name that spells
`\\x1b` literally looks the same as an escaped ESC: it is shown, never interpreted, which is what matters.
"""

from __future__ import annotations

import re
from functools import lru_cache

_UNSAFE_CLASS = r"\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}"
_SOURCES = {
    "unsafe": f"[{_UNSAFE_CLASS}]",
    "block": r"\r\n|(?![\n\t])" + f"[{_UNSAFE_CLASS}]",
    # Our own colours (click.style): SGR only, digits and semicolons, nothing that moves the cursor or talks to
    # the terminal.
    "block_sgr": r"(\x1b\[[0-9;]*m)|\r\n|(?![\n\t])" + f"[{_UNSAFE_CLASS}]",
    # What json.dumps(ensure_ascii=False) leaves raw inside strings (it escapes only C0, `"` and `\`).
    "json": r"[\x7f-\x9f\p{Cf}\p{Zl}\p{Zp}\p{Cs}]",
}


# Characters that are never unsafe (tests/test_terminal_safety.py checks each one against the installed `regex`):
# all but C0 (in a block: but line breaks and tabs), DEL, C1, the soft hyphen, U+0600-U+1DFF (Arabic, Syriac,
# Mongolian… hold format characters), U+2000-U+200F, U+2028-U+202F, U+205F-U+206F, surrogates, the BOM,
# U+FFF9 and above but the emoji blocks. Output of Spanish pages made only of these (and SGR-free) needs no
# `regex` to be shown safe. Written as negated classes: `re` compiles a class of wide ranges slowly.
_NOT_PLAIN = ("\x7f-\x9f\xad\u0600-\u1dff\u2000-\u200f\u2028-\u202f\u205f-\u206f\ud800-\udfff\ufeff"
              "\ufff9-\U0001efff\U0001fb00-\U0010ffff")
_BLOCK_PLAIN = re.compile(f"[^\x00-\x08\x0b-\x1f{_NOT_PLAIN}]*")
_JSON_PLAIN = re.compile(f"[^{_NOT_PLAIN}]*")


@lru_cache(maxsize=None)
def _pattern(name: str):
    """The compiled pattern, on first use: most outputs are printable or ASCII and never need one, and the
    `regex` module (for its Unicode categories) is a tenth of the CLI's own imports."""
    import regex

    return regex.compile(_SOURCES[name])


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escape_char(ch: str) -> str:
    """The visible escape of one character: `\\n`, `\\r`, `\\t`, else `\\x1b`, `\\u202e`, `\\U000e0041`."""
    named = _NAMED.get(ch)
    if named is not None:
        return named
    cp = ord(ch)
    if cp < 0x100:
        return f"\\x{cp:02x}"
    if cp < 0x10000:
        return f"\\u{cp:04x}"
    return f"\\U{cp:08x}"


def _escape(m) -> str:
    return escape_char(m.group())


def _escape_block(m) -> str:
    s = m.group()
    return "\n" if s == "\r\n" else escape_char(s)


def _escape_block_sgr(m) -> str:
    if m.group(1):
        return m.group(1)
    return _escape_block(m)


def _json_escape(m) -> str:
    cp = ord(m.group())
    if cp < 0x10000:
        return f"\\u{cp:04x}"
    cp -= 0x10000
    return f"\\u{0xD800 + (cp >> 10):04x}\\u{0xDC00 + (cp & 0x3FF):04x}"


def is_safe(value: str) -> bool:
    """True when `safe(value)` would change nothing."""
    return _pattern("unsafe").search(value) is None


def safe(value) -> str:
    """One untrusted field for one line of text output: every control, escape, bidi and format character
    (line breaks and tabs too) as a visible escape."""
    text = value if isinstance(value, str) else str(value)
    if text.isprintable():          # the common case, checked in C: nothing to escape
        return text
    return _pattern("unsafe").sub(_escape, text)


def safe_text(text: str, *, keep_sgr: bool = False) -> str:
    """A block of text output: like `safe()` but line breaks (`\\r\\n` → `\\n`) and tabs stay; with
    `keep_sgr`, SGR colour sequences stay too (colour the data only after `safe()`)."""
    if text.isprintable() or _BLOCK_PLAIN.fullmatch(text):
        return text
    if keep_sgr:
        return _pattern("block_sgr").sub(_escape_block_sgr, text)
    return _pattern("block").sub(_escape_block, text)


def _yaml_escape(m) -> str:
    cp = ord(m.group())
    return f"\\u{cp:04x}" if cp < 0x10000 else f"\\U{cp:08x}"


def json_text(serialized: str, *, yaml: bool = False) -> str:
    """JSON text (from `json.dumps`) with every character a terminal could act on written as a `\\uXXXX`
    escape; outside strings JSON has only ASCII, so this never changes what the JSON means. `yaml=True` for
    a JSON string used as a YAML double-quoted scalar: a character above U+FFFF is then `\\UXXXXXXXX`
    (YAML does not join a surrogate pair)."""
    if serialized.isascii() and "\x7f" not in serialized:     # json.dumps wrote every other ASCII control
        return serialized
    if _JSON_PLAIN.fullmatch(serialized):
        return serialized
    return _pattern("json").sub(_yaml_escape if yaml else _json_escape, serialized)
