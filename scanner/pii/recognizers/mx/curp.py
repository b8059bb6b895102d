"""CURP (Clave Única de Registro de Población): the check digit from `stdnum.mx.curp`.

stdnum checks the format, the birth date, the state, its list of inconvenient words and the check digit;
the pattern takes any case, since stdnum upper-cases before computing the check digit.
"""

from __future__ import annotations

from scanner.pii.recognizer import Pattern, PatternRecognizer

CURP_RE = r"(?<![A-Za-z0-9Ññ&])[A-Za-z]{4}\d{6}[HMhm][A-Za-z]{5}[0-9A-Za-z]\d(?![A-Za-z0-9Ññ])"


def curp_valid(value: str) -> bool:
    """A CURP with a valid check digit (stdnum; sex H or M). stdnum is imported at the first candidate: its
    `util` module imports ssl and pydoc, which a page without one never needs."""
    from stdnum.exceptions import ValidationError
    from stdnum.mx import curp as _curp

    try:
        _curp.validate(value)
        return True
    except ValidationError:
        return False


class MxCurpRecognizer(PatternRecognizer):
    ENTITY = "MX_CURP"
    PATTERNS = (Pattern("CURP", CURP_RE, 0.3),)
    CONTEXT = ("curp", "c.u.r.p", "clave unica de registro de poblacion", "clave unica")

    def validate_result(self, pattern_text: str):
        return curp_valid(pattern_text)
