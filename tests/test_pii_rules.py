"""Every personal-data rule (scanner/rules/pii/PII*.yaml) proves itself with its own examples, and the registry
is what every consumer reads. Adding a rule (a YAML file and its recognizer) adds its cases here."""

from __future__ import annotations

import re

import pytest

from scanner.evidence import PLACEHOLDERS
from scanner.findings import Finding
from scanner.loaders import load_bytes
from scanner.pii import PiiScanner
from scanner.pii.recognizer import PatternRecognizer
from scanner.pii.registry import PiiRule, Registry, load_rule, registry, reportable
from scanner.rulepack import RuleError
from scanner.sarif import rule_meta_from_rule

SCANNER = PiiScanner()
RULES = registry().rules
CASES = [(rule, polarity, i, ex) for rule in RULES for polarity in ("positive", "negative")
         for i, ex in enumerate(getattr(rule.examples, polarity))]


@pytest.mark.parametrize("rule, polarity, index, example", CASES, ids=[f"{r.id}-{p}-{i}" for r, p, i, _ in CASES])
def test_rule_example(rule, polarity, index, example):
    doc = load_bytes(example.to_bytes(), example.file)
    findings = SCANNER.scan(doc)

    def text(f):
        return doc.text[f.start:f.end]

    hits = [f for f in findings if f.rule_id == rule.id and f.entity == rule.entity and (
        example.redacted is None or (f.extra["replacement"] is not None) == example.redacted)]
    if polarity == "positive":
        if example.datum is not None:
            hits = [f for f in hits if text(f) == example.datum]
        assert hits, f"{rule.id} should find {example.content!r}; got {[(f.rule_id, f.evidence) for f in findings]}"
        for f in hits:
            assert f.kind == "pii" and 0 <= f.start < f.end
            assert f.severity == ("error" if f.extra["replacement"] is not None else "note")
            assert f.extra["replacement"] in (None, rule.policy.replacement)
            assert "score" in f.extra
    else:
        if example.datum is not None:
            hits = [f for f in hits if example.datum in text(f) or text(f) in example.datum]
        assert not hits, f"{rule.id} must not find {example.content!r}: {[h.evidence for h in hits]}"


def test_every_rule_has_its_sections_and_a_unique_id_and_entity():
    assert [r.id for r in RULES] == [f"PII{n:03d}" for n in range(1, len(RULES) + 1)]
    assert len({r.entity for r in RULES}) == len(RULES)
    for r in RULES:
        assert all(getattr(r.help, k).strip() for k in ("what", "why", "example", "fix")), r.id
        assert r.policy.replacement is None or r.policy.replacement in PLACEHOLDERS


def test_sarif_rules_carry_the_full_help():
    metas = {m.id: m for m in SCANNER.rule_metas()}
    assert set(metas) == {r.id for r in RULES}
    for r in RULES:
        m = metas[r.id]
        assert m == rule_meta_from_rule(r)
        assert "not passed to the SARIF writer" not in m.help_markdown
        assert "## Why it matters" in m.help_markdown and " ".join(r.help.why.split()) in m.help_markdown
        assert m.level == r.severity and m.short_description == r.message


def test_the_registry_is_what_reporting_and_redaction_read():
    from scanner.scan import reportable as scan_reportable

    reg = registry()
    assert reg.low_entropy_entities() == frozenset(
        {"PHONE_NUMBER", "MX_NSS", "MX_CURP", "MX_RFC_PERSONA_FISICA", "MX_CLABE", "MX_INE_CLAVE",
         "EMAIL_PERSONAL", "PERSON"})

    def finding(rule_id, replacement):
        r = reg.by_id[rule_id]
        return Finding(rule_id=rule_id, kind="pii", entity=r.entity, path="x", start=0, end=1, line=1, column=1,
                       page=None, severity="note", message="", evidence="", channel="visible_text", locator=None,
                       extra={"replacement": replacement})

    expected = {("PII001", "redacted@example.test"): True, ("PII002", None): False,
                ("PII003", "+52-000-000-0000"): True, ("PII003", None): False, ("PII006", None): True,
                ("PII008", None): True, ("PII010", None): True}
    for (rule_id, replacement), shown in expected.items():
        f = finding(rule_id, replacement)
        assert reportable(f) is shown and scan_reportable(f) is shown, rule_id


def test_candidates_overlap_in_the_rules_priority_order():
    reg = registry()
    order = sorted(RULES, key=lambda r: r.policy.priority)
    assert order[0].entity.startswith("EMAIL") and order[-1].entity == "PERSON"
    assert reg.priority("MX_CURP") < reg.priority("MX_NSS") < reg.priority("PHONE_NUMBER") < reg.priority("PERSON")


def test_each_identifier_names_a_recognizer_of_its_entity():
    reg = registry()
    for r in RULES:
        if r.recognizer is None:
            assert r.decision == "name"
            continue
        cls = next(c for c in reg.recognizer_classes() if r.recognizer.endswith("." + c.__name__))
        assert issubclass(cls, PatternRecognizer) and cls.PATTERNS and cls.CONTEXT
        if r.decision == "identifier":
            assert cls.ENTITY == r.entity


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


RECORD = (RULES[3].source and open(RULES[3].source, encoding="utf-8").read())      # PII004, a valid record


@pytest.mark.parametrize("change, message", [
    (lambda s: s.replace("recognizer: mx.curp.MxCurpRecognizer", "recognizer: os.system"), "recognizer"),
    (lambda s: s.replace("recognizer: mx.curp.MxCurpRecognizer", "recognizer: mx.curp.Nothing"), "not a recognizer"),
    (lambda s: s.replace("  replacement: REDACTED", "  replacement: XXXX"), "placeholders"),
    (lambda s: s.replace("  context: never", "  context: when_check_fails"), "check_with_context"),
    (lambda s: s.replace("decision: identifier", "decision: email").replace("  context: never\n", ""), "identifier policy"),
    (lambda s: re.sub(r"  negative:\n(    - .*\n(      .*\n)*)+", "  negative: []\n", s), "negative"),
])
def test_a_bad_record_is_one_clear_error(tmp_path, change, message):
    path = _write(tmp_path, "PII004-mx-curp.yaml", change(RECORD))
    with pytest.raises(RuleError) as err:
        rule = load_rule(path)
        Registry((rule,))
    assert str(path) in str(err.value) and message in str(err.value)


def test_an_identifier_whose_recognizer_finds_another_entity_is_refused(tmp_path):
    rule = load_rule(_write(tmp_path, "PII004-mx-curp.yaml",
                            RECORD.replace("mx.curp.MxCurpRecognizer", "mx.nss.MxNssRecognizer")))
    assert isinstance(rule, PiiRule)
    with pytest.raises(RuleError, match="finds MX_NSS, not MX_CURP"):
        Registry((rule,))
