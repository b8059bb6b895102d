"""Contact data: whether an address is a person's (PII001, redacted) or a role mailbox (PII002, kept), and whose
line a phone number is (PII003: a person's is redacted, the company's kept).

Emails: the whole local part against the role list in `scanner/rules/pii/role_mailboxes.yaml`. The redaction
placeholder itself and form placeholders (`tucorreo@ejemplo.com`) give no finding; URL user-info
(`https://key@o1.ingest.sentry.io`) is not an email, nor a local part of 16 hex digits or more.

Phones, first cue that applies (`phone_owner`):
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
"""

from __future__ import annotations

import re

from scanner import rx
from scanner.evidence import REPLACEMENT_EMAIL, REPLACEMENT_PHONE
from scanner.pii.blocks import JSON_CHANNELS
from scanner.pii.candidates import Cand, ScanState, context_word
from scanner.pii.recognizers.email import split_email
from scanner.pii.recognizers.mx.phone import parse_phone
from scanner.pii.registry import registry
from scanner.textfold import fold_accents
from scanner.units import Channel, TextUnit

_HEXISH = rx.compile(r"[0-9a-f]{16,}", re.I)
_USERINFO_BEFORE = re.compile(r"[a-z][a-z0-9+.-]*://[^\s/@:]*:$", re.I)
_EMAILISH = rx.compile(r"[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+")
PLACEHOLDER_PHONE = re.compile(re.escape(REPLACEMENT_PHONE))
PLACEHOLDER_EMAIL = re.compile(re.escape(REPLACEMENT_EMAIL), re.I)
_PLACE_IN_LABEL = re.compile(r"\s*(?:[^\W\d_]+\.?\s+){0,2}[^\W\d_]+\s*:\s*", re.UNICODE)
_CHROME_CLASS = rx.compile(r"(?<![a-z])(?:footer|header|navbar|nav|menu|menulist|social|topbar|top-bar|site-info|"
                           r"copyright|contentinfo|banner|navigation)(?![a-z])", re.I)
_OWNER_RANK = {"strong": 5, "label": 4, "chrome": 3, "entity": 2, "word": 1, "default": 0}


# ----------------------------------------------------------------------------------------------------------
# emails

def emails(cands: list[Cand], st: ScanState) -> list[Cand]:
    reg = registry()
    personal = reg.replacement("EMAIL_PERSONAL")
    out = []
    for c in cands:
        if c.entity != "EMAIL_ADDRESS":
            continue
        parts = split_email(c.text)
        if parts is None:
            continue
        local, domain = parts
        if c.text.lower() == REPLACEMENT_EMAIL or st.roles.is_placeholder(local, domain):
            continue
        before = c.unit.text[max(0, c.i - 3):c.i]
        if before.endswith("//") or before.endswith("://"):
            continue                   # URL user-info (https://key@o1.ingest.sentry.io): not a mailbox
        if _USERINFO_BEFORE.search(c.unit.text[max(0, c.i - 200):c.i]):
            continue                   # https://user:password@host — the password is the secret rules' job
        if _HEXISH.fullmatch(local):
            continue                   # keys and hashes, not people
        c.info = (local, domain)
        if st.roles.is_role(local, domain):
            c.entity, c.replacement = "EMAIL_ROLE", reg.replacement("EMAIL_ROLE")
            c.extra["reason"] = "role local part"
        else:
            c.entity, c.replacement = "EMAIL_PERSONAL", personal
            c.extra["reason"] = "local part is not a role mailbox"
        out.append(c)
    return out


# ----------------------------------------------------------------------------------------------------------
# phones

def phones(cands: list[Cand], st: ScanState, recognizer) -> list[Cand]:
    """Valid numbers; a bare 10-digit run or a number in a script only next to one of `recognizer`'s words."""
    out = []
    for c in cands:
        if c.entity != "PHONE_NUMBER":
            continue
        if c.info is None:
            c.info = parse_phone(c.text)
        if c.info is None:
            continue
        if c.extra.get("link") is None and (c.info.form == "bare" or c.unit.channel is Channel.SCRIPT):
            word = context_word(c, st, recognizer.context_regex)
            if word is None:
                continue
            c.extra["context"] = word
        c.extra.update(country=c.info.country, number_type=c.info.kind, form=c.info.form)
        out.append(c)
    return out


