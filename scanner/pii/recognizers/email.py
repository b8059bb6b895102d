"""Email addresses: the practical address shape and its spelled-out forms, the domain suffix checked offline.

Presidio's `EmailRecognizer`, made offline and stricter about where an address starts. Its stock
`validate_result` calls `tldextract.extract`, which downloads the Public Suffix List at run time
(presidio#1205); here the bundled snapshot is used. The pattern leaves `/ = ? & ' {|}` out of the local part
(all legal, none seen in real addresses) so `?email=juan@x.mx` matches only the address. Whether an address is
personal (PII001) or a role mailbox (PII002) is decided by the scanner (`scanner.pii.contacts`), not here.
"""

from __future__ import annotations

import re
from functools import lru_cache

from scanner import rx
from scanner.pii.recognizer import Pattern, PatternRecognizer

_LOCAL = r"[\w!#$%*+^~\-]+(?:\.[\w!#$%*+^~\-]+)*"
_DOMAIN = r"(?:[^\W_](?:[\w\-]*[^\W_])?\.)+(?:[^\W\d_]{2,63}|xn--[a-z0-9\-]+)"
EMAIL_RE = rf"(?<![\w.!#$%*+^~\-@])({_LOCAL})@({_DOMAIN})(?![\w\-]|\.[^\W_])"
_AT = r"\s*(?:\[\s*(?:at|arroba)\s*\]|\(\s*(?:at|arroba)\s*\)|\{\s*(?:at|arroba)\s*\}|\s(?:arroba)\s|%40)\s*"  # %40: percent-encoded in a URL
_DOT = r"\s*(?:\.|\[\s*(?:dot|punto)\s*\]|\(\s*(?:dot|punto)\s*\)|\s(?:punto)\s)\s*"
EMAIL_OBFUSCATED_RE = rf"(?<![\w.+\-@])([\w.+\-]+){_AT}((?:[^\W_][\w\-]*{_DOT})+[^\W\d_]{{2,63}})(?![\w\-])"

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


EXTRA_SUFFIXES = ("test", "example", "invalid", "localhost")
_SNAPSHOT = ".tld_set_snapshot"
_PRIVATE_SEPARATOR = "// ===BEGIN PRIVATE DOMAINS==="
_SUFFIX_LINE = re.compile(r"^(?P<suffix>[.*!]*\w[\S]*)", re.UNICODE | re.MULTILINE)   # as tldextract reads it


@lru_cache(maxsize=1)
def offline_tld_extract():
    """tldextract on its bundled Public Suffix List snapshot: no download, no disk cache."""
    import tldextract

    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None, fallback_to_snapshot=True,
                                 extra_suffixes=EXTRA_SUFFIXES)


@lru_cache(maxsize=1)
def _top_labels() -> tuple[frozenset, frozenset] | None:
    """(labels that are a public suffix on their own, labels some rule ends in) of the public section of the
    snapshot `offline_tld_extract` reads, parsed as tldextract parses it; None when it cannot be read."""
    from importlib.util import find_spec
    from pathlib import Path

    try:
        spec = find_spec("tldextract")
        text = (Path(next(iter(spec.submodule_search_locations))) / _SNAPSHOT).read_text(encoding="utf-8")
    except (ImportError, AttributeError, TypeError, StopIteration, OSError, UnicodeDecodeError):
        return None
    rules = [m.group("suffix") for m in _SUFFIX_LINE.finditer(text.partition(_PRIVATE_SEPARATOR)[0])]
    rules += EXTRA_SUFFIXES
    if not rules or any(r.split(".")[-1] in ("*", "") or r.split(".")[-1].startswith("!") for r in rules):
        return None                        # a wildcard or an exception at the top: no shortcut
    return frozenset(r for r in rules if "." not in r), frozenset(r.split(".")[-1] for r in rules)


def has_public_suffix(domain: str) -> bool:
    """`offline_tld_extract()("x@" + domain).suffix != ""`, without importing tldextract (and the HTTP stack it
    imports, about a third of a cold scan's imports) when the top label decides it: tldextract walks the rules
    from the last label, so a last label that is a rule on its own always gives a suffix, and one no rule ends
    in never does (an IP address has none either). Anything else — another character, a punycode or empty
    label, a label only longer rules end in — is asked of tldextract (tests/test_pii_email_suffix.py checks the
    shortcut against it on every top label of the list)."""
    top = _top_labels()
    if top is not None and domain.isascii() and all(c.isalnum() or c in ".-" for c in domain):
        labels = domain.lower().split(".")
        last = labels[-1]
        if len(labels) > 1 and all(labels) and not last.startswith("xn--"):
            alone, ending = top
            if last in alone:
                return True
            if last not in ending:
                return False
    return offline_tld_extract()("x@" + domain).suffix != ""


class OfflineEmailRecognizer(PatternRecognizer):
    ENTITY = "EMAIL_ADDRESS"
    PATTERNS = (Pattern("Email", EMAIL_RE, 0.5), Pattern("Email (obfuscated)", EMAIL_OBFUSCATED_RE, 0.4))
    CONTEXT = ("email", "correo", "e-mail", "correo electronico", "mail", "escribe", "escribenos")
    FLAGS = re.DOTALL | re.MULTILINE | re.IGNORECASE       # Presidio's default, as its EmailRecognizer runs

    def validate_result(self, pattern_text: str):
        parts = split_email(pattern_text)
        if parts is None:
            return False
        return has_public_suffix(parts[1])
