"""A position-exact HTML tokenizer.

Why not html.parser or lxml: lxml gives no character positions, and the standard library's HTMLParser,
which does, ran 6.0x slower than lxml's parse on the 37 real pages in ../shared/realdata (measured here),
while the scan must stay close to the parse. This tokenizer follows the HTML5 tokenizer's states closely
enough for exact positions: one regex finds the next markup construct, raw-text elements (script, style, …)
are skipped to their end tag, and anything that is not well-formed markup stays text, as a browser would show
it. It never raises. The regexes run with RE2 (scanner.rx), in linear time: with Python's backtracking engine
a page of unclosed tags (`<a b<a b<a b…`) cost time quadratic in its length (32 KB: 6.7 s).

Every token carries `start`/`end`: offsets into the decoded text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from scanner import rx

# Tag names per HTML5: a letter, then anything up to whitespace, '/' or '>'. (Every repetition is followed by
# a character it cannot take, so each run is read to its end whichever way the engine goes; the one place
# where RE2 and a possessive reading could part is a tag left open up to the end of the text, after a quoted
# value holding '>': RE2 then ends the tag at that '>', where a possessive match gave no tag.)
_ATTR = r"""
    (?P<name>[^\t\n\f\r />][^\t\n\f\r /=>]*)
    (?:[\t\n\f\r ]*=[\t\n\f\r ]*
       (?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|(?P<uq>[^\t\n\f\r >]+))
    )?
"""
_ATTR_RE = rx.compile(_ATTR, re.X)

_MARKUP = rx.compile(
    r"""
    <(?:
        (?P<comment>!--)
      | (?P<endtag>/[a-zA-Z][^\t\n\f\r />]*)(?:[^>]*)>
      | (?P<starttag>[a-zA-Z][^\t\n\f\r />]*)
            (?P<attrs>(?:[\t\n\f\r /]*(?:[^\t\n\f\r />][^\t\n\f\r /=>]*
                (?:[\t\n\f\r ]*=[\t\n\f\r ]*(?:"[^"]*"|'[^']*'|[^\t\n\f\r >]+))?)?)*)
            [\t\n\f\r ]*>
      | (?P<bogus>[!?/])[^>]*>?
    )
    """,
    re.X,
)
_COMMENT_END = rx.compile(r"--!?>")
RAW_TEXT = frozenset({"script", "style", "xmp", "iframe", "noembed", "noframes"})
RCDATA = frozenset({"textarea", "title"})
VOID = frozenset({
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr", "keygen",
})
_END_TAG_CACHE: dict[str, rx.Pattern] = {}


@dataclass(slots=True)
class Attr:
    name: str            # lower-cased
    value: str | None    # raw source of the value (undecoded), None for a bare attribute
    value_start: int     # offset of the value's first character (after any quote)
    value_end: int


@dataclass(slots=True)
class Token:
    kind: str            # "text" | "comment" | "start" | "end" | "doctype" | "rawtext"
    start: int
    end: int
    tag: str = ""        # lower-cased, for start/end/rawtext
    attrs: list[Attr] = field(default_factory=list)
    self_closing: bool = False
    data_start: int = 0  # comment/rawtext/text content span
    data_end: int = 0


def _end_tag_re(tag: str) -> rx.Pattern:
    pat = _END_TAG_CACHE.get(tag)
    if pat is None:
        pat = rx.compile(r"</" + re.escape(tag) + r"(?=[\t\n\f\r />])", re.I)
        _END_TAG_CACHE[tag] = pat
    return pat


def parse_attrs(text: str, start: int, end: int) -> list[Attr]:
    attrs: list[Attr] = []
    seen: set[str] = set()
    for m in _ATTR_RE.finditer(text, start, end):
        name = m.group("name").lower()
        if name in seen:  # HTML5: a repeated attribute is dropped
            continue
        seen.add(name)
        for group in ("dq", "sq", "uq"):
            if m.group(group) is not None:
                attrs.append(Attr(name, m.group(group), m.start(group), m.end(group)))
                break
        else:
            attrs.append(Attr(name, None, m.end(), m.end()))
    return attrs


def tokenize(text: str):
    """Yield tokens in source order; text tokens cover everything that is not markup."""
    pos = 0
    n = len(text)
    find = text.find
    search = _MARKUP.search
    while pos < n:
        lt = find("<", pos)
        if lt < 0:
            yield Token("text", pos, n, data_start=pos, data_end=n)
            return
        m = _MARKUP.match(text, lt) if lt < n - 1 else None
        if m is None:
            # A '<' that starts no markup is text; look for the next candidate after it.
            nxt = search(text, lt + 1)
            stop = nxt.start() if nxt else n
            yield Token("text", pos, stop, data_start=pos, data_end=stop)
            pos = stop
            continue
        if lt > pos:
            yield Token("text", pos, lt, data_start=pos, data_end=lt)
        if m.group("comment"):
            body = lt + 4
            # HTML5: "<!-->" and "<!--->" are empty comments.
            if text.startswith(">", body):
                yield Token("comment", lt, body + 1, data_start=body, data_end=body)
                pos = body + 1
                continue
            if text.startswith("->", body):
                yield Token("comment", lt, body + 2, data_start=body, data_end=body)
                pos = body + 2
                continue
            close = _COMMENT_END.search(text, body)
            if close is None:
                yield Token("comment", lt, n, data_start=body, data_end=n)
                return
            yield Token("comment", lt, close.end(), data_start=body, data_end=close.start())
            pos = close.end()
            continue
        if m.group("starttag"):
            tag = m.group("starttag").lower()
            attrs = parse_attrs(text, m.start("attrs"), m.end("attrs"))
            # The attribute group swallows a '/' before '>', so self-closing is read off the source.
            self_closing = m.end() - 2 >= m.end("starttag") and text[m.end() - 2] == "/"
            tok = Token("start", lt, m.end(), tag=tag, attrs=attrs, self_closing=self_closing)
            yield tok
            pos = m.end()
            if tag in RAW_TEXT or tag in RCDATA:
                close = _end_tag_re(tag).search(text, pos)
                stop = close.start() if close else n
                yield Token("rawtext", pos, stop, tag=tag, data_start=pos, data_end=stop)
                pos = stop
            continue
        if m.group("endtag"):
            yield Token("end", lt, m.end(), tag=m.group("endtag")[1:].lower())
            pos = m.end()
            continue
        # <!DOCTYPE …>, <?xml …?>, <![CDATA[…]]> and other bogus comments: markup a reader never sees.
        yield Token("doctype", lt, m.end(), data_start=lt, data_end=m.end())
        pos = m.end()
