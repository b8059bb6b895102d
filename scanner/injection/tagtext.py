"""Markup cut out of a text with plain string operations, for the injection prefilter and block joining.

`strip_tags(s)` is exactly `rx.compile(r"<[^>]*>").sub("", s)` and `tag_names(s)` exactly
`rx.compile(r"</?([a-zA-Z][a-zA-Z0-9-]*)").findall(s)` (tests/test_tagtext.py checks both against the regexes
on generated text), at C speed per piece instead of a Python call per match: on a real page the regex `sub`
makes tens of thousands of matches. Both are one pass over the text (`str.split`), so linear in it.

Why the split is exact: `<[^>]*>` matches from a `<` to the first `>` after it, so between two consecutive
`>` (one piece of `s.split(">")`) the first `<` starts a match that ends at the `>` closing the piece; the
piece's text before that `<` stays, and a piece without `<` stays whole with its `>`. The last piece has no
`>` after it: nothing in it matches. A name (`</?` then a letter) contains no `<`, so each piece after a `<`
(`s.split("<")`) holds at most one, at its start.
"""

from __future__ import annotations

# Inline (phrasing) elements: a browser renders them inside a line, so text across their tags reads on — one
# sentence for the engine's block joining and the model's paragraphs, one word for the de-obfuscated reading when a
# tag stands between two letters. The one list for all of them (two copies had drifted apart).
INLINE_TAGS = frozenset({
    "a", "abbr", "b", "bdi", "bdo", "big", "cite", "code", "data", "del", "dfn", "em", "font", "i", "ins", "kbd",
    "label", "mark", "q", "s", "samp", "small", "span", "strike", "strong", "sub", "sup", "time", "tt", "u", "var",
    "wbr",
})

_NAME_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_NAME_CHARS = _NAME_START | frozenset("0123456789-")


def strip_tags(s: str) -> str:
    if "<" not in s or ">" not in s:
        return s
    pieces = s.split(">")
    last = pieces.pop()
    out = [p + ">" if (i := p.find("<")) < 0 else p[:i] for p in pieces]
    out.append(last)
    return "".join(out)


def tag_names(s: str) -> list[str]:
    if "<" not in s:
        return []
    names = []
    for piece in s.split("<")[1:]:
        if piece[:1] == "/":
            piece = piece[1:]
        if not piece or piece[0] not in _NAME_START:
            continue
        j = 1
        n = len(piece)
        while j < n and piece[j] in _NAME_CHARS:
            j += 1
        names.append(piece[:j])
    return names
