"""The personal-data rules: one YAML record per rule in `scanner/rules/pii/` (PII001…), and the registry every
consumer reads — the scanner (which recognizer, what replacement, when a context word is needed, which
candidate wins an overlap), `scan` (what is reported), `redact` (which redacted values are low-entropy) and
SARIF (each rule's full help).

A record carries what the injection and secret packs carry (`scanner.rulepack.RuleBase`: id, name, severity,
precision, security-severity, tags, message, help with its four sections, positive and negative examples that
tests/test_pii_rules.py runs) and, for personal data:

- `entity`: the contract's entity name; `recognizer`: the class, under `scanner.pii.recognizers`, that finds
  the candidates (`mx.curp.MxCurpRecognizer`); none for PERSON, whose candidates come from titles, name
  fields and NER (`scanner.pii.names`).
- `decision`: which step decides a candidate — `identifier` (this record's policy alone,
  `scanner.pii.identifiers`), `email` (role mailbox or not), `phone` (whose line), `name` (contact block).
- `policy`: `replacement` (what a redacted datum becomes: one of the contract's placeholders, or null when it
  is reported and kept), `report` (always | when_redacted | never: a role mailbox and a company's phone are
  kept and not findings), `low_entropy` (a plain digest of a body that differs only by such a value gives it
  back by brute force), `priority` (lower wins when candidates overlap), and for identifiers `context`
  (never | when_check_fails | required), `check` / `check_with_context` (what the finding records as its
  check), `context_substitute` (the recognizer's own evidence may stand in for a context word) and `owner`
  (the recognizer says whose the datum is; a company's is reported and kept).

A finding is an error when it carries a replacement, a note when it is kept; `severity` is the rule's level
for SARIF, that of its redacted findings.

Loading never executes anything from the files: safe YAML, a pydantic model, and `recognizer` must name a
`PatternRecognizer` subclass in a module of the `scanner.pii.recognizers` package.
"""

from __future__ import annotations

import importlib
import re
from functools import lru_cache
from pathlib import Path
from typing import Literal, Optional

from pydantic import Field, ValidationError, model_validator

from scanner.evidence import PLACEHOLDERS
from scanner.findings import Finding
from scanner.rulepack import BUILTIN_RULES, Example, RuleBase, RuleError, _Strict, _validation_message, load_yaml

RULES_DIR = BUILTIN_RULES / "pii"
RECOGNIZER_PACKAGE = "scanner.pii.recognizers"
_RECOGNIZER_NAME = re.compile(r"^[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)*\.[A-Z][A-Za-z0-9]*$")
_FILE = re.compile(r"^PII\d{3}-[a-z0-9-]+\.yaml$")


class PiiExample(Example):
    datum: Optional[str] = Field(default=None, description="Positive: the exact text of the finding; negative: no "
                                                           "finding may cover it (or lie inside it)")
    redacted: Optional[bool] = Field(default=None, description="The finding carries a replacement (true) or is "
                                                               "kept (false); absent: either")


class PiiExamples(_Strict):
    positive: list[PiiExample] = Field(min_length=3)
    negative: list[PiiExample] = Field(min_length=3)


class Policy(_Strict):
    replacement: Optional[str] = Field(description="What a redacted datum becomes; null: reported and kept")
    report: Literal["always", "when_redacted", "never"]
    low_entropy: bool = Field(description="Few possible values: a plain digest of the original gives it back")
    priority: int = Field(ge=0, description="Lower wins when candidates of different rules overlap")
    context: Literal["never", "when_check_fails", "required"] = "never"
    context_substitute: bool = False
    owner: bool = False
    check: Optional[str] = None
    check_with_context: Optional[str] = None

    @model_validator(mode="after")
    def _known_placeholder(self):
        if self.replacement is not None and self.replacement not in PLACEHOLDERS:
            raise ValueError(f"replacement must be one of the contract's placeholders ({', '.join(PLACEHOLDERS)}): "
                             "redact, scrub and verify recognise only those as already redacted")
        return self


class PiiRule(RuleBase):
    kind: Literal["pii"] = "pii"
    entity: str = Field(pattern=r"^[A-Z][A-Z0-9_]*$")
    recognizer: Optional[str] = Field(default=None, description="Class under scanner.pii.recognizers, e.g. "
                                                                "mx.curp.MxCurpRecognizer")
    decision: Literal["identifier", "email", "phone", "name"]
    policy: Policy
    examples: PiiExamples

    @model_validator(mode="after")
    def _shape(self):
        if not self.id.startswith("PII"):
            raise ValueError("personal-data rule ids look like PII001")
        if self.recognizer is not None and not _RECOGNIZER_NAME.match(self.recognizer):
            raise ValueError("recognizer: module path and class, e.g. mx.curp.MxCurpRecognizer")
        if self.decision != "name" and self.recognizer is None:
            raise ValueError(f"a rule decided as {self.decision!r} needs a recognizer")
        p = self.policy
        if self.decision != "identifier" and (p.context != "never" or p.context_substitute or p.owner or p.check):
            raise ValueError("context, context_substitute, owner and check are identifier policy")
        if p.context == "when_check_fails" and not p.check_with_context:
            raise ValueError("context: when_check_fails needs check_with_context (what a finding confirmed by a "
                             "context word records)")
        return self


