"""Units of the strings of a structured document (JSON, or YAML read as the same kind of data): one unit per
key and string value with its JSON pointer, and markup inside a string read as HTML in place."""

from __future__ import annotations

import re

from scanner.loaders.html import build_units
from scanner.loaders.json_positions import JsonString
from scanner.units import Channel, Document, TextUnit

# A string value that holds markup (a provider's raw_content, an HTML snippet) is read as HTML in place, so its
# comments, hidden elements and attributes are channels of their own, not plain text.
_HTML_IN_STRING = re.compile(
    r"<!--|<(?:html|head|body|div|p|span|section|article|main|header|footer|nav|script|style|meta|img|a|table|"
    r"h[1-6]|ul|ol|li|noscript|template|svg|iframe|br)\b[^<>]*>", re.I)


def value_units(doc: Document, s: JsonString, prefix: str = "", base_map=None, container: str = "") -> None:
    """Units of one string value: HTML read in place when the value holds markup, else one unit."""
    if not s.is_key and _HTML_IN_STRING.search(s.text):
        umap = s.map if base_map is None else s.map.then(base_map)
        build_units(doc, s.text, base_map=umap, container=(container + "#" if container else "") + prefix + s.pointer)
        return
    doc.units.append(string_unit(s, Channel.JSON_KEY if s.is_key else Channel.JSON_STRING, prefix, base_map, container))


def string_unit(s: JsonString, channel: Channel, prefix: str = "", base_map=None, container: str = "",
                attrs: dict | None = None) -> TextUnit:
    umap = s.map if base_map is None else s.map.then(base_map)
    start, end = (s.start, s.end) if base_map is None else base_map.span(s.start, s.end)
    return TextUnit(s.text, channel, start, end, umap, locator=prefix + s.pointer,
                    attrs={"key": s.key, **(attrs or {})}, container=container)
