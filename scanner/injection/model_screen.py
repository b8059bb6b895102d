"""The prefilter's screen for the learned rule: could the model fire anywhere on this HTML page?

The lexicon screen (`prefilter.py`) proves a page cannot show a lexicon signal; the model needs its own proof,
since it fires on phrasings no lexicon pattern names. Building exact units is what costs, so the screen reads
the channels the model judges straight from the markup — comments, text attributes and meta content, JSON-LD
string values, noscript/template/SVG text — decodes character references, cuts the same windows and scores
them with the same model, against each group's threshold lowered by `MARGIN` logits (the cheap reading may cut
a text slightly differently from the loader). Which paragraphs CSS hides takes the style sheets to know, so for
each page-text group the rule judges without a gate (CSS-hidden in the shipped pack, since the twenty-fourth
round; visible text too in a pack that does not gate it) every paragraph is scored against that group's limits.
A gated group counts only with a gate cue: when no gate cue appears
anywhere on the page, nothing there can fire; when one does, the paragraphs holding one are scored against the
gated groups' limits. A page passes (takes the full load) when any window comes within the margin of its
threshold.

A window holding a reader request meets its group's lower `request_thresholds` (scanner/injection/reader_request.py).
The screen cannot cut exact windows, so it asks the page as a whole: when the relaxed request test (a superset)
finds one anywhere in the folded page, every window is held to its group's lowest threshold.
"""

from __future__ import annotations

import html
import json
import re

from scanner.injection import features as F
from scanner.injection import model as M
from scanner.injection.deobfuscate import deobfuscate
from scanner.injection.tagtext import INLINE_TAGS
from scanner.injection.learned import GROUPS, PAGE_TEXT_GROUPS
from scanner.loaders.html import TEXT_ATTRIBUTES
from scanner.normalize import normalize, normalize_text

MARGIN = 1.0
RE2_MAX_MEM = 256 << 20
_COMMENT = re.compile(r"<!--(.*?)(?:-->|$)", re.S)
try:  # possessive runs (Python 3.11+): the same matches as one character at a time, three times faster
    _TAG = re.compile(r"<([a-zA-Z][a-zA-Z0-9:-]*)((?:[^>\"']++|\"[^\"]*+\"|'[^']*+')*+)>")
except re.error:  # pragma: no cover
    _TAG = re.compile(r"<([a-zA-Z][a-zA-Z0-9:-]*)((?:[^>\"']|\"[^\"]*\"|'[^']*')*)>")
_ATTR = re.compile(r"([^\s=/>\"']+)\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s\"'>]+))")
_LD_BLOCK = re.compile(r"<script\b[^>]*ld\+json[^>]*>(.*?)</script", re.S | re.I)
_FALLBACK_OPEN = re.compile(r"<(noscript|template|svg|iframe|noembed|noframes)\b[^>]*>", re.I)
_FALLBACK_CLOSE = {t: re.compile(rf"</{t}\s*>", re.I) for t in ("noscript", "template", "svg", "iframe", "noembed",
                                                                 "noframes")}
# A paragraph ends at a comment or a tag that is not inline (an unclosed comment runs to the end, like the
# tokenizer's: the first one takes the rest, so this stays linear); inline tags are then dropped. Two passes of
# C-level substitution, no Python callback per tag.
_INLINE_NAMES = "|".join(sorted(INLINE_TAGS, key=len, reverse=True))
_BREAK = re.compile(r"<!--.*?(?:-->|\Z)|</?(?!(?:" + _INLINE_NAMES + r")(?![a-zA-Z0-9:-]))[a-zA-Z][a-zA-Z0-9:-]*[^>]*>",
                    re.S | re.I)
_INLINE = re.compile(r"</?[a-zA-Z][a-zA-Z0-9:-]*[^>]*>")
# Every comment, closed or not (one left open runs to the end, so a page of unclosed "<!--" stays linear); the
# closed ones are dropped, an open one kept for `_BREAK`.
_CLOSED_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_GROUP_OF_FALLBACK = {"noscript": "noscript", "iframe": "noscript", "noembed": "noscript", "noframes": "noscript",
                      "template": "template", "svg": "svg_text"}
_GATE_CUES_RX: dict = {}
_SEP = "\x00"


def _cue_in(cues, text: str) -> bool:
    """Whether `cues` finds a cue in `text` as written or in its de-obfuscated reading where that differs
    (`deobfuscate` checks its own cheap necessary conditions first: a page that reads as written costs only those)."""
    if cues.search(text) is not None:
        return True
    read = deobfuscate(text)
    return read != text and cues.search(read) is not None


