"""Just enough CSS to tell whether a person sees an element: declarations, simple selectors, the cascade.

tinycss2 parses; this module keeps only the properties that decide visibility and matches the selectors a
page uses to hide things — type, class, id and attribute conditions joined by descendant or child
combinators. Selectors it cannot evaluate statically (pseudo-classes such as :hover, sibling combinators)
are skipped rather than guessed: an unmatched rule leaves an element as its other rules and inline style say.
`@media` blocks apply only when they target screens without conditions (`screen`, `all`); print and
width-conditional rules do not describe what a reader of the page sees by default.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import tinycss2

from scanner.loaders import css_split
from scanner.loaders.css_split import RawRule

# Properties that can hide text or make it unreadable, and those needed to judge contrast.
RELEVANT = frozenset({
    "display", "visibility", "opacity", "font-size", "font", "color", "background-color", "background",
    "position", "left", "top", "right", "bottom", "text-indent", "clip", "clip-path", "width", "height",
    "max-width", "max-height", "overflow", "transform", "z-index", "line-height", "filter",
    "content-visibility", "-webkit-text-fill-color", "text-shadow", "margin-left", "margin-top",
})


@dataclass(slots=True)
class Declaration:
    prop: str
    value: str
    important: bool


def parse_declarations(css) -> list[Declaration]:
    """Declarations of a style attribute or a rule block, relevant properties only, in source order. `css` is
    the text, or a rule's content already tokenized (tinycss2 component values: not tokenized again)."""
    out: list[Declaration] = []
    for node in tinycss2.parse_blocks_contents(css, skip_comments=True, skip_whitespace=True):
        if node.type != "declaration":
            continue
        prop = node.lower_name
        if prop not in RELEVANT:
            continue
        out.append(Declaration(prop, tinycss2.serialize(node.value).strip().lower(), node.important))
    return out


@dataclass(slots=True)
class Compound:
    tag: str | None
    ids: tuple[str, ...]
    classes: tuple[str, ...]
    attrs: tuple[tuple[str, str | None, str | None], ...]   # (name, operator, value)


@dataclass(slots=True)
class Selector:
    parts: tuple[Compound, ...]        # left to right
    combinators: tuple[str, ...]        # between parts: " " or ">"
    specificity: tuple[int, int, int]

    @property
    def key(self) -> tuple[str, str]:
        last = self.parts[-1]
        if last.ids:
            return ("id", last.ids[0])
        if last.classes:
            return ("class", last.classes[0])
        if last.tag:
            return ("tag", last.tag)
        return ("any", "")


@dataclass(slots=True)
class Rule:
    selector: Selector
    declarations: list[Declaration]
    order: int | tuple[int, ...]     # compared only with other rules' orders: source order


class _Unsupported(Exception):
    pass


def _parse_compound(tokens: list) -> Compound:
    tag = None
    ids: list[str] = []
    classes: list[str] = []
    attrs: list[tuple[str, str | None, str | None]] = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t.type == "ident" and i == 0:
            tag = t.lower_value
        elif t.type == "literal" and t.value == "*" and i == 0:
            tag = None
        elif t.type == "hash":
            ids.append(t.value)
        elif t.type == "literal" and t.value == "." and i + 1 < len(tokens) and tokens[i + 1].type == "ident":
            classes.append(tokens[i + 1].value)
            i += 1
        elif t.type == "[] block":
            attrs.append(_parse_attr_condition(t.content))
        else:
            raise _Unsupported(t.type)
        i += 1
    return Compound(tag, tuple(ids), tuple(classes), tuple(attrs))


def _parse_attr_condition(content: list) -> tuple[str, str | None, str | None]:
    parts = [t for t in content if t.type != "whitespace"]
    if not parts or parts[0].type != "ident":
        raise _Unsupported("attr")
    name = parts[0].lower_value
    if len(parts) == 1:
        return (name, None, None)
    op = "".join(t.value for t in parts[1:-1] if t.type == "literal")
    value = parts[-1]
    if value.type not in ("ident", "string") or op not in ("=", "~=", "^=", "$=", "*=", "|="):
        raise _Unsupported("attr-op")
    return (name, op, value.value)


