"""`manifest verify`: a clean tree verifies clean; a tree broken in exactly one way gets exactly that code."""

from __future__ import annotations

import json

import pytest

from scanner.fixtures.verify import verify_tree
from treefactory import build_tree, edit_manifest, golden_cases, set_golden, sha
from inprocess import run_cli as in_process


def codes(root):
    return sorted({p.code for p in verify_tree(root).problems})


@pytest.fixture
def tree(tmp_path):
    return build_tree(tmp_path / "tree")


def test_complete_clean_tree_verifies_clean(tree):
    report = verify_tree(tree)
    assert report.problems == []
    assert report.ok
    assert report.providers == ["alpha", "beta"]
    assert report.files_checked == 21


def test_edited_file_is_sha256_mismatch(tree):
    target = tree / "alpha/search/gs-001.json"
    target.write_text(target.read_text().replace('"q"', '"edited"'))
    report = verify_tree(tree)
    assert [(p.path, p.code) for p in report.problems] == [("alpha/search/gs-001.json", "sha256_mismatch")]


def test_missing_sha256(tree):
    edit_manifest(tree, lambda f: f["beta/errors/429.json"].pop("sha256"))
    assert [(p.path, p.code) for p in verify_tree(tree).problems] == [("beta/errors/429.json", "missing_sha256")]


@pytest.mark.parametrize("value", [None, "", "DELETE"])
def test_missing_captured_at(tree, value):
    def change(files):
        if value == "DELETE":
            files["_shared/html/acme.html"].pop("captured_at")
        else:
            files["_shared/html/acme.html"]["captured_at"] = value
    edit_manifest(tree, change)
    assert [(p.path, p.code) for p in verify_tree(tree).problems] == [("_shared/html/acme.html", "missing_captured_at")]


def test_unparseable_captured_at_is_missing(tree):
    edit_manifest(tree, lambda f: f["_shared/html/acme.html"].update(captured_at="last tuesday"))
    assert codes(tree) == ["missing_captured_at"]


@pytest.mark.parametrize("rel", ["alpha/search/gs-001.json", "_shared/html/acme.html", "_shared/pdf/informe.pdf",
                                 "beta/search/gs-006.json"])
def test_synthetic_capture_class_not_allowed(tree, rel):
    edit_manifest(tree, lambda f: f[rel].update(synthetic=True))
    assert [(p.path, p.code) for p in verify_tree(tree).problems] == [(rel, "synthetic_not_allowed")]


def test_synthetic_error_classes_are_allowed(tree):
    def change(files):
        for entry in files.values():
            if entry["class"] in ("429", "5xx", "timeout", "partial", "prompt-injection"):
                entry["synthetic"] = True
    edit_manifest(tree, change)
    assert codes(tree) == []


def test_provider_missing_a_class(tree):
    (tree / "beta/errors/timeout.json").unlink()
    edit_manifest(tree, lambda f: f.pop("beta/errors/timeout.json"))
    report = verify_tree(tree)
    assert [(p.path, p.code) for p in report.problems] == [("beta", "missing_class")]
    assert "timeout" in report.problems[0].message


def test_untruncated_body_over_512_kb(tree):
    big = tree / "_shared/html/big.html"
    big.write_bytes(b"<p>" + b"x" * (600 * 1024) + b"</p>")
    edit_manifest(tree, lambda f: f.__setitem__("_shared/html/big.html", {
        "case": None, "class": "html", "captured_at": "2026-10-02T14:11:09Z", "sha256": sha(big),
        "sha256_original": sha(big), "synthetic": False, "truncated": False}))
    assert [(p.path, p.code) for p in verify_tree(tree).problems] == [("_shared/html/big.html", "untruncated_large_body")]
    edit_manifest(tree, lambda f: f["_shared/html/big.html"].update(truncated=True))
    assert codes(tree) == []


