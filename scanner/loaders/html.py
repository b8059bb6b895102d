"""HTML → text units with exact source positions, and the styling a rule needs to judge visibility.

One pass over the tokens builds a light element tree (enough for ancestry and CSS matching; browsers'
error recovery is approximated by closing to the nearest matching open element) and emits a unit per
text run, comment, relevant attribute, script, style block and JSON-LD string. Character references
decode in `unit.text`; `unit.start/end` and `unit.source_span()` stay exact in the source.
"""

from __future__ import annotations

import html as _html
import re
from dataclasses import dataclass

from scanner import rx
from scanner.loaders import css as _css
from scanner.loaders.html_tokens import COMMENT, END, RAWTEXT, RCDATA, START, TEXT, VOID, read_attrs, scan
from scanner.offsetmap import IdentityMap, OffsetMap, PieceBuilder
from scanner.sourcetext import decode_bytes
from scanner.units import Channel, Document, TextUnit
from scanner.yamlsafe import gc_paused

# Attributes whose text reaches readers or extractors (many extractors append alt/title to the body).
TEXT_ATTRIBUTES = frozenset({
    "alt", "title", "aria-label", "aria-description", "aria-roledescription", "aria-placeholder",
    "placeholder", "label", "summary", "srcdoc", "value",
})
# Attributes that hold addresses: not text a reader sees, but where mailto: addresses and API keys in query
# strings end up.
LINK_ATTRIBUTES = frozenset({"href", "src", "action", "formaction", "cite", "poster", "srcset", "data", "background",
                             "longdesc", "ping", "xlink:href"})
_CHARREF = rx.compile(r"&(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[^\t\n\f <&#;]{1,32};?)")
_META_CHARSET = re.compile(
    rb"""<meta[^>]+?(?:charset\s*=\s*["']?\s*([a-zA-Z0-9_.:-]+)|content\s*=\s*["'][^"']*?charset\s*=\s*([a-zA-Z0-9_.:-]+))""",
    re.I,
)
# Elements that end an open <p>; list items, rows and cells end their open siblings.
_CLOSES_P = frozenset({
    "address", "article", "aside", "blockquote", "details", "div", "dl", "fieldset", "figcaption", "figure",
    "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "main", "menu", "nav", "ol", "p",
    "pre", "section", "table", "ul",
})
# Like Chromium's parser (512), the tree is capped in depth: start tags deeper than this become children of
# the deepest open element, so hostile nesting (100,000 <div>s) costs linear time. Real pages here reach 32.
MAX_OPEN_ELEMENTS = 512

_SIBLING_CLOSERS = {
    "li": ("li",), "dt": ("dt", "dd"), "dd": ("dt", "dd"), "tr": ("tr", "td", "th"), "td": ("td", "th"),
    "th": ("td", "th"), "option": ("option",), "thead": ("tbody", "tfoot"), "tbody": ("thead", "tbody"),
}
# What each start tag implicitly closes (its open siblings, an open <p>), and where that search stops.
_IMPLIED_CLOSERS = {tag: _SIBLING_CLOSERS.get(tag, ()) + (("p",) if tag in _CLOSES_P else ())
                    for tag in _CLOSES_P | _SIBLING_CLOSERS.keys()}
_CONTAINERS = frozenset({"ul", "ol", "table", "dl", "select", "div", "body", "td", "th", "section", "article"})
_JSON_LD_TYPES = frozenset({"application/ld+json"})
# The closest special ancestor decides the channel of text: inside <noscript>, <template> or <svg>.
_CONTEXTS = frozenset({"noscript", "template", "svg"})
_CONTEXT_CHANNEL = {"": Channel.VISIBLE_TEXT, "noscript": Channel.NOSCRIPT, "template": Channel.TEMPLATE,
                    "svg": Channel.SVG_TEXT}
# Names of attributes that may become units (data-* too): only their value positions are kept.
_UNIT_ATTRIBUTES = TEXT_ATTRIBUTES | LINK_ATTRIBUTES | {"content"}


