"""Names of natural persons (PII010): where they come from, the one filter they all pass, and when one is redacted.

Sources, cheapest first: a capitalised name after a title (Lic., Ing., Dra. … from `context.yaml`),
everywhere names are read; the value of a name field (JSON-LD Person, an `author` / `byline` key, an
author-classed HTML element, PDF /Author); and spaCy's Spanish NER on the windows where a name decides
something (`scanner.pii.ner_windows`, which loads the model only when a window could yield a name at all).

Every candidate passes `Names.accepts`: trimmed to letters, a byline prefix dropped ("Por", "Escrito por"),
then `name_ok` (no digits, @ or URL; at most 7 words, each real word capitalised, none a stopword, two real
words unless after a title; not a company, a street or a place before a number) and, unless after a title,
not a capitalised heading whose every word also appears in lower case in the document.

PERSON is always reported (note); it is redacted (`[nombre redactado]`) when it sits in the same contact
block as a redacted personal email, personal phone or personal identifier, or next to already-redacted
contact data; then every other occurrence of the same name in the document is redacted too. The contact
block is the table row or list item, or else the enclosing block when it is short (a card of name, email
and phone).
"""

from __future__ import annotations

import re
from functools import lru_cache

from scanner import rx
from scanner.evidence import REPLACEMENT_EMAIL, REPLACEMENT_PHONE
from scanner.pii.blocks import JSON_CHANNELS, parent_pointer
from scanner.pii.candidates import Cand, ScanState
from scanner.pii.channels import NAME_CHANNELS
from scanner.pii.data import context_rules
from scanner.pii.registry import registry
from scanner.textfold import fold_accents
from scanner.units import Channel, TextUnit

_NAME_WORD = r"[A-ZÁÉÍÓÚÑÜ][a-záéíóúñü]+(?:-[A-ZÁÉÍÓÚÑÜ][a-záéíóúñü]+)?"
PARTICLE = r"(?:de|del|la|las|los|y|van|von|da|di)"
_NAME_SHAPE = re.compile(rf"{_NAME_WORD}(?:\s+(?:{PARTICLE}\s+)*{_NAME_WORD}){{1,5}}")
_NAME_CLASS = re.compile(r"author|autor|byline|firma|reporter|periodista|writer", re.I)
BYLINE_PREFIX = re.compile(r"(?:Por|POR|By|BY|[Vv]on|Escrito por|Autor:?|Autora:?)\s+")
# a name does not start with an article or a media word ("La República", "Redacción LR", "The Times")
NOT_FIRST = frozenset({"el", "la", "los", "las", "the", "diario", "redaccion", "periodico", "revista", "editorial",
                       "grupo", "agencia", "canal", "radio", "noticias", "sunday", "daily", "weekly"})
_NUMBER_AFTER = re.compile(r"\s*(?:[°º]|N[°º]|No\.|Núm\.?|#)?\s*\d")
_STREET_BEFORE = re.compile(r"(?:calle|av\.?|avenida|blvd\.?|boulevard|calzada|calz\.?|paseo|col\.?|colonia|esq\.?|"
                            r"esquina|carretera|privada|cerrada|andador|prolongacion|circuito|periferico)\s*$")
_LEGAL_FORM_AFTER = re.compile(r"\s*,?\s*(?:S\.?\s?A\.?|S\.?\s?de\s?R\.?\s?L\.?|S\.?\s?C\.|A\.\s?C\.|SAPI|"
                               r"S\.?A\.?P\.?I\.?|Inc\b|LLC\b)")
_LOWER_LETTERS = "abcdefghijklmnopqrstuvwxyzáéíóúñü"


class _WordTable(dict):
    """`str.translate` table: a word character (`re`'s \\w: alphanumeric or `_`) to itself, any other to a
    space; filled per distinct character of the Basic Multilingual Plane on first sight (at most 65,536
    entries: a page of every code point cannot grow it further), characters beyond it judged each time."""

    def __missing__(self, code: int) -> int:
        c = chr(code)
        value = code if (c.isalnum() or c == "_") else 32
        if code < 0x10000:
            self[code] = value
        return value


