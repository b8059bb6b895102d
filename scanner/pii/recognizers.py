"""Presidio recognizers for Mexican personal data, each a `PatternRecognizer` with a check from a library.

`validate_result` follows Presidio's convention: True → the check passed (score 1.0), False → dropped,
None → the shape is right but only a context word can confirm it (the pattern's low score stays, and
Presidio's context enhancer — or our own window test in `scanner.pii.scanner` — raises it).

| recognizer | entity | pattern | validate_result |
|---|---|---|---|
| MxCurpRecognizer | MX_CURP | 4 letters, YYMMDD, H/M, 5 letters, 1 alnum, 1 digit | True iff stdnum.mx.curp validates (check digit) |
| MxRfcFisicaRecognizer | MX_RFC_PERSONA_FISICA | 4 letters, YYMMDD, 3-char homoclave (or none) | stdnum.mx.rfc: True with a valid check digit, None without (context needed), False otherwise or for XAXX010101000 / XEXX010101000 |
| MxRfcMoralRecognizer | MX_RFC_PERSONA_MORAL | 3 letters, YYMMDD, homoclave | same, 12 characters |
| MxNssRecognizer | MX_NSS | 11 digits | None iff Luhn holds (always needs context), else False |
| MxClabeRecognizer | MX_CLABE | 18 digits | None iff the 3-7-1 check digit holds, else False |
| MxIneClaveRecognizer | MX_INE_CLAVE | 6 letters, 8 digits, H/M, 3 digits | None iff date and state are valid, else False |
| MxPhoneRecognizer | PHONE_NUMBER | MX national, +52, +52 1, 044/045/01 forms; other +CC numbers | phonenumbers validity: True, None for an unseparated 10-digit run, False |
| OfflineEmailRecognizer | EMAIL_ADDRESS | practical address shape (+ "arroba"/[at] forms) | suffix known to tldextract's bundled list, never downloaded |

All patterns but the email's are case-sensitive (Presidio's default flags include IGNORECASE, which would let
`[A-Z]` match lower case).

Presidio compiles a pattern with the `regex` module (backtracking) unless it already holds a compiled one:
`_run_with_re2` gives every pattern its RE2 program (scanner.rx, meaning what `regex` means by it), so RE2 is
what runs on the text.
"""

from __future__ import annotations

import re
from functools import lru_cache

import tldextract
from presidio_analyzer import Pattern, PatternRecognizer
from presidio_analyzer.predefined_recognizers import EmailRecognizer

from scanner import rx
from scanner.pii import checks
from scanner.pii.data import context_rules

LANGUAGE = "es"
CASE_SENSITIVE = re.DOTALL | re.MULTILINE

# ---------------------------------------------------------------------------------------------------------
# patterns

_UP = r"A-ZÑ&"
CURP_RE = r"(?<![A-Za-z0-9Ññ&])[A-Za-z]{4}\d{6}[HMhm][A-Za-z]{5}[0-9A-Za-z]\d(?![A-Za-z0-9Ññ])"  # any case: stdnum upper-cases before the check digit
RFC_FISICA_RE = rf"(?<![A-Za-z0-9Ññ&])[{_UP}]{{4}}[ \-]?\d{{6}}(?:[ \-]?[A-Z0-9]{{3}})?(?![A-Za-z0-9Ññ&])"
RFC_MORAL_RE = rf"(?<![A-Za-z0-9Ññ&])[{_UP}]{{3}}[ \-]?\d{{6}}[ \-]?[A-Z0-9]{{3}}(?![A-Za-z0-9Ññ&])"
NSS_RE = r"(?<![\d.,\-/])\d(?:[ \-]?\d){10}(?![ \-]?\d)(?![.,/]\d)"
CLABE_RE = r"(?<![\d.,\-/])\d(?:[ \-]?\d){17}(?![ \-]?\d)(?![.,/]\d)"
INE_RE = r"(?<![A-Za-z0-9Ññ])[A-Z]{6}\d{8}[HM]\d{3}(?![A-Za-z0-9Ññ])"

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