# A cue's opening context — the start of a text or clause (`^`, a sentence end, a space) — holds in a paragraph
# the loader cuts out but not necessarily where that paragraph stands in the page's markup (after `>`, or glued
# to the text before it once tags are removed). For the page-level test, each such group is dropped: what is
# left matches wherever the cue matches in any paragraph (a superset, tested).
_CLAUSE_START = re.compile(r"\(\?:\^(?:[^()\\]|\\.)*\)")


def relaxed_cue(pattern: str) -> str:
    """`pattern` without its start-of-text/clause context groups `(?:^|…)`: a superset of its matches."""
    return _CLAUSE_START.sub("", pattern)


def _gate_regex(cues: frozenset):
    """One pattern for the gate cues, relaxed (`relaxed_cue`): RE2 (linear time) when google-re2 is installed."""
    key = tuple(sorted(cues))
    if key not in _GATE_CUES_RX:
        pattern = "|".join(f"(?:{relaxed_cue(F.CUES[c])})" for c in key)
        try:
            import re2  # type: ignore

            # Memory for RE2's DFA (256 MB, as the prefilter's): with the default 8 MB its cache of states filled
            # on the real pages and each search ran on the NFA instead — the same matches, ten times slower.
            options = re2.Options()
            options.max_mem = RE2_MAX_MEM
            _GATE_CUES_RX[key] = re2.compile(pattern, options)
        except Exception:  # pragma: no cover
            _GATE_CUES_RX[key] = re.compile(pattern)
    return _GATE_CUES_RX[key]


def _drop_closed(m) -> str:
    # shorter than «<!---->», a match ending in "-->" overlaps its own opener («<!-->» at the end): it ran to the end
    return "" if m.group().endswith("-->") and len(m.group()) >= 7 else m.group()


def _paragraphs(markup: str) -> list[str]:
    """Text of a markup fragment, split where a non-inline tag (or a comment left open) stands, inline tags and
    complete comments dropped (a comment renders as nothing: the loader's blocks read «Ign<!-- -->ore» as one word)."""
    if "<!--" in markup:
        markup = _CLOSED_COMMENT.sub(_drop_closed, markup)
    # "\x00", not "\n": a line break inside a text node does not cut it
    parts = _INLINE.sub("", _BREAK.sub("\x00", markup)).split("\x00")
    return [p for p in (html.unescape(x) for x in parts) if p.strip()]


def normalize_all(texts: list[str]) -> list[str]:
    """`normalize(t).text` of every text, in one call: the folding is character by character and keeps NUL, so
    folding the NUL-joined texts and splitting gives each text's folding."""
    if not texts:
        return []
    if not any(_SEP in t for t in texts):
        out = normalize_text(_SEP.join(texts)).split(_SEP)
        if len(out) == len(texts):
            return out
    return [normalize(t).text for t in texts]


