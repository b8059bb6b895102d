"""Checks of Mexican identifiers and phone numbers, from maintained libraries where one exists.

- CURP: `stdnum.mx.curp` (format, birth date, state, inconvenient-word list, check digit).
- RFC: `stdnum.mx.rfc` (format, date, word list; check digit optional, see `rfc_info`).
- NSS (IMSS): 11 digits, Luhn (`stdnum.luhn`), as django-localflavor's MXSocialSecurityNumberField.
- CLABE: python-stdnum has no CLABE module and the `clabe` package is not a dependency; the published
  algorithm is a few lines (`clabe_check_digit`): weights 3, 7, 1 over the first 17 digits, each product
  mod 10, check = (10 − sum mod 10) mod 10 (Banxico; cuenca-mx/clabe-python `compute_control_digit`).
- INE clave de elector: no public check digit; structure, birth date and state code only.
- Phones: `phonenumbers` decides whether a 10-digit Mexican national number is valid and of which type; the
  retired national prefixes (01, 044, 045) and the +52 1 mobile form, which libphonenumber no longer parses
  since v8.13.38, are stripped here first.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass

import phonenumbers
from stdnum import luhn
from stdnum.exceptions import ValidationError
from stdnum.mx import curp as _curp
from stdnum.mx import rfc as _rfc

# ----------------------------------------------------------------------------------------------------------
# text folding

_FOLD = str.maketrans("ÁÉÍÓÚÜÑÀÈÌÒÙáéíóúüñàèìòùâêîôûç\u00a0",
                      "AEIOUUNAEIOUaeiouunaeiouaeiouc ")


def fold(text: str) -> str:
    """Lower case without Spanish accents, with the same length as `text` (so offsets carry over)."""
    out = text.translate(_FOLD).lower()
    if len(out) != len(text):  # a character whose lower case is longer (İ): keep it as is
        out = "".join(c.translate(_FOLD).lower() if len(c.lower()) == 1 else c for c in text)
    return out


# ----------------------------------------------------------------------------------------------------------
# CURP

def curp_valid(value: str) -> bool:
    """A CURP with a valid check digit (stdnum; sex H or M)."""
    try:
        _curp.validate(value)
        return True
    except ValidationError:
        return False


# ----------------------------------------------------------------------------------------------------------
# RFC

GENERIC_RFC = frozenset({"XAXX010101000", "XEXX010101000"})


@dataclass(frozen=True)
class RfcInfo:
    kind: str            # "fisica" (13 or 10 characters) | "moral" (12)
    number: str          # compact form
    check_ok: bool       # check digit and homoclave shape valid (False for the 10-character form)
    generic: bool        # SAT's generic RFCs (público en general, extranjeros): nobody's data


def rfc_info(value: str) -> RfcInfo | None:
    """What an RFC-shaped string is, or None when stdnum rejects it even without check digits.

    stdnum leaves the check digit out by default because about 1.5 % of RFCs in use carry an invalid one
    (its module docstring); we report both, and the recognizers ask for a context word when it fails.
    """
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


# ----------------------------------------------------------------------------------------------------------
# NSS

def nss_valid(digits: str) -> bool:
    return len(digits) == 11 and digits.isdigit() and luhn.is_valid(digits)


# ----------------------------------------------------------------------------------------------------------
# CLABE

CLABE_WEIGHTS = (3, 7, 1) * 6


def clabe_check_digit(first17: str) -> str:
    """The control digit of a CLABE's first 17 digits."""
    if len(first17) != 17 or not first17.isdigit():
        raise ValueError("a CLABE check digit needs exactly 17 digits")
    total = sum((int(c) * w) % 10 for c, w in zip(first17, CLABE_WEIGHTS))
    return str((10 - total % 10) % 10)


def clabe_valid(digits: str) -> bool:
    return len(digits) == 18 and digits.isdigit() and clabe_check_digit(digits[:17]) == digits[17]


# ----------------------------------------------------------------------------------------------------------
# INE clave de elector

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
    """6 letters, birth date YYMMDD, state 01–32, H/M, 3 digits. INE publishes no check-digit algorithm."""
    m = _INE.fullmatch(value)
    return bool(m) and _valid_yymmdd(m.group(1), m.group(2), m.group(3)) and 1 <= int(m.group(4)) <= 32


