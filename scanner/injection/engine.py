"""Runs the injection rules over a loaded document and returns findings with exact positions.

For each unit, only the rules of its channel run. The text is normalised once per unit, and a single regex
of every "trigger" phrase decides first whether any signal could hold at all — most units show none, and
leave after one C-speed search. Decoding rules (Unicode tag characters, zero-width bit strings, base64)
run only on units that hold such content.
"""

from __future__ import annotations

import base64
import json
import binascii
import bisect
import itertools
import re
from collections import defaultdict
from dataclasses import dataclass

from scanner import rx
from scanner.findings import Finding
from scanner.injection.predicates import CHEAP_PREDICATES, PREDICATES
from scanner.injection.signals import CompiledLexicon, UnitText
from scanner.injection.tagtext import INLINE_TAGS, strip_tags, tag_names
from scanner.rulepack import Rule, load_pack
from scanner.units import Channel, Document

_TAG_RUN = rx.compile("[\U000e0020-\U000e007e]{2,}")
_ZW_RUN = rx.compile("[\u034f\u180e\u200b-\u200f\u2060-\u2064\ufeff]{16,}")
_B64_RUN = rx.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{24,}={0,2}(?![A-Za-z0-9+/_=-])")
_SENTENCE_END = rx.compile(r"[.!?\n]")
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
    """Invisible characters used as bits: any two of them (U+200B/U+200C, U+2062/U+2064, …) as 0 and 1."""
    out = []
    for m in _ZW_RUN.finditer(text):
        run = m.group(0)
        symbols = sorted(set(run))
        if len(symbols) < 2:
            continue
        found = None
        for zero, one in itertools.permutations(symbols, 2):
            bits = "".join("0" if c == zero else "1" if c == one else "" for c in run)
            if len(bits) < 16:
                continue
            decoded = bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits) - 7, 8)).decode("utf-8", "replace")
            if decoded and sum(c.isprintable() or c.isspace() for c in decoded) >= 0.9 * len(decoded):
                found = Decoded(decoded, m.start(), m.end())
                break
        if found is not None:
            out.append(found)
    return out


def decode_blob(blob: str) -> str | None:
    """What one base64 run (standard or URL-safe alphabet, padding optional) decodes to, when that is UTF-8 text
    at least 95 % printable; None for a long word or number, bytes that are not UTF-8, or binary."""
    if blob.isalpha() or blob.isdigit():       # a long word or number, not base64
        return None
    core = blob.rstrip("=")
    padded = core + "=" * (-len(core) % 4)
    try:
        raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
        decoded = raw.decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None
    if decoded and sum(c.isprintable() or c.isspace() for c in decoded) >= 0.95 * len(decoded):
        return decoded
    return None


def decode_base64(text: str) -> list[Decoded]:
    out = []
    for m in _B64_RUN.finditer(text):
        decoded = decode_blob(m.group(0))
        if decoded is not None:
            out.append(Decoded(decoded, m.start(), m.end()))
    return out


def _json_values(text: str) -> list[str] | None:
    """The string values of `text` when it is a JSON object or array, else None."""
    head = text.lstrip()[:1]
    if head not in ("{", "["):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    out: list[str] = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if v.strip():
                out.append(v)
        elif isinstance(v, dict):
            stack.extend(reversed(list(v.values())))
        elif isinstance(v, list):
            stack.extend(reversed(v))
    return out


_WORD = re.compile(r"[^\W\d_]{2,}")


def _prose_like(text: str) -> bool:
    """Whether decoded text reads as words: three of two letters or more, letters and white space at least four
    fifths of it (not a token, an identifier or a number)."""
    if len(_WORD.findall(text, 0, 4000)) < 3:
        return False
    letters = sum(c.isalpha() or c.isspace() for c in text)
    return letters >= 0.8 * len(text)


def prose_parts(decoded: str) -> list[str]:
    """What of one decoded blob reads as words: the text, or a decoded JSON document's string values one by one
    (data, like JSON everywhere else)."""
    values = _json_values(decoded)
    return [part for part in ([decoded] if values is None else values) if _prose_like(part)]


def _may_hold_base64(text: str) -> bool:
    """Necessary for a base64 run: 24 characters or more, none of them white space, so within one word of
    str.split()."""
    return len(text) >= 24 and max(map(len, text.split()), default=0) >= 24


