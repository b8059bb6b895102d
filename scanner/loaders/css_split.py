"""A stylesheet's top-level rules, found as tinycss2 finds them, without building its tokens.

`tinycss2.parse_stylesheet` builds a Python object for every token of a sheet; on a page that inlines its
site's CSS (hundreds of kilobytes) that took most of an injection scan's time, while the scan asks for the
style of a handful of elements. This module walks the same token grammar with one regular expression — the
alternatives in tinycss2's own order (`tokenizer.parse_component_value_list`), each consuming what tinycss2
consumes — keeping only what decides the structure: nesting of `{}`, `[]`, `()` and functions, strings,
comments, `url(` tokens, escapes, and the rule boundaries of `parse_stylesheet` (`<!--`/`-->` skipped before a
rule, an at-rule ended by `;` or its block, a qualified rule by its block). Each rule comes back as character
spans of the (newline-normalised) sheet, so the caller tokenizes only the rules it needs, with tinycss2, and
gets exactly the tokens tinycss2 would have given it (a span's text, tokenized alone, has the same tokens:
tests compare on every real page and on generated sheets).

The two token kinds whose consumption is intricate (unquoted `url(…)` with its bad-url recovery, unicode
ranges) are consumed by tinycss2's own functions, so they cannot drift; `EXACT_FOR` names the tinycss2 versions
this was checked against, and with any other version (or without those functions) `split` returns None and
the caller parses the whole sheet as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import tinycss2

try:
    from tinycss2.tokenizer import _consume_ident, _consume_unicode_range, _consume_url
except ImportError:  # pragma: no cover - another tinycss2: the caller parses whole sheets
    _consume_ident = _consume_url = _consume_unicode_range = None

EXACT_FOR = ("1.5.",)
ENABLED = _consume_url is not None and tinycss2.__version__.startswith(EXACT_FOR)

# The classes of name characters, each written as the negation of its ASCII complement: a name-start is
# A-Z, a-z, "_" or any non-ASCII code point (U+0080 to U+10FFFF). Spelled `[A-Za-z_\x80-\U0010FFFF]` the
# same sets cost `re` about 100 ms to compile (its charset optimiser walks the huge range); negated they take
# a few (tests/test_css_split.py checks each equals its positive spelling on every code point).
_NAME_START_CLASS = r"[^\x00-\x40\x5b-\x5e\x60\x7b-\x7f]"                 # [A-Za-z_\x80-\U0010FFFF]
_NAME_CHAR_CLASS = r"[^\x00-\x2c\x2e\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f]"    # [A-Za-z_\x80-\U0010FFFF0-9\-]
_IDENT_SECOND_CLASS = r"[^\x00-\x2c\x2e-\x40\x5b-\x5e\x60\x7b-\x7f]"       # [A-Za-z_\x80-\U0010FFFF\-]
_ESC = r"\\(?:[0-9A-Fa-f]{1,6}[ \n\t]?|[^\n]|\Z)"
_NAME = rf"(?:{_NAME_CHAR_CLASS}++|{_ESC})"
_IDENT_START = rf"(?:{_NAME_START_CLASS}|-(?:{_IDENT_SECOND_CLASS}|\\(?!\n))|\\(?!\n))"
_IDENT = rf"(?={_IDENT_START}){_NAME}+"
# One token per match, in the order tinycss2's tokenizer tries them. Groups name what the walk needs.
_TOKEN = re.compile(
    r"(?P<ws>[ \n\t]+)"
    r"|(?P<urange>[Uu]\+(?=[0-9A-Fa-f?]))"
    r"|(?P<cdc>-->)"
    rf"|(?P<ident>{_IDENT})(?P<call>\()?"
    rf"|[-+]?(?:[0-9]*\.)?[0-9]+(?:[eE][+-]?[0-9]+)?(?:{_IDENT}|%)?"
    rf"|(?P<at>@{_IDENT})"
    rf"|#(?={_NAME_CHAR_CLASS}|\\(?!\n)){_NAME}+"
    r"|(?P<open>[{\[(])"
    r"|(?P<close>[}\])])"
    r"""|(?P<string>"(?:[^"\\\n]|\\(?:[0-9A-Fa-f]{1,6}[ \n\t]?|[\s\S]))*(?:"|\\?\Z|(?=\n))"""
    r"""|'(?:[^'\\\n]|\\(?:[0-9A-Fa-f]{1,6}[ \n\t]?|[\s\S]))*(?:'|\\?\Z|(?=\n)))"""
    r"|(?P<comment>/\*[\s\S]*?(?:\*/|\Z))"
    r"|(?P<cdo><!--)"
    r"|(?P<semi>;)"
    r"|[\s\S]",
)
# Inside a block, a run of tokens that cannot open or close anything, nor start a url or a unicode range, is
# skipped in one match (each alternative atomic, in the tokenizer's order; an ident before "(" is a function,
# left to `_TOKEN`; "-", "/" and the rest go to `_TOKEN` one token at a time).
_NUMBER = r"[-+]?(?:[0-9]*\.)?[0-9]+(?:[eE][+-]?[0-9]+)?"
_RUN = re.compile(
    rf"(?:[ \n\t]+|-->|<!--|(?![Uu]\+[0-9A-Fa-f?])(?>{_IDENT})(?!\()|(?>{_NUMBER}(?:{_IDENT}|%)?)|@{_IDENT}"
    rf"|#(?={_NAME_CHAR_CLASS}|\\(?!\n)){_NAME}+|[:;,>~=!%*|^$&?.+<@#])+")