def phone_owners(phones: list[Cand], emails: list[Cand], persons: list[Cand], st: ScanState) -> None:
    """Decide, per occurrence and then per number, whether a phone is a person's or the company's."""
    for c in phones:
        owner, how, reason = phone_owner(c, emails, persons, st)
        c.extra.update(owner=owner, owner_basis=how, owner_reason=reason)
    # one number, one owner: the best-founded decision wins (ties go to "person", the safer side)
    best: dict[str, tuple] = {}
    for c in phones:
        key = c.info.e164
        r = (_OWNER_RANK[c.extra["owner_basis"]], c.extra["owner"] == "person")
        if key not in best or r > best[key][0]:
            best[key] = (r, c)
    for c in phones:
        top = best[c.info.e164][1]
        if top is not c and top.extra["owner"] != c.extra["owner"]:
            c.extra["owner"] = top.extra["owner"]
            c.extra["owner_reason"] = f"same number elsewhere in the document: {top.extra['owner_reason']}"
            c.extra["owner_basis"] = top.extra["owner_basis"]
    replacement = registry().replacement("PHONE_NUMBER")
    for c in phones:
        c.replacement = replacement if c.extra["owner"] == "person" else None


def phone_owner(c: Cand, emails: list[Cand], persons: list[Cand], st: ScanState):
    """(owner, basis, reason) of one occurrence: the first cue of the module's list that applies."""
    info = c.info
    if info.toll_free:
        return "company", "strong", f"{info.kind.lower().replace('_', '-')} number"
    u, ctx, blocks = c.unit, st.ctx, st.blocks
    if u.channel in JSON_CHANNELS:
        key = fold_accents(str(u.attrs.get("key") or ""))
        if key in ctx.person_keys:
            return "person", "strong", f"JSON key {key}"
        if key in ctx.company_keys:
            return "company", "strong", f"JSON key {key}"
        types = blocks.json_types(u)
        if types & ctx.person_types:
            return "person", "strong", "telephone of a schema.org Person"
        if types & ctx.organization_types:
            kind = sorted(types & ctx.organization_types)[0]
            return "company", "strong", f"telephone of a schema.org {kind}"
    w = ctx.window
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
        ent = _nearest_entity(b, s, e, lo, hi, emails, persons, blocks, level)
        if level == 0:
            if in_chrome(u, st) and not (ent is not None and ent[0] == "person"):
                return "company", "chrome", "in the site's header, footer or navigation"
            label = _nearest_word(ctx, masked, ps, pe, w["label"], before_only=True)
            if label is not None:
                return label[0], "label", f"label '{label[1]}'"
            if c.extra.get("link") == "whatsapp":
                return "person", "label", "WhatsApp link"
        if ent is not None:
            return ent[0], "entity", ent[1] + ("" if level == 0 else " (enclosing block)")
        word = _nearest_word(ctx, masked, ps, pe, None)
        if word is not None:
            return word[0], "word", f"word '{word[1]}'" + ("" if level == 0 else " (enclosing block)")
    return "company", "default", "no personal cue near the number (default: a company's line)"


def in_chrome(u: TextUnit, st: ScanState) -> bool:
    """The unit sits in the site's header, footer, navigation or social-links bar (cached per element)."""
    el = u.element
    if el is None:
        return False
    key = (u.container, el.index)
    hit = st.chrome.get(key)
    if hit is None:
        hit = False
        node = el
        while node is not None:
            if node.tag in ("nav", "header", "footer") or _CHROME_CLASS.search(
                    " ".join((node.attrs.get("class", ""), node.attrs.get("id", ""), node.attrs.get("role", "")))):
                hit = True
                break
            node = node.parent
        st.chrome[key] = hit
    return hit


def _nearest_word(ctx, text: str, ps: int, pe: int, limit: int | None, before_only: bool = False):
    best = None
    for owner, words in (("person", ctx.person_words), ("company", ctx.company_words)):
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


def _nearest_entity(b, s, e, lo, hi, emails, persons, blocks, level: int):
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
    for placeholder, why in ((PLACEHOLDER_EMAIL, "next to a redacted personal email"),
                             (PLACEHOLDER_PHONE, "next to a redacted personal phone")):
        for m in placeholder.finditer(window):
            ms, me = lo + m.start(), lo + m.end()
            consider(max(ms - e, s - me, 0), "person", why)
    return None if best is None else (best[1], best[2])