_WORD_TABLE = _WordTable()


def lower_words(text: str) -> set[str]:
    """The words of `text` (maximal runs of word characters) of 3 or more letters, all of them lower-case
    `a-z` or «áéíóúñü»: what `(?<![\\w])[a-záéíóúñü]{3,}(?![\\w])` finds, by string methods at C speed (a
    twelfth of a full scan went to that search, one Python step per match)."""
    return {w for w in set(text.translate(_WORD_TABLE).split()) if len(w) >= 3 and not w.strip(_LOWER_LETTERS)}


_URL = rx.compile(r"(?:https?://|www\.)[^\s<>\"']+", re.I)
_EMAILISH = rx.compile(r"[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+")


@lru_cache(maxsize=1)
def title_regexes() -> tuple[rx.Pattern, re.Pattern]:
    """(a capitalised name after a title, a title ending a text) from context.yaml's titles."""
    titles = sorted((re.escape(t.rstrip(".")) for t in context_rules().titles), key=len, reverse=True)
    names = rx.compile(rf"(?<![\w.])(?:{'|'.join(titles)})\.?\s+"
                       rf"(?P<name>{_NAME_WORD}(?:\s+(?:{PARTICLE}\s+)*{_NAME_WORD}){{0,4}})")
    end = re.compile(rf"(?:^|[\s(])(?:{'|'.join(titles)})\.?\s*$")
    return names, end


class Names:
    """The PERSON candidates of one scan, each through `accepts`."""

    def __init__(self, st: ScanState):
        self.st = st
        self.out: list[Cand] = []
        self._seen: set = set()

    def accepts(self, u: TextUnit, i: int, j: int, titled: bool) -> bool:
        """Whether a candidate at u.text[i:j] is a name (as `add` would take it, whatever it has taken)."""
        i, j = _trimmed(u.text, i, j)
        return self._judge(u, i, j, titled)

    def add(self, u: TextUnit, i: int, j: int, how: str, score: float) -> None:
        titled = how.startswith("title") or "title" in how
        i, j = _trimmed(u.text, i, j)
        if (id(u), i, j) in self._seen or not self._judge(u, i, j, titled):
            return
        self._seen.add((id(u), i, j))
        c = Cand(u, i, j, "PERSON", score, how, text=u.text[i:j])
        c.start, c.end = u.source_span(i, j)
        self.out.append(c)

    def _judge(self, u: TextUnit, i: int, j: int, titled: bool) -> bool:
        if j - i < 3 or not name_ok(self.st, u, i, j, titled=titled):
            return False
        return titled or not self.looks_like_words(u.text[i:j])

    def common_words(self) -> set:
        """Lower-case words of the document's readable text (built once per scan, on first demand)."""
        st = self.st
        if st.lower is None:
            # The texts joined by line breaks: a word neither crosses one nor has a word character beside it
            # there, so these are exactly the words of each text alone.
            st.lower = lower_words("\n".join(u.text for u in st.units if u.channel in NAME_CHANNELS))
        return st.lower

    def looks_like_words(self, span: str) -> bool:
        """Every word of a capitalised span also appears in lower case in the document: a heading ("Proposed
        Rules", "Comments Invited"), not a name; names rarely appear in lower case."""
        real = [w for w in span.split() if not re.fullmatch(PARTICLE, w)]
        common = self.common_words()
        return all(w.lower() in common for w in real)


def _trimmed(text: str, i: int, j: int) -> tuple[int, int]:
    """Spaces and punctuation off both ends, then a byline prefix ("Por", "Escrito por") off the start."""
    while i < j and not text[i].isalpha():
        i += 1
    while j > i and not text[j - 1].isalpha():
        j -= 1
    m = BYLINE_PREFIX.match(text, i, j)
    return (m.end() if m else i), j


