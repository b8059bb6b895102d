"""The offset property, on generated documents and on the real pages: for every unit, the source slice at
its positions is its raw text, and decoding that slice (by the unit's channel) gives the unit's text —
for the whole unit and for any span inside it."""

from __future__ import annotations

import html
import json
import random

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import require_realdata
from scanner.loaders import load_bytes, load_path
from scanner.units import Channel

RAW_CHANNELS = {Channel.COMMENT, Channel.SCRIPT, Channel.STYLE}


def _json_string(raw: str) -> str:
    return json.loads('"' + raw + '"')


def inner_decoder(unit):
    """How the unit's text is encoded in the document it sits in (HTML, or a JSON file)."""
    if unit.channel in RAW_CHANNELS or unit.channel == Channel.PLAIN_TEXT:
        return lambda raw: raw
    if unit.channel == Channel.JSON_LD:
        return (lambda raw: raw) if "invalid_json" in unit.attrs else _json_string
    if unit.channel in (Channel.JSON_STRING, Channel.JSON_KEY, Channel.HTTP_HEADER_NAME,
                        Channel.HTTP_HEADER_VALUE, Channel.HTTP_URL):
        return _json_string
    return html.unescape


def decoder(doc, unit):
    """How a unit's raw source in the file decodes to its text."""
    inner = inner_decoder(unit)
    if doc.kind == "text":
        return lambda raw: raw
    if unit.container:                       # nested in a JSON string of an envelope: unescape that first
        return lambda raw: inner(_json_string(raw))
    return inner


def check_document(doc, rng: random.Random, spans_per_unit: int = 3):
    for u in doc.units:
        if u.page is not None or u.channel == Channel.PDF_METADATA:
            continue
        raw = doc.text[u.start:u.end]
        decode = decoder(doc, u)
        assert decode(raw).replace("\ufffd", "") == u.text.replace("\ufffd", ""), (u.channel, u.locator)
        assert u.source_span(0, len(u.text)) == (u.start, u.end)
        for _ in range(spans_per_unit):
            i = rng.randrange(len(u.text))
            j = rng.randrange(i + 1, len(u.text) + 1)
            s, e = u.source_span(i, j)
            assert u.start <= s <= e <= u.end
            assert u.text[i:j] in decode(doc.text[s:e]) or "\ufffd" in u.text[i:j]


# --- generated HTML ----------------------------------------------------------------------------------

text_chars = st.sampled_from(list("abc xyz éñ<>&;#\"'=/\n\t") + ["&amp;", "&eacute;", "&#233;", "&#x41;", "&lt;",
                                                                   "&notanentity;", "&amp", "\u200b", "😀"])
texts = st.lists(text_chars, max_size=12).map("".join)
names = st.sampled_from(["p", "div", "span", "img", "a", "b", "li", "ul", "table", "td", "tr", "br", "svg", "text",
                         "noscript", "template", "textarea", "title", "section", "meta", "input", "P", "DiV"])
attr_names = st.sampled_from(["alt", "title", "class", "id", "style", "data-x", "aria-label", "placeholder", "content",
                              "href", "hidden", "value"])
attr_values = st.lists(st.sampled_from(list("ab é&;<>/= ") + ["&amp;", "&quot;", "&#39;", "'", '"']), max_size=8).map("".join)


@st.composite
def attribute(draw):
    name = draw(attr_names)
    value = draw(attr_values)
    quote = draw(st.sampled_from(['"', "'", ""]))
    if quote:
        value = value.replace(quote, "")
    else:
        value = "".join(c for c in value if c not in " \"'<>=`") or "v"
    if draw(st.booleans()):
        return f" {name}"
    return f" {name}={quote}{value}{quote}"


