"""The stylesheet splitter finds tinycss2's top-level rules, and the lazy index gives every element the style
the whole-sheet parse gives it (scanner/loaders/css_split.py, css.SheetIndex)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import tinycss2
from hypothesis import example, given, settings
from hypothesis import strategies as st

from scanner.loaders import css as C
from scanner.loaders import css_split as S
from scanner.loaders.html import Element, load_html

from conftest import SHARED  # noqa: E402  (../shared, or CENTINELA_SHARED)


def tinycss2_rules(css: str) -> list[tuple]:
    """parse_stylesheet's top-level rules: (at-keyword or None, prelude, content or None), serialised."""
    out = []
    for node in tinycss2.parse_stylesheet(css, skip_comments=True, skip_whitespace=True):
        if node.type == "qualified-rule":
            out.append((None, tinycss2.serialize(node.prelude), tinycss2.serialize(node.content)))
        elif node.type == "at-rule":
            out.append((node.lower_at_keyword, tinycss2.serialize(node.prelude),
                        None if node.content is None else tinycss2.serialize(node.content)))
    return out


def split_rules(css: str) -> list[tuple]:
    norm = S.normalize(css)
    raws, _ = S.split(norm)
    out = []
    for r in raws:
        head = tinycss2.parse_component_value_list(norm[r.start:r.prelude_end], skip_comments=True)
        content = None if r.block_start is None else tinycss2.serialize(
            tinycss2.parse_component_value_list(norm[r.block_start:r.block_end], skip_comments=True))
        if r.at:
            assert head[0].type == "at-keyword"
            out.append((head[0].lower_value, tinycss2.serialize(head[1:]), content))
        else:
            out.append((None, tinycss2.serialize(head), content))
    return out


def sheet_rules(css: str) -> list[tuple]:
    """Every rule the lazy path makes of a sheet, in order, as comparable tuples."""
    norm = S.normalize(css)
    raws, _ = S.split(norm)
    return [_sig(rule) for raw in raws for rule in C._raw_rules(norm, raw)]


def _sig(rule: C.Rule) -> tuple:
    return (repr(rule.selector), tuple((d.prop, d.value, d.important) for d in rule.declarations))


def test_this_tinycss2_is_one_the_walk_was_checked_against():
    # When tinycss2 moves to a version the walk was not compared with, the fast path turns itself off
    # (exact, slower): this test says so, so that the comparison is run again and EXACT_FOR extended.
    assert S.ENABLED, f"tinycss2 {tinycss2.__version__} is not in css_split.EXACT_FOR {S.EXACT_FOR}"


# Fragments that decide the structure, each in the spellings tinycss2's tokenizer treats differently.
FRAGMENTS = [
    "a", "div", ".x", "#id", "p.c", " ", "\n", "\r\n", "\t", "\f", "\0", "{", "}", "(", ")", "[", "]", ";", ":", ",",
    "display:none", "color:red", "@media screen", "@media print", "@supports (x:y)", "@import 'a.css'", "@font-face",
    "@", "#", "-", "--", "-->", "<!--", "/*", "*/", "/* } { */", '"', "'", '"}"', "'{'", '"a\\"b"', '"\\\n"',
    "\\", "\\{", "\\}", "\\31 ", "\\75 rl(", "u\\72l(", "url(", "URL(", "url( 'q' )", "url(x{y)", "url(a b)",
    "url(a\"b)", "url(a\\)b)", "xurl(", "1url(", "#url(", "@url(", "-url(", "U+", "u+1", "U+1url(", "u+?", "U+0-7F",
    "rgb(", "!important", "*", ">", "~=", "||", "+", ".5", "1e3", "10px", "50%", "\u00e9", "\u212a", "\U0001f600",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40))
@example(["a", "{", "background:url(x{y)", "}", "b", "{", "display:none", "}"])
@example(["a", "{", "content:", '"}"', "}", "b{display:none}"])
@example(["/* } { */", "a", "{", "}"])
@example(["U+1url(", "{", ")", "}", "a", "{", "}"])
@example(["\\75 rl(", "{", ")", "}", "a", "{", "}"])
@example(["a", "(", "}", ")", "{", "color:red", "}"])
@example(["<!--", "a", "{", "}", "-->"])
@example(["@media print", "{", "a", "{", "display:none", "}", "}", "b", "{", "}"])
@example(["}", "a", "{", "}", "b", "{", "}"])
@example(['"\\\n"', "{", "}"])
@example(["a", "{", "url(a\\)b)", "}", "c", "{", "}"])
def test_split_finds_the_rules_tinycss2_finds(parts):
    css = "".join(parts)
    assert split_rules(css) == tinycss2_rules(css)
    assert sheet_rules(css) == [_sig(r) for r in C.parse_stylesheet(css)]


_BLOCKS: dict[str, list[str]] = {}


def _style_blocks(page: Path) -> list[str]:
    """The page's style sheets as the HTML loader collects them (loaded once for both tests)."""
    if str(page) not in _BLOCKS:
        doc = load_html(page.read_bytes(), page.name)
        _BLOCKS[str(page)] = next((el.resolver._blocks for el in doc.elements if el.resolver is not None), [])
    return _BLOCKS[str(page)]


def _real_pages() -> list[Path]:
    """The real pages the benchmarks scan, and every 20th of the benign training pages (a fixed sample: parsing
    every sheet of all 545 pages whole, the slow way being compared with, took a minute)."""
    pages = sorted((SHARED / "realdata" / "html").glob("*.html"))
    pages += sorted((SHARED / "training" / "benign-pages").glob("*.html"))[::20]
    return pages


