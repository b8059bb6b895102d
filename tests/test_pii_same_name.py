r"""`names.occurrences` (every other place a redacted name appears) finds exactly what the regex it replaces,
`(?<!\w)(?:n1|n2|…)(?!\w)` with the names longest first, finds with `re.finditer`."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from scanner.pii.names import occurrences

_ALPHABET = "aáAÁnñÑ _-.,1٣\n\u00a0"


def _regex(names: list[str], text: str) -> list[tuple[int, int]]:
    pattern = r"(?<![\w])(?:" + "|".join(re.escape(n) for n in names) + r")(?![\w])"
    return [m.span() for m in re.finditer(pattern, text)]


def _longest_first(names) -> list[str]:
    return sorted(set(names), key=lambda n: (-len(n), n))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.text(_ALPHABET, min_size=1, max_size=6), min_size=1, max_size=4),
       st.text(_ALPHABET, max_size=60))
def test_occurrences_are_the_regex_matches(names, text):
    names = _longest_first(names)
    assert occurrences(text, names) == _regex(names, text)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["Ana", "Ana María", "María", "Ana María Núñez", "Núñez", "ñ"]), min_size=1,
                max_size=4),
       st.lists(st.sampled_from(["Ana", "María", "Núñez", " ", ", ", "_", "x", "ñ", "Ana María", "\n", "1"]),
                max_size=14))
def test_overlapping_names_as_the_regex(names, parts):
    names, text = _longest_first(names), "".join(parts)
    assert occurrences(text, names) == _regex(names, text)


def test_examples():
    names = _longest_first(["Ana María", "María"])
    assert occurrences("Ana María y María, y AnaMaría; María_", names) == [(0, 9), (12, 17)]
    assert occurrences("", names) == []
