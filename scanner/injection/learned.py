"""The learned rule (INJ015): which texts of a document the model judges, with which threshold, and its findings.

Texts: each comment, text attribute, meta content and JSON-LD value on its own; visible text, noscript,
template, SVG and PDF text as paragraphs — consecutive units joined like the block rules join them (inline
markup keeps a sentence whole), cut where the engine would put a line break. Long texts are scored in windows
(`scanner.injection.model.windows`).

Decisions are channel-aware: the same words weigh differently in a comment than in a visible paragraph, so
each channel group has its own threshold (the rule's `model.thresholds`, chosen by cross-validation on the
training material, overridable in a rule pack), and groups listed in `model.gate` (the shipped pack gates visible
text, where benign pages hold the most prose; a pack may gate CSS-hidden text too) also need one of the gate cues
(an AI addressee, earlier instructions, an override verb, role-play, chat tokens…) in the window. Hidden-ness of visible text and
PDF runs is decided only for windows that score high enough to matter, with the same predicates as the
lexicon rules (`css_hidden`, `pdf_invisible`).

Two lower thresholds apply in hidden groups: `cued_thresholds` for a window holding a structural cue of
`cued_by`, and `request_thresholds` for a window holding a reader request — a lexicon group of `request_by`
(`reply_directive`, `secret_request`, `ai_address`; scanner/injection/reader_request.py). A window meets the
lowest threshold it qualifies for.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from scanner.findings import Finding
from scanner.injection import features as F
from scanner.injection import model as M
from scanner.injection.engine import EVIDENCE_MAX, Block, InjectionScanner, _separator, decoded_prose
from scanner.injection.predicates import css_hidden, pdf_invisible
from scanner.injection.reader_request import ReaderRequest, builtin
from scanner.normalize import Normalized, normalize
from scanner.units import Channel, Document

GROUP_VECTOR = {
    "comment": "html_comment", "css_hidden": "css_hidden", "attribute": "attribute_text", "alt": "attribute_text",
    "meta": "attribute_text",
    "json_ld": "structured_data", "noscript": "noscript_text", "template": "template_text", "svg_text": "svg_text",
    "pdf_hidden": "pdf_hidden_text", "visible": "system_impersonation",
}
GROUPS = tuple(GROUP_VECTOR)
_STANDALONE = {Channel.COMMENT: "comment", Channel.JSON_LD: "json_ld"}
# The groups a paragraph of a page's text belongs to: CSS-hidden when the style sheets hide it, visible otherwise.
PAGE_TEXT_GROUPS = ("css_hidden", "visible")
_PARAGRAPH = {
    Channel.VISIBLE_TEXT: PAGE_TEXT_GROUPS, Channel.TEXTAREA: PAGE_TEXT_GROUPS,
    Channel.TITLE: ("visible",), Channel.PLAIN_TEXT: ("visible",), Channel.JSON_STRING: ("visible",),
    Channel.NOSCRIPT: ("noscript",), Channel.TEMPLATE: ("template",), Channel.SVG_TEXT: ("svg_text",),
    Channel.PDF_TEXT: ("pdf_hidden", "visible"),
}
_ALONE_IN_PARAGRAPH = frozenset({Channel.TITLE, Channel.JSON_STRING})
_HIDDEN_OF = {"css_hidden": css_hidden, "pdf_hidden": pdf_invisible}


@dataclass(eq=False)
class Item:
    """One text the model judges: a block of units, its normalised text and the groups it may belong to."""
    block: Block
    norm: "Normalized | DecodedText"
    groups: tuple[str, ...]
    reasons: list[str] = field(default_factory=list)

    @property
    def decoded(self) -> bool:
        """Whether the text is what a base64 blob of the block decodes to (`decoded_items`)."""
        return isinstance(self.norm, DecodedText)


class DecodedText:
    """What a base64 blob of a block's text decodes to, as the model reads it (`text`: folded), standing at the
    blob: every span of it maps to the blob's span in the block (`start`, `end`)."""

    __slots__ = ("text", "decoded", "start", "end")

    def __init__(self, decoded: Normalized, start: int, end: int):
        self.text = decoded.text
        self.decoded = decoded
        self.start, self.end = start, end

    def span(self, start: int, end: int) -> tuple[int, int]:
        return self.start, self.end

    def evidence(self, start: int, end: int) -> str:
        """The decoded words of the folded span [start, end), as decoded."""
        i, j = self.decoded.span(start, end)
        return self.decoded.original[i:j]


