"""The position-aware JSON reader: pointers, escapes, errors, depth, and agreement with json.loads."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from scanner.loaders.json_positions import JsonSyntaxError, decode_string, iter_strings


def strings(src):
    return [(s.pointer, s.is_key, s.text) for s in iter_strings(src)]


def test_pointers_and_keys():
    src = '{"a": ["x", {"b/c": "y", "t~": "z"}], "n": 1, "e": ""}'
    assert strings(src) == [
        ("/a", True, "a"), ("/a/0", False, "x"), ("/a/1/b~1c", True, "b/c"), ("/a/1/b~1c", False, "y"),
        ("/a/1/t~0", True, "t~"), ("/a/1/t~0", False, "z"), ("/n", True, "n"), ("/e", True, "e"), ("/e", False, ""),
    ]


def test_escapes_decode_and_map_exactly():
    src = r'{"k": "caf\u00e9 \"dicho\" \\ \ud83d\ude00 fin"}'
    (key, value) = list(iter_strings(src))
    assert value.text == 'café "dicho" \\ 😀 fin'
    assert src[value.start:value.end] == r'caf\u00e9 \"dicho\" \\ \ud83d\ude00 fin'
    i = value.text.index("é")
    assert src.__getitem__(slice(*value.map.span(i, i + 1))) == r"\u00e9"
    i = value.text.index('"')
    assert src.__getitem__(slice(*value.map.span(i, i + 1))) == r"\""
    i = value.text.index("😀")
    assert src.__getitem__(slice(*value.map.span(i, i + 1))) == r"\ud83d\ude00"
    i = value.text.index("fin")
    assert src.__getitem__(slice(*value.map.span(i, i + 3))) == "fin"
    assert json.loads('"' + src[value.start:value.end] + '"') == value.text


def test_lone_surrogate_becomes_replacement_character():
    text, _ = decode_string(r"a\ud800b", 0, 8)
    assert text == "a\ufffdb"


@pytest.mark.parametrize("bad", ['{"a": }', '{"a" 1}', '[1, 2', '{"a": "x\n"}', '[1] 2', '', '{"a": tru}', "[01]"])
def test_invalid_json_raises_with_offset(bad):
    with pytest.raises(JsonSyntaxError) as info:
        list(iter_strings(bad))
    assert "offset" in str(info.value)
    with pytest.raises(ValueError):
        json.loads(bad)


def test_deep_nesting_is_read_without_recursion():
    depth = 100_000
    src = "[" * depth + '"deep"' + "]" * depth
    (s,) = list(iter_strings(src))
    assert s.text == "deep"
    assert s.pointer == "/0" * 128 + f"/…{depth - 256} levels…" + "/0" * 128
    assert src[s.start:s.end] == "deep"
    src = '{"k": ' * depth + '"deep"' + "}" * depth
    found = list(iter_strings(src))
    assert len(found) == depth + 1 and found[-1].text == "deep"


def test_pointer_is_exact_up_to_256_levels():
    src = "[" * 256 + '"x"' + "]" * 256
    assert [s.pointer for s in iter_strings(src)] == ["/0" * 256]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


def _pointer_get(value, pointer):
    if pointer == "":
        return value
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        value = value[int(token)] if isinstance(value, list) else value[token]
    return value


@settings(max_examples=300, deadline=None)
@given(json_values, st.booleans(), st.booleans())
def test_agrees_with_json_loads(value, ascii_only, indent):
    src = json.dumps(value, ensure_ascii=ascii_only, indent=2 if indent else None)
    for s in iter_strings(src):
        # the slice between the quotes decodes (as JSON) to the unit's text
        assert json.loads('"' + src[s.start:s.end] + '"') == s.text.replace("\ufffd", "\ufffd")
        if not s.is_key:
            assert _pointer_get(value, s.pointer) == s.text or "\ufffd" in s.text
        # every character maps to a source span whose JSON decoding contains it
        for i in range(len(s.text)):
            a, b = s.map.span(i, i + 1)
            piece = src[a:b]
            assert s.text[i] in json.loads('"' + piece + '"') or s.text[i] == "\ufffd"
