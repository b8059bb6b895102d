"""The line reader of block-style YAML (`scanner.yamlblock`, tried first by `scanner.yamlsafe.safe_load`) builds
a document only when it builds what `compose` builds (types included), and leaves everything else to the
events and to `compose`, so `safe_load` still gives compose's data, refusal or error."""

from __future__ import annotations

from datetime import date, datetime

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scanner import yamlsafe
from scanner.yamlblock import MAX_KEY_CHARS, NotBlock, load_block
from tests.test_yamlsafe_fast import fast, reference, typed


def by_block(text: str, unique_keys: bool = False):
    """("ok", data) when the line reader builds it, else None (it leaves the text to the other readers)."""
    loader = yamlsafe._Loader("")
    try:
        return "ok", typed(load_block(text, loader, unique_keys, yamlsafe.MAX_DEPTH))
    except NotBlock:
        return None
    except (ValueError, OverflowError, TypeError, KeyError):   # a constructor's error: safe_load reads on
        return None
    finally:
        loader.dispose()


def check(text: str, unique_keys: bool = False) -> bool:
    """What the line reader builds is compose's data; safe_load agrees with compose either way. True when built."""
    built = by_block(text, unique_keys)
    if built is not None:
        assert built == reference(text, unique_keys), text
    assert fast(text, unique_keys) == reference(text, unique_keys), text
    return built is not None


BUILT = [
    "a: 1\n", "a: b\nc: 'd'\n", "- x\n- 'y'\n- 3\n", "a:\n  b: c\n", "a:\n- x\n- y\nb: []\nc: {}\n",
    "c1:\n  https://x.example/1:\n    group: g1\n    supports: true\n    verified_published_at: '2026-01-02'\n",
    "- category: cat0\n  expect:\n    families:\n    - gov\n    hosts: []\n  freshness_days: 365\n  id: c00000\n",
    "d: 2026-06-17\ni: 0x1F\nf: .inf\nn: ~\nb: yes\nt: 2026-10-02T14:11:09Z\nq: '2026-06-17'\n",
    "a:\nb:\n- \n".replace("- \n", "-\n"), "-\n- - a\n  - b\n- - - c\n", "'it''s': 'x''y'\n", "# c\na: 1\n\n  # d\nb: 2\n",
    "url: https://x/a:b?c=d#frag\nk:v: w\n", "1: one\ntrue: t\n~: n\n2026-01-01: d\n", "a: 1\na: 2\n",
    "a b: c d\n", "x:\n    deep:\n        - 1\n", "a: [x\n".replace("[x", "x]"),
]

LEFT = [
    "", "just a scalar\n", "'quoted'\n", "  a: 1\n", "a: 1 # trailing\n", "a: 1 \n", "a:  1\n", "a: \"x\"\n",
    "plain: multi\n  line\n", "- a\n  b\n", "- a: b\n    c\n", "a: 'multi\n  line'\n", "text: |\n  x\n",
    "a: &x 1\nb: *x\n", "s: !!str 1\n", "? a\n: b\n", "--- a\n", "a: 1\n...\n", "... x: 1\n", "%YAML 1.1\n---\na: 1\n",
    "a: [1, 2]\n", "a: {b: 1}\n", "\ta: 1\n", "a: 1\r\nb: 2\r\n", "ñ: ü\n", "a:\n   \nb: 1\n", "- \n",
    "a: 1\n- x\n", "- x\na: 1\n", "a: b: c\n", "a: b:\n", "<<: {x: 1}\n", "m:\n  <<: x\n", "=: v\n",
    "bad: 2026-13-45\n", "-1: x\n", "a :b: c\n", "a: -x\n", "a: 1\n b: 2\n", "a:\n  b: 1\n c: 2\n",
    "k" * (MAX_KEY_CHARS + 1) + ": v\n", "a: 1\n---\nb: 2\n", "a:b\n", "a\n",
]


@pytest.mark.parametrize("text", BUILT)
@pytest.mark.parametrize("unique_keys", [False, True])
def test_block_documents_are_built_as_compose_builds_them(text, unique_keys):
    assert check(text, unique_keys) or (unique_keys and text == "a: 1\na: 2\n"), text