_LOCAL = r"[\w!#$%*+^~\-]+(?:\.[\w!#$%*+^~\-]+)*"
_DOMAIN = r"(?:[^\W_](?:[\w\-]*[^\W_])?\.)+(?:[^\W\d_]{2,63}|xn--[a-z0-9\-]+)"
EMAIL_RE = rf"(?<![\w.!#$%*+^~\-@])({_LOCAL})@({_DOMAIN})(?![\w\-]|\.[^\W_])"
_AT = r"\s*(?:\[\s*(?:at|arroba)\s*\]|\(\s*(?:at|arroba)\s*\)|\{\s*(?:at|arroba)\s*\}|\s(?:arroba)\s|%40)\s*"  # %40: percent-encoded in a URL
_DOT = r"\s*(?:\.|\[\s*(?:dot|punto)\s*\]|\(\s*(?:dot|punto)\s*\)|\s(?:punto)\s)\s*"
EMAIL_OBFUSCATED_RE = rf"(?<![\w.+\-@])([\w.+\-]+){_AT}((?:[^\W_][\w\-]*{_DOT})+[^\W\d_]{{2,63}})(?![\w\-])"

RFC_MORAL = rx.compile(RFC_MORAL_RE, engine="regex")
_EMAIL = rx.compile(EMAIL_RE)
_EMAIL_OBF = rx.compile(EMAIL_OBFUSCATED_RE, re.IGNORECASE)
_DOT_NORM = rx.compile(_DOT, re.IGNORECASE)


def split_email(text: str) -> tuple[str, str] | None:
    """(local, domain) of a matched address, also for the "juan (arroba) acme punto mx" forms."""
    m = _EMAIL.fullmatch(text)
    if m:
        return m.group(1), m.group(2)
    m = _EMAIL_OBF.fullmatch(text)
    if m:
        return m.group(1), _DOT_NORM.sub(".", m.group(2))
    return None


@lru_cache(maxsize=1)
def offline_tld_extract() -> tldextract.TLDExtract:
    """tldextract on its bundled Public Suffix List snapshot: no download, no disk cache."""
    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None, fallback_to_snapshot=True,
                                 extra_suffixes=("test", "example", "invalid", "localhost"))


def _context(name: str) -> list[str]:
    return list(context_rules().recognizer_words.get(name, []))


# ---------------------------------------------------------------------------------------------------------
# recognizers

class MxCurpRecognizer(PatternRecognizer):
    PATTERNS = [Pattern("CURP", CURP_RE, 0.3)]

    def __init__(self, supported_language: str = LANGUAGE):
        super().__init__(supported_entity="MX_CURP", name="MxCurpRecognizer", patterns=self.PATTERNS,
                         context=_context("MX_CURP"), supported_language=supported_language,
                         global_regex_flags=CASE_SENSITIVE)

    def validate_result(self, pattern_text: str):
        return checks.curp_valid(pattern_text)


class _RfcRecognizer(PatternRecognizer):
    KIND = ""

    def validate_result(self, pattern_text: str):
        info = checks.rfc_info(pattern_text)
        if info is None or info.kind != self.KIND or info.generic:
            return False
        return True if info.check_ok else None


class MxRfcFisicaRecognizer(_RfcRecognizer):
    KIND = "fisica"
    PATTERNS = [Pattern("RFC persona física", RFC_FISICA_RE, 0.3)]

    def __init__(self, supported_language: str = LANGUAGE):
        super().__init__(supported_entity="MX_RFC_PERSONA_FISICA", name="MxRfcFisicaRecognizer",
                         patterns=self.PATTERNS, context=_context("MX_RFC"), supported_language=supported_language,
                         global_regex_flags=CASE_SENSITIVE)


class MxRfcMoralRecognizer(_RfcRecognizer):
    KIND = "moral"
    PATTERNS = [Pattern("RFC persona moral", RFC_MORAL_RE, 0.3)]

    def __init__(self, supported_language: str = LANGUAGE):
        super().__init__(supported_entity="MX_RFC_PERSONA_MORAL", name="MxRfcMoralRecognizer",
                         patterns=self.PATTERNS, context=_context("MX_RFC"), supported_language=supported_language,
                         global_regex_flags=CASE_SENSITIVE)


class MxNssRecognizer(PatternRecognizer):
    PATTERNS = [Pattern("NSS (IMSS)", NSS_RE, 0.1)]

    def __init__(self, supported_language: str = LANGUAGE):
        super().__init__(supported_entity="MX_NSS", name="MxNssRecognizer", patterns=self.PATTERNS,
                         context=_context("MX_NSS"), supported_language=supported_language,
                         global_regex_flags=CASE_SENSITIVE)

    def validate_result(self, pattern_text: str):
        return None if checks.nss_valid(re.sub(r"\D", "", pattern_text)) else False


