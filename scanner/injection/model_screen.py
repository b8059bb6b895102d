"""The prefilter's screen for the learned rule: could the model fire anywhere on this HTML page?

The lexicon screen (`prefilter.py`) proves a page cannot show a lexicon signal; the model needs its own proof,
since it fires on phrasings no lexicon pattern names. Building exact units is what costs, so the screen reads
the channels the model judges straight from the markup — comments, text attributes and meta content, JSON-LD
string values, noscript/template/SVG text — decodes character references, cuts the same windows and scores
them with the same model, against each group's threshold lowered by `MARGIN` logits (the cheap reading may cut
a text slightly differently from the loader). Visible and CSS-hidden text count only with a gate cue: when no
gate cue appears anywhere on the page, nothing there can fire; when one does, the paragraphs holding one are
scored too. A page passes (takes the full load) when any window comes within the margin of its threshold.
"""

from __future__ import annotations

import html
import json
import re

from scanner.injection import features as F
from scanner.injection import model as M
from scanner.injection.engine import INLINE_TAGS
from scanner.loaders.html import TEXT_ATTRIBUTES
from scanner.normalize import normalize

MARGIN = 1.0
_COMMENT = re.compile(r"<!--(.*?)(?:-->|$)", re.S)
_TAG = re.compile(r"<([a-zA-Z][a-zA-Z0-9:-]*)((?:[^>\"']|\"[^\"]*\"|'[^']*')*)>")
_ATTR = re.compile(r"([^\s=/>\"']+)\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s\"'>]+))")
_LD_BLOCK = re.compile(r"<script\b[^>]*ld\+json[^>]*>(.*?)</script", re.S | re.I)
_FALLBACK_OPEN = re.compile(r"<(noscript|template|svg|iframe|noembed|noframes)\b[^>]*>", re.I)
_FALLBACK_CLOSE = {t: re.compile(rf"</{t}\s*>", re.I) for t in ("noscript", "template", "svg", "iframe", "noembed",
                                                                 "noframes")}
# An unclosed comment runs to the end (like the tokenizer's): the first one takes the rest, so this stays linear.
_ANY_TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9:-]*)[^>]*>|<!--.*?(?:-->|\Z)", re.S)
_GROUP_OF_FALLBACK = {"noscript": "noscript", "iframe": "noscript", "noembed": "noscript", "noframes": "noscript",
                      "template": "template", "svg": "svg_text"}
_GATE_CUES_RX: dict = {}


def _gate_regex(cues: frozenset):
    key = tuple(sorted(cues))
    if key not in _GATE_CUES_RX:
        _GATE_CUES_RX[key] = re.compile("|".join(f"(?:{F.CUES[c]})" for c in key))
    return _GATE_CUES_RX[key]


def _paragraphs(markup: str) -> list[str]:
    """Text of a markup fragment, split where a non-inline tag (or a comment) stands, inline tags dropped."""
    def sub(m):
        if m.group(2) is None or m.group(2).lower() not in INLINE_TAGS:
            return "\x00"                      # not "\n": a line break inside a text node does not cut it
        return ""
    return [p for p in (html.unescape(x) for x in _ANY_TAG.sub(sub, markup).split("\x00")) if p.strip()]


def _json_strings(value, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            _json_strings(v, out)
    elif isinstance(value, list):
        for v in value:
            _json_strings(v, out)


class ModelScreen:
    def __init__(self, learned_rules):
        self.rules = list(learned_rules)

    def candidates(self, text: str, body: str, gate_hit: bool) -> list[tuple[str, str]]:
        """(group, text) of everything the learned rules could judge on the page, read cheaply."""
        out: list[tuple[str, str]] = []
        for m in _COMMENT.finditer(body):
            out.append(("comment", m.group(1)))
        for m in _TAG.finditer(body):
            tag = m.group(1).lower()
            attrs = m.group(2)
            if "=" not in attrs:
                continue
            for a in _ATTR.finditer(attrs):
                name = a.group(1).lower()
                if name in TEXT_ATTRIBUTES or name.startswith("data-") or name == "content":
                    value = a.group(2) if a.group(2) is not None else a.group(3) if a.group(3) is not None else a.group(4)
                    out.append(("meta" if tag == "meta" else "attribute", html.unescape(value)))
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
        if gate_hit:
            for p in _paragraphs(body):
                out.append(("gated", p))
        return out

    def may_fire(self, text: str, body: str, folded: str, joined: str) -> bool:
        for rule in self.rules:
            gate_rx = _gate_regex(rule.gate_cues)
            gate_hit = bool(rule.gate) and (gate_rx.search(folded) is not None or gate_rx.search(joined) is not None)
            cands = self.candidates(text, body, gate_hit)
            if not cands:
                continue
            gated_threshold = min((rule.threshold(g) for g in rule.gate), default=None)
            prepared, limits = [], []
            seen = set()
            for group, raw in cands:
                if not raw.strip() or (group, raw) in seen:
                    continue
                seen.add((group, raw))
                norm = normalize(raw).text
                for s, e in M.windows(norm):
                    p = F.prepare_normalized(norm[s:e])
                    if not M.worth_scoring(p):
                        continue
                    if group == "gated":
                        if gated_threshold is None or gate_rx.search(p) is None:
                            continue
                        limit = gated_threshold
                    else:
                        limit = rule.threshold(group)
                    prepared.append(p)
                    limits.append(limit - MARGIN)
            if not prepared:
                continue
            scores = rule.model.scores(prepared)
            if any(s >= lim for s, lim in zip(scores.tolist(), limits)):
                return True
        return False
