"""NSS (IMSS número de seguridad social): 11 digits whose Luhn check holds (`stdnum.luhn`), as
django-localflavor's MXSocialSecurityNumberField. Luhn holds for one number in ten, so a context word is
always needed (the rule's policy: `context: required`)."""

from __future__ import annotations

import re

from scanner.pii.recognizer import Pattern, PatternRecognizer

NSS_RE = r"(?<![\d.,\-/])\d(?:[ \-]?\d){10}(?![ \-]?\d)(?![.,/]\d)"


def nss_valid(digits: str) -> bool:
    if not (len(digits) == 11 and digits.isdigit()):
        return False
    from stdnum import luhn      # at the first candidate (as in `curp_valid`)

    return luhn.is_valid(digits)


class MxNssRecognizer(PatternRecognizer):
    ENTITY = "MX_NSS"
    PATTERNS = (Pattern("NSS (IMSS)", NSS_RE, 0.1),)
    CONTEXT = ("nss", "n.s.s", "imss", "seguro social", "seguridad social", "numero de afiliacion", "afiliacion")

    def validate_result(self, pattern_text: str):
        return None if nss_valid(re.sub(r"\D", "", pattern_text)) else False
