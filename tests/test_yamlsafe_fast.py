"""The event-built fast path of `scanner.yamlsafe.safe_load` gives exactly what `compose` gives: the same data
(types included: 1, 1.0 and True are equal in Python but not here), or the same refusal or error."""

from __future__ import annotations

import math
from datetime import date, datetime

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scanner import yamlsafe


def typed(value):
    """A structure that compares types too (and NaN equal to itself)."""
    if isinstance(value, dict):
        return ("dict", [(typed(k), typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [typed(v) for v in value])
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, value)


def reference(text: str, unique_keys: bool = False):
    try:
        return "ok", typed(yamlsafe.compose(text, unique_keys=unique_keys)[1])
    except Exception as exc:  # noqa: BLE001 - compared with the fast path's outcome
        return type(exc).__name__, str(exc)


def fast(text: str, unique_keys: bool = False):
    try:
        return "ok", typed(yamlsafe.safe_load(text, unique_keys=unique_keys))
    except Exception as exc:  # noqa: BLE001
        return type(exc).__name__, str(exc)


def built_by_events(text: str, unique_keys: bool = False) -> bool:
    try:
        yamlsafe._load_events(text, unique_keys)
    except yamlsafe._NotPlain:
        return False
    except Exception:  # noqa: BLE001 - an error: safe_load hands it to compose
        return False
    return True


CASES = [
    "", "---\n", "a: 1\n", "- x\n- 'y'\n- \"z\"\n", "just a scalar\n", "'quoted'\n",
    # dates: plain ones are dates, quoted ones stay strings
    "d: 2026-06-17\nq: '2026-06-17'\nqq: \"2026-06-17\"\nt: 2026-10-02T14:11:09Z\nt2: 2001-12-14 21:59:43.10 -5\n",
    "bad: 2026-13-45\n",
    # YAML 1.1 booleans, nulls, numbers in every base, sexagesimal, special floats
    "b: [yes, No, TRUE, off, On, y, n]\nn: [~, null, Null, '', \"\"]\nempty:\n",
    "i: [0, -0, +12, 0b1010, 0x1F, 017, 0o17, 1_000, 190:20:30, 09]\n",
    "f: [1.5, -.5, 1e3, 1.0e+3, 6.8523015e+5, .inf, -.Inf, .NaN, 190:20:30.15, 1_0.5]\n",
    # keys of every scalar kind, repeated keys (last value, first place), keys equal in Python
    "1: one\n1.0: float\ntrue: bool\n~: none\n2026-01-01: date\n",
    "a: 1\nb: 2\na: 3\n", "a: 1\n'a': 2\n", "x: 1\n01: 2\n1: 3\n",
    # merge and value keys, tags, aliases, anchors without aliases, collection keys
    "base: &b {x: 1}\nother:\n  <<: *b\n  y: 2\n", "m:\n  <<: {x: 1}\n  y: 2\n", "=: value\n",
    "s: !!str 2026-01-01\ni: !!int '7'\n", "s: !custom x\n", "set: !!set {a, b}\n", "o: !!omap [a: 1]\n",
    "bin: !!binary aGVsbG8=\n", "a: &x [1, 2]\nb: *x\n", "a: &x scalar\n", "a: &x scalar\nb: *x\n",
    "? [a, b]\n: value\n", "? {a: 1}\n: value\n", "! x\n", "a: ! 12\n",
    # styles: flow, block scalars, comments, multi-line plain, escapes, unicode, documents
    "{a: [1, {b: c}], 'd': \"e\\te\"}\n", "text: |\n  line one\n  line two\nfold: >-\n  a\n  b\n",
    "# comment\na: b # trailing\nc: 'it''s'\n", "plain: multi\n  line\n", "u: \"\\u00e9\\U0001F600\"\nñ: ü\n",
    "--- a\n--- b\n", "a: 1\n...\n", "%YAML 1.1\n---\na: 1\n", "a: [1, 2\n", "a: b: c\n", "\t- x\n",
    "key: value\r\nother: 2\r\n", "k: \"unterminated\n",
]


@pytest.mark.parametrize("text", CASES)
@pytest.mark.parametrize("unique_keys", [False, True])
def test_fast_path_matches_compose_on_hand_written_documents(text, unique_keys):
    assert fast(text, unique_keys) == reference(text, unique_keys)


def test_plain_documents_are_built_from_events_and_others_are_not():
    """The fast path is really taken for what our files hold, and left for what it cannot build exactly."""
    assert built_by_events("c1:\n  https://x/1: {supports: true, group: g1, verified_published_at: '2026-01-02'}\n")
    assert built_by_events("d: 2026-06-17\ni: 0x1F\nf: .inf\nn: ~\n")
    for text in ("a: &x 1\nb: *x\n", "m:\n  <<: {x: 1}\n", "s: !!str 1\n", "? [a]\n: v\n", "--- a\n--- b\n",
                 "bad: 2026-13-45\n", "=: v\n"):
        assert not built_by_events(text), text
    assert built_by_events("a: 1\na: 2\n") and not built_by_events("a: 1\na: 2\n", unique_keys=True)
    deep = "x: " + "[" * (yamlsafe.MAX_DEPTH - 1) + "]" * (yamlsafe.MAX_DEPTH - 1) + "\n"
    assert built_by_events(deep)
    too_deep = "x: " + "[" * yamlsafe.MAX_DEPTH + "]" * yamlsafe.MAX_DEPTH + "\n"
    assert not built_by_events(too_deep)
    assert fast(too_deep) == reference(too_deep) and fast(too_deep)[0] == "YamlRefused"


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-10**20, max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True), st.dates(min_value=date(1900, 1, 1)),
    st.datetimes(min_value=datetime(1900, 1, 1)),
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12),
    st.sampled_from(["yes", "no", "on", "off", "~", "null", "2026-01-01", "0x1F", "017", "1_000", "190:20",
                     ".inf", ".nan", "<<", "=", "1e3", "-", "- x", ": x", "#", "'", '"', "a: b", "  x  "]),
)
keys = st.one_of(st.text(max_size=8), st.integers(-5, 5), st.booleans(), st.none(),
                 st.sampled_from(["yes", "2026-01-01", "<<", "=", "1.0", "~"]))
documents = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                         st.dictionaries(keys, inner, max_size=4)), max_leaves=25)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents, st.sampled_from([None, False, True]), st.booleans())
def test_fast_path_matches_compose_on_generated_documents(data, flow, unique_keys):
    """Every value PyYAML can write, in block and flow styles, read back both ways."""
    text = yaml.safe_dump(data, default_flow_style=flow, allow_unicode=True, sort_keys=False)
    assert fast(text, unique_keys) == reference(text, unique_keys)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "1", "true", "'a'", "x y", "<<", "? k"]),
                          st.sampled_from(["1", "'1'", "[x, y]", "{z: 1}", "&n v", "*n", "!!str 3", "2026-02-30",
                                           "", "|\n  block", "- item"])),
                min_size=1, max_size=5),
       st.booleans())
def test_fast_path_matches_compose_on_generated_text(pairs, unique_keys):
    """Hand-shaped mappings with repeated keys, anchors, aliases, tags, invalid dates and broken structure."""
    text = "".join(f"{k}: {v}\n" for k, v in pairs)
    assert fast(text, unique_keys) == reference(text, unique_keys)