@dataclass(eq=False, slots=True)
class Element:
    index: int
    tag: str
    attrs: dict[str, str]               # names lower-cased, values decoded
    parent: "Element | None"
    start: int                          # the start tag's span in the source
    end: int
    context: str = ""                   # "noscript" | "template" | "svg" | "" : the closest special ancestor
    resolver: "StyleResolver | None" = None
    _classes: frozenset | None = None
    _style: dict | None = None

    @property
    def style(self) -> dict[str, str]:
        """Cascaded declared values of the properties that decide visibility (see css.RELEVANT)."""
        if self._style is None:
            self._style = self.resolver.declared(self) if self.resolver is not None else {}
        return self._style

    @property
    def classes(self) -> frozenset:
        if self._classes is None:
            self._classes = frozenset(self.attrs.get("class", "").split())
        return self._classes

    def ancestors(self):
        el = self.parent
        while el is not None:
            yield el
            el = el.parent


def sniff_charset(data: bytes) -> str | None:
    """The charset a `<meta>` in the first 1024 bytes declares (the HTML5 prescan window)."""
    m = _META_CHARSET.search(data[:1024])
    if not m:
        return None
    return (m.group(1) or m.group(2)).decode("ascii", "replace")


# The same few references (&amp; &nbsp; &quot; &#39; …) fill most pages: each is decoded once per process.
_CHARREF_MEMO: dict[str, str] = {}
_CHARREF_MEMO_MAX = 4096


def decode_charrefs(source: str, start: int, end: int) -> tuple[str, OffsetMap]:
    """Text of source[start:end] with character references decoded, and its map back to the source."""
    if "&" not in source[start:end] if end - start < 4096 else source.find("&", start, end) < 0:
        return source[start:end], OffsetMap.identity(start, end - start)
    b = PieceBuilder()
    pos = start
    for m in _CHARREF.finditer(source, start, end):
        ref = m.group(0)
        decoded = _CHARREF_MEMO.get(ref)
        if decoded is None:
            decoded = _html.unescape(ref)
            if len(_CHARREF_MEMO) < _CHARREF_MEMO_MAX:
                _CHARREF_MEMO[ref] = decoded
        if decoded == ref:
            continue
        b.literal(source[pos:m.start()], pos)
        b.escape(decoded, m.start(), m.end() - m.start())
        pos = m.end()
    b.literal(source[pos:end], pos)
    return b.build(start, end)


def decode_html(data: bytes, declared_charset: str | None = None):
    """An HTML file's source text as every reader of it must see it (offsets are in this text): the declared
    charset (the caller's, else the document's own meta/BOM) by the rules of `decode_bytes`."""
    return decode_bytes(data, declared_charset or sniff_charset(data))


def load_html(data: bytes, path: str, declared_charset: str | None = None) -> Document:
    decoded = decode_html(data, declared_charset)
    doc = Document(path=path, kind="html", text=decoded.text, encoding=decoded.encoding)
    doc.problems.extend(decoded.problems)
    build_units(doc, decoded.text)
    return doc


def build_units(doc: Document, text: str, base_map=None, container: str = "") -> None:
    """Tokenize `text` and append its elements and units to `doc`.

    `base_map`, when given, maps offsets in `text` to the file (HTML nested in a JSON string, say);
    unit positions are then in file coordinates and `container` names where the HTML sits.
    """
    with gc_paused():       # tens of thousands of elements and units, and no reference cycles among them
        _build_units(doc, text, base_map, container)


