"""Text folding (scanner/textfold.py): where two folds must agree they do, so the prefilter can never skip a
page the engine would flag because it folded the page differently from how the rules fold a unit."""

from __future__ import annotations

import html
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from scanner.injection.prefilter import fold_page
from scanner.loaders import load_bytes
from scanner.normalize import normalize, fold_text
from scanner.rulepack import load_pack
from scanner.scan import Scanner
from scanner.textfold import fold_accents, fold_collapsed, fold_words

SCANNER = Scanner(("injection",))
PREFILTER = SCANNER.prefilter
LEXICON, _ = load_pack()
PHRASES = [t for g in LEXICON.groups.values() for t in g.positive]

TRICKY = "豈 ﭝ ﷺ ￸ ÉXITO ﬁn Straße ẞ ｉｇｎｏｒａ ig\u200bnora аssistant İstanbul ǅ ﬀ ℓ Ⅳ ᾳ x\u0301 中文 \U000e0041 \u00ad" \
         "\ufeff \U0001d5c2 ⓐ ㎏ \u3000 ﹏"


@settings(max_examples=500, deadline=None)
@given(st.text(min_size=0, max_size=80) | st.sampled_from([TRICKY]))
def test_fold_text_is_exactly_what_normalize_folds(text):
    assert fold_text(text) == normalize(text).text


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=30), st.text(max_size=30), st.sampled_from(["", "豈", "ﭝ", "中", "é", "ｉ", "\u200b"]))
def test_normalize_folds_each_character_whatever_surrounds_it(a, b, c):
    """A character folds the same whether or not another one sends the text down the slow path (before this
    test, U+F900–FAFF and the Arabic presentation forms were NFKC-folded only next to such a character)."""
    assert normalize(a + c + b).text == normalize(a).text + normalize(c).text + normalize(b).text


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60),
       st.sampled_from(["", "&eacute;", "&#x49;", "&amp;", "\\u0041", "\\u00e9"]))
def test_the_prefilter_folds_a_page_as_the_rules_fold_its_decoded_text(text, escape):
    page = text + escape + text
    decoded = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), html.unescape(page))
    assert fold_page(page) == normalize(decoded).text


def _variant(c: str, how: int) -> str:
    if not c.isalpha():
        return c
    return [c, c.upper(), chr(ord(c.lower()) + 0xFEE0) if "a" <= c.lower() <= "z" else c,
            c + "\u0301", f"&#x{ord(c):x};", c + "\u200b", c.upper() + "\u0308"][how]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(PHRASES), st.lists(st.integers(0, 6), min_size=1, max_size=200),
       st.sampled_from(["<!-- {} -->", "<p>{}</p>", '<p style="display:none">{}</p>', '<img alt="{}">']))
def test_the_prefilter_passes_every_folded_variant_the_engine_flags(phrase, hows, wrapper):
    """Each letter of a lexicon phrase written another way the rules fold (case, fullwidth, a combining mark,
    a character reference, a zero-width space): whenever the engine flags the page, the prefilter passes it."""
    text = "".join(_variant(c, hows[i % len(hows)]) for i, c in enumerate(phrase))
    markup = f"<html><body><p>Aceros del Bajío</p>{wrapper.format(text)}</body></html>"
    findings = SCANNER.scan_document(load_bytes(markup.encode("utf-8"), "page.html"))
    if findings:
        assert PREFILTER.may_hold_injection(markup), (phrase, text, [f.rule_id for f in findings])


@given(st.text(max_size=80))
def test_fold_collapsed_is_the_rules_fold_with_single_spaces(text):
    assert fold_collapsed(text) == " ".join(normalize(text).text.split())


@given(st.text(max_size=80))
def test_fold_accents_keeps_every_offset(text):
    assert len(fold_accents(text)) == len(text)


def test_the_folds_say_what_they_do():
    assert fold_accents("Teléfono CELULAR Ñandú") == "telefono celular nandu"
    assert fold_words("  Hace 3\tDÍAS ") == "hace 3 dias"
    assert fold_page("Nota para el &#65;SISTENTE: ｉｇｎｏｒａ") == "nota para el asistente: ignora"


def test_fold_text_and_normalize_agree_on_every_code_point():
    """Each code point alone, so each takes whichever path `normalize` picks for it (a CJK compatibility
    ideograph such as U+FA2A once took the fast path and stayed unfolded while `fold_text` folded it)."""
    disagree = [hex(cp) for cp in range(0x80, 0x110000) if not 0xD800 <= cp < 0xE000
                and fold_text(chr(cp)) != normalize(chr(cp)).text]
    assert disagree == []
