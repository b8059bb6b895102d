"""A position-exact HTML tokenizer.

Why not html.parser or lxml: lxml gives no character positions, and the standard library's HTMLParser,
which does, ran 6.0x slower than lxml's parse on the 37 real pages in ../shared/realdata (measured here),
while the scan must stay close to the parse. This tokenizer follows the HTML5 tokenizer's states closely
enough for exact positions: one C-speed regex finds the next markup construct, raw-text elements
(script, style, …) are skipped to their end tag, and anything that is not well-formed markup stays text,
as a browser would show it. It never raises, and it runs in linear time on any input.

`scan()` yields compact tuples (the HTML loader reads those); `tokenize()` yields the same tokens as `Token`
objects. Every token carries `start`/`end`: offsets into the decoded text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Tag names per HTML5: a letter, then anything up to whitespace, '/' or '>'.
# Groups: 1 name, then exactly one of 2 (double-quoted value), 3 (single-quoted), 4 (unquoted): `lastindex`
# says which (1: a bare attribute).
_ATTR = r"""
    ([^\t\n\f\r />][^\t\n\f\r /=>]*+)
    (?:[\t\n\f\r ]*+=[\t\n\f\r ]*+
       (?:"([^"]*+)"|'([^']*+)'|([^\t\n\f\r >]++))
    )?