def _build_units(doc: Document, text: str, base_map, container: str) -> None:
    """The hot loop of every scan (see bench/run.py): the tokens come as tuples, the common cases (a well-formed
    end tag, a text or attribute that is a plain slice of the source) are inlined, and a plain slice gets a
    computed identity map."""
    units = doc.units
    append_unit = units.append
    elements: list[Element] = []
    append_element = elements.append
    stack: list[Element] = []
    push = stack.append
    open_tags: dict[str, int] = {}      # tag -> how many of the stack's elements have it (skips hopeless scans)
    style_blocks: list[str] = []
    resolver = StyleResolver(style_blocks)
    ld_blocks = 0
    too_deep = False
    identity = IdentityMap
    unescape = _html.unescape
    visible = Channel.VISIBLE_TEXT
    attribute_channel, link_channel = Channel.ATTRIBUTE, Channel.LINK

    def close_from(i: int) -> None:
        for el in stack[i:]:
            open_tags[el.tag] -= 1
        del stack[i:]

    def emit(raw_start: int, raw_end: int, channel: Channel, element, locator: str = "", decode: bool = True,
             attrs=None, decoded=None):
        if decoded is not None:
            utext, umap = decoded
        else:
            utext = text[raw_start:raw_end]
            if decode and "&" in utext:
                utext, umap = decode_charrefs(text, raw_start, raw_end)
            else:
                umap = identity(raw_start, raw_end - raw_start)
        if not utext or utext.isspace():
            return
        if base_map is not None:
            umap = umap.then(base_map)
            fstart, fend = base_map.span(raw_start, raw_end)
        else:
            fstart, fend = raw_start, raw_end
        append_unit(TextUnit(utext, channel, fstart, fend, umap, locator, element, None, attrs or {}, container))

    for tok in scan(text):
        kind = tok[0]
        if kind == TEXT:
            parent = stack[-1] if stack else None
            s, e = tok[1], tok[2]
            utext = text[s:e]
            if base_map is None and "&" not in utext:
                # the common case, inlined: a plain slice of the source
                if not utext.isspace():
                    append_unit(TextUnit(utext, _CONTEXT_CHANNEL[parent.context] if parent else visible, s, e,
                                         identity(s, e - s), "", parent, None, {}, container))
            else:
                emit(s, e, _CONTEXT_CHANNEL[parent.context] if parent else visible, parent)
        elif kind == START:
            tag = tok[3]
            if tag in _IMPLIED_CLOSERS:
                at = _implied_close(stack, tag, open_tags)
                if at is not None:
                    close_from(at)
            parent = stack[-1] if stack else None
            if tok[5] > tok[4]:
                attrs, wanted = read_attrs(text, tok[4], tok[5], _UNIT_ATTRIBUTES, unescape)
            else:
                attrs, wanted = {}, None
            context = parent.context if parent else ""
            if not context and tag in _CONTEXTS:
                context = tag
            el = Element(len(elements), tag, attrs, parent, tok[1], tok[2], context, resolver)
            append_element(el)
            if wanted is not None:
                for name, vs, ve in wanted:
                    if name in TEXT_ATTRIBUTES or name.startswith("data-") or (
                            name == "content" and (tag == "meta" or "itemprop" in attrs)):
                        channel = attribute_channel
                    elif name in LINK_ATTRIBUTES:
                        channel = link_channel
                    else:
                        continue
                    value = text[vs:ve]
                    if base_map is None and "&" not in value:
                        if value and not value.isspace():
                            append_unit(TextUnit(value, channel, vs, ve, identity(vs, ve - vs), f"{tag}@{name}", el,
                                                 None, {}, container))
                    else:
                        emit(vs, ve, channel, el, f"{tag}@{name}")
            if tag not in VOID and not (tok[6] and context == "svg"):
                if len(stack) < MAX_OPEN_ELEMENTS:
                    push(el)
                    open_tags[tag] = open_tags.get(tag, 0) + 1
                elif not too_deep:
                    too_deep = True
                    doc.problems.append(f"markup nested deeper than {MAX_OPEN_ELEMENTS} elements: deeper elements "
                                        "are kept as children of the deepest one (browsers cap the tree too)")
        elif kind == END:
            tag = tok[3]
            if open_tags.get(tag):
                if stack[-1].tag == tag:    # well-formed markup: the innermost element closes
                    open_tags[tag] -= 1
                    stack.pop()
                    continue
                for i in range(len(stack) - 1, -1, -1):
                    if stack[i].tag == tag:
                        close_from(i)
                        break
        elif kind == RAWTEXT:
            tag = tok[3]
            s, e = tok[1], tok[2]
            el = stack[-1] if stack and stack[-1].tag == tag else None
            if tag == "script":
                stype = (el.attrs.get("type", "") if el else "").strip().lower()
                if stype in _JSON_LD_TYPES:
                    ld_blocks += 1
                    _emit_json_ld(text, s, e, el, ld_blocks, emit)
                else:
                    emit(s, e, Channel.SCRIPT, el, locator="script", decode=False)
            elif tag == "style":
                style_blocks.append(text[s:e])
                emit(s, e, Channel.STYLE, el, locator="style", decode=False)
            elif tag in RCDATA:
                channel = Channel.TITLE if tag == "title" else Channel.TEXTAREA
                if el is not None and el.context:
                    channel = _CONTEXT_CHANNEL[el.context]
                emit(s, e, channel, el, locator=tag)
            elif tag == "xmp":
                emit(s, e, visible, el, locator=tag, decode=False)
            else:  # iframe, noembed, noframes: fallback content a browser does not show
                emit(s, e, Channel.NOSCRIPT, el, locator=tag, decode=False)
        elif kind == COMMENT:
            parent = stack[-1] if stack else None
            emit(tok[3], tok[4], Channel.COMMENT, parent, locator="comment", decode=False)
    doc.elements.extend(elements)


