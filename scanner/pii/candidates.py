"""Candidates: every recognizer once per document over the units' texts, mapped back to units; phones in links.

The recognizers (`scanner.pii.recognizers`, in the order of the rules that name them) run on the scanned
units' texts joined into one string, separator "\\n\\n", so each runs once per document; the email
recognizer, the slowest (its pattern may start at any word character, and scripts are long), only on windows
around each "@" (and "arroba" / "[at]" / "%40"), which hold every address of 64-character local parts or
shorter (RFC 5321's limit). A context word is looked for in a window of the unit's *block*
(`scanner.pii.blocks`), which also sees a label in the neighbouring cell, in a `<strong>` before the value,
or in the JSON key.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from scanner import rx
from scanner.pii.blocks import BlockIndex
from scanner.pii.channels import URL_CHANNELS
from scanner.pii.recognizers.mx.phone import parse_phone
from scanner.units import Channel, Document, TextUnit

_LINK_PHONE = rx.compile(r"(?:\btel:|\bcallto:|\bsms:|wa\.me/|whatsapp\.com/send/?\?(?:[^#]*&)?phone=|[?&]phone=)"
                         r"(?P<num>(?:\+|%2[bB])?[\d\-.() ]*(?:%20[\d\-.() ]*)*\d)")
_WA = re.compile(r"wa\.me/|whatsapp", re.I)
_LINK_KEYS = ("tel:", "callto:", "sms:", "wa.me/", "whatsapp", "phone=")
_OBFUSCATION_KEYS = ("arroba", "[at]", "(at)", "{at}", "[ at ]", "( at )", "%40")
_OBFUSCATION_RX = rx.compile(r"arroba|[\[({]\s*at\s*[\])}]|%40", re.I)


@dataclass(eq=False)
class Cand:
    unit: TextUnit
    i: int
    j: int
    entity: str
    score: float
    recognizer: str
    strong: bool = True
    start: int = 0                      # source span (file, or PDF page text)
    end: int = 0
    replacement: str | None = None
    extra: dict = field(default_factory=dict)
    text: str = ""
    info: object = None                 # PhoneInfo for phones, (local, domain) for emails

    @property
    def page(self):
        return self.unit.page


@dataclass(eq=False)
class ScanState:
    """What one scan of one document shares between its steps (built per scan: a scanner may serve threads)."""

    doc: Document
    units: list[TextUnit]
    blocks: BlockIndex
    ctx: object                         # scanner.pii.data.ContextRules
    roles: object                       # scanner.pii.data.RoleRules
    chrome: dict = field(default_factory=dict)     # (container, element index) → in header/footer/nav
    name_el: dict = field(default_factory=dict)    # (container, element index) → marked as an author's name
    lower: set | None = None                        # lower-case words of the readable text, on first demand


def _may_be_obfuscated(text: str) -> bool:
    low = text.lower()
    return any(k in low for k in _OBFUSCATION_KEYS)


def at_windows(units: list[TextUnit]):
    """(unit, offset, text) windows around every "@" and obfuscated at-sign, merged where they overlap."""
    for u in units:
        text = u.text
        points = []
        if "@" in text:
            pos = text.find("@")
            while pos >= 0:
                points.append(pos)
                pos = text.find("@", pos + 1)
        if _may_be_obfuscated(text):
            points.extend(m.start() for m in _OBFUSCATION_RX.finditer(text))
        if not points:
            continue
        points.sort()
        lo, hi = max(0, points[0] - 66), points[0] + 260
        for p in points[1:]:
            if p - 66 <= hi:
                hi = p + 260
            else:
                yield u, lo, text[lo:hi]
                lo, hi = max(0, p - 66), p + 260
        yield u, lo, text[lo:hi]


class Joined:
    """Texts of units (or windows of them) joined by a blank line, so each recognizer runs once per document."""

    def __init__(self, pieces):
        self.pieces = []
        self.starts: list[int] = []
        parts, pos = [], 0
        for u, off, text in pieces:
            self.pieces.append((u, off, len(text)))
            self.starts.append(pos)
            parts.append(text)
            parts.append("\n\n")
            pos += len(text) + 2
        self.text = "".join(parts)

    def index(self, start: int) -> int:
        return bisect.bisect_right(self.starts, start) - 1

    def locate(self, start: int, end: int):
        """(unit, i, j, cut) for a match at [start, end): offsets in the unit, and whether its window was cut."""
        k = self.index(start)
        u, off, n = self.pieces[k]
        i, j = start - self.starts[k], end - self.starts[k]
        if j > n:
            return None
        return u, off + i, off + j, off > 0


def pattern_candidates(recognizers, units: list[TextUnit]) -> list[Cand]:
    """Every recognizer once over the units' texts joined (separator "\\n\\n"), mapped back to units."""
    joined_all = Joined([(u, 0, u.text) for u in units])
    joined_at = Joined(at_windows(units))
    out: list[Cand] = []
    for rec in recognizers:
        entity = rec.supported_entities[0]
        joined = joined_at if entity == "EMAIL_ADDRESS" else joined_all
        if not joined.text:
            continue
        for r in rec.analyze(joined.text, [entity]):
            hit = joined.locate(r.start, r.end)
            if hit is None:
                continue
            u, i, j, cut = hit
            if cut and r.start == joined.starts[joined.index(r.start)]:
                continue           # starts where a window was cut from a longer text: not a whole address
            if u.channel in URL_CHANNELS and entity == "PHONE_NUMBER":
                continue           # numbers in URLs are ids; tel: and wa.me links are read by link_phones
            out.append(Cand(u, i, j, entity, float(r.score), rec.name, strong=r.score >= 1.0, text=u.text[i:j]))
    return out


def link_phones(units: list[TextUnit]) -> list[Cand]:
    """Numbers of tel:, callto:, sms:, wa.me and WhatsApp links (and `phone=` parameters), valid ones only."""
    out = []
    for u in units:
        if u.channel not in URL_CHANNELS and u.channel is not Channel.SCRIPT:
            continue
        low = u.text.lower()
        if not any(k in low for k in _LINK_KEYS):
            continue
        for m in _LINK_PHONE.finditer(u.text):
            raw = m.group("num").replace("%20", " ").replace("%2B", "+").replace("%2b", "+")
            info = parse_phone(raw)
            if info is None:
                continue
            c = Cand(u, m.start("num"), m.end("num"), "PHONE_NUMBER", 1.0, "MxPhoneRecognizer(link)",
                     text=m.group("num"), info=info)
            c.extra["link"] = "whatsapp" if _WA.search(m.group(0)) else "tel"
            out.append(c)
    return out


def context_word(c: Cand, st: ScanState, words: rx.Pattern) -> str | None:
    """A context word (`words`, over folded text) near the candidate in its own block, if any."""
    pos = st.blocks.position(c.unit, c.i, c.j)
    if pos is None:
        return None
    b, s, e = pos
    w = st.ctx.window
    lo = max(0, s - w["before"])
    window = b.folded[lo:e + w["after"]]
    # the candidate itself is not its own context (an email local part "rfc@…", say)
    window = window[:s - lo] + " " * (e - s) + window[e - lo:]
    m = words.search(window)
    return m.group(0) if m else None
