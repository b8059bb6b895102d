"""Findings about secrets and personal data: positions from a unit match, and evidence that never shows the datum.

The contract: for secrets and personal data `evidence` is a masked form (`jua…@gmail.com`), never the datum
itself — in every output (JSON, SARIF, text, reports, logs).
"""

from __future__ import annotations

import html
import json

from scanner.findings import Finding
from scanner.units import Document, TextUnit

# What the redactor writes in place of each kind of datum (contract, "Redaction replacements").
REPLACEMENT_EMAIL = "redacted@example.test"
REPLACEMENT_PHONE = "+52-000-000-0000"
REPLACEMENT_SECRET = "REDACTED"


def mask(value: str, entity: str | None = None) -> str:
    """A masked form that says what kind of thing it was without giving it away.

    It never shows more than about a third of a datum: an email keeps 3 characters of a local part of 6 or
    more (`jua…@gmail.com`), 1 of a shorter one (`a…@gmail.com`, never the whole `ana@`); a secret its first
    4 characters (2 when it is 12 or shorter) and its length; a value of 10 characters or more (phones,
    CURP, RFC, CLABE…) its first and last 2 (`55…78`), a shorter one its first and last 1, one of 4 or fewer
    nothing."""
    value = value.strip()
    if not value:
        return ""
    if "@" in value and entity in (None, "EMAIL_PERSONAL", "EMAIL_ROLE", "EMAIL_ADDRESS"):
        local, _, domain = value.partition("@")
        keep = 3 if len(local) >= 6 else 1 if len(local) >= 2 else 0
        return f"{local[:keep]}…@{domain}"
    if entity in ("API_KEY", "AUTH_HEADER", "COOKIE", "ACCOUNT_ID", "SECRET"):
        head = value[:4] if len(value) > 12 else value[:2]
        return f"{head}…({len(value)} chars)"
    if len(value) <= 4:
        return "…"
    if entity in ("PERSON",):
        return value[0] + "…" + (f" ({len(value)} chars)")
    if len(value) < 10:
        return f"{value[:1]}…{value[-1:]}"
    return f"{value[:2]}…{value[-2:]}"


def unit_finding(doc: Document, unit: TextUnit, i: int, j: int, *, rule_id: str, kind: str, entity: str,
                 severity: str, message: str, replacement: str | None, **extra) -> Finding:
    """A finding for unit.text[i:j], positioned exactly in the file (or the PDF page's text)."""
    start, end = unit.source_span(i, j)
    line, column = doc.unit_line_col(unit, start)
    data = {"replacement": replacement, "action": "redact" if replacement is not None else "report"}
    if unit.container:
        data["container"] = unit.container
    data.update(extra)
    return Finding(rule_id=rule_id, kind=kind, entity=entity, path=doc.path, start=start, end=end, line=line,
                   column=column, page=unit.page, severity=severity, message=message,
                   evidence=mask(unit.text[i:j], entity), channel=unit.channel.value,
                   locator=unit.locator or None, extra=data)


MIN_DATUM_LEN = 4    # shorter "data" (a 3-digit fragment) would match unrelated text


def datum_variants(raw: str) -> set[str]:
    """The datum as it sits in the file, and as a reader of the file gets it (JSON escapes and HTML character
    references decoded): any of them could reach an output through another finding's text."""
    variants = {raw.strip(), html.unescape(raw).strip()}
    try:
        decoded = json.loads(f'"{raw}"')
    except ValueError:
        decoded = None
    if isinstance(decoded, str):
        variants.add(decoded.strip())
    return {v for v in variants if len(v) >= MIN_DATUM_LEN}