def _implied_close(stack: list[Element], tag: str, open_tags: dict[str, int]) -> int | None:
    """Where a start tag `tag` implicitly closes the stack (index of the first element to close), or None."""
    closers = _IMPLIED_CLOSERS.get(tag)
    if closers is None:
        return None
    for c in closers:
        if open_tags.get(c):
            break
    else:
        return None
    # Only close within the nearest container: an <li> inside a nested <ul> does not close the outer one.
    for i in range(len(stack) - 1, -1, -1):
        t = stack[i].tag
        if t in closers:
            return i
        if t in _CONTAINERS and t != tag:
            return None
    return None


def _emit_json_ld(text: str, start: int, end: int, el, block: int, emit) -> None:
    """One unit per key and string value of a JSON-LD block; the whole block when it is not valid JSON.

    JSON-LD inside <script> is raw text: JSON escapes decode, HTML character references do not.
    """
    from scanner.loaders.json_positions import JsonSyntaxError, iter_strings

    locator = f"ld+json[{block}]"
    pending = []
    try:
        for s in iter_strings(text, start, end):
            pending.append(s)
    except JsonSyntaxError as exc:
        emit(start, end, Channel.JSON_LD, el, locator=locator, decode=False, attrs={"invalid_json": str(exc)})
        return
    for s in pending:
        emit(s.start, s.end, Channel.JSON_LD, el, locator=locator + s.pointer, decoded=(s.text, s.map),
             attrs={"key": s.key, "is_key": s.is_key})


class StyleResolver:
    """Computes an element's styling on first demand.

    Parsing every stylesheet of a page took longer than tokenizing it (measured on the real pages), and most
    elements never need their style: a rule asks only for the elements whose text says something suspicious.
    """

    def __init__(self, style_blocks: list[str]):
        self._blocks = style_blocks
        self._index: _css.SheetIndex | None = None

    @property
    def index(self) -> _css.SheetIndex:
        """The page's stylesheets, split into rules; each rule is parsed when an element first needs it."""
        if self._index is None:
            self._index = _css.SheetIndex(self._blocks)
        return self._index

    def declared(self, el: Element) -> dict[str, str]:
        inline = _css.parse_declarations(el.attrs["style"]) if "style" in el.attrs else []
        return _css.cascade(el, self.index, inline)
