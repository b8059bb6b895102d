"""Every real file loads into units or gives a clean per-file error — never another exception.
(PDFs are loaded, every one, in test_pdf_loader.py; this covers the rest.)"""

from __future__ import annotations

import pytest

from conftest import REALDATA
from scanner.loaders import load_path
from scanner.units import LoadError

FILES = sorted(p for p in REALDATA.rglob("*") if p.is_file() and p.suffix.lower() != ".pdf") if REALDATA.is_dir() else []


@pytest.mark.parametrize("path", FILES or [None], ids=lambda p: p.name if p else "absent")
def test_real_file_loads(path):
    if path is None:
        pytest.skip("../shared/realdata is not present")
    try:
        doc = load_path(path)
    except LoadError as exc:
        assert exc.code in {"unparsed", "encrypted", "format_tables_ocr", "unreadable"}
        assert exc.message and "\n" not in exc.message
        return
    assert doc.units, path.name
    for u in doc.units:
        if u.page is None:
            assert 0 <= u.start <= u.end <= len(doc.text)
