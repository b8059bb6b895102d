"""Phone numbers: Mexican numbers in every form people write them, and other countries' numbers with +CC.

Presidio's PhoneRecognizer (phonenumbers' matcher) misses the +52 1 / 044 / 045 / 01 forms and, with its
default regions, every Mexican number; this one finds candidates by pattern and asks `phonenumbers` only
whether the number is valid and of which type (toll-free, premium, shared-cost and UAN numbers are a
business's by nature). The retired national prefixes (01, 044, 045) and the +52 1 mobile form, which
libphonenumber no longer parses since v8.13.38, are stripped first. Whose line a number is — a person's
(redacted) or the company's (kept) — is the scanner's decision (`scanner.pii.contacts`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from scanner.pii.recognizer import Pattern, PatternRecognizer

_SEP = r"(?:[ \u00a0.\-]|[ \u00a0]?\n[ \u00a0]?)"   # one line break allowed: PDF text wraps numbers
_NAT = (rf"(?:\(\d{{2}}\){_SEP}?\d{{4}}{_SEP}?\d{{4}}|\(\d{{3}}\){_SEP}?\d{{3}}{_SEP}?\d{{4}}"
        rf"|\d{{2}}{_SEP}?\d{{4}}{_SEP}?\d{{4}}|\d{{3}}{_SEP}?\d{{3}}{_SEP}?\d{{4}}"
        rf"|\d{{2}}(?:{_SEP}\d{{2}}){{4}}|\d{{3}}{_SEP}\d{{3}}{_SEP}\d{{2}}{_SEP}\d{{2}})")
# (Every _NAT form starts with "(" and a digit or with a digit, so nothing after a prefix needs checking.)
_MX_PREFIX = (rf"(?:(?:\+|00){_SEP}?52{_SEP}?(?:1{_SEP}?)?|\(\+?52\){_SEP}?(?:1{_SEP}?)?|52{_SEP}(?:1{_SEP})?"
              rf"|0(?:44|45|1){_SEP}?)")
PHONE_MX_RE = rf"(?<![\w+/=#@])(?<!\d{_SEP})(?:{_MX_PREFIX})?{_NAT}(?!{_SEP}?\d)(?![\w@])"
_ISEP = r"(?:[ \u00a0]?[\-\u2013.][ \u00a0]?|[ \u00a0])"
PHONE_INTL_RE = (rf"(?<![\w+/=#@])(?<!\d{_SEP})(?!\+52|0052)(?:\+|00)[1-9]\d{{0,2}}(?:{_ISEP}?\(?\d{{1,4}}\)?){{2,6}}"
                 rf"(?!{_ISEP}?\d)(?![\w@])")


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


@lru_cache(maxsize=None)
def _lib():
    """phonenumbers, its type names and the business types: imported at the first candidate to validate (a
    page without one, most of a pre-commit hook's, never pays for its metadata)."""
    import phonenumbers

    types = phonenumbers.PhoneNumberType
    names = {v: k for k, v in vars(types).items() if isinstance(v, int)}
    return phonenumbers, names, {types.TOLL_FREE, types.PREMIUM_RATE, types.SHARED_COST, types.UAN}
_SEPARATED = re.compile(r"\d[\s.\-()]+\d")
_NANP = re.compile(r"\(?\d{3}\)?[ .\-]?\d{3}[ .\-]\d{4}")


def _mx(national: str, form: str) -> PhoneInfo | None:
    if len(national) != 10 or national[0] in "01":
        return None
    phonenumbers, type_names, business = _lib()
    number = phonenumbers.PhoneNumber(country_code=52, national_number=int(national))
    if not phonenumbers.is_valid_number(number):
        return None
    ntype = phonenumbers.number_type(number)
    return PhoneInfo("+52" + national, "MX", type_names.get(ntype, str(ntype)), form, ntype in business)


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
        phonenumbers, type_names, business = _lib()
        try:
            number = phonenumbers.parse("+" + digits, None)
        except phonenumbers.NumberParseException:
            return None
        if not phonenumbers.is_valid_number(number):
            return None
        ntype = phonenumbers.number_type(number)
        return PhoneInfo(phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164),
                         phonenumbers.region_code_for_number(number) or "", type_names.get(ntype, str(ntype)),
                         "international", ntype in business)
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
            phonenumbers, type_names, business = _lib()
            try:
                number = phonenumbers.parse(text, "US")
            except phonenumbers.NumberParseException:
                return None
            if phonenumbers.is_valid_number(number):
                ntype = phonenumbers.number_type(number)
                return PhoneInfo(phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164),
                                 phonenumbers.region_code_for_number(number) or "US",
                                 type_names.get(ntype, str(ntype)), "national", ntype in business)
        return info
    return None


class MxPhoneRecognizer(PatternRecognizer):
    ENTITY = "PHONE_NUMBER"
    PATTERNS = (Pattern("MX phone", PHONE_MX_RE, 0.4), Pattern("international phone", PHONE_INTL_RE, 0.4))
    CONTEXT = ("tel", "tels", "telefono", "telefonos", "tel/fax", "fax", "cel", "celular", "movil", "whatsapp",
               "whats", "wa", "llamar", "llame", "llamanos", "marcar", "marque", "lada", "conmutador", "pbx", "ext",
               "phone", "mobile", "telephone", "contacto", "numero")

    def validate_result(self, pattern_text: str):
        info = parse_phone(pattern_text)
        if info is None:
            return False
        return None if info.form == "bare" else True
