"""The recognizers run Presidio's own algorithm without Presidio: on every rule example, the example tree and the
real pages, each gives exactly what Presidio's `PatternRecognizer.analyze` gives for the same recognizer handed to
it (`to_presidio()`) — the same results, scores and order."""

from __future__ import annotations

import functools

import pytest

from conftest import EXAMPLE_TREE, REALDATA, shared_pdf_memo
from scanner.loaders import iter_files, load_bytes, load_path, pdfmemo
from scanner.pii.recognizer import Result, remove_duplicates
from scanner.pii.registry import registry
from scanner.pii.scanner import _recognizers
from scanner.units import LoadError

RECOGNIZERS = _recognizers()


@functools.cache
def adapters() -> dict:
    """Presidio's recognizers, built (and Presidio imported) on first use, not while collecting."""
    return {rec.name: rec.to_presidio() for rec in RECOGNIZERS}


def _texts():
    for rule in registry().rules:
        for ex in rule.examples.positive + rule.examples.negative:
            yield "\n\n".join(u.text for u in load_bytes(ex.to_bytes(), ex.file).units)
    paths = [p for p in iter_files([EXAMPLE_TREE]) if p.is_file() and p.suffix in (".json", ".html")]
    if (REALDATA / "html").is_dir():
        paths += sorted((REALDATA / "html").glob("*.html"))[:12]
    for p in paths:
        try:
            with pdfmemo.active(shared_pdf_memo()):       # the same PDF bytes laid out once (conftest)
                doc = load_path(p, p.name)
        except LoadError:
            continue
        yield "\n\n".join(u.text for u in doc.units)


@functools.cache
def texts() -> list[str]:
    """Loaded on first use, once per worker: at import it made every pytest-xdist worker load the example tree
    (its PDFs too) while collecting, whether or not it ran these tests."""
    return list(_texts())


@pytest.mark.parametrize("rec", RECOGNIZERS, ids=lambda r: r.name)
def test_same_results_as_presidio(rec):
    presidio = adapters()[rec.name]
    found = 0
    for text in texts():
        ours = [(r.entity_type, r.start, r.end, r.score) for r in rec.analyze(text)]
        theirs = [(r.entity_type, r.start, r.end, r.score) for r in presidio.analyze(text, rec.supported_entities)]
        assert ours == theirs, (rec.name, text[:200])
        found += len(ours)
    assert found > 0, rec.name                   # every recognizer finds something in these texts


def test_duplicates_and_contained_results_as_presidio_drops_them():
    a, b, c = Result("X", 0, 10, 0.5), Result("X", 2, 5, 0.5), Result("X", 2, 5, 1.0)
    assert remove_duplicates([a, b, a]) == [a]                  # equal ones once, a contained weaker one goes
    assert remove_duplicates([a, c]) == [c, a]                  # a stronger contained one stays, first by score
    assert remove_duplicates([Result("X", 0, 3, 0)]) == []