def name_ok(st: ScanState, u: TextUnit, i: int, j: int, titled: bool) -> bool:
    span = u.text[i:j]
    if "@" in span or "/" in span or "http" in span.lower() or "www" in span.lower() or re.search(r"\d", span):
        return False
    # not inside an email address or URL of the unit
    for near in (_EMAILISH, _URL):
        for m in near.finditer(u.text, max(0, i - 80), min(len(u.text), j + 80)):
            if m.start() < j and i < m.end():
                return False
    words = span.split()
    if len(words) > 7:
        return False
    if fold_accents(words[0]) in NOT_FIRST:
        return False
    real = [w for w in words if not re.fullmatch(PARTICLE, w)]
    if not real or any(not w[:1].isupper() for w in real):
        return False
    if any(fold_accents(w.strip(".,;:()")) in st.ctx.stopwords for w in real):
        return False
    if len(real) < 2 and not titled:
        return False
    after = u.text[j:j + 30]
    if st.ctx.company_markers.search(fold_accents(span)) or _LEGAL_FORM_AFTER.match(after):
        return False
    if span.isupper() and len(real) < 2:
        return False
    # a street or a place, not a person: "Francisco de P. Miranda N° 157", "Calle Juan Escutia"
    if _NUMBER_AFTER.match(u.text, j) or _STREET_BEFORE.search(fold_accents(u.text[max(0, i - 14):i])):
        return False
    return True


def title_and_field_names(names: Names) -> list[TextUnit]:
    """Add the names after titles and in name fields; return the name-field units (NER reads them too)."""
    st = names.st
    title, _ = title_regexes()
    # 1. a capitalised name after a title (Lic., Ing., Dra. …): everywhere names are read, no NER needed
    for u in st.units:
        if u.channel not in NAME_CHANNELS or "." not in u.text and not re.search(r"\b(?:Dr|Sr|Ing|Lic)", u.text):
            continue
        for m in title.finditer(u.text):
            names.add(u, m.start("name"), m.end("name"), "title", 0.85)
    # 2. structured name fields: JSON-LD Person name, author/byline keys, author-classed HTML elements
    field_units = []
    for u in st.units:
        if u.channel not in NAME_CHANNELS or len(u.text) > 120:
            continue
        if is_name_field(u, st):
            field_units.append(u)
            m = _NAME_SHAPE.fullmatch(u.text.strip())
            if m:
                off = len(u.text) - len(u.text.lstrip())
                names.add(u, off, off + len(u.text.strip()), "name field", 0.7)
    return field_units


def is_name_field(u: TextUnit, st: ScanState) -> bool:
    ctx = st.ctx
    if u.channel in JSON_CHANNELS:
        key = fold_accents(str(u.attrs.get("key") or ""))
        if key in ctx.name_keys:
            return True
        if key == "name" or (key == "" and "/author" in u.locator):
            parent = parent_pointer(u.locator)
            last = parent.rsplit("/", 1)[-1]
            if fold_accents(last) in ctx.name_keys or re.fullmatch(r"\d+", last) and fold_accents(
                    parent_pointer(parent).rsplit("/", 1)[-1]) in ctx.name_keys:
                return True
            return bool(st.blocks.json_types(u) & ctx.person_types)
        return False
    el = u.element
    if el is not None:
        if _named_element(u.container, el, st):
            return u.channel is not Channel.ATTRIBUTE or u.locator.endswith(("@content", "@title"))
    if u.channel is Channel.PDF_METADATA:
        return u.locator in ("/Author", "Author")
    if u.channel is Channel.ATTRIBUTE and u.locator == "meta@content" and u.element is not None:
        return fold_accents(u.element.attrs.get("name", "")) in ("author", "autor", "byl", "byline")
    return False


