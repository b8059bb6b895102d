"""The document's lower-case words (what tells a capitalised heading from a name) by string methods: the same
set as the regex they replace, on generated and real text."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import REALDATA
from scanner.pii.names import _WORD_TABLE, lower_words

ORACLE = re.compile(r"(?<![\w])[a-záéíóúñü]{3,}(?![\w])")
# letters of both cases with and without accents, digits (ASCII and others), _, combining marks, spaces of
# several kinds, punctuation, letters beyond the Basic Multilingual Plane
ALPHABET = "abcxyzABCÁÉñÑáéíóúüÜçß_09٣²\u0301 \t\n\u00a0\u2003.,;-'«»@/" + "\U0001d400\U00020000\u4e2d"


@given(st.text(alphabet=ALPHABET, max_size=80))
def test_lower_words_are_the_regex_words(text):
    assert lower_words(text) == set(ORACLE.findall(text))


def test_lower_words_on_real_pages():
    pages = sorted((REALDATA / "html").glob("*.html"))[:8] if REALDATA.is_dir() else []
    if not pages:
        pytest.skip("../shared/realdata absent")
    for p in pages:
        text = p.read_text(encoding="utf-8", errors="replace")
        assert lower_words(text) == set(ORACLE.findall(text)), p.name


def test_the_table_stays_within_the_basic_plane():
    lower_words("".join(chr(c) for c in range(0x10000, 0x10400)) + "".join(chr(c) for c in range(0x3000, 0x3400)))
    assert all(code < 0x10000 for code in _WORD_TABLE)
