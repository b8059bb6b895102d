"""`PiiScanner`: personal data (LFPDPPP) in fixture documents — what to redact and what to report and keep.

One scan of one document, in this order (each step a module of its own):

1. candidates (`scanner.pii.candidates`): every recognizer the rules name, once per document, and the
   numbers of tel: / wa.me links;
2. decisions: emails and phones (`scanner.pii.contacts`: role mailbox or not), identifiers
   (`scanner.pii.identifiers`: each rule's policy); overlapping candidates resolved by rule priority;
3. names (`scanner.pii.names`): after titles, in name fields, and from spaCy's NER on the windows where a
   name decides something (`scanner.pii.ner_windows`) — the model is loaded on the first document that
   could yield a name there, never before;
4. whose each phone is (`contacts.phone_owners`, which sees the names), which names are redacted
   (`names.person_redaction`), overlaps again, and the findings, each with its rule's id and message.

The rules (PII001…, `scanner/rules/pii/`) and everything they decide — replacement, what is reported,
priority, context — are data, read through `scanner.pii.registry`.
"""

from __future__ import annotations

from functools import lru_cache

from scanner.doccache import cached_scan
from scanner.evidence import unit_finding
from scanner.findings import Finding
from scanner.pii import contacts, ner
from scanner.pii.blocks import BlockIndex
from scanner.pii.candidates import Cand, ScanState, link_phones, pattern_candidates
from scanner.pii.channels import SKIP_CHANNELS
from scanner.pii.data import context_rules, role_rules
from scanner.pii.identifiers import identifiers
from scanner.pii.names import Names, person_redaction, title_and_field_names
from scanner.pii.ner_windows import could_hold_name, ner_persons, windows
from scanner.pii.registry import registry
from scanner.units import Channel, Document


@lru_cache(maxsize=1)
def _recognizers() -> tuple:
    """One instance of each recognizer the rules name, per process, in the order of the rules."""
    return tuple(cls() for cls in registry().recognizer_classes())


class PiiScanner:
    """Finds personal data in a `Document`; every finding says whether it is redacted (`replacement`)."""

    def __init__(self, use_ner: bool = True):
        self.use_ner = use_ner
        self.recognizers = _recognizers()
        self._by_name = {r.name: r for r in self.recognizers}
        self._phone = next(r for r in self.recognizers if r.ENTITY == "PHONE_NUMBER")
        self.ctx = context_rules()
        self.roles = role_rules()
        self.ner_available = use_ner and ner.installed()
        self.stats = {"ner_windows": 0, "ner_chars": 0, "ner_skipped_documents": 0}

    def cache_token(self):
        """Same token, same findings on the same document (scanner.doccache)."""
        return ("pii", self.ner_available)

    def rule_metas(self) -> list:
        """SARIF metadata of every personal-data rule (their full help)."""
        return registry().rule_metas()

    def warm(self) -> None:
        """Load the NER model now (before forking workers that will all need it), if it is used at all."""
        if self.ner_available:
            ner.load()

    @cached_scan
    def scan(self, doc: Document) -> list[Finding]:
        staged = self._contact_data(doc)
        if staged is None:
            return []
        st, emails, phones, ids = staged
        names, wins = self._names_before_ner(st, emails, phones, ids)
        if wins and could_hold_name(names, wins):
            self.stats["ner_windows"] += len(wins)
            self.stats["ner_chars"] += sum(len(w[2]) for w in wins)
            ner_persons(names, wins, ner.entities)
        elif wins:
            self.stats["ner_skipped_documents"] += 1
        persons = names.out
        contacts.phone_owners(phones, emails, persons, st)
        person_redaction(persons, emails + ids, phones, st)
        final = _non_overlapping(emails + ids + phones + persons)
        return _findings(doc, final)

    def name_windows(self, doc: Document) -> tuple[Names | None, list]:
        """The names found without NER and the windows NER would read (for tests and measurements)."""
        staged = self._contact_data(doc)
        if staged is None:
            return None, []
        return self._names_before_ner(*staged)

    def _contact_data(self, doc: Document):
        """(state, emails, phones, identifiers): steps 1 and 2, or None when nothing is scanned."""
        units = [u for u in doc.units if u.channel not in SKIP_CHANNELS and u.text and not u.text.isspace()
                 and not (u.channel is Channel.JSON_LD and u.attrs.get("is_key"))]
        if not units:
            return None
        st = ScanState(doc, units, BlockIndex(doc, units), self.ctx, self.roles)
        cands = pattern_candidates(self.recognizers, units)
        cands.extend(link_phones(units))
        for c in cands:
            c.start, c.end = c.unit.source_span(c.i, c.j)
        emails = contacts.emails(cands, st)
        ids = identifiers(cands, st, self._by_name)
        phones = contacts.phones(cands, st, self._phone)
        kept = _non_overlapping(emails + ids + phones)
        emails = [c for c in kept if c.entity.startswith("EMAIL")]
        phones = [c for c in kept if c.entity == "PHONE_NUMBER"]
        ids = [c for c in kept if c not in emails and c not in phones]
        return st, emails, phones, ids

    def _names_before_ner(self, st: ScanState, emails, phones, ids) -> tuple[Names, list]:
        names = Names(st)
        field_units = title_and_field_names(names)
        wins = windows(names, emails, phones, ids, field_units) if self.ner_available else []
        return names, wins


def _findings(doc: Document, cands: list[Cand]) -> list[Finding]:
    reg = registry()
    out = []
    for c in cands:
        rule = reg.by_entity[c.entity]
        message = rule.message
        extra = {"score": round(c.score, 2), "recognizer": c.recognizer}
        extra.update(c.extra)
        if c.entity == "PHONE_NUMBER":
            message = f"{message} of a {'person' if c.extra.get('owner') == 'person' else 'company'} " \
                      f"({c.extra.get('owner_reason', '')})"
        elif c.entity == "PERSON" and c.replacement is not None:
            message = f"{message} in a personal contact block"
        severity = "error" if c.replacement is not None else "note"
        out.append(unit_finding(doc, c.unit, c.i, c.j, rule_id=rule.id, kind="pii", entity=c.entity,
                                severity=severity, message=message, replacement=c.replacement, **extra))
    out.sort(key=lambda f: (f.page or 0, f.start, f.end, f.rule_id))
    return out


def _non_overlapping(cands: list[Cand]) -> list[Cand]:
    """Drop candidates overlapping a better one (the rules' priority, then longer, then earlier)."""
    priority = registry().priority
    ordered = sorted(cands, key=lambda c: (priority(c.entity), -(c.end - c.start), c.start))
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


def __getattr__(name: str):
    # `RULES` (entity → (rule id, message)) for callers written before the registry (scanner/cli.py's
    # suppression step); new code reads `scanner.pii.registry.registry()`.
    if name == "RULES":
        return {r.entity: (r.id, r.message) for r in registry().rules}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
