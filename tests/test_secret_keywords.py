"""The keywords output cleaning gates with (scanner/secret_keywords.py, read off the rule files) are the secret
scanner's own prefilter keywords, derived from the built scanner, never copied."""

from __future__ import annotations

import re
import shutil

import yaml

from scanner import scrub, secret_keywords
from scanner.secrets import rules as R
from scanner.secrets.detect import SecretScanner


def _gate_words(gate) -> tuple[str, ...]:
    """The keywords of a `SecretScanner._gate` (an alternation of escaped words), unescaped and sorted."""
    return tuple(sorted(re.sub(r"\\(.)", r"\1", w) for w in gate.pattern.split("|")))


def test_keywords_equal_the_scanners_gate():
    words = secret_keywords.keywords()
    assert words and words == _gate_words(SecretScanner()._gate)


def test_same_rule_directory_and_default_channels():
    assert secret_keywords.BUILTIN_SECRET_RULES == R.BUILTIN_SECRET_RULES
    assert R.DEFAULT_CHANNELS == frozenset(c for c in R.Channel if c not in secret_keywords.NOT_DEFAULT)


def test_scrub_gate_is_the_scanners_gate():
    detectors = scrub._Detectors()
    gate = detectors.keyword_gate()
    assert gate.pattern == SecretScanner()._gate.pattern
    assert detectors._secrets is None           # the gate was built without the scanner


def _keywords_of(directory, monkeypatch):
    monkeypatch.setattr(secret_keywords, "BUILTIN_SECRET_RULES", directory)
    secret_keywords.keywords.cache_clear()
    try:
        return secret_keywords.keywords()
    finally:
        secret_keywords.keywords.cache_clear()


def test_channels_decide_as_the_scanner_does(tmp_path, monkeypatch):
    """A value-pattern rule read only in scripts, and a header-line rule on no text channel, add no keyword;
    a rule that names its channels or reads scripts too is read as the scanner reads it."""
    shutil.copytree(R.BUILTIN_SECRET_RULES, tmp_path / "rules")
    d = tmp_path / "rules"
    base = yaml.safe_load((d / "SEC011-tavily-api-key.yaml").read_text())

    def rule(rid: str, match: dict) -> None:
        (d / f"{rid}-test.yaml").write_text(yaml.safe_dump({**base, "id": rid, "name": rid.lower(), "match": match}))

    rule("SEC900", {"value_pattern": "zzscript[0-9]{8}", "keywords": ["zzscript"], "channels": ["script"]})
    rule("SEC901", {"header_names": ["x-zzurl-token"], "header_lines_in_text": ".+", "channels": ["http_url"]})
    rule("SEC902", {"value_pattern": "zzseen[0-9]{8}", "keywords": ["ZZSeen"], "channels": ["visible_text"],
                    "scan_scripts": True})
    words = _keywords_of(d, monkeypatch)
    scanner = SecretScanner(rule_dir=d)
    assert words == _gate_words(scanner._gate)
    assert "zzseen" in words and "zzscript" not in words and "x-zzurl-token" not in words


def test_unreadable_rule_file_leaves_it_to_the_scanner(tmp_path, monkeypatch):
    (tmp_path / "SEC999-broken.yaml").write_text("id: SEC999\nmatch: [not, a, mapping]\n")
    assert _keywords_of(tmp_path, monkeypatch) is None
