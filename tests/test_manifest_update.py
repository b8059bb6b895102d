"""`manifest update`: adds what is new with a date that is never invented; never re-blesses silently."""

from __future__ import annotations

import json

import pytest

from scanner.fixtures.update import update_manifest
from scanner.fixtures.verify import verify_tree
from treefactory import build_tree, envelope, read_manifest, sha, write_json
from inprocess import run_cli as in_process


@pytest.fixture
def tree(tmp_path):
    return build_tree(tmp_path / "tree")


def run_cli(*args):
    # In this process (tests/inprocess.py): these tests check what `manifest update` writes and says, not how a
    # fresh interpreter starts.
    return in_process(*args)


def test_adds_an_envelope_with_its_recorded_date_and_inferred_class(tree):
    env = envelope(429)
    env["response"]["headers"]["date"] = "Sat, 03 Oct 2026 09:00:00 GMT"
    write_json(tree / "alpha/errors/429-second.json", env)
    result = update_manifest(tree)
    assert [a["path"] for a in result.added] == ["alpha/errors/429-second.json"]
    entry = read_manifest(tree)["files"]["alpha/errors/429-second.json"]
    assert entry == {"case": None, "class": "429", "captured_at": "2026-10-03T09:00:00Z",
                     "sha256": sha(tree / "alpha/errors/429-second.json"),
                     "sha256_original": sha(tree / "alpha/errors/429-second.json"),
                     "synthetic": False, "truncated": False}
    assert verify_tree(tree).ok


def test_refuses_to_invent_a_capture_date(tree):
    (tree / "_shared/html/new.html").write_text("<p>x</p>")
    before = (tree / "manifest.json").read_bytes()
    result = update_manifest(tree)
    assert result.added == []
    assert result.skipped == [{"path": "_shared/html/new.html",
                               "reason": "no capture date recorded in the file: pass --captured-at"}]
    assert (tree / "manifest.json").read_bytes() == before
    result = update_manifest(tree, captured_at="2026-09-28T10:00:00Z", case="gs-002")
    assert result.added[0]["class"] == "html" and result.added[0]["case"] == "gs-002"
    assert verify_tree(tree).ok


def test_needs_a_class_when_the_place_does_not_say(tree):
    write_json(tree / "alpha/extract/gs-010.json", envelope())
    result = update_manifest(tree)
    assert result.skipped[0]["reason"].endswith("pass --class")
    result = update_manifest(tree, cls="results")
    assert result.added[0]["case"] == "gs-010"


def test_changed_file_is_reported_not_reblessed(tree):
    target = tree / "beta/search/gs-001.json"
    listed = read_manifest(tree)["files"]["beta/search/gs-001.json"]["sha256"]
    target.write_text(target.read_text().replace('"q"', '"changed"'))
    result = update_manifest(tree)
    assert result.changed == [{"path": "beta/search/gs-001.json", "listed": listed, "actual": sha(target)}]
    assert read_manifest(tree)["files"]["beta/search/gs-001.json"]["sha256"] == listed
    assert result.failed


def test_rehash_needs_the_file_named_and_says_what_changed(tree):
    target = tree / "beta/search/gs-001.json"
    listed = read_manifest(tree)["files"]["beta/search/gs-001.json"]["sha256"]
    target.write_text(target.read_text().replace('"q"', '"changed"'))
    proc = run_cli("manifest", "update", str(tree), "--rehash", "beta/search/gs-001.json")
    assert proc.returncode == 0, proc.stderr
    assert f"rehashed beta/search/gs-001.json: {listed} -> {sha(target)}" in proc.stdout
    entry = read_manifest(tree)["files"]["beta/search/gs-001.json"]
    assert entry["sha256"] == sha(target) and entry["sha256_original"] == listed
    assert verify_tree(tree).ok


def test_cli_changed_file_exit_1_and_tells_what_to_do(tree):
    target = tree / "beta/search/gs-001.json"
    target.write_text("{}\n")
    proc = run_cli("manifest", "update", str(tree))
    assert proc.returncode == 1
    assert "pass --rehash beta/search/gs-001.json to accept it" in proc.stdout


def test_cli_usage_errors_are_exit_2(tree):
    for args in (["--rehash", "not/listed.json"], ["--captured-at", "ayer"], ["--class", "bogus"]):
        proc = run_cli("manifest", "update", str(tree), *args)
        assert proc.returncode == 2, args
        assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_forget_a_deleted_file(tree):
    (tree / "alpha/errors/502.json").unlink()
    assert update_manifest(tree).missing == ["alpha/errors/502.json"]
    update_manifest(tree, forget=["alpha/errors/502.json"])
    assert "alpha/errors/502.json" not in read_manifest(tree)["files"]


def test_dry_run_writes_nothing(tree):
    write_json(tree / "alpha/errors/503.json", envelope(503))
    before = (tree / "manifest.json").read_bytes()
    result = update_manifest(tree, dry_run=True)
    assert result.added[0]["class"] == "5xx"
    assert (tree / "manifest.json").read_bytes() == before


def test_manifest_is_written_sorted_and_keeps_other_keys(tree):
    data = read_manifest(tree)
    data["generated_by"] = "hand"
    (tree / "manifest.json").write_text(json.dumps(data))
    write_json(tree / "alpha/search/gs-007.json", envelope())
    update_manifest(tree)
    text = (tree / "manifest.json").read_text()
    data = json.loads(text)
    assert data["generated_by"] == "hand"
    assert list(data["files"]) == sorted(data["files"])
    assert text.endswith("\n")
