"""No escape from the fixture root (or, for the allowlist, the repository): a manifest entry, a redaction
journal entry, a file given to `redact`, or an allowlist entry whose path is absolute, climbs out with `..`,
or leads out through a symlink (to a file or through a folder) is a problem, never a read or a write."""

from __future__ import annotations

import json

import pytest

from scanner.fixtures.update import update_manifest
from scanner.fixtures.verify import verify_tree
from scanner.redact import JOURNAL, finish_journal
from scanner.suppress import SuppressionError, load_allowlist
from treefactory import build_tree, edit_manifest, read_manifest, sha, write_json
from inprocess import run_cli as in_process

SECRET = "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"


def run(*args):
    # In this process (tests/inprocess.py): what the commands refuse and write, not how a process starts.
    return in_process(*args)


@pytest.fixture
def escape(tmp_path):
    """A tree, and outside it a folder with a file holding a secret, reachable from the tree by symlinks."""
    tree = build_tree(tmp_path / "tree")
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "leak.json"
    write_json(target, {"api_key": SECRET})
    (tree / "alpha/search/link.json").symlink_to(target)              # a file leading out
    (tree / "alpha/linkdir").symlink_to(outside, target_is_directory=True)   # a folder leading out
    (tree / "alpha/loop.json").symlink_to(tree / "alpha/loop.json")   # a symlink loop
    return tree, target


ESCAPING = ["../outside/leak.json", "/etc/passwd", "alpha/../../outside/leak.json", "alpha/search/link.json",
            "alpha/linkdir/leak.json", "alpha/loop.json"]


def list_escaping(tree, target):
    edit_manifest(tree, lambda f: f.update({rel: {"class": "results", "captured_at": "2026-10-02T00:00:00Z",
                                                  "sha256": sha(target)} for rel in ESCAPING}))


def test_verify_reports_every_escaping_entry_and_reads_none(escape):
    tree, target = escape
    list_escaping(tree, target)
    report = verify_tree(tree)
    outside = sorted(p.path for p in report.problems if p.code == "path_outside_root")
    assert outside == sorted(ESCAPING)
    # The leaking file was never loaded: no `unredacted`, no hash problem for any of these paths.
    assert not [p for p in report.problems if p.path in ESCAPING and p.code != "path_outside_root"]


def test_manifest_update_reports_escaping_entries_and_refuses_to_rehash_them(escape):
    tree, target = escape
    list_escaping(tree, target)
    before = read_manifest(tree)["files"]
    result = update_manifest(tree, ["alpha/search"])
    assert sorted(o["path"] for o in result.outside) == sorted(ESCAPING)
    assert result.failed
    assert {rel: read_manifest(tree)["files"][rel] for rel in ESCAPING} == {rel: before[rel] for rel in ESCAPING}
    proc = run("manifest", "update", tree, "--rehash", "alpha/search/link.json")
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("centinela: error: alpha/search/link.json: resolves outside the fixture root "
                                   "(symlink): never read nor written")
    proc = run("manifest", "update", tree, "--dry-run")
    assert proc.returncode == 1
    assert "alpha/linkdir/leak.json: path_outside_root: resolves outside the fixture root (symlink): not read" \
        in proc.stdout.splitlines()


def test_redact_never_reads_or_writes_through_a_symlink_out_of_the_tree(escape):
    tree, target = escape
    before = target.read_bytes()
    proc = run("redact", tree / "alpha/search", "--write", "--kinds", "secret", "--format", "json")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    errors = json.loads(proc.stdout)["errors"]
    assert {"path": "alpha/search/link.json", "code": "path_outside_root",
            "message": "not read: resolves outside the fixture root (symlink)"} in errors
    assert target.read_bytes() == before and (tree / "alpha/search/link.json").is_symlink()
    proc = run("redact", tree / "alpha/search/link.json", "--check", "--kinds", "secret")
    assert proc.returncode == 1
    assert "alpha/search/link.json: error: path_outside_root: not read: resolves outside" in proc.stdout


def test_a_journal_entry_pointing_out_of_the_tree_is_ignored(escape):
    tree, target = escape
    (tree / JOURNAL).write_text(json.dumps({"../outside/leak.json": {
        "old": "0" * 64, "new": sha(target), "original": "1" * 64, "algorithm": "sha256", "truncated": False}}))
    assert finish_journal(tree) == []
    assert "../outside/leak.json" not in read_manifest(tree)["files"]


def test_allowlist_entries_cannot_point_out_of_the_repository(tmp_path):
    repo = tmp_path / "repo"
    (repo / "fixtures").mkdir(parents=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (repo / "fixtures/out").symlink_to(outside, target_is_directory=True)
    entry = ('  - {fingerprint: "%s", rule: SEC008, path: %s, reason: reviewed, reviewer: "@ana"}\n')
    text = "version: 1\nentries:\n" + entry % ("a" * 64, "fixtures/out/x.json") + entry % ("b" * 64, "fixtures/in.json")
    (repo / "allow.yaml").write_text(text)
    allowlist = load_allowlist(repo / "allow.yaml", repo)
    assert [e.path for e in allowlist.entries] == ["fixtures/in.json"]
    assert [(w.code, w.message) for w in allowlist.problems] == [(
        "allowlist-outside", "entry 1 (SEC008 fixtures/out/x.json): the path leads out of the repository (symlink): "
                             "ignored, it suppresses nothing")]
    for bad in ("../x.json", "/etc/passwd", "fixtures/../../x.json"):
        (repo / "bad.yaml").write_text("version: 1\nentries:\n" + entry % ("c" * 64, bad))
        with pytest.raises(SuppressionError):
            load_allowlist(repo / "bad.yaml", repo)
