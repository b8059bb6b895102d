"""Blocks: the text around a unit that a reader sees together with it, for context words and owner cues.

A unit is one text run, attribute, JSON string or PDF run; the words that say what a number is often sit in
another unit: the `<th>`/`<td>` before it, the `<strong>Cel.:</strong>` label, the JSON key, the other
fields of the same JSON object. A block gathers them:

- HTML: the nearest block-level ancestor of the unit's element (a table row — cells are not blocks —, a list
  item, a paragraph, a div…); its parent block is the next block-level ancestor up.
- JSON and JSON-LD: the object holding the value (its other members), each read as "key: value"; the parent
  block is the enclosing object.
- PDF: the page. Plain text: the paragraph (the unit itself).

Block text is built on first demand, with units joined by a newline, so windows never run words together.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from scanner.textfold import fold_accents
from scanner.units import Channel, Document, TextUnit

BLOCK_TAGS = frozenset({
    "p", "li", "tr", "dd", "dt", "dl", "address", "blockquote", "figcaption", "figure", "caption", "h1", "h2", "h3",
    "h4", "h5", "h6", "pre", "div", "section", "article", "aside", "header", "footer", "nav", "main", "form",
    "fieldset", "table", "tbody", "thead", "tfoot", "ul", "ol", "body", "html", "head", "label", "option", "details",
    "summary", "legend", "center", "noscript", "template", "svg",
})
JSON_CHANNELS = (Channel.JSON_STRING, Channel.JSON_LD)


def parent_pointer(locator: str) -> str:
    """The JSON pointer of the object holding a value: "/a/b/c" → "/a/b"; "ld+json[1]/x" → "ld+json[1]"."""
    return locator.rsplit("/", 1)[0] if "/" in locator else locator


@dataclass(eq=False)
class Block:
    key: tuple
    units: list = field(default_factory=list)
    _text: str | None = None
    _folded: str | None = None
    _offsets: dict | None = None

    def _build(self) -> None:
        parts, offsets, pos = [], {}, 0
        for u in self.units:
            key = u.attrs.get("key") if u.channel in JSON_CHANNELS else None
            prefix = f"{key}: " if isinstance(key, str) and key else ""
            if prefix:
                parts.append(prefix)
                pos += len(prefix)
            offsets[id(u)] = pos
            parts.append(u.text)
            parts.append("\n")
            pos += len(u.text) + 1
        self._text = "".join(parts)
        self._offsets = offsets

    @property
    def text(self) -> str:
        if self._text is None:
            self._build()
        return self._text

    @property
    def folded(self) -> str:
        if self._folded is None:
            self._folded = fold_accents(self.text)
        return self._folded

    def offset(self, unit: TextUnit) -> int | None:
        if self._offsets is None:
            self._build()
        return self._offsets.get(id(unit))

    def unit_at(self, start: int, end: int) -> tuple[TextUnit, int, int] | None:
        """The unit holding block text [start, end) and the span's offsets inside it (None across units)."""
        if self._offsets is None:
            self._build()
        for u in self.units:
            off = self._offsets[id(u)]
            if off <= start and end <= off + len(u.text):
                return u, start - off, end - off
        return None


class BlockIndex:
    """Level-0 (own) and level-1 (parent) blocks of every scanned unit of a document."""

    # A contact block is the unit's own block, or its parent block when that is this short and the own block
    # is not a row or list item: a card of <h3>name</h3><p>email</p><p>phone</p> reads as one contact.
    CONTACT_MAX = 600

    def __init__(self, doc: Document, units: list[TextUnit]):
        self.doc = doc
        self._blocks: dict[tuple, Block] = {}
        self._levels: dict[int, tuple] = {}
        self._row: set = set()                      # ids of units whose own block is a row or list item
        for u in units:
            keys = self._keys(u)
            self._levels[id(u)] = keys
            for k in keys:
                if k is None:
                    continue
                b = self._blocks.get(k)
                if b is None:
                    b = self._blocks[k] = Block(k)
                b.units.append(u)

    def _keys(self, u: TextUnit) -> tuple:
        if u.channel in JSON_CHANNELS:
            kind = "ld" if u.channel is Channel.JSON_LD else "json"
            parent = parent_pointer(u.locator)
            grand = parent_pointer(parent) if "/" in parent else None
            return ((kind, u.container, parent), (kind, u.container, grand) if grand is not None else None)
        if u.element is not None:
            el = u.element
            while el is not None and el.tag not in BLOCK_TAGS:
                el = el.parent
            if el is not None and el.tag in ("tr", "li", "dt", "dd"):
                self._row.add(id(u))
            own = ("html", u.container, el.index if el is not None else -1)
            up = el.parent if el is not None else None
            while up is not None and up.tag not in BLOCK_TAGS:
                up = up.parent
            return (own, ("html", u.container, up.index) if up is not None else None)
        if u.page is not None:
            return (("pdf", u.container, u.page), None)
        return (("unit", id(u)), None)

    def block(self, unit: TextUnit, level: int = 0) -> Block | None:
        keys = self._levels.get(id(unit))
        if keys is None:
            return None
        key = keys[level] if level < len(keys) else None
        return self._blocks.get(key) if key is not None else None

    def contact_level(self, unit: TextUnit) -> int:
        """0 or 1: the level of the unit's contact block (see CONTACT_MAX)."""
        if id(unit) in self._row:
            return 0
        up = self.block(unit, 1)
        return 1 if up is not None and len(up.text) <= self.CONTACT_MAX else 0

    def position(self, unit: TextUnit, i: int, j: int, level: int = 0) -> tuple[Block, int, int] | None:
        """The block at `level` and the span of unit.text[i:j] in its text."""
        b = self.block(unit, level)
        if b is None:
            return None
        off = b.offset(unit)
        if off is None:
            return None
        return b, off + i, off + j

    def json_types(self, u: TextUnit) -> set:
        """The schema.org `@type`s of the JSON(-LD) object holding `u`."""
        b = self.block(u, 0)
        if b is None:
            return set()
        parent = parent_pointer(u.locator)
        types = set()
        for other in b.units:
            if other.attrs.get("key") == "@type" and parent_pointer(other.locator) == parent:
                types.add(other.text.strip())
        # "@type": ["Organization", "LocalBusiness"] puts the values one level down
        up = self.block(u, 1)
        if up is not None and not types:
            for other in up.units:
                if other.locator.startswith(parent + "/@type/"):
                    types.add(other.text.strip())
        if not types:
            # the array items of a sibling "@type" are in their own block: look them up in the document
            for other in self.doc.units:
                if other.channel is u.channel and other.container == u.container and \
                        other.locator.startswith(parent + "/@type/"):
                    types.add(other.text.strip())
        return types
