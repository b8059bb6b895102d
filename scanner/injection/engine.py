"""Runs the injection rules over a loaded document and returns findings with exact positions.

For each unit, only the rules of its channel run. The text is normalised once per unit, and a single regex
of every "trigger" phrase decides first whether any signal could hold at all — most units show none, and
leave after one C-speed search. Decoding rules (Unicode tag characters, zero-width bit strings, base64)
run only on units that hold such content.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections import defaultdict
from dataclasses import dataclass

from scanner.findings import Finding
from scanner.injection.predicates import PREDICATES
from scanner.injection.signals import CompiledLexicon, UnitText
from scanner.rulepack import Rule, load_pack
from scanner.sourcetext import LineIndex
from scanner.units import Document

_TAG_RUN = re.compile("[\U000e0020-\U000e007e]{2,}")
_ZW_RUN = re.compile("[\u200b\u200c\u200d\u2060\ufeff]{8,}")
_B64_RUN = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{24,}={0,2}(?![A-Za-z0-9+/_=-])")
_SENTENCE_END = re.compile(r"[.!?\n]")
_EMOJI_BEFORE_TAGS = "\U0001f3f4"            # 🏴: subdivision flags are written with tag characters
EVIDENCE_MAX = 200


@dataclass(slots=True)
class Decoded:
    text: str
    start: int          # span of the encoded run in the unit's text
    end: int


def decode_unicode_tags(text: str) -> list[Decoded]:
    out = []
    for m in _TAG_RUN.finditer(text):
        if m.start() > 0 and text[m.start() - 1] == _EMOJI_BEFORE_TAGS:
            continue
        decoded = "".join(chr(ord(c) - 0xE0000) for c in m.group(0))
        out.append(Decoded(decoded, m.start(), m.end()))
    return out


def decode_zero_width(text: str) -> list[Decoded]:
    """Zero-width characters used as bits (the common U+200B/U+200C and U+200C/U+200D schemes)."""
    out = []
    for m in _ZW_RUN.finditer(text):
        run = m.group(0)
        if "\u200d" in run and len(set(run)) == 1:
            continue
        for zero, one in (("\u200b", "\u200c"), ("\u200c", "\u200d"), ("\u200b", "\u200d")):
            bits = "".join("0" if c == zero else "1" if c == one else "" for c in run)
            if len(bits) < 16:
                continue
            chars = [int(bits[i:i + 8], 2) for i in range(0, len(bits) - 7, 8)]
            decoded = bytes(chars).decode("utf-8", "replace")
            if sum(c.isprintable() for c in decoded) >= 0.9 * len(decoded):
                out.append(Decoded(decoded, m.start(), m.end()))
                break
        else:
            out.append(Decoded("", m.start(), m.end()))
    return out


def decode_base64(text: str) -> list[Decoded]:
    out = []
    for m in _B64_RUN.finditer(text):
        blob = m.group(0)
        if blob.isalpha() or blob.isdigit():       # a long word or number, not base64
            continue
        core = blob.rstrip("=")
        padded = core + "=" * (-len(core) % 4)
        try:
            raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
            decoded = raw.decode("utf-8")
        except (binascii.Error, ValueError, UnicodeDecodeError):
            continue
        if decoded and sum(c.isprintable() or c.isspace() for c in decoded) >= 0.95 * len(decoded):
            out.append(Decoded(decoded, m.start(), m.end()))
    return out


DECODERS = {"unicode_tags": decode_unicode_tags, "zero_width": decode_zero_width, "base64": decode_base64}
_DECODE_HINT = {
    "unicode_tags": lambda t: any("\U000e0020" <= c <= "\U000e007e" for c in t) if not t.isascii() else False,
    "zero_width": lambda t: (not t.isascii()) and _ZW_RUN.search(t) is not None,
    "base64": lambda t: _B64_RUN.search(t) is not None,
}


class InjectionScanner:
    def __init__(self, rule_dirs: tuple | None = None):
        lexicon, rules = load_pack(rule_dirs) if rule_dirs else load_pack()
        self.lexicon = CompiledLexicon(lexicon)
        self.rules: tuple[Rule, ...] = tuple(r for r in rules if r.kind == "injection")
        self.by_channel: dict = defaultdict(list)
        for rule in self.rules:
            for channel in rule.match.channels:
                self.by_channel[channel].append(rule)
        self.gated = {name: all(any(g not in ("directive", "imperative") for g in conj) for conj in alts)
                      for name, alts in self.lexicon.signals.items()}

    def scan(self, doc: Document) -> list[Finding]:
        findings: list[Finding] = []
        page_lines: dict[int, LineIndex] = {}
        for unit in doc.units:
            rules = self.by_channel.get(unit.channel)
            if not rules:
                continue
            cache: UnitText | None = None
            triggerless = False
            for rule in rules:
                m = rule.match
                if m.decode:
                    if not _DECODE_HINT[m.decode](unit.text):
                        continue
                    finding = self._decoded(rule, unit, doc, page_lines)
                    if finding:
                        findings.append(finding)
                    continue
                if cache is None:
                    cache = UnitText(unit.text, self.lexicon)
                    triggerless = not cache.has_trigger()
                if triggerless and self.gated[m.signal]:
                    continue                   # the signal needs a trigger phrase the text does not have
                conj = self.lexicon.signal(m.signal, cache.found)
                if conj is None:
                    continue
                reasons = self._predicates(rule, unit, doc)
                if reasons is None:
                    continue
                findings.append(self._finding(rule, unit, doc, cache, conj, reasons, page_lines))
        findings.sort(key=Finding.sort_key)
        return findings

    @staticmethod
    def _predicates(rule: Rule, unit, doc) -> list[str] | None:
        reasons = []
        for name in rule.match.require:
            why = PREDICATES[name](unit, doc)
            if not why:
                return None
            reasons.append(why)
        for name in rule.match.exclude:
            if PREDICATES[name](unit, doc):
                return None
        return reasons

    def _finding(self, rule: Rule, unit, doc, cache: UnitText, conj, reasons, page_lines) -> Finding:
        found = cache.found
        evidence_spans = [e for g in conj for e in found[g]]
        first = min(evidence_spans, key=lambda e: e.start)
        es, ee = cache.norm.span(first.start, first.end)
        evidence = " ".join(unit.text[es:ee].split())[:EVIDENCE_MAX]
        if rule.match.span == "sentence":
            lo = min(cache.norm.span(e.start, e.end)[0] for e in evidence_spans)
            hi = max(cache.norm.span(e.start, e.end)[1] for e in evidence_spans)
            i, j = _sentence_bounds(unit.text, lo, hi)
        else:
            i, j = _trimmed(unit.text)
        message = rule.message + (f" ({'; '.join(reasons)})" if reasons else "")
        return self._make(rule, unit, doc, i, j, message, evidence, page_lines, signal=conj)

    def _decoded(self, rule: Rule, unit, doc, page_lines) -> Finding | None:
        for item in DECODERS[rule.match.decode](unit.text):
            if not item.text.strip():
                continue
            text = UnitText(item.text, self.lexicon)
            conj = self.lexicon.signal(rule.match.signal, text.found)
            if conj is None:
                continue
            reasons = self._predicates(rule, unit, doc)
            if reasons is None:
                continue
            evidence = " ".join(item.text.split())[:EVIDENCE_MAX]
            message = rule.message + (f" ({'; '.join(reasons)})" if reasons else "")
            return self._make(rule, unit, doc, item.start, item.end, message, evidence, page_lines, signal=conj,
                              decoded=True)
        return None

    @staticmethod
    def _make(rule, unit, doc, i, j, message, evidence, page_lines, signal, decoded=False) -> Finding:
        start, end = unit.source_span(i, j)
        if unit.page is not None:
            page = next((p for p in doc.pages if p.number == unit.page and _same_container(p, unit)), None)
            text = page.text if page is not None else ""
            index = page_lines.setdefault(id(page), LineIndex(text))
            line, column = index.line_col(start)
        else:
            line, column = doc.line_col(start)
        return Finding(
            rule_id=rule.id, kind="injection", vector=rule.vector, path=doc.path, start=start, end=end,
            line=line, column=column, page=unit.page, severity=rule.severity, message=message,
            evidence=evidence, channel=unit.channel.value, locator=unit.locator or None,
            extra={"signal": list(signal), **({"decoded": True} if decoded else {}),
                   **({"container": unit.container} if unit.container else {})},
        )


def _same_container(page, unit) -> bool:
    return getattr(page, "container", "") == (unit.container or "") or not unit.container


def _trimmed(text: str) -> tuple[int, int]:
    i = len(text) - len(text.lstrip())
    j = len(text.rstrip())
    return (i, j) if j > i else (0, len(text))


def _sentence_bounds(text: str, lo: int, hi: int) -> tuple[int, int]:
    start = 0
    for m in _SENTENCE_END.finditer(text, 0, lo):
        start = m.end()
    m = _SENTENCE_END.search(text, hi)
    end = m.end() if m else len(text)
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end