@st.composite
def fragment(draw, depth=0):
    kind = draw(st.sampled_from(["text", "element", "comment", "script", "style", "ld", "void"] if depth < 4
                                else ["text", "comment"]))
    if kind == "text":
        return draw(texts)
    if kind == "comment":
        return "<!--" + draw(texts).replace("-->", "") + "-->"
    if kind == "script":
        return "<script>" + draw(texts).replace("</", "") + "</script>"
    if kind == "style":
        return "<style>.c{display:none} #i{color:#fff}" + draw(texts).replace("</", "") + "</style>"
    if kind == "ld":
        value = draw(st.dictionaries(st.sampled_from(["@type", "name", "instructions"]), st.text(max_size=10), max_size=3))
        return '<script type="application/ld+json">' + json.dumps(value).replace("</", "<\\/") + "</script>"
    tag = draw(names)
    attrs = "".join(draw(st.lists(attribute(), max_size=3)))
    if kind == "void":
        return f"<{tag}{attrs}{draw(st.sampled_from(['', '/']))}>"
    children = "".join(draw(st.lists(fragment(depth + 1), max_size=4)))
    close = draw(st.sampled_from([f"</{tag}>", "", f"</{tag.upper()}>"]))
    return f"<{tag}{attrs}>{children}{close}"


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(fragment(), min_size=1, max_size=6).map("".join), st.randoms(use_true_random=False))
def test_generated_html_offsets(markup, rng):
    doc = load_bytes(markup.encode("utf-8"), "gen.html")
    check_document(doc, rng)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(fragment(), min_size=1, max_size=4).map("".join), st.randoms(use_true_random=False))
def test_generated_html_inside_an_http_envelope(markup, rng):
    env = {"request": {"url": "https://x.test/"}, "response": {
        "status": 200, "headers": {"content-type": "text/html"}, "body": markup}}
    doc = load_bytes(json.dumps(env, ensure_ascii=rng.random() < 0.5).encode("utf-8"), "env.json")
    check_document(doc, rng)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=15,
)


@settings(max_examples=300, deadline=None)
@given(json_values, st.booleans(), st.randoms(use_true_random=False))
def test_generated_json_offsets(value, ascii_only, rng):
    doc = load_bytes(json.dumps({"data": value}, ensure_ascii=ascii_only).encode("utf-8"), "gen.json")
    check_document(doc, rng)


# --- real pages --------------------------------------------------------------------------------------

def test_real_html_pages_offsets():
    rng = random.Random(7)
    for path in require_realdata("html"):
        doc = load_path(path)
        assert doc.units, path.name
        check_document(doc, rng, spans_per_unit=2)


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_real_json_datasets_offsets(suffix):
    rng = random.Random(11)
    files = [p for p in require_realdata("injection") if p.suffix == suffix]
    for path in files:
        doc = load_path(path)
        assert doc.units, path.name
        check_document(doc, rng, spans_per_unit=2)


def test_real_pages_text_agrees_with_lxml():
    """Differential check of the tokenizer: every word lxml puts in a text node is in one of our text
    channels (and we invent none), on every real page. Replacement characters from undecodable bytes differ
    by decoder and are left out."""
    import collections

    import lxml.html

    texty = {Channel.VISIBLE_TEXT, Channel.TITLE, Channel.NOSCRIPT, Channel.TEMPLATE, Channel.SVG_TEXT, Channel.TEXTAREA}
    for path in require_realdata("html"):
        doc = load_path(path)
        ours = collections.Counter(w for u in doc.units if u.channel in texty for w in u.text.split() if "\ufffd" not in w and "\x00" not in w)
        root = lxml.html.document_fromstring(doc.text.encode("utf-8"), parser=lxml.html.HTMLParser(encoding="utf-8"))
        words = []
        for el in root.iter():
            if isinstance(el.tag, str) and el.tag not in ("script", "style") and el.text:
                words += el.text.split()
            if el.tail:
                words += el.tail.split()
        theirs = collections.Counter(w for w in words if "\ufffd" not in w and "\x00" not in w)
        assert theirs - ours == collections.Counter(), path.name
        assert ours - theirs == collections.Counter(), path.name
