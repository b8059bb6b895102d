"""The keywords of the built-in secret rules' prefilter, read off the rule files without building the scanner.

Output cleaning (scanner.scrub) gates every string with the secret scanner's prefilter — the keywords of the
value-pattern rules and the header names of the header-line rules — before it runs any detector. Most outputs
hold nothing to clean, and building a `SecretScanner` only for that gate (every rule validated, every regex
compiled) cost a cold `centinela scan` tens of milliseconds. This module reads the same words from the same
files (safe YAML, the keys `SecretScanner` reads), as `secrets.detect._keyword_gate` chooses them for every
channel but scripts; tests/test_secret_keywords.py checks they equal the scanner's own.

When a rule file cannot be read so (a malformed file, an unexpected type), `keywords()` returns None and the
caller builds the scanner, whose validation reports the file as it always did.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from scanner.units import Channel

BUILTIN_SECRET_RULES = Path(__file__).resolve().parent / "rules" / "secrets"
# Channels where text (not structure) is read for `Name: value` header lines (scanner.secrets.detect).
TEXT_CHANNELS = frozenset({
    Channel.VISIBLE_TEXT, Channel.TITLE, Channel.COMMENT, Channel.ATTRIBUTE, Channel.NOSCRIPT, Channel.TEMPLATE,
    Channel.SVG_TEXT, Channel.TEXTAREA, Channel.JSON_STRING, Channel.JSON_LD, Channel.PLAIN_TEXT,
    Channel.PDF_TEXT, Channel.PDF_METADATA,
})
# A rule's channels when it names none (scanner.secrets.rules.DEFAULT_CHANNELS): every one but these.
NOT_DEFAULT = frozenset({Channel.SCRIPT, Channel.STYLE, Channel.JSON_KEY, Channel.HTTP_HEADER_NAME})


def _channels(match: dict) -> frozenset:
    names = match.get("channels")
    channels = frozenset(c for c in Channel if c not in NOT_DEFAULT) if names is None else frozenset(
        Channel(n) for n in names)
    return channels | {Channel.SCRIPT} if match.get("scan_scripts") is True else channels


def _strings(value) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError("not a list of strings")
    return value


@lru_cache(maxsize=1)
def keywords() -> tuple[str, ...] | None:
    """The minimal keywords of the non-script prefilter (sorted; none of them contains another), or None."""
    from scanner.yamlsafe import read_yaml
    from scanner.rulepack import MAX_RULE_FILE_BYTES

    words: set[str] = set()
    try:
        for path in sorted(p for p in BUILTIN_SECRET_RULES.glob("*") if p.suffix in (".yaml", ".yml") and p.is_file()):
            match = read_yaml(path, max_bytes=MAX_RULE_FILE_BYTES)["match"]
            channels = _channels(match)
            if match.get("value_pattern") and any(ch is not Channel.SCRIPT for ch in channels):
                words.update(k.lower() for k in _strings(match.get("keywords", [])))
            if match.get("header_lines_in_text") and any(
                    ch is not Channel.SCRIPT for ch in channels if ch in TEXT_CHANNELS):
                words.update(max(n.lower().split("*"), key=len) for n in _strings(match.get("header_names", [])))
    except Exception:          # the scanner's own validation says what is wrong with the file
        return None
    return tuple(sorted(w for w in words if not any(o != w and o in w for o in words)))