def _json_strings(value, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            _json_strings(v, out)
    elif isinstance(value, list):
        for v in value:
            _json_strings(v, out)


class PageTexts:
    """One page's texts as the screens read them, each computed once: the standalone texts (comments, text
    attributes, meta content, JSON-LD strings, fallback content), the paragraphs, each text normalised and each
    normalised text's windows with their prepared text."""

    def __init__(self, body: str):
        self.body = body
        self._standalone: list[tuple[str, str]] | None = None
        self._paragraphs: list[str] | None = None
        self._norm: dict[str, str] = {}
        self._windows: dict[str, list[tuple[str, str]]] = {}

    def standalone(self) -> list[tuple[str, str]]:
        if self._standalone is None:
            self._standalone = _standalone_texts(self.body)
        return self._standalone

    def paragraphs(self) -> list[str]:
        if self._paragraphs is None:
            self._paragraphs = _paragraphs(self.body)
        return self._paragraphs

    def normalized(self, raws: list[str]) -> list[str]:
        """`normalize_all(raws)`, each text folded once per page."""
        todo = [r for r in dict.fromkeys(raws) if r not in self._norm]
        self._norm.update(zip(todo, normalize_all(todo)))
        return [self._norm[r] for r in raws]

    def windows(self, norm: str) -> list[tuple[str, str]]:
        """(window, prepared window) of each of `M.windows(norm)`."""
        out = self._windows.get(norm)
        if out is None:
            out = self._windows[norm] = [(w, F.prepare_normalized(w)) for w in (norm[s:e] for s, e in M.windows(norm))]
        return out


def _standalone_texts(body: str) -> list[tuple[str, str]]:
    """(group, text) of the texts of a page a rule reads one by one: comments, text attributes and meta content,
    JSON-LD strings, and the paragraphs of noscript, template, SVG and other fallback content."""
    out: list[tuple[str, str]] = []
    for m in _COMMENT.finditer(body):
        out.append(("comment", m.group(1)))
    # findall, not a Python step per match: a value is whichever of its three spellings matched (the others
    # come back empty, as does an empty quoted value, so the first non-empty one is the value)
    for tag, attrs in _TAG.findall(body):
        if "=" not in attrs:
            continue
        meta = tag.lower() == "meta"
        for name, dq, sq, bare in _ATTR.findall(attrs):
            name = name.lower()
            if name in TEXT_ATTRIBUTES or name.startswith("data-") or name == "content":
                group = "meta" if meta else "alt" if name == "alt" else "attribute"
                out.append((group, html.unescape(dq or sq or bare)))
    for m in _LD_BLOCK.finditer(body):
        strings: list[str] = []
        try:
            _json_strings(json.loads(m.group(1)), strings)
        except (ValueError, RecursionError):
            strings = [m.group(1)]
        out.extend(("json_ld", s) for s in strings)
    pos = 0
    while True:                            # one forward search per block: linear even when none is closed
        m = _FALLBACK_OPEN.search(body, pos)
        if m is None:
            break
        tag = m.group(1).lower()
        close = _FALLBACK_CLOSE[tag].search(body, m.end())
        end = close.start() if close else len(body)
        out.extend((_GROUP_OF_FALLBACK[tag], p) for p in _paragraphs(body[m.end():end]))
        pos = close.end() if close else len(body)
    return out


class ModelScreen:
    def __init__(self, learned_rules, reading_rx=None):
        """`reading_rx`: the lexicon's trigger phrases, relaxed, when the pack has a rule on the de-obfuscated reading
        (`reading.ReadingRule`): a page passes when the reading of a window of its texts holds one (`may_read`)."""
        self.rules = list(learned_rules)
        self.reading_rx = reading_rx

    def may_read(self, texts: list[str], page: "PageTexts | None" = None) -> bool:
        """Whether the reading of a window of these texts (`reading.reading_of`), where it differs from the window
        as written, holds a trigger phrase: the windows the learned rule reads (`M.windows` of each normalised
        text, those `M.worth_scoring`), so a page where none does cannot fire the reading rule. `page` keeps the
        normalised texts and the windows' prepared texts for `may_fire`, which reads the same windows."""
        from scanner.injection.reading import reading_of

        rx_ = self.reading_rx
        if rx_ is None:
            return False
        page = page or PageTexts("")
        raws = list(dict.fromkeys(t for t in texts if t.strip()))
        for norm in page.normalized(raws):
            for w, p in page.windows(norm):
                if not M.worth_scoring(p):
                    continue
                reading = reading_of(w, p)
                if reading is not None and rx_.search(reading) is not None:
                    return True
        return False

    def screen(self, text: str, body: str, folded: str, joined: str) -> bool:
        """Whether the reading rule or a learned rule may fire on the page (`may_read`, `may_fire`), the page's
        texts cut, normalised and prepared once for both."""
        page = PageTexts(body)
        if self.reading_rx is not None:
            cands = self.candidates(text, body, False, PAGE_TEXT_GROUPS, page)
            if self.may_read([raw for _, raw in cands], page):
                return True
        return bool(self.rules) and self.may_fire(text, body, folded, joined, page)

    def candidates(self, text: str, body: str, gate_hit: bool, ungated: tuple[str, ...] = (),
                   page: "PageTexts | None" = None) -> list[tuple[str, str]]:
        """(group, text) of everything the learned rules could judge on the page, read cheaply. For each group of
        `ungated` (page-text groups the rule judges without a gate) every paragraph is a candidate of that group.
        `page`: the page's texts cut once (`PageTexts`)."""
        page = page or PageTexts(body)
        out = list(page.standalone())
        if gate_hit or ungated:
            paragraphs = page.paragraphs()
            if gate_hit:
                out.extend(("gated", p) for p in paragraphs)
            for group in ungated:
                out.extend((group, p) for p in paragraphs)
        return out

    def may_fire_decoded(self, texts: list[str]) -> bool:
        """Whether a window of these texts (decoded from the page's base64 blobs, `learned.decoded_items`) comes
        within the margin of the lowest threshold of any group: a blob may stand in any channel."""
        prepared = [p for norm in normalize_all(texts) for s, e in M.windows(norm)
                    if M.worth_scoring(p := F.prepare_normalized(norm[s:e]))]
        if not prepared:
            return False
        for rule in self.rules:
            floor = min(rule.lowest(g) for g in GROUPS) - MARGIN
            if max(rule.model.scores(prepared).tolist()) >= floor:
                return True
        return False

    def may_fire(self, text: str, body: str, folded: str, joined: str, page: "PageTexts | None" = None) -> bool:
        """`page`: the page's texts as `screen` cut, normalised and prepared them for `may_read`, reused."""
        page = page or PageTexts(body)
        # whitespace runs collapsed as a window's prepared text has them (a cue spelt across a line break); each
        # page text collapsed once, on first need, for every rule's gate and request tests
        collapsed: dict[int, str] = {}

        def pages():
            for k, t in enumerate((folded, joined)):
                if k not in collapsed:
                    collapsed[k] = " ".join(t.split())
                yield collapsed[k]

        for rule in self.rules:
            # a reader request anywhere on the page (relaxed: a superset of the rule's in-place test of a window)
            # holds every window to its group's lowest threshold, the request one included
            request_hit = bool(rule.request_logit) and rule.request is not None and any(
                rule.request.may_hold(t) for t in pages())
            base = rule.lowest if request_hit else rule.threshold
            # which paragraphs CSS hides takes the style sheets to know: a page-text group without a gate reads
            # every paragraph
            ungated = tuple(g for g in PAGE_TEXT_GROUPS if g not in rule.gate)
            # each gated group's limits and cues: a paragraph window counts for a group when it holds one of them,
            # at the group's cued limit when it also holds a cue of `cued_by`. A gated group none of whose limits is
            # under an ungated group's plain one adds nothing — every paragraph is that ungated group's candidate
            # already, at that limit or lower (the shipped pack: visible text, gated, against CSS-hidden text,
            # not) — so it is left out, and with no gated group left the page's gate cues need no search.
            floor = min((base(g) - MARGIN for g in ungated), default=float("inf"))
            gated = [(base(g) - MARGIN, rule.cued_lowest(g) - MARGIN, rule.gate_cues_of[g])
                     for g in sorted(rule.gate)]
            gated = [x for x in gated if min(x[0], x[1]) < floor]
            # a window's cues are those of its de-obfuscated reading (`features.prepare_normalized`): the page is
            # searched as written and, where it could read otherwise, as read past the obfuscation
            gate_hit = bool(gated) and any(_cue_in(_gate_regex(rule.gate_cues), t) for t in pages())
            cands = self.candidates(text, body, gate_hit, ungated, page)
            if not cands:
                continue
            cued_by = rule.cued_by
            # each distinct text once, with the lowest limits of the groups it stands in (plain, and with a cue)
            limit_of: dict[str, tuple[float, float]] = {}
            gated_raw: set[str] = set()
            for group, raw in cands:
                if not raw.strip():
                    continue
                if group == "gated":
                    if gated:
                        gated_raw.add(raw)
                    continue
                lim = (base(group) - MARGIN, rule.cued_lowest(group) - MARGIN)
                old = limit_of.get(raw)
                limit_of[raw] = lim if old is None else (min(old[0], lim[0]), min(old[1], lim[1]))
            raws = list(limit_of) + sorted(r for r in gated_raw if r not in limit_of)
            limits: dict[str, float] = {}
            cued_limits: dict[str, float] = {}
            gated_prepared: list[str] = []
            for raw, norm in zip(raws, page.normalized(raws)):
                lim = limit_of.get(raw)
                in_gate = raw in gated_raw
                for _, p in page.windows(norm):
                    if not M.worth_scoring(p):
                        continue
                    if lim is not None:
                        if lim[0] < limits.get(p, float("inf")):
                            limits[p] = lim[0]
                        if lim[1] < lim[0] and lim[1] < cued_limits.get(p, float("inf")):
                            cued_limits[p] = lim[1]
                    if in_gate:
                        gated_prepared.append(p)
            # a window's cues as the screen cuts it are a superset of the rule's `window_cues` for the same span
            if cued_limits and cued_by:
                cand = [p for p in cued_limits if cued_limits[p] < limits.get(p, float("inf"))]
                for p, cues in zip(cand, F.cues_of(cand)):
                    if cues & cued_by:
                        limits[p] = cued_limits[p]
            if gated_prepared:
                lowest = min(lo for _, lo, _ in gated)
                uniq = [p for p in dict.fromkeys(gated_prepared) if lowest < limits.get(p, float("inf"))]
                for p, cues in zip(uniq, F.cues_of(uniq)):
                    for lim, low, need in gated:
                        if not cues & need:
                            continue
                        lim = min(lim, low) if cues & cued_by else lim
                        if lim < limits.get(p, float("inf")):
                            limits[p] = lim
            if not limits:
                continue
            prepared = list(limits)
            scores = rule.model.scores(prepared)
            if any(s >= limits[p] for s, p in zip(scores.tolist(), prepared)):
                return True
        return False
