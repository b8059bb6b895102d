"""Exact offsets through YAML: for any string and every scalar style PyYAML writes (plain, single- and
double-quoted, literal and folded blocks, at any line width, as a mapping value, in a list, in flow style), the
value rebuilt from the text is the parser's, every literal piece is the same characters in the text, and
replacing a run of the value at its mapped span changes exactly that run (with `\n` or `\r\n` line ends)."""

from __future__ import annotations

import re

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from scanner.exchanges.yamltext import read_nodes, walk

ALPHABET = st.characters(codec="utf-8", exclude_categories=("Cs",)) | st.sampled_from(
    list(" \t\n\\\"'#:-,[]{}&*!|>%@`é😀") + ["\r\n", "  ", ": ", " #"])
TEXTS = st.lists(ALPHABET, max_size=60).map("".join)
STYLES = st.sampled_from([None, "'", '"', "|", ">"])
_RUN = re.compile(r"[A-Za-z0-9]{2,}")


def _dump(value: str, style, width: int, shape: str) -> str:
    data = {"k": value} if shape == "map" else {"items": [value, "x"]} if shape == "list" else {"a": {"b": value}}
    return yaml.dump(data, default_style=style, width=width, allow_unicode=True,
                     default_flow_style=shape == "flow")


def _the_string(text: str, value: str):
    root, _ = read_nodes(text)
    strings, scalars = walk(text, root)
    hits = [s for s in strings if not s.is_key and s.text == value]
    return hits, scalars


@settings(max_examples=400, deadline=None)
@given(TEXTS, STYLES, st.integers(min_value=10, max_value=200), st.sampled_from(["map", "list", "nested", "flow"]),
       st.booleans())
def test_yaml_scalar_offsets_are_exact(value, style, width, shape, crlf):
    text = _dump(value, style, width, shape)
    if crlf:                        # Windows line endings: the same values, other offsets
        text = text.replace("\n", "\r\n")
    root, data = read_nodes(text)
    parsed = data["k"] if shape == "map" else data["items"][0] if shape == "list" else data["a"]["b"] \
        if shape != "flow" else data["a"]["b"]
    if parsed != value or not value:
        return                      # PyYAML itself does not round-trip this one (trailing spaces in a block…)
    hits, scalars = _the_string(text, value)
    assert hits, text
    s = hits[0]
    sc = next(x for x in scalars.values() if x.content_start == s.start and x.content_end == s.end)
    assert sc.exact, (text, style)
    for i in range(len(s.text)):
        a, b = s.map.span(i, i + 1)
        assert s.start <= a < b <= s.end
    for m in list(_RUN.finditer(value))[:2]:
        a, b = s.map.span(m.start(), m.end())
        assert text[a:b] == m.group(0)
        edited = text[:a] + "Zq" + text[b:]
        _, data2 = read_nodes(edited)
        got = data2["k"] if shape == "map" else data2["items"][0] if shape == "list" else data2["a"]["b"]
        assert got == value[:m.start()] + "Zq" + value[m.end():]
