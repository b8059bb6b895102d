"""No data loss: `redact --write` and `manifest update` killed (SIGKILL) at any point leave every file whole
(before or after), a manifest that parses and agrees with the files (directly, or through the redaction
journal that the next run finishes), and a second run completes the job.

Two ways to kill: at every write boundary in turn (before and after each rename, before each fsync, so a
temporary file may be half written: tests/killpoint.py), and at random delays over the whole run. The killed
runs are children forked from this process (killpoint.start), which has the scanner imported already: a kill
lands in the command's work, not in a fresh interpreter's imports.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import killpoint
from scanner.atomic import stale_temps
from scanner.fixtures.update import update_manifest
from scanner.fixtures.verify import verify_tree
from scanner.redact import JOURNAL, Redactor, finish_journal
from scanner.pipeline.run import plan_redactions
from treefactory import build_tree, edit_manifest, envelope, read_manifest, sha, write_json

SECRET = "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"
LEAKY = [f"alpha/search/gs-01{i}.json" for i in range(3)]
NEW = [f"beta/errors/429-{i}.json" for i in range(4)]


def _report(args) -> Path:
    """Where the child writes its count of boundaries: beside the tree it works on (the first Path argument)."""
    root = next(a for a in args if isinstance(a, Path))
    return root.parent / f"{root.name}.boundaries"


def killed_run(kill_at: int, *args) -> int:
    """The CLI run with args in a forked child killed at the kill_at-th write boundary: its exit code (-9)."""
    return killpoint.run(kill_at, list(args), _report(args))


def full_run(*args) -> int:
    """The CLI run with args to the end in a forked child: how many write boundaries it passed."""
    assert killpoint.run(0, list(args), _report(args)) == 0
    return int(_report(args).read_text())


def hashes(root: Path, rels) -> dict[str, str]:
    return {rel: sha(root / rel) for rel in rels}


# --- redact --write -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def leaky_tree(tmp_path_factory):
    root = build_tree(tmp_path_factory.mktemp("redact") / "pristine")
    for i, rel in enumerate(LEAKY):
        env = envelope(body={"results": [{"content": f"clave {SECRET[:-1]}{i}", "url": "https://x.test/"}]})
        env["request"]["headers"]["authorization"] = f"Bearer {SECRET[:-1]}{i}"
        write_json(root / rel, env)
    edit_manifest(root, lambda f: f.update({rel: {"case": f"gs-01{i}", "class": "results", "captured_at": "2026-10-02T14:11:09Z",
                                                  "sha256": sha(root / rel), "sha256_original": sha(root / rel),
                                                  "synthetic": False, "truncated": False}
                                            for i, rel in enumerate(LEAKY)}))
    done = root.parent / "reference"
    shutil.copytree(root, done, symlinks=True)
    boundaries = full_run("redact", done, "--write", "--kinds", "secret")
    return root, hashes(root, LEAKY), hashes(done, LEAKY), boundaries


def check_after_kill(root: Path, before: dict, after: dict) -> None:
    manifest = read_manifest(root)["files"]                       # parses: it is whole
    journal = json.loads((root / JOURNAL).read_text()) if (root / JOURNAL).exists() else {}
    for rel in LEAKY:
        current = sha(root / rel)
        assert current in (before[rel], after[rel]), f"{rel} is neither the old nor the new file"
        listed = manifest[rel]["sha256"]
        if listed != current:                                     # only while the journal says why
            assert journal.get(rel, {}).get("new") == current and journal[rel]["old"] == listed, rel


def second_run_completes(root: Path, before: dict, after: dict) -> None:
    finish_journal(root)                                           # what `redact --write` does first
    redactor = Redactor(("secret",))
    plan = plan_redactions([root], redactor)
    redactor.write(plan)
    manifest = read_manifest(root)["files"]
    for rel in LEAKY:
        assert sha(root / rel) == after[rel] == manifest[rel]["sha256"], rel
        assert manifest[rel]["sha256_original"] == before[rel], rel
    assert not (root / JOURNAL).exists() and stale_temps(root) == []
    report = verify_tree(root, content=False)
    assert not [p for p in report.problems if p.code in ("sha256_mismatch", "unlisted_file", "missing_file")]
    assert not report.warnings


def test_redact_killed_at_every_write_boundary(leaky_tree, tmp_path):
    pristine, before, after, boundaries = leaky_tree
    assert boundaries >= 4 * (len(LEAKY) + 2)        # journal, each file, manifest: fsync, rename (2), dir fsync
    for kill_at in range(1, boundaries + 1):
        root = tmp_path / f"k{kill_at}"
        shutil.copytree(pristine, root, symlinks=True)
        assert killed_run(kill_at, "redact", root, "--write", "--kinds", "secret") == -9, kill_at
        check_after_kill(root, before, after)
        second_run_completes(root, before, after)


def test_redact_killed_at_random_moments(leaky_tree, tmp_path):
    pristine, before, after, _ = leaky_tree
    rng = random.Random(8)
    started = time.monotonic()
    full_run("redact", shutil.copytree(pristine, tmp_path / "timing", symlinks=True), "--write", "--kinds", "secret")
    full = time.monotonic() - started
    for i in range(8):
        root = tmp_path / f"r{i}"
        shutil.copytree(pristine, root, symlinks=True)
        proc = killpoint.start(0, ["redact", root, "--write", "--kinds", "secret"], tmp_path / f"r{i}-boundaries")
        time.sleep(rng.uniform(0.3, 1.0) * full)
        proc.kill()
        proc.join()
        check_after_kill(root, before, after)
        second_run_completes(root, before, after)


# --- manifest update ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def growing_tree(tmp_path_factory):
    root = build_tree(tmp_path_factory.mktemp("update") / "pristine")
    for i, rel in enumerate(NEW):
        env = envelope(429)
        env["response"]["headers"]["date"] = f"Sat, 03 Oct 2026 09:0{i}:00 GMT"
        write_json(root / rel, env)
    old = (root / "manifest.json").read_text()
    done = root.parent / "reference"
    shutil.copytree(root, done, symlinks=True)
    boundaries = full_run("manifest", "update", done)
    return root, old, (done / "manifest.json").read_text(), boundaries


def test_manifest_update_killed_at_every_write_boundary_and_at_random(growing_tree, tmp_path):
    pristine, old, new, boundaries = growing_tree
    assert boundaries == 4
    rng = random.Random(3)
    kills = [("boundary", k) for k in range(1, boundaries + 1)] + [("random", rng.uniform(0.2, 1.2)) for _ in range(4)]
    for i, (how, when) in enumerate(kills):
        root = tmp_path / f"u{i}"
        shutil.copytree(pristine, root, symlinks=True)
        if how == "boundary":
            assert killed_run(when, "manifest", "update", root) == -9
        else:
            proc = subprocess.Popen([sys.executable, "-m", "scanner", "manifest", "update", str(root)],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(when)
            proc.kill()
            proc.wait()
        text = (root / "manifest.json").read_text()
        assert text in (old, new)                                  # whole: the old manifest or the new one
        for rel, entry in json.loads(text)["files"].items():
            if (root / rel).is_file():
                assert entry["sha256"] == sha(root / rel), rel
        result = update_manifest(root)                             # the second run completes the job
        assert (root / "manifest.json").read_text() == new
        assert not result.failed and stale_temps(root) == []
        assert verify_tree(root, content=False).ok
