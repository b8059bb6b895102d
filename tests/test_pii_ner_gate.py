"""The NER gate (`scanner.pii.ner_windows.could_hold_name`) never skips the model where the model could add a name.

The model's answer is not needed to check it: an entity is a run of the model's own tokens, so every run of
tokens of a window (up to 16 tokens, more than a seven-word name with its punctuation), labelled PER and MISC,
is handed to the same code that maps entities to names (`ner_persons`); whenever one of them becomes a name,
the gate must have said the window could hold one. On the example tree, the rules' examples, the real pages
and generated contact texts. Two assumptions of the gate are checked on their own: spaCy's Spanish tokenizer
splits a run of letters only through exceptions that cannot start or end a name, and a scan with the gate
finds exactly what a scan that always runs the model finds.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import EXAMPLE_TREE, REALDATA, shared_pdf_memo
from scanner.loaders import iter_files, load_bytes, load_path, pdfmemo
from scanner.pii import PiiScanner, ner
from scanner.pii.names import PARTICLE, Names
from scanner.pii.ner_windows import could_hold_name, ner_persons, windows
from scanner.pii.registry import registry
from scanner.units import LoadError

SCANNER = PiiScanner()
MAX_TOKENS = 16


def _windows_of(doc):
    """(names, windows) the scanner builds for `doc`, everything that comes before NER done."""
    return SCANNER.name_windows(doc)


def _every_token_run(text: str):
    tokens = list(ner.load().tokenizer(text))
    for a in range(len(tokens)):
        for b in range(a, min(len(tokens), a + MAX_TOKENS)):
            s, e = tokens[a].idx, tokens[b].idx + len(tokens[b].text)
            yield s, e


def _check_windows(names, wins) -> int:
    """Every token run of every window, as a PER and a MISC entity: a name only where the gate says one may be."""
    checked = 0
    for w in wins:
        runs = [(s, e, label) for s, e in _every_token_run(w[2]) for label in ("PER", "MISC")]
        probe = Names(names.st)
        ner_persons(probe, [w], lambda texts: [runs])
        if probe.out:
            assert could_hold_name(names, [w]), (w[2][:200], [c.text for c in probe.out][:5])
        checked += 1
    return checked


def _docs(paths):
    for p in paths:
        try:
            with pdfmemo.active(shared_pdf_memo()):       # the same PDF bytes laid out once (conftest)
                doc = load_path(p, p.name)
            yield doc
        except LoadError:
            continue


def test_gate_on_the_example_tree_and_the_rules_examples():
    docs = list(_docs(p for p in iter_files([EXAMPLE_TREE]) if p.is_file() and p.suffix in (".json", ".html", ".pdf")))
    docs += [load_bytes(ex.to_bytes(), ex.file) for r in registry().rules
             for ex in r.examples.positive + r.examples.negative]
    checked = 0
    for d in docs:
        names, wins = _windows_of(d)
        if names is not None:
            checked += _check_windows(names, wins)
    assert checked > 100


def test_gate_on_real_pages():
    folder = REALDATA / "html"
    if not folder.is_dir():
        pytest.skip("../shared/realdata/html is not present")
    checked = 0
    for doc in _docs(sorted(folder.glob("*.html"))):
        names, wins = _windows_of(doc)
        if names is not None:
            checked += _check_windows(names, wins)
    assert checked > 100


HARD_CASES = [
    "Av. Lic. Roberto, ana.lopez@gmail.com",                  # the title makes one word a name; the street
    "Calle Dr. Juan — cel. 55 1234 5678",                     # before it kills the two-word span
    "Escrito por Juan Pérez, juan.perez@gmail.com",           # a two-word byline before the name
    "Av. Lic. Escrito por Juan, juan@gmail.com",              # … that keeps the title of the words before it
    "Autora: Rosa Elena Vargas (rvargas@gmail.com)",
    "(Ing.) Roberto — rsalinas@gmail.com",
    "Contacto: MARÍA FERNANDA GÓMEZ, redacted@example.test",
    "de la Garza y Treviño, +52-000-000-0000",
    "Ñúñez-García, José-María; 33 3618 2040",
]


@pytest.mark.parametrize("text", HARD_CASES)
def test_gate_on_hard_cases(text):
    names, wins = _windows_of(load_bytes(text.encode(), "x.txt"))
    assert wins
    _check_windows(names, wins)


WORDS = ["Juan", "Pérez", "López", "María", "de", "la", "del", "y", "Lic.", "Ing.", "Dra.", "C.P.", "Celaya",
         "Guanajuato", "Contacto", "Ventas", "Tel.", "cel.", "Por", "Escrito", "por", "Autora:", "S.A.", "de", "C.V.",
         "Redacción", "El", "Financiero", "Av.", "Insurgentes", "Sur", "N°", "157", "oficina", "Oficinas", "(", ")",
         ",", ";", "—", "-", "ana.lopez@gmail.com", "ventas@acme.mx", "55 1234 5678", "+52 461 618 0200",
         "redacted@example.test", "+52-000-000-0000", "https://acme.mx", "O'Brien", "McDonald", "Ñúñez-García",
         "pal", "Pal", "ÁLVAREZ", "José-María", "von", "Van", "\n", "MX", "Núm.", "1234"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(WORDS), min_size=3, max_size=40), st.sampled_from(["txt", "html"]))
def test_gate_on_generated_contact_text(words, kind):
    text = " ".join(words)
    data = (f"<html><body><p>{text}</p><p>Lic. {text[:40]}</p></body></html>" if kind == "html" else text).encode()
    names, wins = _windows_of(load_bytes(data, f"x.{kind}"))
    if names is not None:
        _check_windows(names, wins)


def test_spanish_tokenizer_splits_letters_only_where_no_name_can_start_or_end():
    """An exception splitting a run of letters ("pal" → "pa", "l") must leave lower-case, non-particle pieces."""
    splits = []
    for key, pieces in ner.load().tokenizer.rules.items():
        orths = [t[65] for t in pieces]                     # 65: spaCy's ORTH attribute id
        for a, b in zip(orths, orths[1:]):
            if a and b and a[-1].isalpha() and b[0].isalpha():
                splits.append((key, a, b))
    for key, a, b in splits:
        for piece in (a, b):
            assert not piece[:1].isupper() and not re.fullmatch(PARTICLE, piece), (key, piece)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="aAbBéÉñÑzZ .,;:()-'\"/@0123456789\n", min_size=1, max_size=60))
def test_tokenizer_boundaries_inside_letters_only_from_exceptions(text):
    nlp = ner.load()
    for token in nlp.tokenizer(text):
        i = token.idx
        if 0 < i < len(text) and text[i - 1].isalpha() and text[i].isalpha():
            chunk = re.search(r"\S*$", text[:i]).group(0) + re.match(r"\S*", text[i:]).group(0)
            assert any(k in chunk for k in nlp.tokenizer.rules), (text, i)


def test_the_gate_changes_no_finding():
    """Scanning with the gate gives exactly what always running the model gives (the example tree, the rules'
    examples and, when present, the real pages)."""
    import scanner.pii.scanner as S

    paths = [p for p in iter_files([EXAMPLE_TREE]) if p.is_file() and p.suffix in (".json", ".html", ".pdf")]
    if (REALDATA / "html").is_dir():
        paths += sorted((REALDATA / "html").glob("*.html"))
    docs = list(_docs(paths)) + [load_bytes(ex.to_bytes(), ex.file) for r in registry().rules
                                  for ex in r.examples.positive + r.examples.negative]
    gated = [[f.to_json() for f in PiiScanner().scan(d)] for d in docs]
    real = S.could_hold_name
    S.could_hold_name = lambda names, wins: True
    try:
        always = [[f.to_json() for f in PiiScanner().scan(d)] for d in docs]
    finally:
        S.could_hold_name = real
    assert gated == always
    skipped = PiiScanner()
    for d in docs:
        skipped.scan(d)
    assert skipped.stats["ner_skipped_documents"] > 10          # the gate does skip the model somewhere


def test_a_scan_that_needs_no_name_imports_no_spacy():
    import subprocess
    import sys

    code = ("import sys\nfrom scanner.loaders import load_bytes\nfrom scanner.scan import Scanner\n"
            "doc = load_bytes('<p>Conmutador: +52 461 618 0200. Escríbenos: ventas@acme.com.mx</p>'.encode(), 'c.html')\n"
            "Scanner().scan_document(doc)\n"
            "print(sorted(m for m in ('spacy', 'presidio_analyzer', 'thinc') if m in sys.modules))\n"
            "doc = load_bytes('<p>Lic. Ana Torres Medina, ana.torres@gmail.com, cel. 33 3618 2040</p>'.encode(), 'p.html')\n"
            "Scanner().scan_document(doc)\n"
            "print(sorted(m for m in ('spacy', 'presidio_analyzer') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300).stdout.split("\n")
    assert out[0] == "[]"                                   # nothing of spaCy or Presidio for a company page
    assert out[1] == "['spacy']"                            # a personal contact block: spaCy, still no Presidio


def test_the_models_installed_check_agrees_with_importlib_metadata(monkeypatch):
    """`ner.installed()` finds the model's dist-info beside its package (no importlib.metadata); it says what
    importlib.metadata says, and asks it when there is no such folder."""
    from importlib import metadata
    from importlib import util as importlib_util

    from scanner.pii import ner

    try:
        metadata.distribution(ner.MODEL)
        expected = True
    except metadata.PackageNotFoundError:
        expected = False
    assert ner.installed() is expected
    monkeypatch.setattr(importlib_util, "find_spec", lambda name: None)
    assert ner.installed() is expected
