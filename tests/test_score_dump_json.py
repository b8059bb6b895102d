"""`scanner.score.inputs.dump_json` writes exactly what `json.dumps(indent=2, ensure_ascii=False)` (then the
terminal escaping) writes: json's C encoder indented by msgspec's formatter, json.dumps for NaN and the
infinities."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scanner.score import inputs
from scanner.terminal import json_text


def reference(data) -> str:
    return json_text(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False)) + "\n"


scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(min_value=-(10 ** 40), max_value=10 ** 40),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12))
plain = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                      st.tuples(inner, inner),
                                                      st.dictionaries(st.text(max_size=6), inner, max_size=4)),
                     max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(plain)
def test_same_text_as_json_dumps(data):
    assert inputs.dump_json(data) == reference(data)


@pytest.mark.parametrize("data", [
    {}, [], {"a": {}}, {"a": []}, [[]], "x", 0, -0.0, 1e-07, 1e16, 1.5, float("nan"), float("-inf"),
    {"é\u202e\x1b": ["\x00", "\x7f", "😀", '"\\']}, (1, (2,)), {"k": True, "n": None, "f": False},
])
def test_edge_values(data):
    assert inputs.dump_json(data) == reference(data)


@pytest.mark.parametrize("data", [{1: "int key"}, {None: 1, True: 2, 1.5: 3}, {"a": {2: [1]}}, {"s": {1, 2}},
                                  {"d": __import__("datetime").date(2026, 1, 1)}])
def test_other_data_goes_to_json_dumps(data):
    """Keys that are not strings are json.dumps's to convert; a type JSON has no form for is its error."""
    try:
        expected = reference(data)
    except TypeError as exc:
        with pytest.raises(TypeError, match=str(exc)):
            inputs.dump_json(data)
        return
    assert inputs.dump_json(data) == expected


def test_deep_nesting_goes_to_json_dumps():
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    try:
        expected = reference(deep)
    except RecursionError:
        with pytest.raises(RecursionError):
            inputs.dump_json(deep)
        return
    assert inputs.dump_json(deep) == expected
