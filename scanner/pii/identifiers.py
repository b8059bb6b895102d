"""Identifiers (CURP, RFC, NSS, CLABE, INE…): what each rule's policy says decides, with no code per identifier.

For a candidate of a rule whose `decision` is `identifier` (scanner/rules/pii/PII*.yaml):

1. `context`: `never` — the recognizer's check is enough; `when_check_fails` — a candidate whose check failed
   or is absent (score below 1) needs a context word of the recognizer near it; `required` — every candidate
   does. With `context_substitute`, the recognizer's own evidence may stand in for the word (a CLABE's known
   bank code in visible text), and what it saw is recorded either way.
2. The finding records the context word, the check (`check`, or `check_with_context` when a failing check
   was confirmed by the word), the substitute's evidence and, with `owner`, whose the datum is (the
   recognizer's `owner`): a company's is reported and kept, a person's gets the rule's `replacement`.
3. Its score is 1.0 when the check passed, else at least 0.75 (confirmed by context).
"""

from __future__ import annotations

from scanner.pii.candidates import Cand, ScanState, context_word
from scanner.pii.registry import registry


def identifiers(cands: list[Cand], st: ScanState, recognizers: dict) -> list[Cand]:
    """The identifier candidates the rules take, decided; `recognizers`: recognizer name → instance."""
    reg = registry()
    out = []
    for c in cands:
        rule = reg.identifier_rule(c.entity)
        if rule is None:
            continue
        policy, rec = rule.policy, recognizers[c.recognizer]
        word = None
        if policy.context == "required" or (policy.context == "when_check_fails" and not c.strong):
            word = context_word(c, st, rec.context_regex)
            stands_in, evidence = (rec.context_substitute(c.text, c.unit.channel) if policy.context_substitute
                                   else (False, {}))
            if word is None and not stands_in:
                continue
        else:
            evidence = rec.context_substitute(c.text, c.unit.channel)[1] if policy.context_substitute else {}
        if word is not None:
            c.extra["context"] = word
        c.extra["check"] = policy.check_with_context if (word is not None and not c.strong
                                                         and policy.check_with_context) else policy.check
        c.extra.update(evidence)
        c.replacement = policy.replacement
        if policy.owner:
            owner = _owner(c, st, rec)
            c.extra["owner"] = owner
            if owner == "company":
                c.replacement = None
        c.score = 1.0 if c.strong else max(c.score, 0.75)
        out.append(c)
    return out


def _owner(c: Cand, st: ScanState, rec) -> str:
    pos = st.blocks.position(c.unit, c.i, c.j)
    if pos is None:
        return "person"
    b, s, e = pos
    return rec.owner(b.text, s, e)