def test_split_agrees_with_tinycss2_on_every_stylesheet_of_the_real_pages():
    pages = _real_pages()
    if not pages:
        pytest.skip("../shared/realdata/html and ../shared/training/benign-pages absent")
    sheets = 0
    for page in pages:
        for block in _style_blocks(page):
            assert split_rules(block) == tinycss2_rules(block), page.name
            sheets += 1
    assert sheets > 50


def _old_index(blocks: list[str]) -> C.RuleIndex:
    """The index as it was built before the lazy one: every sheet parsed whole, a sheet that fails left out."""
    rules: list[C.Rule] = []
    for block in blocks:
        try:
            rules.extend(C.parse_stylesheet(block, order_base=len(rules)))
        except Exception:
            continue
    return C.RuleIndex(rules)


def test_every_element_of_the_real_pages_with_the_most_css_gets_the_same_style():
    pages = _real_pages()
    if not pages:
        pytest.skip("../shared/realdata/html and ../shared/training/benign-pages absent")
    # the pages with the most style text: the lazy index is what they need, and what can go wrong there
    sized = sorted(pages, key=lambda p: -sum(map(len, _style_blocks(p))))[:3]
    compared = 0
    for page in sized:
        doc = load_html(page.read_bytes(), page.name)
        blocks = _style_blocks(page)
        old, new = _old_index(blocks), C.SheetIndex(blocks)
        for el in doc.elements:
            inline = C.parse_declarations(el.attrs["style"]) if "style" in el.attrs else []
            assert C.cascade(el, new, inline) == C.cascade(el, old, inline), (page.name, el.tag, el.attrs)
            compared += 1
    assert compared > 1000


NAMES = ["a", "b", "div", "p", "span", "x", "y", "hid", "Hid"]


@st.composite
def sheet_and_elements(draw):
    def compound():
        n = draw(st.sampled_from(NAMES))
        return draw(st.sampled_from([n, "." + n, "#" + n, "div." + n, "*", "[id]", "." + n + ":hover", "p > ." + n,
                                     "\\" + n, "." + n.upper(), n + " >", n + ">", "> " + n, "/* x */." + n, "." + n + "/**/"]))

    rules = []
    for _ in range(draw(st.integers(0, 12))):
        sel = ",".join(" ".join(compound() for _ in range(draw(st.integers(1, 3))))
                       for _ in range(draw(st.integers(1, 2))))
        decl = draw(st.sampled_from(["display:none", "display:block", "visibility:hidden", "color:red",
                                     "display:none!important", "opacity:0", "margin:0"]))
        rule = f"{sel}{{{decl}}}"
        if draw(st.booleans()) and draw(st.booleans()):
            rule = f"@media {draw(st.sampled_from(['screen', 'print', 'all']))}{{{rule}}}"
        rules.append(rule)
    blocks = ["".join(rules[: len(rules) // 2]), "".join(rules[len(rules) // 2:])]
    elements = []
    parent = None
    for i in range(draw(st.integers(1, 5))):
        attrs = {}
        if draw(st.booleans()):
            attrs["class"] = " ".join(draw(st.lists(st.sampled_from(NAMES), max_size=3)))
        if draw(st.booleans()):
            attrs["id"] = draw(st.sampled_from(NAMES))
        parent = Element(i, draw(st.sampled_from(["div", "p", "span", "a", "b"])), attrs, parent, 0, 0)
        elements.append(parent)
    return blocks, elements


@settings(max_examples=300, deadline=None)
@given(sheet_and_elements())
def test_the_lazy_index_cascades_as_the_whole_parse(case):
    blocks, elements = case
    old, new = _old_index(blocks), C.SheetIndex(blocks)
    for el in reversed(elements):           # the innermost first: rules parsed for it, then asked again
        assert C.cascade(el, new, []) == C.cascade(el, old, [])


def test_deep_nesting_parses_the_whole_sheet_as_before():
    for depth in (S_DEPTH := C._MAX_LAZY_DEPTH + 1, 5000):
        deep = "a{display:x" + "(" * depth + ")" * depth + "}b{display:none}"
        index = C.SheetIndex([deep, "p{color:red}"])
        assert index._sheets[0] == ("", [])          # parsed whole, as before
        for tag in ("a", "b", "p"):
            el = Element(0, tag, {}, None, 0, 0)
            assert C.cascade(el, index, []) == C.cascade(el, _old_index([deep, "p{color:red}"]), [])
    assert S_DEPTH > 1


@pytest.mark.parametrize("negated, positive", [
    (S._NAME_START_CLASS, r"[A-Za-z_\x80-\U0010FFFF]"),
    (S._NAME_CHAR_CLASS, r"[A-Za-z_\x80-\U0010FFFF0-9\-]"),
    (S._IDENT_SECOND_CLASS, r"[A-Za-z_\x80-\U0010FFFF\-]"),
])
def test_negated_name_classes_equal_their_positive_spelling(negated, positive):
    """The name classes are written negated only because `re` compiles them faster so: on every code point
    (surrogates included) each matches exactly the characters its positive spelling matches."""
    every = "".join(map(chr, range(0x110000)))
    assert [m.start() for m in re.finditer(negated, every)] == [m.start() for m in re.finditer(positive, every)]
