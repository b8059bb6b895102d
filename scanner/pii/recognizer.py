"""A recognizer in Presidio's shape — patterns, context words, a `validate_result` check — run without Presidio.

Presidio's `PatternRecognizer` is the model (`EsNifRecognizer`, `PlPeselRecognizer`: a pattern, a few
context words, a check-digit function). Importing `presidio_analyzer` costs about 0.7 s, because it imports
spaCy, and the scan needs none of its engine, so `PatternRecognizer` here runs the same algorithm itself:

* every pattern's matches over the text (RE2 programs from `scanner.rx`, meaning what `regex` means), empty
  ones skipped;
* the pattern's score, replaced by 1.0 when `validate_result` is True, by 0 when it is False, and by 0 when
  `invalidate_result` is True; a result of score 0 is dropped;
* Presidio's `EntityRecognizer.remove_duplicates` (one of equal results; a result contained in another of
  the same entity with at least its score goes), then its order: score descending, start, longer first.

`to_presidio()` gives the same recognizer as a real Presidio `PatternRecognizer` (its patterns handed over
already compiled, so Presidio never compiles its own), for an `AnalyzerEngine` (`scanner.pii.baseline`);
tests/test_pii_recognizers.py checks that both give the same results on every example and on real pages.

`validate_result` follows Presidio's convention: True → the check passed (score 1.0), False → dropped,
None → the shape is right but only a context word can confirm it (the pattern's low score stays, and the
scanner's window test — `scanner.pii.candidates.context_word` — decides).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import groupby
from typing import ClassVar

from scanner import rx

LANGUAGE = "es"
# Presidio's default flags include IGNORECASE, which would let `[A-Z]` match lower case: identifiers are
# case-sensitive here; a recognizer that wants IGNORECASE (the email's) says so.
CASE_SENSITIVE = re.DOTALL | re.MULTILINE
MAX_SCORE = 1.0
MIN_SCORE = 0


@dataclass
class Pattern:
    """One regex of a recognizer and the score of a match before any check (Presidio's `Pattern`)."""

    name: str
    regex: str
    score: float
    compiled_regex: object = None
    compiled_with_flags: int | None = None


@dataclass(frozen=True)
class Result:
    """A match that survived the checks (the fields of Presidio's `RecognizerResult` that matter here)."""

    entity_type: str
    start: int
    end: int
    score: float


class PatternRecognizer:
    """Subclasses set ENTITY, PATTERNS and CONTEXT, and may define `validate_result` / `invalidate_result`."""

    ENTITY: ClassVar[str]
    PATTERNS: ClassVar[tuple[Pattern, ...]]
    CONTEXT: ClassVar[tuple[str, ...]] = ()
    FLAGS: ClassVar[int] = CASE_SENSITIVE

    def __init__(self):
        self.name = type(self).__name__
        self.supported_entities = [self.ENTITY]
        self.context = list(self.CONTEXT)
        self.global_regex_flags = self.FLAGS
        self.patterns = [Pattern(p.name, p.regex, p.score, rx.compile(p.regex, self.FLAGS, engine="regex"),
                                 self.FLAGS) for p in self.PATTERNS]
        self._context_regex = None

    def validate_result(self, pattern_text: str) -> bool | None:
        return None

    def invalidate_result(self, pattern_text: str) -> bool | None:
        return None

    @property
    def context_regex(self):
        """The context words as one regex over folded text (`scanner.pii.data.word_regex`)."""
        if self._context_regex is None:
            from scanner.pii.data import word_regex

            self._context_regex = word_regex(list(self.CONTEXT))
        return self._context_regex

    def analyze(self, text: str, entities: list[str] | None = None, nlp_artifacts=None) -> list[Result]:
        """What Presidio's `PatternRecognizer.analyze` returns for `text` (same results, same order)."""
        results = []
        for pattern in self.patterns:
            for m in pattern.compiled_regex.finditer(text):
                start, end = m.span()
                current = text[start:end]
                if current == "":
                    continue
                score = pattern.score
                valid = self.validate_result(current)
                if valid is not None:
                    score = MAX_SCORE if valid else MIN_SCORE
                if self.invalidate_result(current):
                    score = MIN_SCORE
                if score > MIN_SCORE:
                    results.append(Result(self.ENTITY, start, end, score))
        return remove_duplicates(results)

    def to_presidio(self, language: str = LANGUAGE):
        """This recognizer as a Presidio `PatternRecognizer` running the same programs and checks."""
        from presidio_analyzer import Pattern as PresidioPattern
        from presidio_analyzer import PatternRecognizer as Presidio

        ours = self

        class Adapter(Presidio):
            def validate_result(self, pattern_text: str):
                return ours.validate_result(pattern_text)

            def invalidate_result(self, pattern_text: str):
                return ours.invalidate_result(pattern_text)

        patterns = []
        for p in self.patterns:
            pp = PresidioPattern(p.name, p.regex, p.score)
            pp.compiled_regex, pp.compiled_with_flags = p.compiled_regex, p.compiled_with_flags
            patterns.append(pp)
        return Adapter(supported_entity=self.ENTITY, name=self.name, patterns=patterns, context=list(self.CONTEXT),
                       supported_language=language, global_regex_flags=self.FLAGS)


def remove_duplicates(results: list[Result]) -> list[Result]:
    """Presidio's `EntityRecognizer.remove_duplicates`, then its score-first order."""
    ordered = sorted(set(results), key=lambda r: (r.entity_type, r.start, -(r.end - r.start), -r.score))
    kept: list[Result] = []
    for _, group in groupby(ordered, key=lambda r: r.entity_type):
        active: list[Result] = []
        for r in group:
            if r.score == 0:
                continue
            active = [a for a in active if a.end >= r.start]
            if any(r.start >= a.start and r.end <= a.end and r.score <= a.score for a in active):
                continue
            kept.append(r)
            active.append(r)
    return sorted(kept, key=lambda r: (-r.score, r.start, -(r.end - r.start)))