def parse_selectors(prelude: list) -> list[Selector]:
    """Comma-separated selectors of a rule prelude; unsupported ones are left out."""
    groups: list[list] = [[]]
    for t in prelude:
        if t.type == "literal" and t.value == ",":
            groups.append([])
        else:
            groups[-1].append(t)
    out: list[Selector] = []
    for group in groups:
        try:
            sel = _parse_complex(group)
        except _Unsupported:
            continue
        if sel is not None:
            out.append(sel)
    return out


def _parse_complex(tokens: list) -> Selector | None:
    parts: list[Compound] = []
    combinators: list[str] = []
    current: list = []
    pending = None
    for t in tokens + [None]:
        if t is None or t.type == "whitespace" or (t.type == "literal" and t.value in (">", "+", "~")):
            if current:
                if parts:
                    combinators.append(pending or " ")
                parts.append(_parse_compound(current))
                current = []
                pending = None
            if t is not None and t.type == "literal":
                if t.value in ("+", "~"):
                    raise _Unsupported("sibling")
                pending = ">"
            continue
        if t.type in ("function", "comment"):
            raise _Unsupported(t.type)
        if t.type == "literal" and t.value == ":":
            raise _Unsupported("pseudo")
        current.append(t)
    if not parts:
        return None
    ids = sum(len(p.ids) for p in parts)
    cls = sum(len(p.classes) + len(p.attrs) for p in parts)
    tags = sum(1 for p in parts if p.tag)
    return Selector(tuple(parts), tuple(combinators), (ids, cls, tags))


_SCREEN_MEDIA = re.compile(r"^\s*(only\s+)?(screen|all)?\s*$", re.I)


def parse_stylesheet(css: str, order_base: int = 0) -> list[Rule]:
    rules: list[Rule] = []
    _collect(tinycss2.parse_stylesheet(css, skip_comments=True, skip_whitespace=True), rules, order_base)
    return rules


def _raw_rules(css: str, raw: RawRule) -> list[Rule]:
    """The rules of one top-level rule of a (normalised) sheet, as `parse_stylesheet` makes them, numbered from 0."""
    rules: list[Rule] = []
    if raw.block_start is None:
        return rules                               # an at-rule ended by ";": nothing to apply
    if not raw.at:
        decls = parse_declarations(css[raw.block_start:raw.block_end])
        if decls:
            prelude = tinycss2.parse_component_value_list(css[raw.start:raw.prelude_end], skip_comments=True)
            for sel in parse_selectors(prelude):
                rules.append(Rule(sel, decls, len(rules)))
        return rules
    head = tinycss2.parse_component_value_list(css[raw.start:raw.prelude_end], skip_comments=True)
    name = head[0].lower_value
    if name == "media" and not _SCREEN_MEDIA.match(tinycss2.serialize(head[1:])):
        return rules
    if name in ("media", "supports", "layer", "document"):
        _collect(tinycss2.parse_blocks_contents(css[raw.block_start:raw.block_end], skip_comments=True,
                                                skip_whitespace=True), rules, 0)
    return rules


def _collect(nodes, rules: list[Rule], order_base: int) -> None:
    for node in nodes:
        if node.type == "qualified-rule":
            decls = parse_declarations(node.content)
            if not decls:
                continue
            for sel in parse_selectors(node.prelude):
                rules.append(Rule(sel, decls, order_base + len(rules)))
        elif node.type == "at-rule" and node.content is not None:
            name = node.lower_at_keyword
            if name == "media" and not _SCREEN_MEDIA.match(tinycss2.serialize(node.prelude)):
                continue
            if name in ("media", "supports", "layer", "document"):
                _collect(tinycss2.parse_blocks_contents(node.content, skip_comments=True, skip_whitespace=True), rules, order_base)