def decoded_items(items: list[Item]) -> list[Item]:
    """For each item whose text holds base64 blobs that decode to words (`engine.decoded_prose`), an item of each
    decoded text, in the item's groups and located at its blob: a request to decode and follow an encoded
    instruction reads, to the model, as the request and a run of letters; the instruction itself only decoded."""
    out = []
    for it in items:
        for d in decoded_prose(it.block.text):
            out.append(Item(it.block, DecodedText(normalize(d.text), d.start, d.end), it.groups))
    return out


def attribute_group(unit) -> str:
    """`meta` (a meta tag's content), `alt` (an image's alternative text: a description, rarely an instruction for
    people; training gives it the comment's thresholds) or `attribute` (title, aria-label, placeholder, data-*…: UI
    strings, with thresholds of their own)."""
    locator = unit.locator or ""
    if locator.startswith("meta@"):
        return "meta"
    return "alt" if locator.endswith("@alt") else "attribute"


# A group a rule pack gives no threshold of its own takes this group's (a pack written before `alt` had its own).
INHERITS = {"alt": "attribute"}


def collect(doc: Document, channels) -> list[Item]:
    """The texts of `doc` in the given channels, as the model reads them."""
    items: list[Item] = []
    run: list = []

    def flush():
        if run:
            for block in paragraphs(doc, run):
                items.append(Item(block, normalize(block.text), _PARAGRAPH[block.units[0].channel]))
            run.clear()

    for u in doc.units:
        if u.channel not in channels:
            continue
        if u.channel in _PARAGRAPH:
            if run and (u.container != run[-1].container or u.channel != run[-1].channel or u.page != run[-1].page
                        or u.channel in _ALONE_IN_PARAGRAPH):
                flush()
            run.append(u)
            continue
        if u.channel == Channel.ATTRIBUTE:
            group = attribute_group(u)
        elif u.channel in _STANDALONE:
            if u.attrs.get("is_key"):
                continue
            group = _STANDALONE[u.channel]
        else:
            continue
        items.append(Item(Block([u], [0], u.text), normalize(u.text), (group,)))
    flush()
    return items


def paragraphs(doc: Document, units: list) -> list[Block]:
    """Consecutive units joined by their separators, a new block wherever the separator is a line break."""
    out: list[Block] = []
    cur: list = []
    starts: list[int] = []
    parts: list[str] = []
    pos = 0
    for u in units:
        if cur:
            sep = _separator(doc, cur[-1], u)
            if sep == "\n":
                out.append(Block(cur, starts, "".join(parts)))
                cur, starts, parts, pos = [], [], [], 0
            else:
                parts.append(sep)
                pos += len(sep)
        cur.append(u)
        starts.append(pos)
        parts.append(u.text)
        pos += len(u.text)
    if cur:
        out.append(Block(cur, starts, "".join(parts)))
    return out


@dataclass(slots=True)
class Window:
    item: Item
    start: int            # in the item's normalised text
    end: int
    prepared: str
    score: float = 0.0    # logit


def item_windows(items: list[Item]) -> list[Window]:
    out = []
    for it in items:
        text = it.norm.text
        for s, e in M.windows(text):
            prepared = F.prepare_normalized(text[s:e])
            if M.worth_scoring(prepared):
                out.append(Window(it, s, e, prepared))
    return out


def score_windows(model: M.Model, wins: list[Window]) -> None:
    if wins:
        for w, s in zip(wins, model.scores([w.prepared for w in wins]).tolist()):
            w.score = s


_CLAUSE_END = frozenset(".!?:;\n")


