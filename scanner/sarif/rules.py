"""What SARIF (and GitHub code scanning) shows about each rule: `RuleMeta`, built from a YAML rule's help."""

from __future__ import annotations

from dataclasses import dataclass

import sarif_om as om

from scanner.findings import Finding

GITHUB_MAX_TAGS = 20
# Result level, and the security-severity used when a rule gives none (research notes §1.7).
_LEVELS = {"error": "error", "warning": "warning", "note": "note",
           "critical": "error", "high": "error", "medium": "warning", "low": "note", "info": "note"}
_DEFAULT_SECURITY_SEVERITY = {"error": 8.0, "warning": 5.5, "note": 2.0}
_HELP_SECTIONS = (("what", "What it detects"), ("why", "Why it matters"), ("example", "Example"),
                  ("fix", "What to do"))


@dataclass(frozen=True)
class RuleMeta:
    """What SARIF (and GitHub) shows about a rule."""

    id: str
    name: str
    short_description: str
    full_description: str
    help_text: str
    help_markdown: str
    tags: tuple[str, ...] = ("security",)
    precision: str = "high"                  # very-high | high | medium | low
    security_severity: float = 5.5           # (0, 10]; written as a string, "8.0"
    level: str = "warning"                   # error | warning | note

    def reporting_descriptor(self) -> om.ReportingDescriptor:
        tags = list(dict.fromkeys(("security", *self.tags)))[:GITHUB_MAX_TAGS]
        return om.ReportingDescriptor(
            id=self.id,
            name=self.name,
            short_description=om.MultiformatMessageString(text=_limit(self.short_description, 1024)),
            full_description=om.MultiformatMessageString(text=_limit(self.full_description, 1024)),
            help=om.MultiformatMessageString(text=self.help_text, markdown=self.help_markdown),
            default_configuration=om.ReportingConfiguration(level=level_of(self.level)),
            properties={"tags": tags, "precision": self.precision,
                        "security-severity": format_security_severity(self.security_severity)},
        )


def format_security_severity(value: float) -> str:
    """GitHub's `security-severity`: a string score with one decimal, e.g. "8.0"."""
    return f"{float(value):.1f}"


def _limit(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def level_of(severity: str) -> str:
    return _LEVELS.get((severity or "").lower(), "warning")


def rule_meta_from_rule(rule) -> RuleMeta:
    """`RuleMeta` for a rule of a YAML pack: injection rules (`scanner.rulepack.Rule`), and secret rules too,
    since they have the same fields (id, name, severity, precision, security_severity, tags, message, help)."""
    help_ = rule.help
    sections = [(title, " ".join(str(getattr(help_, key)).split())) for key, title in _HELP_SECTIONS]
    markdown = "\n\n".join(f"## {title}\n\n{body}" for title, body in sections) + "\n"
    text = "\n\n".join(f"{title}: {body}" for title, body in sections)
    return RuleMeta(
        id=rule.id, name=rule.name, short_description=rule.message,
        full_description=" ".join(str(help_.what).split()), help_text=text, help_markdown=markdown,
        tags=tuple(rule.tags), precision=rule.precision, security_severity=float(rule.security_severity),
        level=rule.severity,
    )


rule_meta_from_injection_rule = rule_meta_from_rule


def rule_metas(scanner) -> list[RuleMeta]:
    """`RuleMeta` of every rule a `scanner.scan.Scanner` runs: its YAML-pack rules, and the personal-data
    recognizers' when they describe themselves (`rule_metas()`)."""
    metas = [rule_meta_from_rule(r) for r in scanner.pack_rules()]
    if scanner.pii is not None and hasattr(scanner.pii, "rule_metas"):
        metas += list(scanner.pii.rule_metas())
    return metas


def rule_meta_for_unknown(finding: Finding) -> RuleMeta:
    """A stand-in for a rule whose metadata the caller did not pass (every result needs a rule)."""
    level = level_of(finding.severity)
    what = f"centinela {finding.kind} rule {finding.rule_id}"
    return RuleMeta(
        id=finding.rule_id, name=finding.rule_id.lower(), short_description=what, full_description=what + ".",
        help_text=f"{what}. The rule's documentation was not passed to the SARIF writer.",
        help_markdown=f"## What it detects\n\n{what}. The rule's documentation was not passed to the SARIF writer.\n",
        tags=("security", finding.kind), precision="medium",
        security_severity=_DEFAULT_SECURITY_SEVERITY[level], level=level,
    )