def compound_matches(c: Compound, el) -> bool:
    if c.tag is not None and c.tag != el.tag:
        return False
    if c.ids and el.attrs.get("id") not in c.ids:
        return False
    if c.classes:
        have = el.classes
        for cls in c.classes:
            if cls not in have:
                return False
    for name, op, value in c.attrs:
        actual = el.attrs.get(name)
        if actual is None:
            return False
        if op is None:
            continue
        if op == "=" and actual != value:
            return False
        if op == "~=" and value not in actual.split():
            return False
        if op == "^=" and not (value and actual.startswith(value)):
            return False
        if op == "$=" and not (value and actual.endswith(value)):
            return False
        if op == "*=" and not (value and value in actual):
            return False
        if op == "|=" and not (actual == value or actual.startswith(value + "-")):
            return False
    return True


def selector_matches(sel: Selector, el) -> bool:
    parts, combs = sel.parts, sel.combinators
    if not compound_matches(parts[-1], el):
        return False
    return _match_left(parts, combs, len(parts) - 2, el.parent)


def _match_left(parts, combs, i: int, candidate) -> bool:
    if i < 0:
        return True
    comb = combs[i]
    while candidate is not None:
        if compound_matches(parts[i], candidate):
            if _match_left(parts, combs, i - 1, candidate.parent):
                return True
        if comb == ">":
            return False
        candidate = candidate.parent
    return False


class RuleIndex:
    """Rules bucketed by the id, class or tag of their rightmost compound, so each element tries only a few."""

    def __init__(self, rules: list[Rule]):
        self.by_id: dict[str, list[Rule]] = {}
        self.by_class: dict[str, list[Rule]] = {}
        self.by_tag: dict[str, list[Rule]] = {}
        self.universal: list[Rule] = []
        for rule in rules:
            _add(self, rule)

    def __bool__(self) -> bool:
        return bool(self.by_id or self.by_class or self.by_tag or self.universal)

    def candidates(self, el) -> list[Rule]:
        out = list(self.universal)
        out.extend(self.by_tag.get(el.tag, ()))
        el_id = el.attrs.get("id")
        if el_id:
            out.extend(self.by_id.get(el_id, ()))
        for cls in el.classes:
            out.extend(self.by_class.get(cls, ()))
        return out


# A rule's selector can be keyed by an element only through a name its prelude spells: without escapes, "*",
# "[" or non-ASCII letters, every compound has a tag, id or class written as these characters.
_PRELUDE_WORD = re.compile(r"[a-z0-9_-]+")
_KEYS_UNSURE = re.compile(r"[\\*\[]")
_SIMPLE_PRELUDE = re.compile(r"[^(\"'/]*")
_COMBINATORS = re.compile(r"[\s>]+")


def _key_words(prelude: str) -> set[str]:
    """Lower-cased names a selector of the prelude can be keyed by: those of each selector's last compound
    (an index key is always there) when the prelude is plain (no function, string or comment); else every name.
    Only whitespace and ">" join the compounds of a selector the index keeps ("+", "~" and pseudo-classes make
    it skip the selector)."""
    text = prelude.lower()
    if not _SIMPLE_PRELUDE.fullmatch(text):
        return set(_PRELUDE_WORD.findall(text))
    words: set[str] = set()
    for part in text.split(","):
        pieces = [piece for piece in _COMBINATORS.split(part) if piece]
        if pieces:
            words.update(_PRELUDE_WORD.findall(pieces[-1]))
    return words


# Deeper nesting than this: the whole sheet parsed as before (serialising deep blocks recurses; a sheet that
# cannot be parsed must fail as a whole, as it did, not rule by rule).
_MAX_LAZY_DEPTH = 64


