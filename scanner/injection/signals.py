"""The lexicon compiled: which phrase groups a text shows, and whether a signal holds."""

from __future__ import annotations

import re
from dataclasses import dataclass

from scanner.normalize import Normalized, normalize
from scanner.rulepack import Lexicon


@dataclass(slots=True)
class Evidence:
    group: str
    start: int          # in the normalised text
    end: int


class CompiledLexicon:
    def __init__(self, lexicon: Lexicon):
        self.lexicon = lexicon
        self.groups = {name: re.compile("|".join(f"(?:{p})" for p in g.patterns), re.M)
                       for name, g in lexicon.groups.items()}
        self.signals = lexicon.signals
        # Every signal needs at least one group other than the broad 'directive'/'imperative' ones, except the
        # decoded one; a text with none of the trigger groups cannot show a hidden or visible signal.
        self.triggers = re.compile("|".join(
            f"(?:{p})" for name, g in lexicon.groups.items() if name not in ("directive", "imperative")
            for p in g.patterns), re.M)

    def groups_in(self, text: str) -> dict[str, list[Evidence]]:
        found: dict[str, list[Evidence]] = {}
        for name, rx in self.groups.items():
            hits = [Evidence(name, m.start(), m.end()) for m in rx.finditer(text) if m.end() > m.start()]
            if hits:
                found[name] = hits
        return found

    def signal(self, name: str, found: dict[str, list[Evidence]]) -> list[str] | None:
        """The first conjunction of the signal that holds, or None."""
        for conj in self.signals[name]:
            if all(g in found for g in conj):
                return conj
        return None


class UnitText:
    """A unit's text normalised once, with the lexicon groups it shows computed on first demand."""

    __slots__ = ("norm", "_found", "_lexicon")

    def __init__(self, text: str, lexicon: CompiledLexicon):
        self.norm: Normalized = normalize(text)
        self._lexicon = lexicon
        self._found: dict | None = None

    def has_trigger(self) -> bool:
        return self._lexicon.triggers.search(self.norm.text) is not None

    @property
    def found(self) -> dict[str, list[Evidence]]:
        if self._found is None:
            self._found = self._lexicon.groups_in(self.norm.text)
        return self._found
