"""YAML read safely, with every string's exact place in the text.

`read_nodes(text)` is the one place a recording's YAML is read: the safe loader of `scanner.yamlsafe` (libyaml's
C parser when present), no aliases (a node reached twice is refused: "billion laughs"), at most 64 levels
(`yamlsafe.MAX_DEPTH`) and `MAX_CHARS` characters. Keep it the only function that reads YAML here, so it can follow the
shared safe loader when that one changes.

PyYAML's nodes carry start and end marks (character offsets, the same with the C and the Python parser once
the BOM is gone). A scalar's value is not a slice of the text: quotes, `''` and `\\` escapes, line folding,
block indentation and chomping stand between them. `scalar_map` rebuilds the value piece by piece from the
text the node spans — the same scanning rules as PyYAML's scanner — and keeps, for each piece, where it came
from (`OffsetMap`): literal runs map character by character, an escape or a fold maps as a block. The rebuilt
value is compared with the parser's; when they differ (a corner the rules here do not cover), the scalar maps
as one block, which is never wrong, only coarse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import yaml

from scanner.loaders.json_positions import JsonString
from scanner.offsetmap import OffsetMap, PieceBuilder
from scanner.yamlsafe import _Loader as SafeLoader, compose

MAX_CHARS = 64 * 1024 * 1024
STR_TAG = "tag:yaml.org,2002:str"
BINARY_TAG = "tag:yaml.org,2002:binary"
# VCR.py's own cassette loader also takes these plain-data tags (cassettes written under Python 2 use them).
_PY_STR_TAGS = ("tag:yaml.org,2002:python/unicode", "tag:yaml.org,2002:python/str")
STRING_TAGS = (STR_TAG, BINARY_TAG) + _PY_STR_TAGS
_BREAKS = "\r\n\x85\u2028\u2029"
_ESCAPES = {"0": "\0", "a": "\x07", "b": "\x08", "t": "\t", "\t": "\t", "n": "\n", "v": "\x0b", "f": "\x0c",
            "r": "\r", "e": "\x1b", " ": " ", '"': '"', "\\": "\\", "/": "/", "N": "\x85", "_": "\xa0",
            "L": "\u2028", "P": "\u2029"}
_CODES = {"x": 2, "u": 4, "U": 8}
_RUNS = {"": re.compile(r"[^ \t\r\n\x85\u2028\u2029]+"), "'": re.compile(r"[^ \t\r\n\x85\u2028\u2029']+"),
         '"': re.compile(r'[^ \t\r\n\x85\u2028\u2029\\]+')}
_LINE_END = re.compile(r"[\r\n\x85\u2028\u2029]")


class _CassetteLoader(SafeLoader):
    """The safe loader plus VCR.py's plain-data tags: `python/unicode` and `python/str` are strings,
    `python/tuple` a list. Nothing else that names Python (objects, `apply`) is constructed."""


for _tag in _PY_STR_TAGS:
    _CassetteLoader.add_constructor(_tag, SafeLoader.construct_yaml_str)
_CassetteLoader.add_constructor("tag:yaml.org,2002:python/tuple", SafeLoader.construct_yaml_seq)


def read_nodes(text: str):
    """(root node, plain data) of a YAML text; (None, None) for an empty document. `yaml.YAMLError` for invalid
    or refused YAML (scanner.yamlsafe's bounds: no aliases, 64 levels, MAX_CHARS characters)."""
    return compose(text, loader=_CassetteLoader, max_bytes=MAX_CHARS)


# --- the strings of a document, with pointers ------------------------------------------------------------------

@dataclass
class Scalar:
    """Where a scalar sits: its whole node span, its content span (inside quotes, after a block header), style."""
    start: int
    end: int
    content_start: int
    content_end: int
    style: str             # "" plain, "'", '"', "|", ">"
    flow: bool             # inside a flow collection ([...] or {...}): `,[]{}` end a plain scalar there
    tag: str
    value: str
    exact: bool = True     # the offset map is character-exact (else the scalar maps as one block)


def _key_text(node) -> str | None:
    if not isinstance(node, yaml.ScalarNode):
        return None
    return node.value


def walk(text: str, root) -> tuple[list[JsonString], dict[str, Scalar]]:
    """Every string key and string (or binary) value as a JsonString with its JSON pointer, and every scalar's
    place by pointer (numbers included: a length field is rewritten there)."""
    strings: list[JsonString] = []
    scalars: dict[str, Scalar] = {}
    if root is None:
        return strings, scalars
    # (node, pointer, key it sits under, inside a flow collection)
    stack: list[tuple[Any, str, str | None, bool]] = [(root, "", None, False)]
    while stack:
        node, pointer, key, flow = stack.pop()
        if isinstance(node, yaml.ScalarNode):
            sc, js = _scalar(text, node, pointer, key, flow, is_key=False)
            scalars[pointer] = sc
            if js is not None:
                strings.append(js)
            continue
        inner_flow = flow or bool(node.flow_style)
        if isinstance(node, yaml.MappingNode):
            children = []
            for k, v in node.value:
                name = _key_text(k)
                if name is None:
                    continue          # a complex key: nothing a pointer can name
                p = f"{pointer}/{name.replace('~', '~0').replace('/', '~1')}"
                if k.tag in STRING_TAGS and name:
                    _, kjs = _scalar(text, k, p, name, inner_flow, is_key=True)
                    if kjs is not None:
                        strings.append(kjs)
                children.append((v, p, name, inner_flow))
            stack.extend(reversed(children))
        else:
            stack.extend(reversed([(child, f"{pointer}/{i}", None, inner_flow) for i, child in enumerate(node.value)]))
    strings.sort(key=lambda s: (s.start, not s.is_key))
    return strings, scalars


def _scalar(text: str, node, pointer: str, key: str | None, flow: bool, is_key: bool):
    start, end = node.start_mark.index, node.end_mark.index
    style = node.style or ""
    built = scalar_map(text, start, end, style, node.value)
    if built is None:
        sc = Scalar(start, end, start, end, style, flow, node.tag, node.value, exact=False)
        omap = OffsetMap([(0, start, len(node.value), end - start, False)], len(node.value), start, end)
        cs, ce = start, end
    else:
        cs, ce, omap = built
        sc = Scalar(start, end, cs, ce, style, flow, node.tag, node.value)
    if node.tag not in STRING_TAGS or not node.value:
        return sc, None
    return sc, JsonString(pointer, key, is_key, node.value, cs, ce, omap)


# --- scalar offset maps ----------------------------------------------------------------------------------------

def scalar_map(text: str, start: int, end: int, style: str, value: str) -> tuple[int, int, OffsetMap] | None:
    """(content start, content end, map) for the scalar node text[start:end] whose value the parser gave as
    `value`, or None when the rebuilt value differs."""
    try:
        if style in ("|", ">"):
            return _block(text, start, end, style == ">", value)
        s = _skip_properties(text, start, end)
        if style in ("'", '"'):
            if s >= end or text[s] != style or text[end - 1] != style:
                return None
            got = _flow(text, s + 1, end - 1, style)
            cs, ce = s + 1, end - 1
        else:
            got = _flow(text, s, end, "")
            cs, ce = s, end
    except (IndexError, ValueError):
        return None
    derived, omap = got.build(cs, ce)
    return (cs, ce, omap) if derived == value else None


def _skip_properties(text: str, i: int, end: int) -> int:
    """Past a tag (`!!binary`) and an anchor (`&a`) before the scalar's own text."""
    while i < end and text[i] in "!&":
        while i < end and text[i] not in " \t" + _BREAKS:
            i += 1
        while i < end and text[i] in " \t" + _BREAKS:
            i += 1
    return i


def _line_break(text: str, i: int) -> tuple[str, int]:
    """(normalised break, its source length) at i; ("", 0) when there is none."""
    ch = text[i] if i < len(text) else ""
    if ch == "\r":
        return "\n", 2 if text.startswith("\r\n", i) else 1
    if ch in "\n\x85":
        return "\n", 1
    if ch in "\u2028\u2029":
        return ch, 1
    return "", 0


def _flow(text: str, i: int, end: int, quote: str) -> PieceBuilder:
    """Plain (quote "") and quoted scalars: literal runs, escapes, and line folding."""
    b = PieceBuilder()
    double = quote == '"'
    run = _RUNS[quote]
    while i < end:
        m = run.match(text, i, end)
        j = m.end() if m else i
        if j > i:
            b.literal(text[i:j], i)
            i = j
            continue
        ch = text[i]
        if quote == "'" and ch == "'":
            if text.startswith("''", i):
                b.escape("'", i, 2)
                i += 2
                continue
            raise ValueError("lone quote")
        if double and ch == "\\":
            nxt = text[i + 1]
            if nxt in _ESCAPES:
                b.escape(_ESCAPES[nxt], i, 2)
                i += 2
            elif nxt in _CODES:
                n = _CODES[nxt]
                b.escape(chr(int(text[i + 2:i + 2 + n], 16)), i, 2 + n)
                i += 2 + n
            elif nxt in _BREAKS:
                lb, ln = _line_break(text, i + 1)
                k, breaks = _fold_breaks(text, i + 1 + ln, end)
                b.escape("".join(breaks), i, k - i)
                i = k
            else:
                raise ValueError("unknown escape")
            continue
        # whitespace: kept inside a line; folded across a line break
        j = i
        while j < end and text[j] in (" \t" if quote else " "):
            j += 1
        if j < end and text[j] in _BREAKS:
            lb, ln = _line_break(text, j)
            k, breaks = _fold_breaks(text, j + ln, end, tabs=bool(quote))
            derived = (lb if lb != "\n" else ("" if breaks else " ")) + "".join(breaks)
            b.escape(derived, i, k - i)
            i = k
        elif j > i:
            b.literal(text[i:j], i)
            i = j
        else:
            raise ValueError("unexpected character")
    return b


def _fold_breaks(text: str, i: int, end: int, tabs: bool = True) -> tuple[int, list[str]]:
    """Past the indentation and empty lines after a line break: (position of the next content, the breaks)."""
    breaks: list[str] = []
    blank = " \t" if tabs else " "
    while i < end:
        while i < end and text[i] in blank:
            i += 1
        lb, ln = _line_break(text, i)
        if not ln or i >= end:
            break
        breaks.append(lb)
        i += ln
    return i, breaks


def _block(text: str, start: int, end: int, folded: bool, value: str):
    i = _skip_properties(text, start, end)
    if i >= end or text[i] not in "|>":
        return None
    i += 1
    chomping, increment = None, None
    while i < end and text[i] in "+-0123456789":
        if text[i] in "+-":
            chomping = text[i] == "+"
        else:
            increment = int(text[i])
        i += 1
    while i < end and text[i] not in _BREAKS:      # spaces and a comment to the end of the header line
        i += 1
    lb, ln = _line_break(text, i)
    content_start = i + ln
    # The indentation: of the first non-empty line, unless an indicator says; with an indicator the parent's
    # indentation (unknown here) adds to it, so every indentation up to the first line's is tried.
    first = _first_indent(text, content_start, end)
    candidates = [first] if increment is None else list(range(first, 0, -1))
    for indent in candidates:
        got = _block_pieces(text, content_start, end, indent, folded, chomping)
        if got is None:
            continue
        derived, omap = got.build(content_start, end)
        if derived == value:
            return content_start, end, omap
    return None


def _first_indent(text: str, i: int, end: int) -> int:
    best = 0
    while i < end:
        j = i
        while j < end and text[j] == " ":
            j += 1
        lb, ln = _line_break(text, j)
        if ln:
            best = max(best, j - i)
            i = j + ln
            continue
        return max(best, j - i)
    return max(best, 1)


def _block_pieces(text: str, i: int, end: int, indent: int, folded: bool, chomping) -> PieceBuilder | None:
    b = PieceBuilder()

    def breaks_from(k: int) -> tuple[int, list[str], int]:
        """Past lines shorter than the indentation: (next content position, the breaks, column there)."""
        out: list[str] = []
        while True:
            col = 0
            while k < end and col < indent and text[k] == " ":
                k += 1
                col += 1
            lb, ln = _line_break(text, k)
            if ln and k < end:
                out.append(lb)
                k += ln
                continue
            return k, out, col

    k, breaks, col = breaks_from(i)
    pending_start = i
    line_break = ""
    tail_start = i                  # with no content line, the kept breaks are the whole block
    while col == indent and k < end:
        if breaks:
            b.escape("".join(breaks), pending_start, k - pending_start)
        leading_non_space = text[k] not in " \t"
        m = _LINE_END.search(text, k, end)
        j = m.start() if m else end
        b.literal(text[k:j], k)
        line_break, ln = _line_break(text, j)
        after = j + ln
        k, breaks, col = breaks_from(after)
        tail_start = j
        if col == indent and k < end:
            if folded and line_break == "\n" and leading_non_space and text[k] not in " \t":
                if not breaks:
                    b.escape(" ", j, k - j)
                else:
                    b.escape("".join(breaks), j, k - j)
                breaks = []
            else:
                b.escape(line_break + "".join(breaks), j, k - j)
                breaks = []
            pending_start = k
        else:
            break
    tail = ""
    if chomping is not False:
        tail += line_break
    if chomping is True:
        tail += "".join(breaks)
    if tail:
        if end <= tail_start:
            return None
        b.escape(tail, tail_start, end - tail_start)
    return b


def plain_value(value: Any) -> Any:
    """A constructed YAML value as JSON would hold it (dates as ISO strings), for the format readers."""
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    return value