def window_cues(win: Window) -> set[str]:
    """The gate cues of a window as they stand in its text, not as its cut makes them: a window that starts
    inside a sentence does not start a clause (an opening imperative needs one), and one cut inside a word
    (a run with no space to cut at) does not make a word boundary there. The window's prepared text gets a
    `_` (a word character no cue matches) where the cut is not a real edge, so the cues are those of the
    window's span searched in its paragraph."""
    text = win.item.norm.text
    s, e = win.start, win.end
    p = win.prepared
    if s > 0:
        if not text[s - 1].isspace():
            p = "_" + p[1:]                        # cut inside a word
        elif text[:s].strip() and text[:s].rstrip()[-1] not in _CLAUSE_END:
            p = "_" + p                            # inside a sentence: no clause start here
    if e < len(text) and not text[e].isspace():
        p = p[:-1] + "_"
    return F.cues_of([p])[0]


def covered_units(win: Window) -> list[int]:
    """Indexes (in the block) of the units the window's text comes from."""
    bs, be = win.item.norm.span(win.start, max(win.end, win.start + 1))
    block = win.item.block
    first = block.locate(bs)[0]
    last = block.locate(max(be - 1, bs))[0]
    return list(range(first, last + 1))


class LearnedRule:
    """Runs one model rule over a document."""

    def __init__(self, rule, load: bool = True, lexicon=None):
        self.rule = rule
        spec = rule.match.model
        self.spec = spec
        self.channels = frozenset(rule.match.channels)
        self.path = spec.resolved_file(rule.source)
        self._model: M.Model | None = None
        try:                                  # a missing or stale model stops the scan before it starts
            if load:
                self._model = M.load_model(self.path)
        except M.ModelError as exc:
            from scanner.rulepack import RuleError

            raise RuleError(f"{rule.source}: {exc}") from None
        self.logit = {g: M.logit(t) for g, t in spec.thresholds.items()}
        self.gate = frozenset(spec.gate)
        self.gate_cues_of = spec.cues_of_gate()
        self.gate_cues = frozenset().union(*self.gate_cues_of.values()) if self.gate_cues_of else frozenset()
        self.cued_logit = {g: M.logit(t) for g, t in spec.cued_thresholds.items()}
        self.cued_by = frozenset(spec.cued_by)
        self.request_logit = {g: M.logit(t) for g, t in spec.request_thresholds.items()}
        for levels in (self.logit, self.cued_logit, self.request_logit):
            for group, parent in INHERITS.items():
                if group not in levels and parent in levels:
                    levels[group] = levels[parent]
        self.request: ReaderRequest | None = None
        if spec.request_by:
            from scanner.rulepack import RuleError

            try:
                self.request = (builtin(tuple(spec.request_by)) if lexicon is None
                                else ReaderRequest(lexicon, tuple(spec.request_by)))
            except RuleError as exc:
                raise RuleError(f"{rule.source}: {exc}") from None

    @property
    def model(self) -> M.Model:
        if self._model is None:
            self._model = M.load_model(self.path)
        return self._model

    def threshold(self, group: str) -> float:
        return self.logit.get(group, self.logit["default"])

    def cued_lowest(self, group: str) -> float:
        """The lowest threshold a window of `group` can meet without a reader request: the cued one when the
        group has it."""
        t = self.threshold(group)
        return min(t, self.cued_logit[group]) if group in self.cued_logit else t

    def lowest(self, group: str) -> float:
        """The lowest threshold a window of `group` can meet: the cued or the request one when the group has them."""
        t = self.cued_lowest(group)
        return min(t, self.request_logit[group]) if group in self.request_logit and self.request else t

    def threshold_of(self, group: str, cues, request: bool = False) -> float:
        """The threshold of a window of `group` holding `cues` (its `window_cues`) and, with `request`, a reader
        request (`has_request`)."""
        t = self.threshold(group)
        if group in self.cued_logit and cues & self.cued_by:
            t = min(t, self.cued_logit[group])
        if request and group in self.request_logit:
            t = min(t, self.request_logit[group])
        return t

    def has_request(self, win: "Window") -> bool:
        """The window's span holds a reader request (searched in place in its item's text)."""
        return self.request is not None and self.request.holds(win.item.norm.text, win.start, win.end)

    def scan(self, doc: Document, cut: dict | None = None) -> list[Finding]:
        """Findings of `doc`; `cut` (when given) keeps the windows by the rule's channels, for other rules that
        read the same windows (`reading.ReadingRule`)."""
        items = collect(doc, self.channels)
        if not items:
            if cut is not None:
                cut[self.channels] = []
            return []
        items += decoded_items(items)
        wins = item_windows(items)
        if cut is not None:
            cut[self.channels] = wins
        score_windows(self.model, wins)
        return self._decide(doc, wins)

    def _decide(self, doc: Document, wins: list[Window], fixed: bool = False) -> list[Finding]:
        fired: dict[tuple[int, str], list[Window]] = {}
        reasons_of: dict[int, list[str]] = {}
        sub_items: list[Item] = []
        for w in wins:
            groups = w.item.groups
            if w.score < min(self.lowest(g) for g in groups):
                continue
            group = resolve_group(doc, w, reasons_of, None if fixed else sub_items)
            if group is None:
                continue
            if w.score < self.lowest(group):
                continue
            cues = window_cues(w) if group in self.gate or group in self.cued_logit else frozenset()
            t = self.threshold_of(group, cues)
            if w.score < t and not (group in self.request_logit and w.score >= self.request_logit[group]
                                    and self.has_request(w)):
                continue
            if group in self.gate and not (cues & self.gate_cues_of[group]):
                continue
            fired.setdefault((id(w.item), group), []).append(w)
        findings = [self._finding(doc, ws, group, reasons_of.get(id(ws[0].item), []))
                    for (_, group), ws in fired.items()]
        findings = [f for f in findings if f is not None]
        if sub_items:
            sub = item_windows(unique_items(sub_items))
            score_windows(self.model, sub)
            findings.extend(self._decide(doc, sub, fixed=True))
        return findings

    def _finding(self, doc: Document, ws: list[Window], group: str, reasons: list[str]) -> Finding | None:
        """One finding per run of overlapping firing windows of an item: the best window's span and why."""
        ws.sort(key=lambda w: w.start)
        best = max(ws, key=lambda w: w.score)
        item = best.item
        # the windows overlapping the best one, merged: the span reported is where the text scored
        lo, hi, i, j = merged_span(best, ws)
        text = item.block.text
        if j <= i:
            return None
        prob = float(M.sigmoid(best.score))
        found = window_cues(best)
        request = group in self.request_logit and self.has_request(best)
        threshold = float(M.sigmoid(self.threshold_of(group, found, request)))
        terms = M.explain(self.model, best.prepared)
        concepts = M.explain_concepts(self.model, best.prepared)
        cues = sorted(found)
        cued = self.threshold_of(group, found) < self.threshold(group)
        requested = self.threshold_of(group, found, request) < self.threshold_of(group, found)
        decoded = item.decoded
        why = (f"score {prob:.2f} ≥ {threshold:.2f} for {group.replace('_', '-')} text"
               + (" decoded from base64" if decoded else ""))
        if requested:
            why += " that asks its reader for something (a reader request: " + ", ".join(
                g.replace("_", " ") for g in self.request.groups
                if self.request.holds_group(g, item.norm.text, best.start, best.end)) + ")"
        elif cued:
            why += " that speaks to an AI reader or sets its output (" + ", ".join(
                c.replace("_", " ") for c in sorted(found & self.cued_by)) + ")"
        if terms:
            why += "; weighed most: " + ", ".join(f"«{t}»" for t, _ in terms)
        if concepts:
            why += "; concepts: " + ", ".join(t for t, _ in concepts)
        if cues:
            why += "; cues: " + ", ".join(c.replace("_", " ") for c in cues)
        message = self.rule.message + f" ({'; '.join(reasons + [why])})"
        shown = item.norm.evidence(lo, hi) if decoded else text[i:j]
        evidence = " ".join(shown.split())[:EVIDENCE_MAX]
        finding = InjectionScanner._make(self.rule, item.block, doc, i, j, message, evidence, signal=["model"],
                                         decoded=decoded)
        finding.vector = GROUP_VECTOR[group]
        finding.extra["model"] = {"score": round(prob, 4), "threshold": round(threshold, 4), "group": group,
                                  "top_terms": [[t, v] for t, v in terms], "cues": cues, "cued": cued,
                                  "request": requested,
                                  "concepts": [[t, v] for t, v in concepts]}
        return finding