def _named_element(container: str, el, st: ScanState) -> bool:
    """The element or an ancestor is marked as holding an author's name (class, itemprop, rel, id)."""
    for _ in range(3):                      # the element, its parent, its grandparent
        if el is None:
            return False
        key = (container, el.index)
        own = st.name_el.get(key)
        if own is None:
            a = el.attrs
            own = st.name_el[key] = bool(_NAME_CLASS.search(
                f"{a.get('class', '')} {a.get('itemprop', '')} {a.get('rel', '')} {a.get('id', '')}"))
        if own:
            return True
        el = el.parent
    return False


def person_redaction(persons: list[Cand], emails: list[Cand], phones: list[Cand], st: ScanState) -> None:
    """A name in the same contact block as a redacted personal email/phone (or a placeholder) is redacted."""
    blocks = st.blocks
    replacement = registry().replacement("PERSON")
    limit = st.ctx.window["person_block"]
    redacted = [c for c in emails + phones if c.replacement is not None]
    for p in persons:
        p.replacement = None
        level = blocks.contact_level(p.unit)
        pos = blocks.position(p.unit, p.i, p.j, level)
        if pos is None:
            continue
        b, s, e = pos
        why = None
        for c in redacted:
            q = blocks.position(c.unit, c.i, c.j, level)
            if q is not None and q[0] is b and max(q[1] - e, s - q[2], 0) <= limit:
                why = "same contact block as a redacted " + (
                    "email" if c.entity.startswith("EMAIL") else "phone" if c.entity == "PHONE_NUMBER" else
                    "identifier")
                break
        if why is None:
            window = b.text[max(0, s - limit):e + limit]
            if REPLACEMENT_EMAIL in window or REPLACEMENT_PHONE in window:
                why = "same contact block as already-redacted contact data"
        if why:
            p.replacement = replacement
            p.extra["reason"] = why
    # every other occurrence of a redacted name in the document goes too
    names = {p.text for p in persons if p.replacement is not None}
    if not names:
        return
    have = {(id(p.unit), p.i, p.j) for p in persons}
    longest_first = sorted(names, key=lambda n: (-len(n), n))
    for p in persons:
        if p.replacement is None and p.text in names:
            p.replacement = replacement
            p.extra["reason"] = "same name redacted elsewhere in the document"
    for u in st.units:
        if u.channel not in NAME_CHANNELS:
            continue               # never inside URLs, scripts or styles
        for i, j in occurrences(u.text, longest_first):
            if (id(u), i, j) in have:
                continue
            c = Cand(u, i, j, "PERSON", 0.7, "same name", text=u.text[i:j], replacement=replacement)
            c.start, c.end = u.source_span(i, j)
            c.extra["reason"] = "same name redacted elsewhere in the document"
            persons.append(c)


def _word_char(ch: str) -> bool:
    """Python's `\\w` for one character of a str pattern."""
    return ch.isalnum() or ch == "_"


def occurrences(text: str, longest_first: list[str]) -> list[tuple[int, int]]:
    """The (start, end) of every match of `(?<!\\w)(?:n1|n2|…)(?!\\w)` in `text`, names longest first, as
    `re.finditer` gives them (tests/test_pii_same_name.py compares the two): literal searches, so a document's names are
    never compiled into a pattern. A compiled one would refine the alphabet of every regex with each accented
    letter it holds (scanner.rx.alphabet), and every program would then be written again in that process."""
    starts: dict[int, str] = {}                  # start -> the first name (longest) matching there
    n = len(text)
    for name in longest_first:
        if not name:
            continue
        k = text.find(name)
        while k >= 0:
            e = k + len(name)
            if (k == 0 or not _word_char(text[k - 1])) and (e == n or not _word_char(text[e])):
                starts.setdefault(k, name)
            k = text.find(name, k + 1)
    out, pos = [], 0
    for k in sorted(starts):
        if k >= pos:
            out.append((k, k + len(starts[k])))
            pos = k + len(starts[k])
    return out

