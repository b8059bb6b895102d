"""`scan --jobs N` gives exactly what `--jobs 1` gives: the same findings, errors and documents, in the same
order, in every output format; and the same as a scan in one process without workers."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLE_TREE
from inprocess import run_cli
from scanner.budget import Budget
from scanner.pipeline.run import scan_paths
from scanner.pipeline.targets import collect_targets
from scanner.scan import Scanner


OTHER_PROVIDERS = ("tavily", "firecrawl")


@pytest.fixture(scope="module")
def mixed_tree(tmp_path_factory):
    """The example tree with one provider's captures (HTML, PDF, envelopes, injections, personal data) plus files
    that fail.

    Reduced: the example tree's other two providers (tavily, firecrawl) hold the same kinds of captures (the same
    rules and entities fire in exa's 37 files and the shared pages as in all 133; the shared PDFs are still in
    the tree and in exa's recorded fetches of them) and took two thirds of each scan's CPU; 61 files still spread
    over three workers, so every claim here is still proven.
    The whole tree scanned through the CLI, twice in two processes with the same results, is
    tests/test_sarif.py::test_sarif_of_the_example_tree_scan_validates_and_is_stable."""
    root = tmp_path_factory.mktemp("jobs") / "tree"
    shutil.copytree(EXAMPLE_TREE, root, ignore=lambda folder, names: (
        OTHER_PROVIDERS if Path(folder) == EXAMPLE_TREE else ()))
    (root / "broken.pdf").write_bytes(b"%PDF-1.4\nnot really")
    (root / "empty.json").write_bytes(b"")
    (root / "bad.json").write_text('{"a": ')
    return root


def scan(*args):
    """`scan` in this process (tests/inprocess.py)."""
    proc = run_cli("scan", *args, "--no-progress")
    assert "Traceback" not in proc.stderr
    return proc.returncode, proc.stdout


FORMATS = ["json", "sarif", "text"]

# `scan --jobs 1` in every format, in one fresh interpreter: the CLI run as tests/inprocess.py runs it (each run
# with its own output streams; the first pays the start-up and spaCy's model, the others reuse them).
_FRESH = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from inprocess import run_cli
runs = [run_cli("scan", sys.argv[2], "--format", fmt, "--jobs", "1", "--no-progress") for fmt in sys.argv[3:]]
json.dump([[p.returncode, p.stdout, p.stderr] for p in runs], sys.stdout)
"""


@pytest.fixture(scope="module")
def jobs_one(request, mixed_tree):
    """{format: (exit code, output)} of `scan --jobs 1` for the formats this session's tests compare, all in one
    `python -c` (a process apart: its own hash seed), instead of one `python -m scanner scan` per format."""
    formats = [f for f in FORMATS if any(getattr(item, "callspec", None) and item.callspec.params.get("fmt") == f
                                         and item.getparent(pytest.Module) is request.node
                                         for item in request.session.items)]
    proc = subprocess.run([sys.executable, "-c", _FRESH, str(Path(__file__).parent), str(mixed_tree), *formats],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {fmt: (code, out, err) for fmt, (code, out, err) in zip(formats, json.loads(proc.stdout))}


@pytest.mark.parametrize("fmt", FORMATS)
def test_jobs_n_output_is_identical_to_jobs_1(mixed_tree, jobs_one, fmt):
    # --jobs 1 in a fresh interpreter (the `jobs_one` fixture), --jobs 3 in this one (tests/inprocess.py): two
    # processes with different hash seeds, so the output depends on neither the job count nor the process.
    code, out, err = jobs_one[fmt]
    assert "Traceback" not in err
    one = (code, out)
    three = scan(mixed_tree, "--format", fmt, "--jobs", "3")
    assert one[0] == 1
    assert one == three


def test_workers_and_one_process_agree(mixed_tree):
    scanner = Scanner()
    in_process = scan_paths(scanner, [mixed_tree], budget=Budget(max_file_seconds=0, max_memory_mb=0)).to_json()
    workers = scan_paths(scanner, [mixed_tree], jobs=2, budget=Budget()).to_json()
    assert in_process == workers
    assert in_process["findings"] and {e["path"] for e in in_process["errors"]} >= {"bad.json", "broken.pdf", "empty.json"}
    # The order is the files' order (a sorted walk), not the order in which workers finished.
    assert [d["path"] for d in workers["documents"]] == [t.display for t in collect_targets([mixed_tree])]
