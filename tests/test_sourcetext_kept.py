"""What a run keeps of a file for its outputs (`SourceText`): the text given is the text returned, whether it is
held as it is or compressed, across pickling (workers send it) and after it leaves the recently used."""

from __future__ import annotations

import pickle

from hypothesis import given, strategies as st

from scanner import sourcetext
from scanner.sourcetext import PACK_CHARS, SourceText

LONG = "línea con acentos ñ y un emoji 🙂\r\n" * (PACK_CHARS // 20) + "\ud800 fin sin salto"


def test_long_text_is_held_compressed_and_given_back_exactly():
    s = SourceText(LONG)
    assert isinstance(s._text, bytes) and len(s._text) < len(LONG) // 4
    assert s.text == LONG and s.github is None and SourceText(LONG, LONG).github == LONG
    assert s.index.line_col(len(LONG) - 1) == (LONG.count("\r\n") + 1, len("\ud800 fin sin salto"))


def test_short_text_is_held_as_it_is():
    s = SourceText("corto", "corto")
    assert s._text == "corto" and s.text == "corto" and s.github == "corto"


def test_github_reading_kept_apart_when_it_differs():
    github = "\ufeff" + LONG
    s = SourceText(LONG, github)
    assert s.text == LONG and s.github == github
    assert SourceText(None).text is None and SourceText(None).index is None


def test_pickled_copy_is_compressed_and_equal():
    s = SourceText(LONG, "\ufeff" + LONG)
    data = pickle.dumps(s)
    assert len(data) < len(LONG) // 2                   # sent from a worker compressed
    t = pickle.loads(data)
    assert t == s and t.text == LONG and t.github == "\ufeff" + LONG


def test_texts_leave_the_recently_used_and_come_back_the_same():
    many = [SourceText(LONG + str(i)) for i in range(3 * sourcetext._RECENT)]
    for _ in range(2):
        for i, s in enumerate(many):
            assert s.text == LONG + str(i)
    held = sum(1 for s in many if s._plain is not None)
    assert held == sourcetext._RECENT                  # only the last few are held decompressed


@given(st.text(), st.integers(min_value=0, max_value=3))
def test_any_text_round_trips(text, repeat):
    text = text * (1 + PACK_CHARS // max(1, len(text)) * repeat)
    s = SourceText(text)
    assert s.text == text
    assert pickle.loads(pickle.dumps(s)).text == text
