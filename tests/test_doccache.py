"""The per-run document cache: same bytes and name load once, scans run once, results are unchanged."""

from __future__ import annotations

from scanner import doccache
from scanner.loaders import load_bytes
from scanner.redact import Redactor
from scanner.secrets.detect import SecretScanner

PAGE = b"<html><body><p>Escribe a juan.perez.lopez@gmail.com o llama al 33 1234 5678.</p></body></html>"


def test_outside_a_block_nothing_is_cached():
    assert doccache.current() is None
    assert load_bytes(PAGE, "a.html") is not load_bytes(PAGE, "a.html")


def test_same_bytes_same_document_changed_bytes_new_one():
    with doccache.active() as cache:
        a = load_bytes(PAGE, "a.html")
        assert load_bytes(PAGE, "a.html") is a
        assert load_bytes(PAGE, "b.html") is not a                 # another name: offsets are per file
        assert load_bytes(PAGE + b" ", "a.html") is not a          # rewritten: a new entry
        assert cache.hits["load"] == 1


def test_scans_run_once_and_hand_out_copies():
    red = Redactor()
    with doccache.active() as cache:
        doc = load_bytes(PAGE, "a.html")
        first = red.findings(doc)
        first[0].extra["suppressed"] = "by a test"
        second = Redactor().findings(doc)                          # another instance, same configuration
        assert cache.hits["scan"] >= 1
        assert [f.to_json() for f in second] == [f.to_json() for f in Redactor().findings(load_bytes(PAGE, "a.html"))]
        assert "suppressed" not in second[0].extra
    plain = Redactor().findings(load_bytes(PAGE, "a.html"))
    assert [f.to_json() for f in plain] == [f.to_json() for f in second]


def test_other_rule_dirs_are_another_scanner(tmp_path):
    assert SecretScanner().cache_token() != SecretScanner(extra_rule_dirs=(tmp_path,)).cache_token()
