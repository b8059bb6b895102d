"""`scan --jobs N` gives exactly what `--jobs 1` gives: the same findings, errors and documents, in the same
order, in every output format; and the same as a scan in one process without workers."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from conftest import EXAMPLE_TREE
from inprocess import run_cli
from scanner.budget import Budget
from scanner.pipeline.run import scan_paths
from scanner.pipeline.targets import collect_targets
from scanner.scan import Scanner


@pytest.fixture(scope="module")
def mixed_tree(tmp_path_factory):
    """The example tree (HTML, PDF, envelopes, injections, secrets, personal data) plus files that fail."""
    root = tmp_path_factory.mktemp("jobs") / "tree"
    shutil.copytree(EXAMPLE_TREE, root)
    (root / "broken.pdf").write_bytes(b"%PDF-1.4\nnot really")
    (root / "empty.json").write_bytes(b"")
    (root / "bad.json").write_text('{"a": ')
    return root


def scan(*args, in_process=False):
    if in_process:
        proc = run_cli("scan", *args, "--no-progress")
    else:
        proc = subprocess.run([sys.executable, "-m", "scanner", "scan", *map(str, args), "--no-progress"],
                              capture_output=True, text=True, timeout=600)
    assert "Traceback" not in proc.stderr
    return proc.returncode, proc.stdout


@pytest.mark.parametrize("fmt", ["json", "sarif", "text"])
def test_jobs_n_output_is_identical_to_jobs_1(mixed_tree, fmt):
    # --jobs 1 in a fresh interpreter, --jobs 3 in this one (tests/inprocess.py: no second start-up): two
    # processes with different hash seeds, so the output depends on neither the job count nor the process.
    one = scan(mixed_tree, "--format", fmt, "--jobs", "1")
    three = scan(mixed_tree, "--format", fmt, "--jobs", "3", in_process=True)
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
