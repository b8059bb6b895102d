"""normalize() folds runs at C speed and only the characters that fold to zero or several one by one: the
folded text and the map back are those of the per-character reference, on any text."""

from hypothesis import given, settings
from hypothesis import strategies as st

from scanner.normalize import _normalize_by_character, normalize

# ASCII, accents, one-to-one folds, characters that vanish (U+200B, tag characters) or expand (ﬁ, ½, ㎏),
# CJK and astral characters, a lone surrogate.
special = st.sampled_from(list("AbZ ,.\néÉñ\u00ad\u200b\ufb01\u00bd\u338f\u3000\u4e00\uf900\uff21\ufe0f\ufffd")
                          + ["\U000e0041", "\U0001d400", "\U0001f600", "\ud800", "\u0430", "\u0301"])
texts = st.text(alphabet=special, max_size=80) | st.text(max_size=40)


@settings(max_examples=600, deadline=None)
@given(texts)
def test_runs_fold_as_characters_do(t):
    got = normalize(t)
    want = _normalize_by_character(t)
    assert got.text == want.text
    if got.index is not None:
        assert got.index == want.index
    else:                                      # a fast path: one to one, the identity map
        assert want.index == list(range(len(t)))


@settings(max_examples=600, deadline=None)
@given(texts)
def test_fold_text_by_runs_is_the_table(t):
    from scanner.normalize import _FOLD_TABLE, fold_text

    assert fold_text(t) == t.translate(_FOLD_TABLE) == normalize(t).text