def decoded_prose(text: str) -> list[Decoded]:
    """The texts decoded from `text`'s base64 blobs that read as words (`prose_parts`), each with its blob's span."""
    if not _may_hold_base64(text):
        return []
    return [Decoded(part, item.start, item.end) for item in decode_base64(text) for part in prose_parts(item.text)]


DECODERS = {"unicode_tags": decode_unicode_tags, "zero_width": decode_zero_width, "base64": decode_base64}
_ZW_CHARS = frozenset("\u034f\u180e\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064\ufeff")
# Cheap necessary conditions first (C-speed `max`, a set test, a length): most texts leave there.
_DECODE_HINT = {
    "unicode_tags": lambda t: (not t.isascii() and max(t) >= "\U000e0020"
                               and any("\U000e0020" <= c <= "\U000e007e" for c in t)),
    "zero_width": lambda t: (not t.isascii()) and len(t) >= 16 and not _ZW_CHARS.isdisjoint(t)
    and _ZW_RUN.search(t) is not None,
    "base64": lambda t: _may_hold_base64(t) and _B64_RUN.search(t) is not None,
}


_STANDALONE = frozenset({Channel.JSON_STRING, Channel.JSON_KEY})
_COMMENT = re.compile(r"<!--.*?-->", re.S)     # bounded by the gap it is searched in (400 characters)


@dataclass(slots=True)
class Block:
    """Consecutive units read as one text; `starts[k]` is where unit k begins in `text`."""
    units: list
    starts: list[int]
    text: str

    def locate(self, i: int) -> tuple[int, int]:
        """(unit index, offset inside that unit) of block offset i (separators belong to the unit before)."""
        k = bisect.bisect_right(self.starts, i) - 1
        k = max(k, 0)
        return k, min(i - self.starts[k], len(self.units[k].text))


def _separator(doc: Document, a, b) -> str:
    """"" when only inline markup lies between two units of one HTML document, a line break otherwise."""
    if a.page is not None or b.page is not None:
        return "" if (a.page == b.page and a.end == b.start) else "\n"
    if a.container != b.container or b.start < a.end or a.channel != b.channel:
        return "\n"
    between = doc.text[a.end:b.start]
    if len(between) > 400:
        return "\n"
    if "<!--" in between:
        # A comment renders as nothing: «Ign<!-- -->ore» reads «Ignore» (blind44). Complete comments are cut out and
        # the rest judged as any gap; one left open (or a stray "-->") is not markup this can judge: a line break.
        between = _COMMENT.sub("", between)
        if "<!--" in between or "-->" in between:
            return "\n"
    if "<" not in between:                     # no markup: the gap is the text between
        return "\n" if "\n" in between else (" " if between else "")
    names = tag_names(between)
    if any(n.lower() not in INLINE_TAGS for n in names):
        return "\n"
    gap = strip_tags(between)
    if "\n" in gap and not names:
        return "\n"
    return " " if gap.strip() == "" and gap else ("" if not gap else " ")


def build_blocks(doc: Document, units: list) -> list[Block]:
    """All the units as one block, joined by their separators (the signal window keeps distant words apart)."""
    blocks: list[Block] = []
    current = list(units)
    if not current:
        return blocks
    parts: list[str] = []
    starts: list[int] = []
    pos = 0
    for k, u in enumerate(current):
        if k:
            sep = _separator(doc, current[k - 1], u)
            parts.append(sep)
            pos += len(sep)
        starts.append(pos)
        parts.append(u.text)
        pos += len(u.text)
    blocks.append(Block(current, starts, "".join(parts)))
    return blocks