"""
_ATTR_RE = re.compile(_ATTR, re.X)
# One iteration of the attribute loop of a start tag in _MARKUP, exactly as written there.
_ATTR_STEP = re.compile(r"""[\t\n\f\r /]*+(?:[^\t\n\f\r />][^\t\n\f\r /=>]*+
                (?:[\t\n\f\r ]*+=[\t\n\f\r ]*+(?:"[^"]*+"|'[^']*+'|[^\t\n\f\r >]++))?)?""", re.X)

# Groups: 1 comment opener, 2 end-tag name, 3 start-tag name, 4 its attributes, 5 set when the start tag runs
# to the end of the text without a '>' (then it is no tag: see `_unterminated`). `lastindex` tells them apart
# (None: a bogus comment or doctype). The attribute loop stops only at '>' or at the end of the text, so the
# start-tag branch never fails: a search never backtracks over a long unterminated tag.
_MARKUP = re.compile(
    r"""
    <(?:
        (!--)
      | /([a-zA-Z][^\t\n\f\r />]*+)(?:[^>]*+)>
      | ([a-zA-Z][^\t\n\f\r />]*+)
            ((?:[\t\n\f\r /]*+(?:[^\t\n\f\r />][^\t\n\f\r /=>]*+
                (?:[\t\n\f\r ]*+=[\t\n\f\r ]*+(?:"[^"]*+"|'[^']*+'|[^\t\n\f\r >]++))?)?)*+)
            [\t\n\f\r ]*+(?:>|(\Z))
      | [!?/][^>]*+>?
    )
    """,
    re.X,
)
_TAG_NAME = re.compile(r"[a-zA-Z][^\t\n\f\r />]*+")
_COMMENT_END = re.compile(r"--!?>")
RAW_TEXT = frozenset({"script", "style", "xmp", "iframe", "noembed", "noframes"})
RCDATA = frozenset({"textarea", "title"})
_RAW_OR_RCDATA = RAW_TEXT | RCDATA
VOID = frozenset({
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr", "keygen",
})
_END_TAG_CACHE: dict[str, re.Pattern] = {}
_ASCII_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")

# Kinds of the tuples `scan()` yields:
#   (TEXT, start, end)                                        text between markup
#   (START, start, end, tag, attrs_start, attrs_end, self_closing)
#   (END, start, end, tag)
#   (COMMENT, start, end, data_start, data_end)
#   (RAWTEXT, start, end, tag)                                content of script, style, title, …
#   (DOCTYPE, start, end)                                     <!DOCTYPE …>, <?xml …?>, bogus comments
TEXT, START, END, COMMENT, RAWTEXT, DOCTYPE = range(6)
KIND_NAMES = ("text", "start", "end", "comment", "rawtext", "doctype")


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


def _end_tag_re(tag: str) -> re.Pattern:
    pat = _END_TAG_CACHE.get(tag)
    if pat is None:
        pat = re.compile(r"</" + re.escape(tag) + r"(?=[\t\n\f\r />])", re.I)
        _END_TAG_CACHE[tag] = pat
    return pat


def parse_attrs(text: str, start: int, end: int) -> list[Attr]:
    """The attributes of a start tag whose attribute source is text[start:end]; a repeated name is dropped
    (HTML5: the first one counts)."""
    attrs: list[Attr] = []
    seen: set[str] = set()
    for m in _ATTR_RE.finditer(text, start, end):
        name = m.group(1).lower()
        if name in seen:
            continue
        seen.add(name)
        k = m.lastindex
        if k == 1:
            attrs.append(Attr(name, None, m.end(), m.end()))
        else:
            attrs.append(Attr(name, m.group(k), m.start(k), m.end(k)))
    return attrs


# The attribute source of a start tag is a run of loop iterations (see _MARKUP): this pattern matches one per
# match, so consecutive matches tile it and a value's offset is the sum of the lengths before it. Groups: the
# separator, the name, the '=' with its spaces, then the double-quoted, single-quoted or unquoted value. The
# name is optional so that a trailing run of separators is one (nameless) match: were it required, a search
# would rescan that run from each of its positions (quadratic on `<a` + 100,000 spaces + `>`).
_ATTR_TILE = re.compile(r"""([\t\n\f\r /]*+)(?:([^\t\n\f\r />][^\t\n\f\r /=>]*+)
    (?:([\t\n\f\r ]*+=[\t\n\f\r ]*+)(?:"([^"]*+)"|'([^']*+)'|([^\t\n\f\r >]++)))?)?""", re.X)


def read_attrs(text: str, start: int, end: int, wanted, unescape) -> tuple[dict[str, str], list | None]:
    """What the HTML loader needs of a start tag's attributes (the same ones `parse_attrs` finds): a dict of
    name -> value (character references decoded by `unescape`; "" for a bare attribute), and the value spans
    of the attributes with a value whose name is in `wanted` or starts with "data-", as (name, start, end) in
    source order (None when there are none). One C-speed `findall` per tag: no match object per attribute."""
    attrs: dict[str, str] = {}
    spans = None
    p = start
    for sep, name, eq, dq, sq, uq in _ATTR_TILE.findall(text, start, end):
        if not name:            # the separators after the last attribute (or an empty match at the end)
            continue
        p += len(sep) + len(name)
        name = name.lower()
        if not eq:
            if name not in attrs:
                attrs[name] = ""
            continue
        p += len(eq)
        if uq:
            value, vs = uq, p
            p += len(uq)
        else:
            value = dq or sq
            vs = p + 1
            p += len(value) + 2
        if name in attrs:
            continue
        attrs[name] = unescape(value) if "&" in value else value
        if name in wanted or name.startswith("data-"):
            if spans is None:
                spans = []
            spans.append((name, vs, vs + len(value)))
    return attrs, spans


class _Unterminated:
    """Finds where markup resumes after a '<' whose start tag runs to the end of the text (no '>').

    Such a '<' is text, and so is every later '<' whose tag also runs to the end. Trying each of them with
    the regex would rescan the rest of the text every time (quadratic: 100,000 `<a ` took minutes). The
    attribute loop is deterministic, so where a scan goes from a position between attributes depends on that
    position alone: positions known to lead to the end of the text are remembered, and a later tag whose
    scan reaches one of them fails at once.
    """

    __slots__ = ("text", "dead")

    def __init__(self, text: str):
        self.text = text
        self.dead: set[int] = set()

    def runs_to_end(self, lt: int) -> bool:
        """Whether the start tag at `lt` (a '<' then an ASCII letter) reaches the end of the text without '>'."""
        text, dead = self.text, self.dead
        p = _TAG_NAME.match(text, lt + 1).end()
        visited = []
        step = _ATTR_STEP.match
        while p not in dead:
            visited.append(p)
            e = step(text, p).end()
            if e == p:
                if p < len(text):       # the loop stops only at '>' or at the end
                    return False
                break
            p = e
        dead.update(visited)
        return True

    def next_markup(self, lt: int, n: int) -> int:
        """Offset of the first '<' after `lt` that starts markup (n when none does)."""
        text = self.text
        q = lt
        while True:
            q = text.find("<", q + 1, n - 1)
            if q < 0:
                return n
            c = text[q + 1]
            if c in "!?/":               # a comment, an end tag or a bogus comment: always markup
                return q
            if c in _ASCII_LETTERS and not self.runs_to_end(q):
                return q


def scan(text: str):
    """Yield compact token tuples (see the kinds above) in source order; text tokens cover everything that
    is not markup."""
    pos = 0
    n = len(text)
    search = _MARKUP.search
    match = _MARKUP.match
    unterminated = None
    while pos < n:
        if unterminated is None:
            m = search(text, pos)
            if m is None:
                yield (TEXT, pos, n)
                return
            k = m.lastindex
            lt = m.start()
            if k == 5:
                # A start tag that runs to the end of the text is no tag: this '<' is text, up to the next
                # markup. From here on markup is found candidate by candidate (see _Unterminated).
                unterminated = _Unterminated(text)
                lt = unterminated.next_markup(lt, n)
        else:
            lt = unterminated.next_markup(pos - 1, n)
            k = 0
        if lt > pos:
            yield (TEXT, pos, lt)
        if unterminated is not None:
            if lt >= n:
                return
            m = match(text, lt)
            k = m.lastindex
        end = m.end()
        if k == 4:
            tag = m.group(3).lower()
            yield (START, lt, end, tag, m.start(4), m.end(4), text[end - 2] == "/" and end - 2 >= m.end(3))
            pos = end
            if tag in _RAW_OR_RCDATA:
                close = _end_tag_re(tag).search(text, pos)
                stop = close.start() if close else n
                yield (RAWTEXT, pos, stop, tag)
                pos = stop
        elif k == 2:
            yield (END, lt, end, m.group(2).lower())
            pos = end
        elif k == 1:
            body = lt + 4
            # HTML5: "<!-->" and "<!--->" are empty comments.
            if text.startswith(">", body):
                yield (COMMENT, lt, body + 1, body, body)
                pos = body + 1
            elif text.startswith("->", body):
                yield (COMMENT, lt, body + 2, body, body)
                pos = body + 2
            else:
                close = _COMMENT_END.search(text, body)
                if close is None:
                    yield (COMMENT, lt, n, body, n)
                    return
                yield (COMMENT, lt, close.end(), body, close.start())
                pos = close.end()
        else:
            # <!DOCTYPE …>, <?xml …?>, <![CDATA[…]]> and other bogus comments: markup a reader never sees.
            yield (DOCTYPE, lt, end)
            pos = end


def tokenize(text: str):
    """Yield `Token`s in source order; text tokens cover everything that is not markup."""
    for t in scan(text):
        kind = t[0]
        if kind == TEXT:
            yield Token("text", t[1], t[2], data_start=t[1], data_end=t[2])
        elif kind == START:
            yield Token("start", t[1], t[2], tag=t[3], attrs=parse_attrs(text, t[4], t[5]), self_closing=t[6])
        elif kind == END:
            yield Token("end", t[1], t[2], tag=t[3])
        elif kind == COMMENT:
            yield Token("comment", t[1], t[2], data_start=t[3], data_end=t[4])
        elif kind == RAWTEXT:
            yield Token("rawtext", t[1], t[2], tag=t[3], data_start=t[1], data_end=t[2])
        else:
            yield Token("doctype", t[1], t[2], data_start=t[1], data_end=t[2])
