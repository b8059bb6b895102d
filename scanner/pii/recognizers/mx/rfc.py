"""RFC (Registro Federal de Contribuyentes): `stdnum.mx.rfc`, 13 characters for a person, 12 for a company.

stdnum leaves the check digit out by default because about 1.5 % of RFCs in use carry an invalid one (its
module docstring); `rfc_info` reports both, and a failing check digit is taken only next to a context word
(the rule's policy: `context: when_check_fails`). SAT's generic RFCs identify nobody and give no finding.
"""

from __future__ import annotations

from dataclasses import dataclass

from scanner import rx
from scanner.pii.recognizer import Pattern, PatternRecognizer

_UP = r"A-ZÑ&"
RFC_FISICA_RE = rf"(?<![A-Za-z0-9Ññ&])[{_UP}]{{4}}[ \-]?\d{{6}}(?:[ \-]?[A-Z0-9]{{3}})?(?![A-Za-z0-9Ññ&])"
RFC_MORAL_RE = rf"(?<![A-Za-z0-9Ññ&])[{_UP}]{{3}}[ \-]?\d{{6}}[ \-]?[A-Z0-9]{{3}}(?![A-Za-z0-9Ññ&])"
RFC_MORAL = rx.compile(RFC_MORAL_RE, engine="regex")
CONTEXT = ("rfc", "r.f.c", "registro federal de contribuyentes", "homoclave", "contribuyente", "cedula fiscal",
           "datos fiscales")
GENERIC_RFC = frozenset({"XAXX010101000", "XEXX010101000"})


@dataclass(frozen=True)
class RfcInfo:
    kind: str            # "fisica" (13 or 10 characters) | "moral" (12)
    number: str          # compact form
    check_ok: bool       # check digit and homoclave shape valid (False for the 10-character form)
    generic: bool        # SAT's generic RFCs (público en general, extranjeros): nobody's data


def rfc_info(value: str) -> RfcInfo | None:
    """What an RFC-shaped string is, or None when stdnum rejects it even without check digits (stdnum imported
    at the first candidate, as in `curp_valid`)."""
    from stdnum.exceptions import ValidationError
    from stdnum.mx import rfc as _rfc

    try:
        number = _rfc.validate(value)
    except ValidationError:
        return None
    try:
        _rfc.validate(number, validate_check_digits=True)
        check_ok = len(number) in (12, 13)
    except ValidationError:
        check_ok = False
    kind = "moral" if len(number) == 12 else "fisica"
    return RfcInfo(kind, number, check_ok, number in GENERIC_RFC)


class _RfcRecognizer(PatternRecognizer):
    KIND = ""
    CONTEXT = CONTEXT

    def validate_result(self, pattern_text: str):
        info = rfc_info(pattern_text)
        if info is None or info.kind != self.KIND or info.generic:
            return False
        return True if info.check_ok else None


class MxRfcFisicaRecognizer(_RfcRecognizer):
    ENTITY = "MX_RFC_PERSONA_FISICA"
    KIND = "fisica"
    PATTERNS = (Pattern("RFC persona física", RFC_FISICA_RE, 0.3),)


class MxRfcMoralRecognizer(_RfcRecognizer):
    ENTITY = "MX_RFC_PERSONA_MORAL"
    KIND = "moral"
    PATTERNS = (Pattern("RFC persona moral", RFC_MORAL_RE, 0.3),)
