"""Checks on candidate values: already redacted, placeholder, entropy, and the named validators rules refer to.

Everything here is a pure function of a string, so a rule's YAML can name a validator and the loader can
check the name exists; nothing a rule file says is ever executed.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections import Counter

# A value that a redaction (ours or a recorder's) already replaced: `REDACTED`, `Bearer REDACTED`,
# `tvly-REDACTED`, `***`, `<redacted>`, `[REDACTED]`, `xxx…`, `{{API_KEY}}`, empty.
_MARKER = (r"(?:redacted|filtered|removed|scrubbed|masked|hidden|\*{3,}|•{3,}|x{3,}(?:…|\.\.\.)?|"
           r"<[^<>]{0,40}>|\[[^\[\]]{0,40}\]|\{\{[^{}]{0,40}\}\}|\$\{[^{}]{0,40}\})")
_MARKED = (r"^\s*[\"']?(?:(?:bearer|basic|token|digest|apikey|api-key|bot|oauth)\s+)?"   # a scheme before it
           r"(?:[a-z]{2,10}[-_](?:[a-z]{2,10}[-_])?)?"                                 # a key prefix: tvly-, sk-ant-
           + _MARKER + r"[\"']?\s*$")
_REDACTED = re.compile(_MARKED + r"|^\s*$", re.I)
_REDACTED_PAIR_VALUE = re.compile(_MARKED, re.I)
# Cookie attributes that are not secrets (`Path=/; HttpOnly` after a redacted value).
_COOKIE_ATTRS = frozenset({"path", "domain", "expires", "max-age", "samesite", "secure", "httponly", "priority",
                           "partitioned", "version", "comment"})


def is_redacted(value: str) -> bool:
    """True for a value that holds no secret any more (a redaction marker, with or without a scheme)."""
    if _REDACTED.match(value):
        return True
    if "=" in value:
        # `session=REDACTED; Path=/` or `a=REDACTED&b=REDACTED`: every name=value pair's value is a marker.
        pairs = [p.strip() for p in re.split(r"[;&]", value) if p.strip()]
        values = []
        for p in pairs:
            name, eq, v = p.partition("=")
            if name.strip().lower() in _COOKIE_ATTRS or not eq:
                if name.strip().lower() in _COOKIE_ATTRS:
                    continue
                return False
            values.append(v)
        return bool(values) and all(_REDACTED_PAIR_VALUE.match(v) for v in values)
    return False


# Words that mark documentation placeholders, not live credentials (`sk-YOUR_KEY_HERE`, `tvly-xxxxxxxx`).
_PLACEHOLDER = re.compile(
    r"your[_\- ]?(?:api|key|token|secret|own)|(?:api|secret)[_-]?key[_-]?here|placeholder|example|dummy|"
    r"changeme|insert[_-]?|replace[_-]?me|x{6,}|0{12,}|1234567890|abcdef(?:gh|12)|\.\.\.|…|<|>", re.I)


_PLACEHOLDER_WORD = re.compile(r"(?:pass(?:word)?|passwd|pwd|secret|token|key|api[_-]?key|contrase(?:ñ|n)a|clave|"
                               r"usuario|user(?:name)?)\Z", re.I)


def is_placeholder(value: str) -> bool:
    if _PLACEHOLDER.search(value) or _PLACEHOLDER_WORD.match(value):
        return True
    core = re.sub(r"[^A-Za-z0-9]", "", value)
    return len(set(core.lower())) <= 2


def shannon_bits(value: str) -> float:
    """Shannon entropy in bits per character."""
    if not value:
        return 0.0
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


def token_like(value: str) -> bool:
    """A credential-shaped token: letters and digits mixed, no long run of one character, some entropy
    (3 bits per character, less for short values, whose entropy cannot reach it: `abc123` has 2.6)."""
    if not (re.search(r"[0-9]", value) and re.search(r"[A-Za-z]", value)):
        return False
    if re.search(r"(.)\1{5,}", value):
        return False
    return shannon_bits(value) >= min(3.0, math.log2(len(value)) - 0.5)


def random_token(value: str) -> bool:
    """Stronger than token_like: letters and digits interleave the way random strings do, so
    `politica-nacional-2026` (words, then a year) is not a token but `06346e144bff8bfc…` is."""
    if not token_like(value) or shannon_bits(value) < 3.3:
        return False
    core = re.sub(r"[^A-Za-z0-9]", "", value)
    classes = ["d" if c.isdigit() else "u" if c.isupper() else "l" for c in core]
    changes = sum(1 for a, b in zip(classes, classes[1:]) if a != b)
    return changes >= max(3, len(core) // 6)


def basic_auth(value: str) -> bool:
    """A Basic credential: base64 of printable `user:password`."""
    token = value.strip()
    try:
        raw = base64.b64decode(token + "=" * (-len(token) % 4), validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False
    user, sep, password = text.partition(":")
    return bool(sep and user and password and text.isprintable())


# Claims of a token that authenticates someone; a signed blob of page metadata (`{"articleId", "title",
# "url"}`, seen on a news site) has none of them and is not a credential.
_JWT_CLAIMS = frozenset({"sub", "exp", "iat", "nbf", "aud", "iss", "jti", "scope", "scp", "role", "roles",
                         "client_id", "azp", "uid", "user_id", "userId", "email", "sid", "session_id", "auth_time",
                         "org_id", "account_id", "tid", "oid", "permissions", "token_type"})


def _b64json(segment: str):
    try:
        raw = base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
        return json.loads(raw.decode("utf-8"))
    except (binascii.Error, ValueError, UnicodeDecodeError, RecursionError):
        return None


def jwt(value: str) -> bool:
    """A JSON Web Token that authenticates: its header decodes to JSON naming an algorithm or a type, and its
    payload to JSON carrying at least one identity or validity claim (sub, exp, iat, aud, scope, …)."""
    parts = value.split(".")
    if len(parts) < 3:
        return False
    head, payload = _b64json(parts[0]), _b64json(parts[1])
    if not (isinstance(head, dict) and ("alg" in head or "typ" in head)):
        return False
    return isinstance(payload, dict) and bool(_JWT_CLAIMS & payload.keys())


def not_a_word(value: str) -> bool:
    """Not an ordinary word or phrase (`Bearer Instruments`): a digit, or mixed case inside, or long."""
    return bool(re.search(r"[0-9]", value)) or len(value) >= 24 or bool(re.search(r"[a-z][A-Z]|[A-Z]{2}[a-z]", value))


# Named validators a rule's `match.validators` may list; all must hold for a match.
VALIDATORS = {
    "token_like": token_like,
    "random_token": random_token,
    "basic_auth": basic_auth,
    "jwt": jwt,
    "not_a_word": not_a_word,
}

# Shapes the entropy net never takes: URLs, dates, UUID-less ids are judged by context; these by form.
_URLISH = re.compile(r"^[a-z][a-z0-9+.-]*://|^www\.|^/[^/]", re.I)
_DATEISH = re.compile(r"^\d{4}-\d{2}-\d{2}|^\w{3}, \d{2} \w{3} \d{4}|^\d{10,13}$")


def looks_structural(value: str) -> bool:
    """A URL, a path, a date or a timestamp: never a credential for the entropy net."""
    return bool(_URLISH.search(value) or _DATEISH.search(value))
