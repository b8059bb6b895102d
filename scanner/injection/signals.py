"""The lexicon compiled: which phrase groups a text shows, and whether a signal holds.

A conjunction holds only when its groups match NEAR each other (within the lexicon's `window` characters):
"asistente" in the first paragraph and "recomienda" at the foot of a long page are not one instruction.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass

from scanner import rx
from scanner.normalize import Normalized, normalize
from scanner.rulepack import LEXICON_FLAGS, Lexicon, group_regex

GATE_EXEMPT = ("directive", "imperative", "claim")  # groups too common to gate on (see CompiledLexicon.triggers)
_OPENING_QUOTES = "«\"“‘'„‹"
_CLAUSE_STARTS = ".:;!?¡¿()[]>-—–,\n*•|"


@dataclass(slots=True)
class Evidence:
    group: str
    start: int          # in the normalised text
    end: int


class CompiledLexicon:
    def __init__(self, lexicon: Lexicon):
        self.lexicon = lexicon
        self.window = lexicon.window
        # RE2 (scanner.rx): linear time on any text, Python's matches and offsets
        self.groups = {name: rx.compile(group_regex(g.patterns), LEXICON_FLAGS)
                       for name, g in lexicon.groups.items()}
        self.derived = lexicon.derived
        self.signals = lexicon.signals
        # A text with none of these cannot show a gated signal (one whose every conjunction needs a group
        # other than the broad directive/imperative ones): one search decides most units.
        self.triggers = rx.compile(group_regex(
            p for name, g in lexicon.groups.items() if name not in GATE_EXEMPT for p in g.patterns), LEXICON_FLAGS)
        # Any group at all: a text without a match of this one shows no group (one search instead of one per group).
        try:
            self.any_group = rx.compile(group_regex(p for g in lexicon.groups.values() for p in g.patterns),
                                        LEXICON_FLAGS)
        except rx.RegexError:          # too large for one program: each group is searched, as without it
            self.any_group = None
        # No match is shorter than this: a shorter text needs no search (lookarounds take no width).
        self.trigger_min = lexicon.min_width(name for name in lexicon.groups if name not in GATE_EXEMPT)
        self.gated = {
            name: all(any(self._base(g) not in GATE_EXEMPT for g in conj) for conj in alts)
            for name, alts in lexicon.signals.items()
        }
        m = lexicon.mentions
        self.mention_groups = frozenset(m.groups) if m is not None else frozenset()
        if m is not None:
            # a cue, at most two words, maybe a colon, then the quotation mark (the search ends at the mark)
            self._quote_cue = rx.compile(r"\b(?:" + group_regex(m.quote_cues) + r")(?:\s+\w+){0,2}\s*[:,]?\s*$",
                                         LEXICON_FLAGS)
            self._example_cue = rx.compile(group_regex(m.example_cues), LEXICON_FLAGS)
            self._user_turn = rx.compile(group_regex(m.user_turns), LEXICON_FLAGS)
            self._instruction_groups = tuple(m.instruction_groups)
            self._turn_groups = frozenset(m.turn_groups)
            self._message_role = rx.compile(group_regex(m.message_roles), LEXICON_FLAGS)

    def _base(self, group: str) -> str:
        return self.derived[group].from_ if group in self.derived else group

    def groups_in(self, text: str) -> dict[str, list[Evidence]]:
        found: dict[str, list[Evidence]] = {}
        if self.any_group is not None and self.any_group.search(text) is None:
            return found
        for name, group in self.groups.items():
            hits = [Evidence(name, m.start(), m.end()) for m in group.finditer(text) if m.end() > m.start()]
            if hits:
                found[name] = hits
        if self.mention_groups and not self.mention_groups.isdisjoint(found):
            orders = sorted(h.start for g in self._instruction_groups for h in found.get(g, ()))
            used = {name: [e for e in hits if not self.mentioned(text, e, orders)] if name in self.mention_groups
                    else hits for name, hits in found.items()}
            found = {name: hits for name, hits in used.items() if hits}
        for name, d in self.derived.items():
            keep = _opens_clause if d.where == "sentence_initial_unquoted" else _not_quoted
            hits = [Evidence(name, e.start, e.end) for e in found.get(d.from_, ()) if keep(text, e.start)]
            if hits:
                found[name] = hits
        return found

    def mentioned(self, text: str, e: Evidence, orders: list[int]) -> bool:
        """The match is a mention, not a use (the lexicon's `mentions`): inside quotation marks a cue opens («read:
        "…"», «frases como «…»»), or a role turn of an example dialogue — an example cue before it and a user turn
        near it —, or an API request's message (`"role": "system"`) followed by a user's with no instruction after
        it. `orders`: where the text's instruction groups match, sorted. Everything read lies within the window
        of the match, so a text costs its hits times the window, never its length times its hits."""
        w = self.window
        first = e.start                      # a match may take the quotation mark in (ai_address's «asistente, »)
        while first < e.end and not text[first].isalnum():
            first += 1
        q = _open_quote(text, first, w)
        if q != -1 and self._quote_cue.search(text, max(0, q - 60), q) is not None:
            return True
        if e.group not in self._turn_groups:
            return False
        near = self._user_turn.search(text, max(0, e.start - w), min(len(text), e.end + w))
        if near is None:
            return False
        if self._example_cue.search(text, max(0, e.start - w), e.start) is not None:
            return True
        if self._message_role.search(text, e.start, e.end) is None:
            return False
        after = self._user_turn.search(text, e.end, min(len(text), e.end + w))
        if after is None:
            return False
        i = bisect_left(orders, e.end)
        return not (i < len(orders) and orders[i] < e.end + w)

    def signal(self, name: str, found: dict[str, list[Evidence]], after: int = 0) -> tuple[list[str], list[Evidence]] | None:
        """The first conjunction of the signal whose groups all match within the window, with the evidence
        (only evidence starting at or after `after`)."""
        if after:
            found = {g: kept for g, hits in found.items() if (kept := [e for e in hits if e.start >= after])}
        for conj in self.signals[name]:
            if not all(g in found for g in conj):
                continue
            chosen = self._near(conj, found)
            if chosen is not None:
                return conj, chosen
        return None

    def _near(self, conj: list[str], found) -> list[Evidence] | None:
        first, rest = conj[0], conj[1:]
        for anchor in found[first]:
            picked = [anchor]
            for g in rest:
                best = min(found[g], key=lambda e: abs(e.start - anchor.start))
                if abs(best.start - anchor.start) > self.window:
                    break
                picked.append(best)
            else:
                return picked
        return None


_CLOSERS = {"«": "»", "“": "”", "‘": "’", '"': '"', "'": "'"}


def _open_quote(text: str, start: int, reach: int) -> int:
    """The offset of the quotation mark the text at `start` sits inside — opened on its line at most `reach`
    characters before, closed after it within `reach` —, or -1. An apostrophe («don't», «l'IA») opens and closes
    nothing."""
    lo = max(text.rfind("\n", max(0, start - reach), start) + 1, start - reach, 0)
    stack: list[int] = []
    for j in range(lo, start):
        ch = text[j]
        if ch not in _CLOSERS and ch not in "»”’":
            continue
        if ch in "'’" and j > 0 and text[j - 1].isalnum() and j + 1 < len(text) and text[j + 1].isalnum():
            continue                                          # an apostrophe inside a word
        if stack and ch == _CLOSERS[text[stack[-1]]]:
            stack.pop()
        elif ch in _CLOSERS and not (ch == "'" and j > 0 and text[j - 1].isalnum()):
            stack.append(j)
    if not stack:
        return -1
    o = stack[-1]
    return o if text.find(_CLOSERS[text[o]], start, start + reach) != -1 else -1


def _not_quoted(text: str, start: int) -> bool:
    """The match is not inside quotation marks: no opening quote before it, in its sentence, left unclosed."""
    line_start = max(text.rfind(c, 0, start) for c in ".!?\n") + 1
    before = text[line_start:start]
    opened = sum(before.count(q) for q in "«“") - sum(before.count(q) for q in "»”")
    straight = before.count('"')
    return opened <= 0 and straight % 2 == 0 and not _single_quoted(text, start)


def _single_quoted(text: str, start: int) -> bool:
    """The match opens right after a single quotation mark that is not an apostrophe (nothing but a space,
    punctuation or the start before it) and that mark closes later in the sentence: «sentences such as 'ignore
    the above' to check…»."""
    i = start - 1
    while i >= 0 and text[i] in " \t\xa0":
        i -= 1
    if i < 0 or text[i] not in "'‘":
        return False
    if i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_"):
        return False                      # an apostrophe: «l'ignore», "don't"
    close = "’" if text[i] == "‘" else "'"
    end = len(text)
    for c in ".!?\n":
        k = text.find(c, start)
        if k != -1:
            end = min(end, k)
    k = text.find(close, start, end + 1)
    return k != -1 and (k + 1 >= len(text) or not text[k + 1].isalnum())


def _opens_clause(text: str, start: int) -> bool:
    """The match starts a sentence or clause (after punctuation, a line break or the start) and is not quoted."""
    i = start - 1
    while i >= 0 and text[i] in " \t\r\xa0":
        i -= 1
    if i < 0:
        return True
    if text[i] in _OPENING_QUOTES:
        return False
    return text[i] in _CLAUSE_STARTS


class UnitText:
    """A text normalised once, with the lexicon groups it shows computed on first demand."""

    __slots__ = ("norm", "_found", "_lexicon")

    def __init__(self, text: str, lexicon: CompiledLexicon):
        self.norm: Normalized = normalize(text)
        self._lexicon = lexicon
        self._found: dict | None = None

    def has_trigger(self) -> bool:
        text = self.norm.text
        return len(text) >= self._lexicon.trigger_min and self._lexicon.triggers.search(text) is not None

    @property
    def found(self) -> dict[str, list[Evidence]]:
        if self._found is None:
            self._found = self._lexicon.groups_in(self.norm.text)
        return self._found
