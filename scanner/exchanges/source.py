"""A recording's text and structure together: the parsed value, and the exact span of any string or number
named by its JSON pointer (JSON through `scanner.loaders.json_positions`, YAML through `yamltext`)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from scanner.loaders.json_positions import JsonString, iter_strings

_AFTER_KEY = re.compile(r'"[ \t\r\n]*:[ \t\r\n]*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)')


@dataclass
class Source:
    syntax: str                         # "json" or "yaml"
    text: str                           # the file's decoded text (the offsets' coordinates)
    value: Any                          # the parsed file
    root: Any = None                    # YAML: the node tree
    _strings: list[JsonString] | None = None
    _by_pointer: dict[tuple[str, bool], JsonString] | None = None
    scalars: dict = field(default_factory=dict)   # YAML: pointer → yamltext.Scalar

    def strings(self) -> list[JsonString]:
        """Every key and string value in source order (empty strings included). JSON: JsonSyntaxError when the
        text is not JSON (the value was parsed by json.loads, so only a too-deep text gets here)."""
        if self._strings is None:
            if self.syntax == "json":
                self._strings = list(iter_strings(self.text))
            else:
                from scanner.exchanges.yamltext import walk

                self._strings, self.scalars = walk(self.text, self.root)
        return self._strings

    def string_at(self, pointer: str, key: bool = False) -> JsonString | None:
        if self._by_pointer is None:
            self._by_pointer = {(s.pointer, s.is_key): s for s in self.strings()}
        return self._by_pointer.get((pointer, key))

    def number_span(self, pointer: str) -> tuple[int, int] | None:
        """The span of the number at `pointer` (an object member's value)."""
        if self.syntax == "yaml":
            self.strings()
            sc = self.scalars.get(pointer)
            return (sc.content_start, sc.content_end) if sc is not None and sc.exact else None
        key = self.string_at(pointer, key=True)
        if key is None:
            return None
        m = _AFTER_KEY.match(self.text, key.end)
        return m.span(1) if m else None


def parse_json(text: str) -> Any:
    """json.loads, None for a text nested too deeply for it (positions are read iteratively elsewhere);
    ValueError for invalid JSON."""
    try:
        return json.loads(text)
    except RecursionError:
        return None
