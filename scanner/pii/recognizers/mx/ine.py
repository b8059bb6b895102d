"""INE clave de elector: 6 letters, the birth date YYMMDD, the state 01–32, H/M, 3 digits.

INE publishes no check-digit algorithm, so only the structure, the date and the state are checked, and a
context word is always needed (the rule's policy: `context: required`).
"""

from __future__ import annotations

import datetime
import re

from scanner.pii.recognizer import Pattern, PatternRecognizer

INE_RE = r"(?<![A-Za-z0-9Ññ])[A-Z]{6}\d{8}[HM]\d{3}(?![A-Za-z0-9Ññ])"
_INE = re.compile(r"[A-Z]{6}(\d{2})(\d{2})(\d{2})(\d{2})[HM]\d{3}")


def _valid_yymmdd(yy: str, mm: str, dd: str) -> bool:
    for century in (1900, 2000):
        try:
            datetime.date(century + int(yy), int(mm), int(dd))
            return True
        except ValueError:
            continue
    return False


def ine_clave_valid(value: str) -> bool:
    """6 letters, birth date YYMMDD, state 01–32, H/M, 3 digits."""
    m = _INE.fullmatch(value)
    return bool(m) and _valid_yymmdd(m.group(1), m.group(2), m.group(3)) and 1 <= int(m.group(4)) <= 32


class MxIneClaveRecognizer(PatternRecognizer):
    ENTITY = "MX_INE_CLAVE"
    PATTERNS = (Pattern("clave de elector", INE_RE, 0.3),)
    CONTEXT = ("clave de elector", "elector", "ine", "ife", "credencial", "credencial para votar",
               "identificacion oficial")

    def validate_result(self, pattern_text: str):
        return None if ine_clave_valid(pattern_text) else False