def test_exactly_512_kib_is_not_over(tree):
    body = tree / "_shared/html/edge.html"
    body.write_bytes(b"a" * (512 * 1024))
    edit_manifest(tree, lambda f: f.__setitem__("_shared/html/edge.html", {
        "class": "html", "captured_at": "2026-10-02T14:11:09Z", "sha256": sha(body)}))
    assert codes(tree) == []


@pytest.mark.parametrize("kwargs, fragment", [
    ({"n": 32, "forbidden": 8}, "8 cases with web_role: forbidden"),
    ({"n": 32, "forbidden": 11}, "11 cases with web_role: forbidden"),
    ({"n": 29, "forbidden": 10}, "29 cases"),
    ({"n": 32, "categories": 8, "forbidden": 10}, "8 categories"),
])
def test_golden_coverage(tree, kwargs, fragment):
    set_golden(tree, golden_cases(**kwargs))
    report = verify_tree(tree)
    assert [p.code for p in report.problems] == ["golden_coverage"]
    assert fragment in report.problems[0].message


def test_golden_file_missing(tree):
    (tree / "golden/cases.yaml").unlink()
    assert codes(tree) == ["golden_coverage"]


def test_golden_files_are_not_unlisted(tree):
    assert "golden/cases.yaml" not in json.dumps([p.path for p in verify_tree(tree).problems])


def test_unlisted_file(tree):
    (tree / "alpha/search/gs-099.json").write_text("{}\n")
    assert [(p.path, p.code) for p in verify_tree(tree).problems] == [("alpha/search/gs-099.json", "unlisted_file")]


def test_missing_file(tree):
    (tree / "alpha/fetch/gs-002.json").unlink()
    assert [(p.path, p.code) for p in verify_tree(tree).problems] == [("alpha/fetch/gs-002.json", "missing_file")]


@pytest.mark.parametrize("rel", ["../outside.json", "/etc/passwd", "alpha/../../x.json"])
def test_manifest_path_outside_root_is_not_read(tree, rel):
    edit_manifest(tree, lambda f: f.__setitem__(rel, {"class": "results", "captured_at": "2026-10-02", "sha256": "0" * 64}))
    report = verify_tree(tree)
    assert [(p.path, p.code) for p in report.problems] == [(rel, "path_outside_root")]


def test_symlink_out_of_the_tree_is_not_read(tree, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("outside\n")
    (tree / "_shared/html/link.html").symlink_to(secret)
    edit_manifest(tree, lambda f: f.__setitem__("_shared/html/link.html", {
        "class": "html", "captured_at": "2026-10-02", "sha256": sha(secret)}))
    assert codes(tree) == ["path_outside_root"]


def test_invalid_manifest_json(tree):
    (tree / "manifest.json").write_text("{not json")
    assert "invalid_manifest" in codes(tree)


def test_unknown_class(tree):
    edit_manifest(tree, lambda f: f["alpha/errors/502.json"].update({"class": "5XX"}))
    assert "invalid_class" in codes(tree)


def run_cli(*args):
    # In this process (tests/inprocess.py): the output and exit codes are the command's, whatever the process.
    return in_process(*args)


def test_cli_json_output_is_the_contract_shape(tree):
    (tree / "alpha/fetch/gs-002.json").unlink()
    proc = run_cli("manifest", "verify", str(tree), "--format", "json")
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert data["ok"] is False
    assert data["problems"] == [{"path": "alpha/fetch/gs-002.json", "code": "missing_file",
                                 "message": "listed in manifest.json but not in the tree"}]


def test_cli_exit_codes(tree, tmp_path):
    ok = run_cli("manifest", "verify", str(tree))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.strip().endswith("providers: alpha, beta")
    missing = run_cli("manifest", "verify", str(tmp_path / "nope"))
    assert missing.returncode == 2
    assert missing.stderr.count("\n") == 1 and "no such directory" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_cli_output_file(tree, tmp_path):
    out = tmp_path / "verify.json"
    proc = run_cli("manifest", "verify", str(tree), "--format", "json", "--output", str(out))
    assert proc.returncode == 0
    assert json.loads(out.read_text())["ok"] is True
    assert proc.stdout == ""
