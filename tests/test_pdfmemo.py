"""The run's memo of loaded PDFs (scanner/loaders/pdfmemo.py): the same bytes laid out once, every caller
handed its own copy under its own name, errors kept with their code, bounded, and off outside a run."""

from __future__ import annotations

import contextlib
import dataclasses
import shutil
import pytest

import scanner.loaders.pdf as pdf_loader
from conftest import EXAMPLE_TREE
from scanner.budget import Budget
from scanner.loaders import pdfmemo
from scanner.loaders.pdf import DecodeBudget, load_pdf
from scanner.pipeline.run import scan_paths
from scanner.scan import Scanner
from scanner.units import LoadError

REPORT = EXAMPLE_TREE / "_shared" / "pdf" / "lsm-informe-anual-2025.pdf"


@pytest.fixture
def layouts(monkeypatch):
    """How many times pdfminer's layout ran (`_load`), and on which names."""
    names: list[str] = []
    original = pdf_loader._load

    def counted(data, path):
        names.append(path)
        return original(data, path)
    monkeypatch.setattr(pdf_loader, "_load", counted)
    return names


def _plain(value):
    """A value as plain data, to compare by content (dataclasses by their fields, slotted classes by slots)."""
    if dataclasses.is_dataclass(value):
        return (type(value).__name__, tuple(_plain(getattr(value, f.name)) for f in dataclasses.fields(value)))
    if hasattr(value, "__slots__"):
        return (type(value).__name__, tuple(_plain(getattr(value, name)) for name in value.__slots__))
    if isinstance(value, dict):
        return tuple(sorted((k, _plain(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_plain(v) for v in value)
    return value


def _state(doc):
    """Everything a document holds but its name."""
    return _plain((doc.kind, doc.text, doc.units, doc.pages, doc.problems, doc.meta))


def test_same_bytes_under_two_names_are_laid_out_once(layouts):
    data = REPORT.read_bytes()
    alone = load_pdf(data, "alone.pdf")
    with pdfmemo.active() as memo:
        first = load_pdf(data, "a.pdf")
        second = load_pdf(data, "fetch.json#/response/body")
    assert layouts == ["alone.pdf", "a.pdf"]
    assert (memo.hits, memo.misses, len(memo)) == (1, 1, 1)
    assert (first.path, second.path) == ("a.pdf", "fetch.json#/response/body")
    assert _state(first) == _state(second) == _state(alone)
    assert len(second.pages) == 104


def test_each_hit_is_a_copy_the_caller_may_change(layouts):
    data = REPORT.read_bytes()
    with pdfmemo.active():
        first = load_pdf(data, "a.pdf")
        for unit in first.units:              # what a recording's loader does to the units of a body
            unit.container = "/response/body"
        first.problems.append("changed by a caller")
        second = load_pdf(data, "b.pdf")
        third = load_pdf(data, "c.pdf")
    assert {u.container for u in second.units} == {""}
    assert "changed by a caller" not in second.problems
    assert second.units[0] is not third.units[0] and second.pages is not third.pages


def test_errors_are_kept_with_their_code_and_raised_under_the_new_name(layouts):
    broken = b"%PDF-1.4\nnot really a pdf"
    with pdfmemo.active():
        with pytest.raises(LoadError) as one:
            load_pdf(broken, "one.pdf")
        with pytest.raises(LoadError) as two:
            load_pdf(broken, "two.pdf")
    assert layouts == ["one.pdf"]
    assert (two.value.path, two.value.message, two.value.code) == ("two.pdf", one.value.message, one.value.code)
    assert str(two.value).startswith("two.pdf: ")


def test_a_callers_own_budget_is_never_memoised(layouts):
    data = REPORT.read_bytes()
    with pdfmemo.active() as memo:
        load_pdf(data, "a.pdf", DecodeBudget.for_file(len(data)))
        load_pdf(data, "b.pdf", DecodeBudget.for_file(len(data)))
    assert layouts == ["a.pdf", "b.pdf"] and len(memo) == 0


def test_off_outside_a_run(layouts):
    data = REPORT.read_bytes()
    load_pdf(data, "a.pdf")
    load_pdf(data, "b.pdf")
    assert layouts == ["a.pdf", "b.pdf"] and pdfmemo.current() is None


def test_bounded_by_entry_and_in_total(layouts):
    report, small = REPORT.read_bytes(), (EXAMPLE_TREE / "_shared" / "pdf" / "inj-hidden-layer.pdf").read_bytes()
    with pdfmemo.active(pdfmemo.PdfMemo(max_entry=1 << 30, max_total=1)) as memo:   # keeps nothing for long
        load_pdf(small, "s1.pdf")
        load_pdf(small, "s2.pdf")
        assert len(memo) == 0 and memo.size == 0
    layouts.clear()
    with pdfmemo.active(pdfmemo.PdfMemo(max_entry=20_000)) as memo:                 # the report is larger
        load_pdf(report, "r1.pdf")
        load_pdf(small, "s1.pdf")
        load_pdf(report, "r2.pdf")
        load_pdf(small, "s2.pdf")
    assert layouts == ["r1.pdf", "s1.pdf", "r2.pdf"] and len(memo) == 1
    with pdfmemo.active() as outer, pdfmemo.active() as inner:
        assert inner is outer


def test_a_scan_of_a_tree_lays_each_pdf_out_once_with_the_same_result(tmp_path, layouts, monkeypatch):
    """The example tree holds its four PDFs 13 times (the files and nine recorded fetches of three of them, the
    104-page report among them four times): the scan lays out each once, and finds what it finds with every
    load done afresh."""
    tree = tmp_path / "tree"
    shutil.copytree(EXAMPLE_TREE, tree)
    scanner = Scanner()
    in_process = Budget(max_file_seconds=0, max_memory_mb=0)
    memoised = scan_paths(scanner, [tree], budget=in_process).to_json()
    assert len(layouts) == len(list(tree.rglob("*.pdf"))) == 4
    monkeypatch.setattr(pdfmemo, "active", contextlib.contextmanager(lambda: (yield None)))
    afresh = scan_paths(scanner, [tree], budget=in_process).to_json()
    assert len(layouts) == 4 + 13
    assert memoised == afresh and memoised["findings"]
