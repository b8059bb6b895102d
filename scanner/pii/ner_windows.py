"""spaCy's Spanish NER, only on the windows where a name decides something, and only when a window could hold one.

Windows: 200 characters of the contact block around each personal email, non-toll-free phone, redacted
identifier and redaction placeholder, and every name field (radius 0), merged per block and widened to
whitespace. All windows of a document go through one `ner.entities` call, whose packing of windows into
texts is part of what the model sees: so either every window of a document goes to the model or none does.

None does — and spaCy is not even imported — when no window could yield a name: `could_hold_name` runs the
same filter a NER entity must pass (`Names.accepts`) on every span the entity could be, so skipping the model
never changes a finding (tests/test_pii_ner_gate.py checks it against the model). An entity maps to a span
inside one unit whose ends, once trimmed to letters as `accepts` trims them, sit at a letter that follows a
non-letter (or the unit's start) and before a non-letter (or its end) — spaCy splits tokens inside a run of
letters only through tokenizer exceptions, and the test checks that none of the Spanish ones can start or end
a name there. Whether an entity is "after a title" is bounded above by `_titled_possible` (a title, then only
non-letters, before the span), and being after a title only ever lets more through. The enumeration stops
extending a span at what makes every longer span fail: a digit, "@" or "/", more than nine chunks (seven
words and a two-word byline), and a whole chunk that is a real word but not capitalised, or a stopword.
"""

from __future__ import annotations

import re
from functools import lru_cache

from scanner.evidence import REPLACEMENT_EMAIL, REPLACEMENT_PHONE
from scanner.pii.candidates import Cand
from scanner.pii.channels import NAME_CHANNELS
from scanner.pii.contacts import PLACEHOLDER_EMAIL, PLACEHOLDER_PHONE
from scanner.pii.data import context_rules
from scanner.pii.names import BYLINE_PREFIX, NOT_FIRST, PARTICLE, Names, title_regexes
from scanner.textfold import fold_accents
from scanner.units import Channel

RADIUS = 200
_CHUNK = re.compile(r"\S+")
_STOP_SPAN = re.compile(r"\d|@|/")
_PARTICLE_WORD = re.compile(PARTICLE + r"(?![^\W\d_])")
_TITLE_IN_ENTITY = re.compile(r"(?:[A-Z][a-zA-Z.]{0,5}\.\s+)+")
MAX_CHUNKS = 9


@lru_cache(maxsize=1)
def _title_at_end() -> re.Pattern:
    titles = sorted((re.escape(t.rstrip(".")) for t in context_rules().titles), key=len, reverse=True)
    return re.compile(rf"(?:{'|'.join(titles)})$")


def windows(names: Names, emails: list[Cand], phones: list[Cand], ids: list[Cand], field_units) -> list[tuple]:
    """(block, lo, text) of every window of the document, in the order they go to the model."""
    st = names.st
    blocks = st.blocks
    spans: dict[int, tuple] = {}          # id(block) → (block, list of [lo, hi])

    def want(u, i, j, radius=RADIUS):
        if u.channel not in NAME_CHANNELS and u.channel is not Channel.LINK:
            return                 # a script's or URL's neighbourhood holds no name a reader sees
        pos = blocks.position(u, i, j, blocks.contact_level(u) if radius else 0)
        if pos is None:
            return
        b, s, e = pos
        lo, hi = max(0, s - radius), min(len(b.text), e + radius)
        spans.setdefault(id(b), (b, []))[1].append([lo, hi])

    for c in emails:
        if c.entity == "EMAIL_PERSONAL":
            want(c.unit, c.i, c.j)
    for c in phones:
        if not c.info.toll_free:
            want(c.unit, c.i, c.j)
    for c in ids:
        if c.replacement is not None:
            want(c.unit, c.i, c.j)
    for u in field_units:
        want(u, 0, len(u.text), radius=0)
    for u in st.units:
        if u.channel in NAME_CHANNELS and (REPLACEMENT_EMAIL in u.text or REPLACEMENT_PHONE in u.text):
            for placeholder in (PLACEHOLDER_EMAIL, PLACEHOLDER_PHONE):
                for m in placeholder.finditer(u.text):
                    want(u, m.start(), m.end())
    out = []
    for b, ranges in spans.values():
        ranges.sort()
        merged = []
        for lo, hi in ranges:
            if merged and lo <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], hi)
            else:
                merged.append([lo, hi])
        for lo, hi in merged:
            # widen to whitespace so no word is cut
            while lo > 0 and not b.text[lo - 1].isspace():
                lo -= 1
            while hi < len(b.text) and not b.text[hi].isspace():
                hi += 1
            out.append((b, lo, b.text[lo:hi]))
    return out


