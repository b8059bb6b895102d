"""Broken and hostile files: each is one error line (or loads, when it can be read), the scan goes on, and the
exit code is the contract's (1: something could not be read). Budgets keep any one file from stalling it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import REALDATA
from hostile import HUGE_MB, bomb_pdf, make_hostile
from scanner.budget import Budget
from scanner.loaders import load_bytes, load_path
from scanner.scan import Scanner
from scanner.units import LoadError
from scanner.pipeline.run import scan_paths

HEAVIEST_REAL_PDF = "mx_ssa__Tabla_casos_sospechosos_COVID-19_2020.03.25.pdf"
GOOD = "<html><body><p>Contacto: juan.perez.lopez@gmail.com</p></body></html>"


def run_scan(*args, timeout=300, cwd=None):
    return subprocess.run([sys.executable, "-m", "scanner", "scan", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, cwd=cwd)


@pytest.fixture(scope="module")
def hostile_tree(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    expected = make_hostile(folder)
    (folder / "good.html").write_text(GOOD)
    expected["good.html"] = None
    return folder, expected


def test_every_hostile_file_is_one_error_line_and_the_scan_goes_on(hostile_tree):
    """Both scans in this process (tests/inprocess.py; the files still go to forked workers with the default
    budgets): the acceptance test below scans these files with the real files in a `python -m scanner scan`."""
    from inprocess import run_cli

    folder, expected = hostile_tree
    proc = run_cli("scan", folder, "--format", "json", "--kinds", "injection,secret,pii")
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    data = json.loads(proc.stdout)
    errors = {e["path"]: e["code"] for e in data["errors"]}
    assert errors == {name: code for name, code in expected.items() if code is not None}
    assert all("\n" not in e["message"] and e["message"] for e in data["errors"])
    assert data["files_scanned"] == len(expected)
    assert {d["path"] for d in data["documents"]} == set(expected)
    # The good file beside them is scanned as usual.
    assert [f["entity"] for f in data["findings"] if f["path"] == "good.html"] == ["EMAIL_PERSONAL"]
    # Problems that do not stop a file are said, per file.
    problems = {d["path"]: d.get("problems", []) for d in data["documents"]}
    assert any("nested deeper than 512" in p for p in problems["deep.html"])
    assert any("windows-1252" in p for p in problems["invalid-utf8.html"])
    assert any("U+FFFD" in p for p in problems["invalid-utf8.json"])
    # Each file finished within its budgets: none is a timeout or a memory error.
    assert not {code for code in errors.values()} & {"timeout", "memory", "crashed"}
    # The text output: one line per bad file.
    text = run_cli("scan", folder, "--kinds", "injection,secret").stdout.splitlines()
    for name, code in expected.items():
        if code is not None:
            assert sum(1 for line in text if line.startswith(f"{name}: error: {code}: ")) == 1, name


def test_a_file_that_disappears_during_the_scan(tmp_path):
    for name in ("a.html", "b.html", "c.html"):
        (tmp_path / name).write_text(GOOD)

    def delete_b_after_a(targets):
        for target in targets:
            if target.display == "a.html":
                (tmp_path / "b.html").unlink()
            yield target

    for budget in (None, Budget()):          # in this process, and in a worker
        if not (tmp_path / "b.html").exists():
            (tmp_path / "b.html").write_text(GOOD)
        result = scan_paths(Scanner(("secret",)), [tmp_path], progress=delete_b_after_a, budget=budget)
        assert [(e["path"], e["code"]) for e in result.errors] == [("b.html", "missing")]
        assert result.files_scanned == 3


DEEP_SHAPES = (
    (lambda n: b"<div>" * n + b"x" + b"</div>" * n, "deep.html"),
    (lambda n: b"<div>" * n + b"x" + b"</span>" * n, "deep-mismatched.html"),
    (lambda n: b"<li><ul>" * (n // 2) + b"x", "deep-lists.html"),
    (lambda n: b"[" * n + b"]" * n, "deep.json"),
    (lambda n: b'{"k":' * n + b"1" + b"}" * n, "deep-object.json"),
)


@pytest.mark.parametrize("make, name", DEEP_SHAPES, ids=[name for _, name in DEEP_SHAPES])
def test_deep_nesting_loads_and_scans_in_linear_work(make, name):
    """Nesting far past every recursion limit (Python's 1,000 frames, the 512-element tree cap) loads and scans,
    and the work is linear: the function calls made (a count, not a clock) for 4x the nesting are at most about
    4x (quadratic work would be 16x)."""
    from workcount import calls

    scanner = Scanner(("injection", "secret"))
    scanner.scan_document(load_bytes(b"<p>warm</p>", "warm.html"))      # rules compiled before counting

    def load_and_scan(data: bytes) -> None:
        scanner.scan_document(load_bytes(data, name))

    work = {}
    for n in (5_000, 20_000):
        _, work[n] = calls(load_and_scan, make(n))
    assert work[20_000] <= 4 * work[5_000] * 1.25, (name, work)


def test_deep_html_keeps_the_tree_at_512_levels():
    doc = load_bytes(b"<div>" * 1000 + b"<p>deep text</p>" + b"</div>" * 1000, "deep.html")
    text = next(u for u in doc.units if u.text == "deep text")
    depth = 0
    el = text.element
    while el is not None:
        depth += 1
        el = el.parent
    assert depth == 512          # the text sits in the deepest open div; the <p> beyond it is a leaf child of it
    p = next(e for e in doc.elements if e.tag == "p")
    assert p.parent is text.element and text.element.tag == "div"
    assert doc.problems == ["markup nested deeper than 512 elements: deeper elements are kept as children of the "
                            "deepest one (browsers cap the tree too)"]


def test_pdf_decompression_bomb_is_refused_at_once():
    from scanner.loaders.pdf import DecodeBudget, load_pdf

    data = bomb_pdf(4)
    assert len(data) < 20_000
    budget = DecodeBudget.for_file(len(data))
    with pytest.raises(LoadError) as err:
        load_pdf(data, "bomb.pdf", budget)
    assert err.value.code == "too_large"
    assert err.value.message.startswith("decompression bomb? a stream of ") and "(100× its size" in err.value.message
    assert budget.decoded <= 2 << 20          # the outer stage (about 4 MB) was never let past the 1 MB floor


def test_non_regular_and_oversized_files_are_never_opened(tmp_path):
    import os

    os.mkfifo(tmp_path / "fifo.json")
    with pytest.raises(LoadError) as err:
        load_path(tmp_path / "fifo.json")          # would block forever if it were opened
    assert err.value.code == "not_a_file"
    with open(tmp_path / "big.json", "wb") as fh:
        fh.truncate(HUGE_MB << 20)
    with pytest.raises(LoadError) as err:
        load_path(tmp_path / "big.json", max_bytes=Budget().max_file_bytes)
    assert err.value.code == "too_large"
    assert err.value.message == f"{HUGE_MB}.0 MB is over the 64 MB limit (--max-file-mb): not scanned"
    with pytest.raises(LoadError) as err:
        load_path(tmp_path)
    assert err.value.code == "not_a_file" and err.value.message == "is a directory"


def test_a_symlink_loop_given_by_name_is_a_per_file_error(tmp_path):
    (tmp_path / "a.html").symlink_to("b.html")
    (tmp_path / "b.html").symlink_to("a.html")
    proc = run_scan(tmp_path / "a.html", "--format", "json", "--kinds", "secret")
    assert proc.returncode == 1
    assert [e["code"] for e in json.loads(proc.stdout)["errors"]] == ["unreadable"]


# --- acceptance: every real file plus the hostile ones, within the budgets ------------------------------

@pytest.mark.slow
def test_realdata_and_hostile_files_scan_within_the_budgets(tmp_path):
    if not REALDATA.is_dir():
        pytest.skip("../shared/realdata is not present")
    expected = make_hostile(tmp_path / "hostile")
    limit = 120     # the default budget: a real PDF of 8 s of CPU can take 30 s of wall time on a loaded machine
    # Every real file, named relative to ../shared/realdata as a scan of the folder names them, but the 30-page
    # SSA table: it takes more CPU than all the others together (pdfminer's layout of a dense table), a timeout
    # is an accepted outcome for it here, and test_pdf_loader.py checks its first, middle and last pages.
    real_files = sorted(p.relative_to(REALDATA).as_posix() for p in REALDATA.rglob("*")
                        if p.is_file() and p.name != HEAVIEST_REAL_PDF)
    proc = run_scan(*real_files, tmp_path / "hostile", "--format", "json", "--jobs", "2",
                    "--max-file-seconds", limit, timeout=1800, cwd=REALDATA)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    data = json.loads(proc.stdout)
    errors = {e["path"]: e["code"] for e in data["errors"]}
    hostile = {name: code for name, code in expected.items() if code is not None}
    assert {p: c for p, c in errors.items() if p in expected} == hostile
    # Real files: only the scanned bulletin (no text layer) fails; nothing else.
    real = {p: c for p, c in errors.items() if p not in expected}
    assert real.get("pdf/ocrmypdf__linn.pdf") == "format_tables_ocr"
    assert set(real.values()) <= {"format_tables_ocr"}
    assert data["files_scanned"] == len(expected) + len(real_files)
    assert {d["path"] for d in data["documents"]} == set(expected) | set(real_files)