class InjectionScanner:
    def __init__(self, rule_dirs: tuple | None = None, learned: bool = True):
        """`learned=False`: the lexicon rules only (training and measuring the learned rule need that)."""
        lexicon, rules = load_pack(rule_dirs) if rule_dirs else load_pack()
        self.lexicon = CompiledLexicon(lexicon)
        self.rules: tuple[Rule, ...] = tuple(r for r in rules if r.kind == "injection")
        self.by_channel: dict = defaultdict(list)
        self.block_rules: list[Rule] = []
        self.learned: list = []                # model rules (scanner/injection/learned.py), beside the lexicon
        # the lexicon on the de-obfuscated reading of the learned rule's windows (scanner/injection/reading.py);
        # with `learned=False` (the lexicon as written: what training and the bench's lexicon column read) not run
        self.reading: list = []
        for rule in self.rules:
            if rule.match.model is not None:
                if learned:
                    from scanner.injection.learned import LearnedRule

                    self.learned.append(LearnedRule(rule, lexicon=lexicon))
                continue
            if rule.match.decode == "reading":
                if learned:
                    from scanner.injection.reading import ReadingRule

                    self.reading.append(ReadingRule(rule, self.lexicon))
                continue
            if rule.match.scope == "block":
                self.block_rules.append(rule)
                continue
            for channel in rule.match.channels:
                self.by_channel[channel].append(rule)
        self.gated = self.lexicon.gated
        # Rules whose predicates all cost less than reading the text (a name or a key looked up): those first, so
        # an ungated signal is searched only where they hold (INJ016's on every attribute text cost 7 % of a scan).
        self.predicates_first = frozenset(
            r.id for r in self.rules if r.match.require and all(
                n in CHEAP_PREDICATES for n in (*r.match.require, *r.match.exclude)))

    def scan(self, doc: Document) -> list[Finding]:
        findings: list[Finding] = []
        # Units of one page repeat their texts (menus, separators, labels): each distinct text is normalised
        # and searched once; a UnitText depends on its text alone.
        texts: dict[str, tuple[UnitText, bool]] = {}
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
                    finding = self._decoded(rule, unit, doc)
                    if finding:
                        findings.append(finding)
                    continue
                first = None
                if rule.id in self.predicates_first:
                    first = self._predicates(rule, unit, doc)
                    if first is None:
                        continue
                if cache is None:
                    known = texts.get(unit.text)
                    if known is None:
                        cache = UnitText(unit.text, self.lexicon)
                        known = texts[unit.text] = (cache, not cache.has_trigger())
                    cache, triggerless = known
                if triggerless and self.gated[m.signal]:
                    continue                   # the signal needs a trigger phrase the text does not have
                hit = self.lexicon.signal(m.signal, cache.found)
                if hit is None:
                    continue
                reasons = first if first is not None else self._predicates(rule, unit, doc)
                if reasons is None:
                    continue
                block = Block([unit], [0], unit.text)
                findings.append(self._finding(rule, block, doc, cache, hit, reasons))
        for rule in self.block_rules:
            findings.extend(self._scan_blocks(rule, doc))
        # the learned and the reading rules read the same windows: cut once for rules of the same channels
        windows: dict = {}
        for learned in self.learned:
            findings.extend(learned.scan(doc, windows))
        for reading in self.reading:
            wins = windows.get(reading.channels)
            findings.extend(reading.scan(doc, wins))
        findings.sort(key=Finding.sort_key)
        return findings

    def _scan_blocks(self, rule: Rule, doc: Document) -> list[Finding]:
        """Judge runs of consecutive units together; predicates then decide unit by unit."""
        channels = set(rule.match.channels)
        units = [u for u in doc.units if u.channel in channels]
        if not units:
            return []
        out: list[Finding] = []
        for block in self._segments(doc, units):
            text = UnitText(block.text, self.lexicon)
            if self.gated[rule.match.signal] and not text.has_trigger():
                continue
            if self.lexicon.signal(rule.match.signal, text.found) is None:
                continue
            # The text shows the signal: keep only the units the rule's predicates accept, and judge again.
            passing: list = []
            reasons_of: dict[int, list[str]] = {}
            for u in block.units:
                reasons = self._predicates(rule, u, doc)
                if reasons is None:
                    if passing:
                        out.extend(self._judge_run(rule, doc, passing, reasons_of))
                        passing = []
                    continue
                passing.append(u)
                reasons_of[id(u)] = reasons
            if passing:
                out.extend(self._judge_run(rule, doc, passing, reasons_of))
        return out

    def _segments(self, doc: Document, units: list) -> list[Block]:
        """Split units into blocks at container, page and channel changes; join the rest with separators."""
        blocks: list[Block] = []
        run: list = []
        for u in units:
            # Separate JSON values are separate data: each string is judged on its own.
            if run and (u.container != run[-1].container or u.channel != run[-1].channel
                        or (u.page is None) != (run[-1].page is None) or u.channel in _STANDALONE):
                blocks.extend(build_blocks(doc, run))
                run = []
            run.append(u)
        if run:
            blocks.extend(build_blocks(doc, run))
        return blocks

    def _judge_run(self, rule: Rule, doc: Document, units: list, reasons_of) -> list[Finding]:
        """Findings for each distinct instruction in the run: after one, the search resumes past its span."""
        out = []
        for block in build_blocks(doc, units):
            text = UnitText(block.text, self.lexicon)
            cursor = 0
            while True:
                hit = self.lexicon.signal(rule.match.signal, text.found, after=cursor)
                if hit is None:
                    break
                anchor = text.norm.span(hit[1][0].start, hit[1][0].end)[0]
                first_unit = block.units[block.locate(anchor)[0]]
                finding, end = self._finding(rule, block, doc, text, hit, reasons_of.get(id(first_unit), []),
                                             with_end=True)
                out.append(finding)
                # resume after the finding, in normalised coordinates
                nxt = max(e.end for e in hit[1])
                while nxt < len(text.norm.text) and text.norm.span(nxt, nxt + 1)[0] < end:
                    nxt += 1
                if nxt <= cursor:
                    break
                cursor = nxt
        return out

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

    def _finding(self, rule: Rule, block: Block, doc, cache: UnitText, hit, reasons, with_end=False):
        conj, evidence_spans = hit
        first = min(evidence_spans, key=lambda e: e.start)
        es, ee = cache.norm.span(first.start, first.end)
        evidence = " ".join(block.text[es:ee].split())[:EVIDENCE_MAX]
        if rule.match.span == "sentence":
            lo = min(cache.norm.span(e.start, e.end)[0] for e in evidence_spans)
            hi = max(cache.norm.span(e.start, e.end)[1] for e in evidence_spans)
            i, j = _sentence_bounds(block.text, lo, hi)
        else:
            i, j = _trimmed(block.text)
        message = rule.message + (f" ({'; '.join(reasons)})" if reasons else "")
        finding = self._make(rule, block, doc, i, j, message, evidence, signal=conj)
        return (finding, j) if with_end else finding

    def _decoded(self, rule: Rule, unit, doc) -> Finding | None:
        for item in DECODERS[rule.match.decode](unit.text):
            if not item.text.strip():
                continue
            hit = None
            # A decoded JSON document (configuration blobs in data-* attributes: headlines, URLs, labels) is data:
            # judged value by value, like JSON everywhere else, each value with the evidence a hidden JSON-LD
            # value needs — a lone "say" in a headline is not an instruction.
            parts = _json_values(item.text)
            signal = rule.match.signal if parts is None else "hidden_instruction"
            for part in parts or [item.text]:
                hit = self.lexicon.signal(signal, UnitText(part, self.lexicon).found)
                if hit is not None:
                    break
            if hit is None:
                continue
            reasons = self._predicates(rule, unit, doc)
            if reasons is None:
                continue
            evidence = " ".join(item.text.split())[:EVIDENCE_MAX]
            message = rule.message + (f" ({'; '.join(reasons)})" if reasons else "")
            block = Block([unit], [0], unit.text)
            return self._make(rule, block, doc, item.start, item.end, message, evidence,
                              signal=hit[0], decoded=True)
        return None

    @staticmethod
    def _make(rule, block: Block, doc, i, j, message, evidence, signal, decoded=False) -> Finding:
        ki, oi = block.locate(i)
        kj, oj = block.locate(max(j - 1, i))
        first, last = block.units[ki], block.units[kj]
        start = first.source_span(oi, oi + 1)[0] if oi < len(first.text) else first.end
        end = last.source_span(oj, oj + 1)[1] if oj < len(last.text) else last.end
        if j <= i:
            end = start
        unit = first
        line, column = doc.unit_line_col(unit, start)
        return Finding(
            rule_id=rule.id, kind="injection", vector=rule.vector, path=doc.path, start=start, end=end,
            line=line, column=column, page=unit.page, severity=rule.severity, message=message,
            evidence=evidence, channel=unit.channel.value, locator=unit.locator or None,
            extra={"signal": list(signal), **({"decoded": True} if decoded else {}),
                   **({"container": unit.container} if unit.container else {})},
        )


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