def could_hold_name(names: Names, wins: list[tuple]) -> bool:
    """False only when no entity the model could return in these windows would pass `Names.accepts`."""
    for b, lo, text in wins:
        hi = lo + len(text)
        for u in b.units:
            if u.channel not in NAME_CHANNELS:
                continue
            off = b.offset(u)
            a, z = max(lo, off) - off, min(hi, off + len(u.text)) - off
            if a < z and _unit_could_hold_name(names, u, a, z):
                return True
    return False


def _titled_possible(text: str, p: int) -> bool:
    k = p
    while k > 0 and not text[k - 1].isalpha():
        k -= 1
    return k < p and _title_at_end().search(text, max(0, k - 12), k) is not None


def _unit_could_hold_name(names: Names, u, a: int, z: int) -> bool:
    text = u.text
    stopwords = names.st.ctx.stopwords
    chunks = [(m.start(), m.end()) for m in _CHUNK.finditer(text, a, z)]
    for k, (cs, ce) in enumerate(chunks):
        for p in range(cs, ce):
            if not text[p].isalpha() or (p > 0 and text[p - 1].isalpha()):
                continue
            if not (text[p].isupper() or _PARTICLE_WORD.match(text, p) or BYLINE_PREFIX.match(text, p)):
                continue
            titled = _titled_possible(text, p)
            byline = BYLINE_PREFIX.match(text, p, z)           # where every span past the byline starts
            start = byline.end() if byline else p
            for n in range(k, min(len(chunks), k + MAX_CHUNKS)):
                qs, qe = chunks[n]
                stop = _STOP_SPAN.search(text, p if n == k else qs, qe)
                last = stop.start() if stop else qe          # ends at or after a stop fail, as do longer spans
                for q in range(max(p + 1, qs + 1), last + 1):
                    if text[q - 1].isalpha() and (q == len(text) or not text[q].isalpha()):
                        if names.accepts(u, p, q, titled):
                            return True
                if stop:
                    break
                if start < qe and _kills_longer(text[max(qs, start):qe], first=start >= qs, stopwords=stopwords):
                    break
    return False


def _kills_longer(word: str, first: bool, stopwords) -> bool:
    """A whole chunk every longer span keeps as a word, and that makes every such span fail `name_ok`."""
    if re.fullmatch(PARTICLE, word):
        return False
    if first and fold_accents(word) in NOT_FIRST:
        return True
    return not word[:1].isupper() or fold_accents(word.strip(".,;:()")) in stopwords


def ner_persons(names: Names, wins: list[tuple], entities) -> None:
    """Add the PER (and, right after a title, MISC) entities `entities(texts)` finds in the windows."""
    _, title_end = title_regexes()
    for (b, lo, _), ents in zip(wins, entities([w[2] for w in wins])):
        for s, e, label in ents:
            if label not in ("PER", "MISC"):
                continue
            hit = b.unit_at(lo + s, lo + e)
            if hit is None:
                continue
            u, i, j = hit
            if u.channel not in NAME_CHANNELS:
                continue
            # a leading title inside the entity is not part of the name
            m = _TITLE_IN_ENTITY.match(u.text[i:j])
            titled = bool(title_end.search(u.text[max(0, i - 12):i]))
            if m and title_end.search(u.text[i:i + m.end()].rstrip() + " "):
                i += m.end()
                titled = True
            if label == "MISC" and not titled:
                continue
            names.add(u, i, j, "ner:" + label + (" after title" if titled else ""), 0.85 if label == "PER" else 0.6)
