"""Every rule proves itself with its own examples, and every lexicon group with its own texts.
Adding a rule (a YAML file) adds its cases here without touching this file."""

from __future__ import annotations

import pytest

from scanner.injection.engine import InjectionScanner
from scanner.injection.learned import GROUP_VECTOR
from scanner.injection.signals import CompiledLexicon
from scanner.loaders import load_bytes
from scanner.normalize import normalize
from scanner.rulepack import load_pack

LEXICON, RULES = load_pack()
SCANNER = InjectionScanner()
COMPILED = CompiledLexicon(LEXICON)

CASES = [(rule, polarity, i, ex) for rule in RULES for polarity in ("positive", "negative")
         for i, ex in enumerate(getattr(rule.examples, polarity))]


@pytest.mark.parametrize("rule, polarity, index, example", CASES,
                         ids=[f"{r.id}-{p}-{i}" for r, p, i, _ in CASES])
def test_rule_example(rule, polarity, index, example):
    doc = load_bytes(example.to_bytes(), example.file)
    hits = [f for f in SCANNER.scan(doc) if f.rule_id == rule.id]
    if polarity == "positive":
        assert hits, f"{rule.id} should flag {example.file}: {example.content[:120]!r}"
        for f in hits:
            # a learned rule, and the rule on the learned rule's reading, report the vector of the channel they found
            # the text in
            assert f.kind == "injection" and (f.vector == rule.vector or (
                (rule.match.model is not None or rule.match.decode == "reading") and f.vector in GROUP_VECTOR.values()))
            assert 0 <= f.start < f.end
    else:
        assert not hits, f"{rule.id} must not flag {example.file}: {[h.evidence for h in hits]}"


GROUP_CASES = [(name, polarity, text) for name, g in LEXICON.groups.items()
               for polarity in ("positive", "negative") for text in getattr(g, polarity)]


@pytest.mark.parametrize("group, polarity, text", GROUP_CASES, ids=[f"{g}-{p}-{i}" for i, (g, p, _) in enumerate(GROUP_CASES)])
def test_lexicon_group_examples(group, polarity, text):
    matched = COMPILED.groups[group].search(normalize(text).text) is not None
    assert matched == (polarity == "positive"), f"{group} on {text!r}"


def test_rule_ids_are_unique_and_every_rule_has_help_sections():
    ids = [r.id for r in RULES]
    assert len(ids) == len(set(ids))
    for r in RULES:
        assert all(getattr(r.help, k).strip() for k in ("what", "why", "example", "fix"))


MENTION_CASES = [(polarity, text) for polarity in ("mentioned", "used") for text in getattr(LEXICON.mentions, polarity)]


@pytest.mark.parametrize("polarity, text", MENTION_CASES, ids=[f"{p}-{i}" for i, (p, _) in enumerate(MENTION_CASES)])
def test_lexicon_mention_examples(polarity, text):
    """The lexicon's `mentions` prove themselves: every example holds a match of a group they filter (so a
    `mentioned` one is not simply unmatched), and hidden_instruction holds on the `used` ones only."""
    norm = normalize(text).text
    assert any(COMPILED.groups[g].search(norm) for g in LEXICON.mentions.groups), text
    held = COMPILED.signal("hidden_instruction", COMPILED.groups_in(norm)) is not None
    assert held == (polarity == "used"), f"{polarity}: {text!r}"
