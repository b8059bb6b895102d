"""Reader requests: hidden text that asks its reader for something, the learned rule's channel prior.

A comment, an attribute, a meta tag, a JSON-LD value or CSS-hidden text that tells the reader how to answer
(`reply_directive`), asks it for its prompt, keys or the conversation (`secret_request`) or speaks to it as an
AI (`ai_address`) is written for a machine: no person reads it. There the learned rule (INJ015) needs less
evidence from the model, so a window of such a group that holds a reader request must reach the group's
`request_thresholds` (lower than its plain and cued thresholds; chosen by cross-validation on the training
material, see scanner/training/evaluate.py) instead.

The request is decided by the lexicon's own groups (the rule's `request_by`, lexicon group names) on the
window's span of its text, searched in place: a clause-start pattern sees what stands before the window, as
the lexicon rules see it. `may_hold` is the prefilter's superset of the same test (lookarounds and clause-start
anchors relaxed, `scanner.injection.prefilter.relax`), for the model screen, which reads the page without
exact units and must never hide a window the full path would judge at the lower threshold.
"""

from __future__ import annotations

from functools import lru_cache

from scanner import rx
from scanner.rulepack import LEXICON_FLAGS, Lexicon, RuleError, group_regex

REQUEST_GROUPS = ("reply_directive", "secret_request", "ai_address")


class ReaderRequest:
    """The lexicon groups that make a hidden text a request to its reader, compiled once."""

    def __init__(self, lexicon: Lexicon, groups=REQUEST_GROUPS):
        from scanner.injection.prefilter import relax

        unknown = [g for g in groups if g not in lexicon.groups]
        if unknown:
            raise RuleError(f"request_by: unknown lexicon group(s) {', '.join(unknown)} "
                            f"(known: {', '.join(lexicon.groups)})")
        self.groups = tuple(groups)
        patterns = [p for g in self.groups for p in lexicon.groups[g].patterns]
        self._exact = [rx.compile(group_regex(lexicon.groups[g].patterns), LEXICON_FLAGS) for g in self.groups]
        self._relaxed = None
        if patterns:
            import re2

            options = re2.Options()
            options.max_mem = 256 << 20
            try:
                self._relaxed = re2.compile("|".join(f"(?:{relax(p)})" for p in patterns), options)
            except Exception:  # pragma: no cover - a pattern RE2 cannot express: every page may hold one
                self._relaxed = None
        self._empty = not patterns

    def holds(self, text: str, start: int = 0, end: int | None = None) -> bool:
        """A request inside `text[start:end]` (normalised text), matched in place: lookbehinds and clause starts
        see the text before `start`, lookaheads the text after `end` (a window cut before «administrativo» does
        not make «asistente» an AI), as the lexicon rules see the whole unit."""
        return any(self._in(r, text, start, end) for r in self._exact)

    def holds_group(self, group: str, text: str, start: int = 0, end: int | None = None) -> bool:
        """`holds` for one of the groups."""
        return self._in(self._exact[self.groups.index(group)], text, start, end)

    @staticmethod
    def _in(regex, text: str, start: int, end: int | None) -> bool:
        end = len(text) if end is None else end
        for m in regex.finditer(text, start):
            if m.start() >= end:
                return False
            if m.end() <= end and m.end() > m.start():
                return True
        return False

    def may_hold(self, text: str) -> bool:
        """False only when no part of `text` (folded) can hold a request: a superset of `holds`."""
        if self._empty:
            return False
        return self._relaxed is None or self._relaxed.search(text) is not None


@lru_cache(maxsize=8)
def builtin(groups: tuple[str, ...] = REQUEST_GROUPS) -> ReaderRequest:
    """The test on the built-in lexicon (training, and learned rules built without a scanner's lexicon)."""
    from scanner.rulepack import load_pack

    return ReaderRequest(load_pack()[0], groups)