def merged_span(anchor: Window, ws: list[Window]) -> tuple[int, int, int, int]:
    """The anchor window merged with the windows of `ws` overlapping it: (lo, hi) in the item's normalised text and
    (i, j) in its block's text, white space trimmed (j <= i: nothing but white space)."""
    lo, hi = anchor.start, anchor.end
    for w in ws:
        if w.start < hi and w.end > lo:
            lo, hi = min(lo, w.start), max(hi, w.end)
    i, j = anchor.item.norm.span(lo, hi)
    text = anchor.item.block.text
    while i < j and text[i].isspace():
        i += 1
    while j > i and text[j - 1].isspace():
        j -= 1
    return lo, hi, i, j


def resolve_group(doc, w: Window, reasons_of: dict, sub_items: list | None) -> str | None:
    """The group of a window whose item may be hidden or visible text (`Item.groups`): the hidden group when every
    unit it covers is hidden (its first unit's reason kept in `reasons_of`, by item), `visible` when none is. A
    window over both gets None, and its units' runs of each kind go to `sub_items` as items of their own (None: a
    second pass, or a decoded item, where no split is made)."""
    groups = w.item.groups
    if len(groups) == 1:
        return groups[0]
    hidden_group = groups[0]
    test = _HIDDEN_OF[hidden_group]
    idx = covered_units(w)
    status = [test(w.item.block.units[k], doc) for k in idx]
    if all(status):
        reasons_of[id(w.item)] = [status[0]]
        return hidden_group
    if not any(status):
        return "visible"
    if sub_items is not None and not w.item.decoded:
        sub_items.extend(_split_runs(doc, w.item, idx, status, hidden_group))
    return None