_URL_WS = re.compile(r"[ \n\t]*")
# An unquoted url that ends well: what `_consume_url` consumes in this case, read in C (the rest goes to it).
_PLAIN_URL = re.compile(r"[^\"'()\\ \n\t\x00-\x08\x0b\x0e-\x1f\x7f]*[ \n\t]*\)")
_CLOSER = {"{": "}", "[": "]", "(": ")"}


def normalize(css: str) -> str:
    """The sheet as tinycss2's tokenizer reads it (NUL replaced, every line break a "\\n")."""
    return css.replace("\0", "\uFFFD").replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n")


@dataclass(frozen=True, slots=True)
class RawRule:
    """A top-level rule as spans of the normalised sheet: `[start, prelude_end)` its first token up to its
    block (an at-rule's at-keyword included), `[block_start, block_end)` its block's content (None: none)."""
    at: bool
    start: int
    prelude_end: int
    block_start: int | None
    block_end: int | None


def split(css: str) -> tuple[list[RawRule], int] | None:
    """The top-level rules of `css` (already `normalize`d) as `tinycss2.parse_stylesheet` delimits them,
    qualified rules without a block (cut by the end of the sheet) left out as tinycss2 leaves them out, and the
    deepest nesting of blocks met. None when this tinycss2 is not one the walk was checked against."""
    if not ENABLED:
        return None
    rules: list[RawRule] = []
    stack: list[str] = []
    pos = 0
    n = len(css)
    start = -1              # the current rule's first token, -1 between rules
    at = False
    block_start = -1        # where the current rule's block content starts, -1 before its block
    prelude_end = -1
    depth = 0
    match = _TOKEN.match
    run = _RUN.match
    while pos < n:
        if stack:
            r = run(css, pos)
            if r is not None:
                pos = r.end()
                if pos >= n:
                    break
        m = match(css, pos)
        kind = m.lastgroup
        tok_start = pos
        pos = m.end()
        if kind == "ws" or kind == "comment":
            continue
        if start < 0:                           # between rules: `<!--` and `-->` are skipped there
            if kind == "cdo" or kind == "cdc":
                continue
            start = tok_start
            at = kind == "at"
        if kind == "ident":
            continue
        if kind == "call":                      # an ident and "(": a function, or a url token
            value = m.group("ident")
            if "\\" in value:                   # escapes: the name as tinycss2 decodes it
                value = _consume_ident(css, tok_start)[0]
            if value.isascii() and value.lower() == "url":
                q = _URL_WS.match(css, pos).end()
                if q >= n or css[q] not in "\"'":
                    plain = _PLAIN_URL.match(css, pos)
                    pos = plain.end() if plain else _consume_url(css, pos)[1]
                    continue
            stack.append(")")
            if len(stack) > depth:
                depth = len(stack)
        elif kind == "open":
            c = css[tok_start]
            if c == "{" and not stack and block_start < 0:
                prelude_end = tok_start
                block_start = pos
            stack.append(_CLOSER[c])
            if len(stack) > depth:
                depth = len(stack)
        elif kind == "close":
            if stack and stack[-1] == css[tok_start]:
                stack.pop()
                if not stack and block_start >= 0:
                    rules.append(RawRule(at, start, prelude_end, block_start, tok_start))
                    start, block_start = -1, -1
        elif kind == "semi":
            if at and not stack:
                rules.append(RawRule(True, start, tok_start, None, None))
                start = -1
        elif kind == "urange":
            pos = _consume_unicode_range(css, pos)[2]
    if start >= 0:
        if block_start >= 0:                    # the sheet ended inside the block: tinycss2 closes it there
            rules.append(RawRule(at, start, prelude_end, block_start, n))
        elif at:
            rules.append(RawRule(True, start, n, None, None))
    return rules, depth
