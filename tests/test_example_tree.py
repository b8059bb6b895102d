"""The bundled example tree: everything in it is synthetic, and it says so."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

from conftest import EXAMPLE_TREE, REPO, shared_pdf_memo
from scanner.fixtures.models import REAL_CAPTURE_CLASSES
from scanner.fixtures.tree import infer_class
from scanner.fixtures.verify import verify_tree
from scanner.loaders import iter_files, load_path, pdfmemo
from scanner.units import LoadError


def test_example_tree_reports_only_synthetic_capture_classes():
    report = verify_tree(EXAMPLE_TREE)
    manifest = json.loads((EXAMPLE_TREE / "manifest.json").read_text(encoding="utf-8"))["files"]
    expected = sorted(p for p, e in manifest.items() if e["class"] in REAL_CAPTURE_CLASSES)
    assert {p.code for p in report.problems} == {"synthetic_not_allowed"}
    assert sorted(p.path for p in report.problems) == expected
    assert all(e["synthetic"] is True for e in manifest.values())
    assert report.providers == ["exa", "firecrawl", "tavily"]


def test_example_tree_is_otherwise_complete(tmp_path):
    """Were its captures real, the tree would verify clean: flip the flag on a copy and see."""
    copy = tmp_path / "web-search"
    shutil.copytree(EXAMPLE_TREE, copy)
    data = json.loads((copy / "manifest.json").read_text(encoding="utf-8"))
    for entry in data["files"].values():
        if entry["class"] in REAL_CAPTURE_CLASSES:
            entry["synthetic"] = False
    (copy / "manifest.json").write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert verify_tree(copy).problems == []


def test_every_example_file_loads():
    for path in iter_files([EXAMPLE_TREE]):
        try:
            with pdfmemo.active(shared_pdf_memo()):       # the same PDF bytes laid out once (conftest)
                doc = load_path(path)
        except LoadError as exc:  # the scanned bulletin has no text layer: reported, not empty
            assert exc.code == "format_tables_ocr", (path, exc)
            continue
        assert doc.units or path.name == "503-empty.json", path


def test_manifest_update_infers_the_classes_the_tree_uses():
    manifest = json.loads((EXAMPLE_TREE / "manifest.json").read_text(encoding="utf-8"))["files"]
    wrong = {}
    for rel, entry in manifest.items():
        guessed = infer_class(EXAMPLE_TREE, rel)
        if guessed is not None and guessed != entry["class"]:
            wrong[rel] = (guessed, entry["class"])
    assert wrong == {}


def test_example_tree_regenerates_byte_identical(tmp_path):
    """`fixtures/build_example.py` writes exactly the committed tree: a hand edit, or a change of the script not
    rerun, shows up here."""
    out = tmp_path / "web-search"
    proc = subprocess.run([sys.executable, str(REPO / "fixtures" / "build_example.py"), "--root", str(out)],
                          capture_output=True, text=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr
    ours = sorted(p.relative_to(EXAMPLE_TREE) for p in EXAMPLE_TREE.rglob("*") if p.is_file())
    assert sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file()) == ours
    for rel in ours:
        assert (out / rel).read_bytes() == (EXAMPLE_TREE / rel).read_bytes(), f"{rel} differs: rerun fixtures/build_example.py"
