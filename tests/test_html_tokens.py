"""The HTML tokenizer against its plain definition, and its cost on hostile markup.

`reference_tokenize` below is the straightforward algorithm (the loader used it until it was made faster):
find each '<', try the markup regex there, and treat a '<' where it fails as text up to the next place it
matches. The tokenizer must give exactly its tokens, with the value positions the loader reads, and stay
linear where the straightforward one is quadratic (a start tag that runs to the end of the text).
"""

from __future__ import annotations

import html
import random
import re

import pytest
from hypothesis import given, settings, strategies as st

from scanner.loaders import html_tokens
from scanner.loaders.html import load_html
from scanner.loaders.html_tokens import parse_attrs, read_attrs, scan, tokenize

# The markup regex as it was: a start tag without '>' fails (the search then retries every later '<').
_REF_MARKUP = re.compile(
    r"""
    <(?:
        (?P<comment>!--)
      | (?P<endtag>/[a-zA-Z][^\t\n\f\r />]*+)(?:[^>]*+)>
      | (?P<starttag>[a-zA-Z][^\t\n\f\r />]*+)
            (?P<attrs>(?:[\t\n\f\r /]*+(?:[^\t\n\f\r />][^\t\n\f\r /=>]*+
                (?:[\t\n\f\r ]*+=[\t\n\f\r ]*+(?:"[^"]*+"|'[^']*+'|[^\t\n\f\r >]++))?)?)*+)
            [\t\n\f\r ]*+>
      | (?P<bogus>[!?/])[^>]*+>?
    )
    """,
    re.X,
)
_REF_COMMENT_END = re.compile(r"--!?>")
_REF_RAW = html_tokens.RAW_TEXT | html_tokens.RCDATA


def reference_tokenize(text: str):
    """(kind, start, end, tag, attrs, self_closing, data_start, data_end) per token, the straightforward way."""
    out = []
    pos, n = 0, len(text)
    while pos < n:
        lt = text.find("<", pos)
        if lt < 0:
            out.append(("text", pos, n, "", [], False, pos, n))
            break
        m = _REF_MARKUP.match(text, lt) if lt < n - 1 else None
        if m is None:
            nxt = _REF_MARKUP.search(text, lt + 1)
            stop = nxt.start() if nxt else n
            out.append(("text", pos, stop, "", [], False, pos, stop))
            pos = stop
            continue
        if lt > pos:
            out.append(("text", pos, lt, "", [], False, pos, lt))
        if m.group("comment"):
            body = lt + 4
            if text.startswith(">", body):
                out.append(("comment", lt, body + 1, "", [], False, body, body))
                pos = body + 1
            elif text.startswith("->", body):
                out.append(("comment", lt, body + 2, "", [], False, body, body))
                pos = body + 2
            else:
                close = _REF_COMMENT_END.search(text, body)
                if close is None:
                    out.append(("comment", lt, n, "", [], False, body, n))
                    break
                out.append(("comment", lt, close.end(), "", [], False, body, close.start()))
                pos = close.end()
            continue
        if m.group("starttag"):
            tag = m.group("starttag").lower()
            attrs = _ref_attrs(text, m.start("attrs"), m.end("attrs"))
            self_closing = m.end() - 2 >= m.end("starttag") and text[m.end() - 2] == "/"
            out.append(("start", lt, m.end(), tag, attrs, self_closing, 0, 0))
            pos = m.end()
            if tag in _REF_RAW:
                close = re.compile(r"</" + re.escape(tag) + r"(?=[\t\n\f\r />])", re.I).search(text, pos)
                stop = close.start() if close else n
                out.append(("rawtext", pos, stop, tag, [], False, pos, stop))
                pos = stop
            continue
        if m.group("endtag"):
            out.append(("end", lt, m.end(), m.group("endtag")[1:].lower(), [], False, 0, 0))
        else:
            out.append(("doctype", lt, m.end(), "", [], False, lt, m.end()))
        pos = m.end()
    return out


_REF_ATTR = re.compile(r"""([^\t\n\f\r />][^\t\n\f\r /=>]*+)
    (?:[\t\n\f\r ]*+=[\t\n\f\r ]*+(?:"(?P<dq>[^"]*+)"|'(?P<sq>[^']*+)'|(?P<uq>[^\t\n\f\r >]++)))?""", re.X)


