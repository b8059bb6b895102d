"""A position-aware JSON reader: every string with its JSON pointer and exact offsets in the source.

The standard json module gives values, not positions. This reader walks the source once with C-speed
regexes, iteratively (a document nested 100,000 levels deep is read, not a RecursionError), and yields each
string value and key with the span of its content between the quotes and an `OffsetMap` through its
escapes (`\\u00e9`, `\\"`, surrogate pairs). It accepts exactly what `json.loads` accepts, and reports a
syntax error with its offset otherwise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator

from scanner.offsetmap import OffsetMap, PieceBuilder

_WS = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"((?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*)"')
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_ESCAPE = re.compile(r'\\(?:u([0-9a-fA-F]{4})(?:\\u([0-9a-fA-F]{4}))?|(["\\/bfnrt]))')
_SIMPLE = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_LITERALS = ("true", "false", "null", "NaN", "Infinity", "-Infinity")  # json.loads takes the last three too


class JsonSyntaxError(ValueError):
    def __init__(self, message: str, offset: int):
        super().__init__(f"{message} at offset {offset}")
        self.offset = offset


@dataclass(slots=True)
class JsonString:
    pointer: str        # JSON pointer of the value (for a key: of the member it names)
    key: str | None     # the object key this value sits under (None in arrays and at the root)
    is_key: bool
    text: str           # decoded
    start: int          # offsets of the content between the quotes
    end: int
    map: OffsetMap


def escape_pointer_token(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def decode_string(source: str, start: int, end: int) -> tuple[str, OffsetMap]:
    """Decode the content of a JSON string literal (between the quotes) with its offset map."""
    if source.find("\\", start, end) < 0:
        return source[start:end], OffsetMap.identity(start, end - start)
    b = PieceBuilder()
    pos = start
    for m in _ESCAPE.finditer(source, start, end):
        b.literal(source[pos:m.start()], pos)
        hi, lo, simple = m.group(1), m.group(2), m.group(3)
        if simple is not None:
            b.escape(_SIMPLE[simple], m.start(), 2)
            pos = m.end()
            continue
        code = int(hi, 16)
        if lo is not None:
            low = int(lo, 16)
            if 0xD800 <= code < 0xDC00 and 0xDC00 <= low < 0xE000:
                char = chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00))
                b.escape(char, m.start(), 12)
                pos = m.end()
                continue
            # Not a pair: the first escape stands alone; the second is handled on its own.
            b.escape(_lone(code), m.start(), 6)
            b.escape(_lone(low), m.start() + 6, 6)
            pos = m.end()
            continue
        b.escape(_lone(code), m.start(), 6)
        pos = m.end()
    b.literal(source[pos:end], pos)
    return b.build(start, end)


def _lone(code: int) -> str:
    # A lone surrogate cannot be written as UTF-8; it becomes U+FFFD, occupying its escape.
    return "\ufffd" if 0xD800 <= code < 0xE000 else chr(code)


def iter_strings(source: str, start: int = 0, end: int | None = None) -> Iterator[JsonString]:
    """Yield every key and string value of the JSON text source[start:end], in source order.

    Raises JsonSyntaxError (after yielding what came before it) when the text is not valid JSON.
    """
    if end is None:
        end = len(source)
    # Each frame: [kind ('{' or '['), pointer, next index or current key, state]
    stack: list[list] = []
    pos = _WS.match(source, start, end).end()
    pointer = ""
    key: str | None = None
    expect_value = True

    def err(msg: str, at: int):
        raise JsonSyntaxError(msg, at)

    while True:
        if expect_value:
            if pos >= end:
                err("unexpected end of JSON", pos)
            ch = source[pos]
            if ch == '"':
                m = _STRING.match(source, pos, end)
                if m is None:
                    err("invalid string", pos)
                text, omap = decode_string(source, m.start(1), m.end(1))
                yield JsonString(pointer, key, False, text, m.start(1), m.end(1), omap)
                pos = m.end()
            elif ch == "{" or ch == "[":
                stack.append([ch, pointer, 0 if ch == "[" else None, key])
                pos = _WS.match(source, pos + 1, end).end()
                closer = "}" if ch == "{" else "]"
                if pos < end and source[pos] == closer:
                    stack.pop()
                    pos += 1
                elif ch == "{":
                    pos = yield from _read_key(source, pos, end, stack, err)
                    frame = stack[-1]
                    pointer = frame[1] + "/" + escape_pointer_token(frame[2])
                    key = frame[2]
                    continue
                else:
                    pointer = stack[-1][1] + "/0"
                    key = None
                    continue
            elif (ch == "-" or "0" <= ch <= "9") and (m := _NUMBER.match(source, pos, end)) is not None:
                pos = m.end()
            else:
                for lit in _LITERALS:
                    if source.startswith(lit, pos) and pos + len(lit) <= end:
                        pos += len(lit)
                        break
                else:
                    err(f"unexpected character {ch!r}", pos)
            expect_value = False
        # After a value: a comma, a closer, or the end.
        pos = _WS.match(source, pos, end).end()
        if not stack:
            if pos != end:
                err("extra data after JSON value", pos)
            return
        frame = stack[-1]
        if pos >= end:
            err("unexpected end of JSON", pos)
        ch = source[pos]
        closer = "}" if frame[0] == "{" else "]"
        if ch == ",":
            pos = _WS.match(source, pos + 1, end).end()
            if frame[0] == "[":
                frame[2] += 1
                pointer = f"{frame[1]}/{frame[2]}"
                key = None
            else:
                pos = yield from _read_key(source, pos, end, stack, err)
                pointer = frame[1] + "/" + escape_pointer_token(frame[2])
                key = frame[2]
            expect_value = True
        elif ch == closer:
            stack.pop()
            pos += 1
            expect_value = False
            continue
        else:
            err(f"expected ',' or {closer!r}", pos)


def _read_key(source: str, pos: int, end: int, stack: list, err):
    """Read `"key" :` at pos; yields the key string; returns the position of the value."""
    if pos >= end or source[pos] != '"':
        err("expected a property name", pos)
    m = _STRING.match(source, pos, end)
    if m is None:
        err("invalid string", pos)
    text, omap = decode_string(source, m.start(1), m.end(1))
    frame = stack[-1]
    frame[2] = text
    yield JsonString(frame[1] + "/" + escape_pointer_token(text), text, True, text, m.start(1), m.end(1), omap)
    pos = _WS.match(source, m.end(), end).end()
    if pos >= end or source[pos] != ":":
        err("expected ':'", pos)
    return _WS.match(source, pos + 1, end).end()