def recognizer_class(name: str, where: str):
    """The class a rule names, imported from the recognizers package (and nowhere else)."""
    from scanner.pii.recognizer import PatternRecognizer

    module_name, _, class_name = name.rpartition(".")
    try:
        module = importlib.import_module(f"{RECOGNIZER_PACKAGE}.{module_name}")
    except ImportError as exc:
        raise RuleError(f"{where}: recognizer: no module {module_name!r} in {RECOGNIZER_PACKAGE} ({exc})") from None
    cls = getattr(module, class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, PatternRecognizer) and cls is not PatternRecognizer):
        raise RuleError(f"{where}: recognizer: {class_name!r} is not a recognizer of {module.__name__}")
    return cls


def load_rule(path: Path) -> PiiRule:
    try:
        rule = PiiRule.model_validate(load_yaml(path))
    except ValidationError as exc:
        raise RuleError(_validation_message(path, exc)) from None
    rule.source = str(path)
    return rule


class Registry:
    """The rules in id order, with the lookups the scanner and the outputs need."""

    def __init__(self, rules: tuple[PiiRule, ...]):
        self.rules = rules
        self.by_id = {r.id: r for r in rules}
        self.by_entity = {r.entity: r for r in rules}
        self._classes: dict[str, type] = {}
        for r in rules:
            if r.recognizer is not None and r.recognizer not in self._classes:
                self._classes[r.recognizer] = recognizer_class(r.recognizer, r.source)
        for r in rules:
            if r.decision == "identifier":
                cls = self._classes[r.recognizer]
                if cls.ENTITY != r.entity:
                    raise RuleError(f"{r.source}: {r.recognizer} finds {cls.ENTITY}, not {r.entity}")
                for hook, wanted in (("context_substitute", r.policy.context_substitute), ("owner", r.policy.owner)):
                    if wanted and not callable(getattr(cls, hook, None)):
                        raise RuleError(f"{r.source}: policy.{hook} needs {r.recognizer}.{hook}()")

    def recognizer_classes(self) -> list[type]:
        """Each recognizer once, in the order of the first rule that names it."""
        return list(self._classes.values())

    def identifier_rule(self, entity: str) -> PiiRule | None:
        r = self.by_entity.get(entity)
        return r if r is not None and r.decision == "identifier" else None

    def replacement(self, entity: str) -> str | None:
        return self.by_entity[entity].policy.replacement

    def priority(self, entity: str) -> int:
        r = self.by_entity.get(entity)
        return r.policy.priority if r is not None else 9

    def low_entropy_entities(self) -> frozenset:
        return frozenset(r.entity for r in self.rules if r.policy.low_entropy)

    def reportable(self, f: Finding) -> bool:
        """Contract: of EMAIL_ADDRESS only EMAIL_PERSONAL is a finding; a company's own phone is not personal
        data. A finding of a rule outside this registry is reported."""
        r = self.by_id.get(f.rule_id)
        if r is None or r.policy.report == "always":
            return True
        if r.policy.report == "never":
            return False
        return f.extra.get("replacement") is not None

    def rule_metas(self) -> list:
        from scanner.sarif import rule_meta_from_rule

        return [rule_meta_from_rule(r) for r in self.rules]


@lru_cache(maxsize=1)
def registry() -> Registry:
    """The built-in personal-data rules (read once per process, validated once per content:
    scanner.packcache)."""
    from scanner import packcache

    return Registry(packcache.cached("pii", sorted(RULES_DIR.glob("PII*.yaml")), _load_rules))


def _load_rules() -> tuple[PiiRule, ...]:
    rules: list[PiiRule] = []
    seen: dict[str, str] = {}
    for path in sorted(RULES_DIR.glob("PII*.yaml")):
        if not _FILE.match(path.name):
            raise RuleError(f"{path}: personal-data rule files are named PII<nnn>-<name>.yaml")
        rule = load_rule(path)
        if not path.name.startswith(rule.id + "-"):
            raise RuleError(f"{path}: the file name does not start with the rule id {rule.id}")
        for key in (rule.id, rule.entity):
            if key in seen:
                raise RuleError(f"{path}: {key} is already used by {seen[key]}")
            seen[key] = str(path)
        rules.append(rule)
    if not rules:
        raise RuleError(f"{RULES_DIR}: no personal-data rule")
    return tuple(rules)


def reportable(f: Finding) -> bool:
    """Whether a finding is reported (non-PII findings always are); see `Registry.reportable`."""
    return f.kind != "pii" or registry().reportable(f)


def low_entropy_entities() -> frozenset:
    return registry().low_entropy_entities()