class MxClabeRecognizer(PatternRecognizer):
    PATTERNS = [Pattern("CLABE", CLABE_RE, 0.2)]

    def __init__(self, supported_language: str = LANGUAGE):
        super().__init__(supported_entity="MX_CLABE", name="MxClabeRecognizer", patterns=self.PATTERNS,
                         context=_context("MX_CLABE"), supported_language=supported_language,
                         global_regex_flags=CASE_SENSITIVE)

    def validate_result(self, pattern_text: str):
        return None if checks.clabe_valid(re.sub(r"\D", "", pattern_text)) else False


class MxIneClaveRecognizer(PatternRecognizer):
    PATTERNS = [Pattern("clave de elector", INE_RE, 0.3)]

    def __init__(self, supported_language: str = LANGUAGE):
        super().__init__(supported_entity="MX_INE_CLAVE", name="MxIneClaveRecognizer", patterns=self.PATTERNS,
                         context=_context("MX_INE_CLAVE"), supported_language=supported_language,
                         global_regex_flags=CASE_SENSITIVE)

    def validate_result(self, pattern_text: str):
        return None if checks.ine_clave_valid(pattern_text) else False


class MxPhoneRecognizer(PatternRecognizer):
    """Mexican numbers in every form people write them, and other countries' numbers written with +CC.

    Presidio's PhoneRecognizer (phonenumbers' matcher) misses the +52 1 / 044 / 045 / 01 forms and, with its
    default regions, every Mexican number; this one finds candidates by pattern and asks phonenumbers only
    whether the number is valid (and toll-free).
    """

    PATTERNS = [Pattern("MX phone", PHONE_MX_RE, 0.4), Pattern("international phone", PHONE_INTL_RE, 0.4)]

    def __init__(self, supported_language: str = LANGUAGE):
        super().__init__(supported_entity="PHONE_NUMBER", name="MxPhoneRecognizer", patterns=self.PATTERNS,
                         context=_context("PHONE_NUMBER"), supported_language=supported_language,
                         global_regex_flags=CASE_SENSITIVE)

    def validate_result(self, pattern_text: str):
        info = checks.parse_phone(pattern_text)
        if info is None:
            return False
        return None if info.form == "bare" else True


class OfflineEmailRecognizer(EmailRecognizer):
    """Presidio's email recognizer, made offline and stricter about where an address starts.

    The stock `validate_result` calls `tldextract.extract`, which downloads the Public Suffix List at run
    time (presidio#1205); here the bundled snapshot is used. The pattern leaves `/ = ? & ' {|}` out of the
    local part (all legal, none seen in real addresses) so `?email=juan@x.mx` matches only the address.
    """

    PATTERNS = [Pattern("Email", EMAIL_RE, 0.5), Pattern("Email (obfuscated)", EMAIL_OBFUSCATED_RE, 0.4)]
    CONTEXT = ["email", "correo", "e-mail", "correo electronico", "mail", "escribe", "escribenos"]

    def __init__(self, supported_language: str = LANGUAGE):
        super().__init__(patterns=self.PATTERNS, context=self.CONTEXT, supported_language=supported_language,
                         name="OfflineEmailRecognizer")

    def validate_result(self, pattern_text: str):
        parts = split_email(pattern_text)
        if parts is None:
            return False
        return offline_tld_extract()("x@" + parts[1]).suffix != ""


def _run_with_re2(recognizer: PatternRecognizer) -> PatternRecognizer:
    """Hand Presidio each pattern already compiled for RE2, for the flags it runs with (it then never compiles
    its own); a pattern RE2 cannot run raises RegexError here, at load."""
    flags = recognizer.global_regex_flags
    for pattern in recognizer.patterns:
        pattern.compiled_regex = rx.compile(pattern.regex, flags, engine="regex")
        pattern.compiled_with_flags = flags
    return recognizer


def mx_recognizers(language: str = LANGUAGE) -> list[PatternRecognizer]:
    """One instance of each recognizer, in the order the scanner runs them."""
    return [_run_with_re2(r) for r in (
        OfflineEmailRecognizer(language), MxCurpRecognizer(language), MxRfcFisicaRecognizer(language),
        MxRfcMoralRecognizer(language), MxNssRecognizer(language), MxClabeRecognizer(language),
        MxIneClaveRecognizer(language), MxPhoneRecognizer(language))]