class SheetIndex:
    """A page's stylesheets, each rule parsed on first demand: an element's candidates are the rules whose
    prelude spells one of its names (tag, id, class), parsed then and bucketed as `RuleIndex` buckets them.

    The cascade gets exactly the rules `RuleIndex(parse_stylesheet(...))` would give it for that element (the
    prelude test is a superset of the selector key; orders follow the source, so every comparison of two
    rules' orders comes out as before): tests compare the declared style of every element of the real pages."""

    def __init__(self, blocks: list[str]):
        self._eager = RuleIndex([])
        self._lazy = RuleIndex([])
        self._sheets: list[tuple[str, list[RawRule]]] = []
        self._by_word: dict[str, list[tuple[int, int]]] = {}
        self._always: list[tuple[int, int]] = []
        self._done: set[tuple[int, int]] = set()
        self._any = False
        for b, block in enumerate(blocks):
            norm = css_split.normalize(block)
            split = css_split.split(norm) if css_split.ENABLED else None
            if split is None or split[1] > _MAX_LAZY_DEPTH:
                self._parse_whole(b, block)
                self._sheets.append(("", []))
                continue
            raws = split[0]
            self._sheets.append((norm, raws))
            for i, raw in enumerate(raws):
                if raw.block_start is None:
                    continue
                self._any = True
                text = norm[raw.start:raw.prelude_end]
                if raw.at or not text.isascii() or _KEYS_UNSURE.search(text):
                    self._always.append((b, i))
                    continue
                for word in _key_words(text):
                    self._by_word.setdefault(word, []).append((b, i))

    def _parse_whole(self, b: int, block: str) -> None:
        try:
            rules = parse_stylesheet(block)
        except Exception:  # tinycss2 is tolerant; a pathological block must not stop the load
            return
        for k, rule in enumerate(rules):
            rule.order = (b, k)
            _add(self._eager, rule)
            self._any = True

    def _materialize(self, key: tuple[int, int]) -> None:
        if key in self._done:
            return
        self._done.add(key)
        b, i = key
        norm, raws = self._sheets[b]
        for k, rule in enumerate(_raw_rules(norm, raws[i])):
            rule.order = (b, i, k)
            _add(self._lazy, rule)

    def __bool__(self) -> bool:
        return self._any

    def candidates(self, el) -> list[Rule]:
        if self._always:
            for key in self._always:
                self._materialize(key)
            self._always = []
        names = {el.tag.lower(), *(c.lower() for c in el.classes)}
        el_id = el.attrs.get("id")
        if el_id:
            names.add(el_id.lower())
        for name in names:
            keys = self._by_word.pop(name, None)
            if keys:
                for key in keys:
                    self._materialize(key)
        return self._eager.candidates(el) + self._lazy.candidates(el)


def _add(index: RuleIndex, rule: Rule) -> None:
    kind, value = rule.selector.key
    bucket = {"id": index.by_id, "class": index.by_class, "tag": index.by_tag}.get(kind)
    if bucket is None:
        index.universal.append(rule)
    else:
        bucket.setdefault(value, []).append(rule)


def cascade(el, index: RuleIndex, inline: list[Declaration]) -> dict[str, str]:
    """The declared value per relevant property for one element: important > inline > specificity > order."""
    winners: dict[str, tuple] = {}
    if index:
        for rule in index.candidates(el):
            if not selector_matches(rule.selector, el):
                continue
            for d in rule.declarations:
                rank = (d.important, 0, rule.selector.specificity, rule.order)
                cur = winners.get(d.prop)
                if cur is None or rank >= cur[0]:
                    winners[d.prop] = (rank, d.value)
    for n, d in enumerate(inline):
        rank = (d.important, 1, (0, 0, 0), n)
        cur = winners.get(d.prop)
        if cur is None or rank >= cur[0]:
            winners[d.prop] = (rank, d.value)
    return {prop: value for prop, (rank, value) in winners.items()}