@pytest.mark.parametrize("text", LEFT)
@pytest.mark.parametrize("unique_keys", [False, True])
def test_everything_else_is_left_to_the_other_readers(text, unique_keys):
    assert not check(text, unique_keys), text


def test_repeated_keys_refused_as_compose_refuses_them():
    for text in ("a: 1\na: 2\n", "a: 1\n'a': 2\n", "x:\n  k: 1\n  k:\n  - 2\n"):
        assert by_block(text) is not None
        assert by_block(text, unique_keys=True) is None
        assert fast(text, True) == reference(text, True) and fast(text, True)[0] == "YamlRefused"
    assert check("1: a\n'1': b\n", unique_keys=True)      # an int and a string: not the same key


def test_depth_is_left_to_the_other_readers_near_the_limit():
    deep = "".join(" " * i + "k:\n" for i in range(yamlsafe.MAX_DEPTH + 2))
    assert by_block(deep) is None
    assert fast(deep) == reference(deep)


def test_bench_shaped_files_take_the_line_reader():
    judgments = yaml.safe_dump({f"c{i}": {f"https://h{j}.example/c{i}/{j}": {
        "supports": j % 2 == 0, "group": f"g{j}", "verified_published_at": f"2026-0{j % 9 + 1}-1{j}"}
        for j in range(5)} for i in range(20)})
    cases = yaml.safe_dump([{"id": f"c{i}", "category": "cat", "query": "q", "web_role": "required",
                             "freshness_days": None if i % 2 else 365, "expect": {"families": ["gov"], "hosts": []}}
                            for i in range(20)])
    assert check(judgments) and check(cases)


ascii_text = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=14)
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-10**20, max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True), st.dates(min_value=date(1900, 1, 1)),
    st.datetimes(min_value=datetime(1900, 1, 1)), ascii_text,
    st.sampled_from(["yes", "no", "on", "~", "null", "2026-01-01", "0x1F", "017", "1_000", "190:20", ".inf",
                     "<<", "=", "1e3", "-", "- x", ": x", "#", "'", "a: b", "a #b", "x:", "https://a/b:c", "..."]),
)
keys = st.one_of(ascii_text, st.integers(-5, 5), st.booleans(), st.none(),
                 st.sampled_from(["yes", "2026-01-01", "<<", "=", "1.0", "~", "a:b", "'q'", "..."]))
documents = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                         st.dictionaries(keys, inner, max_size=4)), max_leaves=30)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents, st.sampled_from([False, None]), st.sampled_from([80, 20, 1000]), st.booleans(), st.booleans())
def test_generated_block_documents(data, flow, width, indent4, unique_keys):
    """Every ASCII value PyYAML writes in block style (narrow widths fold long scalars over lines)."""
    text = yaml.safe_dump(data, default_flow_style=flow, width=width, indent=4 if indent4 else 2, sort_keys=False)
    check(text, unique_keys)


EDITS = [" ", "  ", ":", ": ", "#", " #", "-", "- ", "'", "''", "[]", "{}", "\n", "\n  ", "...", "&a ", "*a", "!",
         "?", "x", "1", "~", "\t", '"']


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents, st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(EDITS), st.integers(0, 2)),
                           min_size=1, max_size=4), st.booleans())
def test_edited_block_documents(data, edits, unique_keys):
    """Block documents with characters inserted or deleted anywhere: built right, or left to the others."""
    text = yaml.safe_dump(data, default_flow_style=False, sort_keys=False)
    for pos, piece, drop in edits:
        pos %= len(text) + 1
        text = text[:pos] + piece + text[pos + drop:]
    check(text, unique_keys)


def test_safe_load_is_unchanged_with_the_line_reader_off(monkeypatch):
    text = "a:\n- 1\n- 'x'\nb: 2026-01-01\n"
    on = fast(text)
    monkeypatch.setattr(yamlsafe, "_FAST_BLOCK", False)
    assert fast(text) == on == reference(text)
