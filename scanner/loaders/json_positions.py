"""A position-aware JSON reader: every string with its JSON pointer and exact offsets in the source.

The standard json module gives values, not positions. This reader walks the source once with regexes run by
RE2 (scanner.rx: linear time on any input), iteratively (a document nested 100,000 levels deep is read, not a
RecursionError), and yields each string value and key with the span of its content between the quotes and an
`OffsetMap` through its escapes (`\\u00e9`, `\\"`, surrogate pairs). It accepts exactly what `json.loads`
accepts, and reports a syntax error with its offset otherwise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator

from scanner import rx
from scanner.offsetmap import OffsetMap, PieceBuilder

_WS = re.compile(r"[ \t\n\r]*")
_STRING = rx.compile(r'"((?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*)"')
_NUMBER = rx.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_ESCAPE = rx.compile(r'\\(?:u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|(["\\/bfnrt]))')
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
        hi, lo, single, simple = m.groups()
        if simple is not None:
            b.escape(_SIMPLE[simple], m.start(), 2)
        elif hi is not None:  # a high and a low surrogate escape: one character
            code = 0x10000 + ((int(hi, 16) - 0xD800) << 10) + (int(lo, 16) - 0xDC00)
            b.escape(chr(code), m.start(), 12)
        else:
            b.escape(_lone(int(single, 16)), m.start(), 6)
        pos = m.end()
    b.literal(source[pos:end], pos)
    return b.build(start, end)


def _lone(code: int) -> str:
    # A lone surrogate cannot be written as UTF-8; it becomes U+FFFD, occupying its escape.
    return "\ufffd" if 0xD800 <= code < 0xE000 else chr(code)


MAX_POINTER_DEPTH = 256


def _pointer(path: list[str]) -> str:
    """The JSON pointer of `path`; past MAX_POINTER_DEPTH levels the middle is elided (hostile nesting
    must cost linear time), and the elision says how many levels it hides."""
    if len(path) <= MAX_POINTER_DEPTH:
        return "/" + "/".join(path) if path else ""
    half = MAX_POINTER_DEPTH // 2
    hidden = len(path) - 2 * half
    return "/" + "/".join(path[:half]) + f"/…{hidden} levels…/" + "/".join(path[-half:])


def iter_strings(source: str, start: int = 0, end: int | None = None) -> Iterator[JsonString]:
    """Yield every key and string value of the JSON text source[start:end], in source order.

    Raises JsonSyntaxError (after yielding what came before it) when the text is not valid JSON.
    The path is a list of escaped tokens joined only when a string is yielded, so depth costs linear time.
    """
    if end is None:
        end = len(source)
    kinds: list[str] = []        # '{' or '[' per open container
    path: list[str] = []         # escaped pointer token of the current member, per open container
    keys: list = []              # the decoded key of the current member (None in arrays), per open container
    indexes: list[int] = []      # current index, per open container
    ws = _WS.match
    pos = ws(source, start, end).end()
    expect_value = True

    def err(msg: str, at: int):
        raise JsonSyntaxError(msg, at)

    def key_at(at: int):
        if at >= end or source[at] != '"':
            err("expected a property name", at)
        m = _STRING.match(source, at, end)
        if m is None:
            err("invalid string", at)
        key, kmap = decode_string(source, m.start(1), m.end(1))
        after = ws(source, m.end(), end).end()
        if after >= end or source[after] != ":":
            err("expected ':'", after)
        return key, kmap, m.start(1), m.end(1), ws(source, after + 1, end).end()

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
                yield JsonString(_pointer(path), keys[-1] if keys else None, False, text, m.start(1), m.end(1), omap)
                pos = m.end()
            elif ch == "{" or ch == "[":
                pos = ws(source, pos + 1, end).end()
                if pos < end and source[pos] == ("}" if ch == "{" else "]"):
                    pos += 1
                else:
                    kinds.append(ch)
                    indexes.append(0)
                    if ch == "[":
                        path.append("0")
                        keys.append(None)
                    else:
                        key, kmap, ks, ke, pos = key_at(pos)
                        path.append(escape_pointer_token(key))
                        keys.append(key)
                        yield JsonString(_pointer(path), key, True, key, ks, ke, kmap)
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
        pos = ws(source, pos, end).end()
        if not kinds:
            if pos != end:
                err("extra data after JSON value", pos)
            return
        if pos >= end:
            err("unexpected end of JSON", pos)
        ch = source[pos]
        kind = kinds[-1]
        closer = "}" if kind == "{" else "]"
        if ch == ",":
            pos = ws(source, pos + 1, end).end()
            if kind == "[":
                indexes[-1] += 1
                path[-1] = str(indexes[-1])
            else:
                key, kmap, ks, ke, pos = key_at(pos)
                path[-1] = escape_pointer_token(key)
                keys[-1] = key
                yield JsonString(_pointer(path), key, True, key, ks, ke, kmap)
            expect_value = True
        elif ch == closer:
            kinds.pop()
            path.pop()
            keys.pop()
            indexes.pop()
            pos += 1
        else:
            err(f"expected ',' or {closer!r}", pos)