def unique_items(items: list[Item]) -> list[Item]:
    """Items split out of mixed windows (`resolve_group`), each run of units once."""
    seen = set()
    out = []
    for it in items:
        key = (id(it.block.units[0]), len(it.block.units))
        if key not in seen:
            seen.add(key)
            out.append(it)
    return out


def _split_runs(doc, item: Item, idx: list[int], status: list[str], hidden_group: str) -> list[Item]:
    """The covered units of a mixed window, as runs of hidden and of visible units, each an item of its own."""
    out = []
    run: list = []
    run_hidden = None
    for k, s in zip(idx, status):
        h = bool(s)
        if run and h != run_hidden:
            out.append(_run_item(doc, run, hidden_group if run_hidden else "visible"))
            run = []
        run.append(item.block.units[k])
        run_hidden = h
    if run:
        out.append(_run_item(doc, run, hidden_group if run_hidden else "visible"))
    return out


def _run_item(doc, units: list, group: str) -> Item:
    blocks = paragraphs(doc, units)
    block = blocks[0] if len(blocks) == 1 else Block(units, *_joined(units))
    return Item(block, normalize(block.text), (group,))


def _joined(units):
    starts, parts, pos = [], [], 0
    for k, u in enumerate(units):
        if k:
            parts.append(" ")
            pos += 1
        starts.append(pos)
        parts.append(u.text)
        pos += len(u.text)
    return starts, "".join(parts)


def scores_by_group(rule: "LearnedRule", doc: Document) -> list[tuple[str, float]]:
    """Every window of `doc` with its group and logit, hidden-ness decided for every window (training and
    calibration only: the scan decides it only for windows that score high)."""
    items = collect(doc, rule.channels)
    wins = item_windows(items)
    score_windows(rule.model, wins)
    return [(window_group(doc, w), w.score) for w in wins]


def window_group(doc: Document, w: Window) -> str:
    groups = w.item.groups
    if len(groups) == 1:
        return groups[0]
    test = _HIDDEN_OF[groups[0]]
    return groups[0] if any(test(w.item.block.units[k], doc) for k in covered_units(w)) else "visible"