# ----------------------------------------------------------------------------------------------------------
# phones

@dataclass(frozen=True)
class PhoneInfo:
    e164: str            # +52XXXXXXXXXX for Mexican numbers
    country: str         # region code, "MX" for Mexican numbers
    kind: str            # phonenumbers type name: FIXED_LINE_OR_MOBILE, TOLL_FREE, …
    form: str            # how it was written: international | legacy_mobile | legacy_prefix | national | bare
    toll_free: bool      # 800 / 900 / shared-cost numbers: a business line by nature

    @property
    def national(self) -> str:
        return self.e164[3:] if self.e164.startswith("+52") else self.e164


_TYPE_NAMES = {v: k for k, v in vars(phonenumbers.PhoneNumberType).items() if isinstance(v, int)}
_BUSINESS_TYPES = {phonenumbers.PhoneNumberType.TOLL_FREE, phonenumbers.PhoneNumberType.PREMIUM_RATE,
                   phonenumbers.PhoneNumberType.SHARED_COST, phonenumbers.PhoneNumberType.UAN}
_SEPARATED = re.compile(r"\d[\s.\-()]+\d")
_NANP = re.compile(r"\(?\d{3}\)?[ .\-]?\d{3}[ .\-]\d{4}")


def _mx(national: str, form: str) -> PhoneInfo | None:
    if len(national) != 10 or national[0] in "01":
        return None
    number = phonenumbers.PhoneNumber(country_code=52, national_number=int(national))
    if not phonenumbers.is_valid_number(number):
        return None
    ntype = phonenumbers.number_type(number)
    return PhoneInfo("+52" + national, "MX", _TYPE_NAMES.get(ntype, str(ntype)), form, ntype in _BUSINESS_TYPES)


def parse_phone(candidate: str) -> PhoneInfo | None:
    """A valid phone number written as `candidate`, or None. Mexican forms first, then any +CC number."""
    text = candidate.strip()
    digits = re.sub(r"\D", "", text)
    intl = text.startswith("+") or (text.startswith("00") and not text.startswith("000"))
    if intl:
        if text.startswith("00"):
            digits = digits[2:]
        if digits.startswith("52"):
            rest = digits[2:]
            if len(rest) == 11 and rest[0] == "1":
                return _mx(rest[1:], "legacy_mobile")
            return _mx(rest, "international")
        try:
            number = phonenumbers.parse("+" + digits, None)
        except phonenumbers.NumberParseException:
            return None
        if not phonenumbers.is_valid_number(number):
            return None
        ntype = phonenumbers.number_type(number)
        return PhoneInfo(phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164),
                         phonenumbers.region_code_for_number(number) or "", _TYPE_NAMES.get(ntype, str(ntype)),
                         "international", ntype in _BUSINESS_TYPES)
    if len(digits) == 13 and digits.startswith(("044", "045")):
        return _mx(digits[3:], "legacy_prefix")
    if len(digits) == 12 and digits.startswith("01"):
        return _mx(digits[2:], "legacy_prefix")
    if len(digits) == 12 and digits.startswith("52"):
        return _mx(digits[2:], "international")
    if len(digits) == 13 and digits.startswith("521"):
        return _mx(digits[3:], "legacy_mobile")
    if len(digits) == 10:
        form = "national" if _SEPARATED.search(text) else "bare"
        info = _mx(digits, form)
        if info is None and form == "national" and _NANP.fullmatch(text):
            # (305) 376-2217 / 305-376-2217: not a Mexican number, but a valid US/Canadian one
            try:
                number = phonenumbers.parse(text, "US")
            except phonenumbers.NumberParseException:
                return None
            if phonenumbers.is_valid_number(number):
                ntype = phonenumbers.number_type(number)
                return PhoneInfo(phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164),
                                 phonenumbers.region_code_for_number(number) or "US",
                                 _TYPE_NAMES.get(ntype, str(ntype)), "national", ntype in _BUSINESS_TYPES)
        return info
    return None