def _ref_attrs(text: str, start: int, end: int):
    attrs, seen = [], set()
    for m in _REF_ATTR.finditer(text, start, end):
        name = m.group(1).lower()
        if name in seen:
            continue
        seen.add(name)
        for group in ("dq", "sq", "uq"):
            if m.group(group) is not None:
                attrs.append((name, m.group(group), m.start(group), m.end(group)))
                break
        else:
            attrs.append((name, None, m.end(), m.end()))
    return attrs


def tokens(text: str):
    return [(t.kind, t.start, t.end, t.tag, [(a.name, a.value, a.value_start, a.value_end) for a in t.attrs],
             t.self_closing, t.data_start if t.kind not in ("start", "end") else 0,
             t.data_end if t.kind not in ("start", "end") else 0) for t in tokenize(text)]


PIECES = list("<<<>>>//!!--??==\"\"''  \t\nabcAB&;") + [
    "<a", "<a ", "</a", "<!--", "-->", "--!>", "<script>", "</script>", "<SCRIPT x='</script>'>", "</scRipt ",
    "<title>", "</title", "<textarea>", "<p", "<!", "<?", " x=", '="', "='", ">", "<br/>", "<svg/>", " data-x=",
    "&amp;", "&#233;", "<!-->", "<!--->", "\u017fcript",
]
markup = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


@settings(max_examples=3000, deadline=None)
@given(markup)
def test_tokens_are_those_of_the_straightforward_algorithm(text):
    assert tokens(text) == reference_tokenize(text)


def test_tokens_match_on_many_random_strings():
    rng = random.Random(16)
    for _ in range(20_000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randrange(60)))
        assert tokens(text) == reference_tokenize(text), text


@settings(max_examples=2000, deadline=None)
@given(markup)
def test_the_loaders_attribute_reader_agrees_with_parse_attrs(text):
    wanted = frozenset({"alt", "title", "href", "x", "a", "b"})
    for t in scan(text):
        if t[0] != html_tokens.START:
            continue
        expected = parse_attrs(text, t[4], t[5])
        attrs, spans = read_attrs(text, t[4], t[5], wanted, html.unescape)
        assert attrs == {a.name: "" if a.value is None else html.unescape(a.value) for a in expected}
        assert (spans or []) == [(a.name, a.value_start, a.value_end) for a in expected
                                 if a.value is not None and (a.name in wanted or a.name.startswith("data-"))]
        for name, s, e in spans or []:
            assert html.unescape(text[s:e]) == attrs[name]


def test_the_real_pages_tokenize_as_the_straightforward_algorithm_does():
    from conftest import require_realdata

    from scanner.loaders.html import decode_html

    for path in require_realdata("html"):
        text = decode_html(path.read_bytes()).text
        assert tokens(text) == reference_tokenize(text), path.name


class _Counting:
    """Wraps a compiled pattern and counts the characters its `match` calls consume."""

    def __init__(self, rx):
        self.rx = rx
        self.calls = 0
        self.chars = 0

    def match(self, text, pos=0, *args):
        m = self.rx.match(text, pos, *args)
        self.calls += 1
        self.chars += (m.end() - pos) if m else 0
        return m


@pytest.mark.parametrize("unit", ["<a ", "<a b=c ", "<a b='c' ", '<a x="<b>" ', "<a x=\"<a x='", "<a\t/"])
def test_start_tags_without_end_cost_linear_work(unit, monkeypatch):
    """A start tag with no '>' before the end of the text is text, and so is every later one: deciding it must
    not rescan the rest of the text for each of them (the straightforward way took 65 s on 40,000 '<a ')."""
    work = {}
    for n in (2_000, 8_000):
        counting = _Counting(html_tokens._ATTR_STEP)
        monkeypatch.setattr(html_tokens, "_ATTR_STEP", counting)
        text = unit * n
        toks = list(scan(text))
        assert toks[0][0] == html_tokens.TEXT
        work[n] = counting.calls + counting.chars
        monkeypatch.undo()
    assert work[8_000] <= 4 * work[2_000] * 1.1, work
    # and the result is still the straightforward one (on a size it can afford)
    assert tokens(unit * 300) == reference_tokenize(unit * 300)


def test_hostile_unterminated_tags_load():
    doc = load_html(b"<p>antes</p>" + b"<a " * 50_000, "x.html")
    assert [u.text for u in doc.units][:1] == ["antes"]
    assert doc.text[doc.units[-1].start:doc.units[-1].end] == doc.units[-1].text
