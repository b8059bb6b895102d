"""Cassettes, HAR files and nock recordings redacted in their own format, listed in the manifest and replayed
by `serve` — on files written here and on files made fresh from random data (`tests/recordingfactory.py`), so
the redactor is judged on recordings it has not seen."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from recordingfactory import all_three
from scanner.exchanges import parse_bytes
from scanner.fixtures.update import update_manifest
from scanner.fixtures.verify import verify_tree
from scanner.loaders import load_bytes, load_path
from scanner.redact import Redactor
from scanner.redact_edits import plan_edits
from scanner.scan import Scanner
from scanner.serve import ServerThread, build_server
from scanner.units import Document
from scanner.pipeline.run import scan_paths
from scanner.pipeline.run import plan_redactions

DATA = Path(__file__).parent / "data" / "recordings"
FORMATS = {"cassette.yaml": "vcr", "recording.har": "har", "nock.json": "nock"}


def make_tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "tree"
    (root / "tavily" / "search").mkdir(parents=True)
    for name, content in files.items():
        (root / "tavily" / "search" / name).write_text(content, encoding="utf-8")
    result = update_manifest(root)
    assert not result.skipped, result.skipped
    return root


def everything_a_reader_gets(path: Path) -> str:
    """The file's text, and every header, URL and body of its exchanges decoded (base64, hex, gzip): where a
    datum could hide after redaction."""
    parsed = parse_bytes(path.read_bytes(), path.name)
    out = [parsed.source.text]
    for ex in parsed.recording.exchanges:
        for msg in (ex.request, ex.response):
            if msg is None:
                continue
            out += [f"{h.name}: {h.value}" for h in msg.headers]
            out.append(str(getattr(msg, "url", "")))
            out.append((msg.body.content() or b"").decode("utf-8", "replace"))
    return "\n".join(out)


def same_layout(before: str, after: str, path: Path) -> None:
    """The redacted file is still the same kind of file, with the same structure: YAML keeps its scalar styles
    (but the one a datum forced to quote), JSON its keys."""
    if path.suffix == ".yaml":
        old, new = yaml.safe_load(before), yaml.safe_load(after)
        assert list(old) == list(new) and len(old["interactions"]) == len(new["interactions"])
        b, a = before.splitlines(), after.splitlines()
        assert len(a) <= len(b) + 2
    else:
        old, new = json.loads(before), json.loads(after)
        assert type(old) is type(new)
        keys = (lambda v: sorted(v["log"]["entries"][0])) if "log" in old else (lambda v: sorted(v[0]))
        assert keys(old) == keys(new)


def check_redacted(root: Path, secrets, before: dict[str, str]) -> None:
    for name in FORMATS:
        path = root / "tavily" / "search" / name
        after = path.read_text(encoding="utf-8")
        assert after != before[name]
        seen = everything_a_reader_gets(path)
        for datum in secrets.all():
            assert datum not in seen, (name, datum)
        same_layout(before[name], after, path)
        assert "REDACTED" in after and "redacted@example.test" in seen
    # it re-loads, and a rescan finds nothing left to redact
    left = scan_paths(Scanner(kinds=("secret", "pii")), [root / "tavily"])
    assert not result_errors(left) and not [f for f in left.active() if f.extra.get("replacement") is not None]


def result_errors(result):
    return [e for e in result.errors if e["code"] != "format_tables_ocr"]


def true_lengths(data: bytes, name: str) -> list[tuple[str, bool]]:
    """Each Content-Length / HAR size field of the file, and whether it states its body's length."""
    out = []
    for ex in parse_bytes(data, name).recording.exchanges:
        for msg in (ex.request, ex.response):
            if msg is None or msg.body.value is None or msg.body.json_at:
                continue
            sizes = (len(msg.body.stored_bytes() or b""), len(msg.body.content() or b""))
            out += [(lf.at, lf.value in sizes) for lf in msg.body.lengths]
    return out


def lengths_stay_true(before: str, path: Path) -> None:
    """A length that stated its body's length before the redaction states the new one after it."""
    old = true_lengths(before.encode("utf-8"), path.name)
    assert old and all(ok for _, ok in old), old
    assert true_lengths(path.read_bytes(), path.name) == old


def replay(root: Path, secrets) -> dict[str, bytes]:
    """Each recorded call answered by `serve` (the redacted recordings), by file."""
    from test_serve import fetch

    got = {}
    with ServerThread(build_server(root, "tavily", log_path=None)) as server:
        for name, fmt in FORMATS.items():
            status, headers, body = fetch(server.base_url, "POST", "/search",
                                          {"query": secrets.query_for(fmt), "max_results": 5})
            assert status == 200 and headers["x-centinela-fixture"] == f"tavily/search/{name}#0", (name, body[:200])
            assert b"redacted@example.test" in body
            got[name] = body
            if fmt != "har":
                status, headers, body = fetch(server.base_url, "POST", "/extract", {"urls": [secrets.page_for(fmt)]})
                assert status == 200 and headers["x-centinela-fixture"] == f"tavily/search/{name}#1"
                assert b"redacted@example.test" in body and json.loads(body)["results"][0]["url"] == secrets.page_for(fmt)
            for datum in secrets.all():
                assert datum.encode() not in body
    return got


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6])
def test_unseen_cassette_har_and_nock_files_are_redacted_in_their_own_format_and_replayed(tmp_path, loopback, seed):
    secrets, files = all_three(seed)
    root = make_tree(tmp_path, files)
    before = {name: (root / "tavily" / "search" / name).read_text(encoding="utf-8") for name in FORMATS}
    redactor = Redactor()
    plan = plan_redactions([root], redactor)
    assert {fp.path for fp in plan.files if fp.changes} == {f"tavily/search/{n}" for n in FORMATS}
    assert not [fp.unredactable for fp in plan.files if fp.unredactable]
    redactor.write(plan)
    assert sorted(plan.written) == sorted(f"tavily/search/{n}" for n in FORMATS)
    check_redacted(root, secrets, before)
    for name in FORMATS:
        lengths_stay_true(before[name], root / "tavily" / "search" / name)
    # the manifest follows: new digests, the original's kept; verify finds nothing unredacted
    report = verify_tree(root)
    assert not [p for p in report.problems if p.code in ("sha256_mismatch", "unredacted", "unlisted_file")]
    replay(root, secrets)


def test_written_recordings_redacted_and_replayed(tmp_path, loopback):
    files = {n: (DATA / "written" / n).read_text(encoding="utf-8") for n in FORMATS}
    secrets, generated = all_three(20261003)
    assert generated == files                       # the committed files are the factory's (PROVENANCE.md)
    root = make_tree(tmp_path, files)
    redactor = Redactor()
    plan = plan_redactions([root], redactor)
    plan_json = json.dumps(plan.to_json())
    for datum in secrets.all():
        assert datum not in plan_json               # the plan never shows a datum
    body_reds = [r for f in plan.to_json()["files"] for r in f["redactions"] if "body" in r]
    assert {r["body"]["encoding"] for r in body_reds} == {"yaml-binary+gzip", "base64", "hex-chunks+gzip"}
    redactor.write(plan)
    check_redacted(root, secrets, files)
    replay(root, secrets)


def test_vcr_yaml_styles_are_kept_and_only_the_datum_changes(tmp_path):
    from scanner.exchanges import parse_text

    def scalars(text):
        source = parse_text(text, "c.yaml").source
        source.strings()
        return {p: (sc.style, sc.tag, sc.value) for p, sc in source.scalars.items()}

    cassette = (DATA / "written" / "cassette.yaml").read_text()
    root = make_tree(tmp_path, {"cassette.yaml": cassette})
    Redactor().write(plan_redactions([root], Redactor()))
    after = (root / "tavily" / "search" / "cassette.yaml").read_text()
    old, new = scalars(cassette), scalars(after)
    assert old.keys() == new.keys()
    assert {p: v[:2] for p, v in old.items()} == {p: v[:2] for p, v in new.items()}     # every style and tag kept
    changed = sorted(p for p in old if old[p][2] != new[p][2])
    assert changed == ["/interactions/0/request/headers/Authorization/0", "/interactions/0/request/headers/Cookie/0",
                       "/interactions/0/response/body/string", "/interactions/0/response/headers/Content-Length/0",
                       "/interactions/0/response/headers/Set-Cookie/0", "/interactions/1/request/headers/Authorization/0",
                       "/interactions/1/response/body/string", "/interactions/1/response/headers/Content-Length/0"]
    assert new["/interactions/0/request/headers/Cookie/0"][2] == "REDACTED"


def test_a_plain_scalar_that_cannot_hold_the_replacement_is_quoted_alone():
    text = ("interactions:\n- request:\n    headers: {X-Contact: [ana.lopez.soto@gmail.com]}\n    method: GET\n"
            "    uri: https://a.mx/\n  response:\n    status: {code: 200}\n    headers: {}\n"
            "    body: {string: plain}\n    autor: Ana Lopez Soto\nversion: 1\n")
    doc: Document = load_bytes(text.encode(), "c.yaml")

    class R:
        def __init__(self, start, end, replacement):
            self.start, self.end, self.replacement = start, end, replacement

    email = text.index("ana.lopez")
    name = text.index("Ana Lopez Soto")
    edits = plan_edits(doc, [R(email, email + len("ana.lopez.soto@gmail.com"), "redacted@example.test"),
                             R(name, name + len("Ana Lopez Soto"), "[nombre redactado]")])
    from scanner.redact_edits import apply_edits

    new = apply_edits(text, edits)
    data = yaml.safe_load(new)
    assert data["interactions"][0]["request"]["headers"]["X-Contact"] == ["redacted@example.test"]
    assert data["interactions"][0]["response"]["autor"] == "[nombre redactado]"
    assert '    autor: "[nombre redactado]"\n' in new                     # only that scalar is quoted
    assert "X-Contact: [redacted@example.test]" in new                  # flow style kept where it could be


def test_a_redaction_that_cannot_keep_the_recording_is_not_written(tmp_path):
    """Fail closed: a rewritten file that would not read back as the same recording is reported, never written."""
    from scanner.redact_edits import same_recording as _same_recording

    text = (DATA / "written" / "nock.json").read_text()
    doc = load_path(DATA / "written" / "nock.json")
    broken = text.replace('"rawHeaders": [', '"rawHeaders": {"x": [', 1).replace("]", "]}", 1)
    assert _same_recording(doc, broken.encode(), "nock.json") is not None
    assert _same_recording(doc, text.encode(), "nock.json") is None


def test_real_polly_and_nock_recordings_are_redacted(tmp_path):
    files = {n: (DATA / sub / n).read_text() for sub, n in (
        ("pollyjs", "jest-node-fetch-should-return-post.har"), ("nock", "filtered_by_id_requests.json"))}
    root = tmp_path / "tree"
    (root / "p").mkdir(parents=True)
    for n, c in files.items():
        (root / "p" / n).write_text(c)
    plan = plan_redactions([root], Redactor())
    Redactor().write(plan)
    har = json.loads((root / "p" / "jest-node-fetch-should-return-post.har").read_text())
    res = har["log"]["entries"][0]["response"]
    assert res["cookies"][0]["value"] == "REDACTED"
    assert [h["value"] for h in res["headers"] if h["name"] == "set-cookie"] == ["REDACTED"]
    nock = json.loads((root / "p" / "filtered_by_id_requests.json").read_text())
    assert nock[0]["headers"]["set-cookie"] == ["REDACTED", "REDACTED"]
    shutil.rmtree(root)


def _redact_one(tmp_path: Path, name: str, content: str) -> Path:
    root = tmp_path / "tree"
    (root / "acme" / "fetch").mkdir(parents=True)
    path = root / "acme" / "fetch" / name
    path.write_text(content, encoding="utf-8")
    plan = plan_redactions([root], Redactor())
    assert plan.files and not plan.files[0].unredactable, [fp.unredactable for fp in plan.files]
    Redactor().write(plan)
    assert [Path(w).name for w in plan.written] == [name]
    return path


def test_polly_6_base64_chunks_of_a_gzip_body_are_rewritten_as_one_chunk(tmp_path):
    import base64
    import gzip

    page = gzip.compress(b"<html><body><p>Escribe a carla.nunez.ibarra@gmail.com</p></body></html>", mtime=0)
    chunks = [base64.b64encode(page[:17]).decode(), base64.b64encode(page[17:]).decode()]
    har = {"log": {"creator": {"name": "Polly.JS", "version": "6.0.6"}, "entries": [{
        "request": {"method": "GET", "url": "https://acme.mx/", "headers": []},
        "response": {"status": 200, "headers": [{"name": "content-encoding", "value": "gzip"},
                                                {"name": "content-type", "value": "text/html"}],
                     "content": {"mimeType": "text/html", "encoding": "base64", "text": json.dumps(chunks)}},
        "startedDateTime": "2026-10-02T14:11:09Z"}]}}
    path = _redact_one(tmp_path, "page.har", json.dumps(har, indent=2))
    content = json.loads(path.read_text())["log"]["entries"][0]["response"]["content"]
    (chunk,) = json.loads(content["text"])
    assert content["encoding"] == "base64"
    assert gzip.decompress(base64.b64decode(chunk)) == \
        b"<html><body><p>Escribe a redacted@example.test</p></body></html>"


def test_ruby_vcr_base64_string_bodies_are_rewritten_in_place(tmp_path):
    import base64

    body = base64.b64encode("<p>Contacto: hugo.pena.salas@hotmail.com</p>".encode()).decode()
    cassette = ("---\nhttp_interactions:\n- request:\n    method: get\n    uri: https://acme.mx/contacto\n"
                "    body:\n      encoding: US-ASCII\n      string: ''\n    headers:\n      Cookie:\n"
                "      - sid=9d8f7a6b5c4e3d2f1a0b9c8d7e6f5a4b\n  response:\n    status:\n      code: 200\n"
                "      message: OK\n    headers:\n      Content-Type:\n      - text/html\n    body:\n"
                f"      encoding: ASCII-8BIT\n      base64_string: {body}\n"
                "  recorded_at: Sun, 01 Mar 2026 09:30:01 GMT\nrecorded_with: VCR 6.2.0\n")
    path = _redact_one(tmp_path, "contacto.yml", cassette)
    data = yaml.safe_load(path.read_text())
    interaction = data["http_interactions"][0]
    assert interaction["request"]["headers"]["Cookie"] == ["REDACTED"]
    assert base64.b64decode(interaction["response"]["body"]["base64_string"]) == \
        b"<p>Contacto: redacted@example.test</p>"
    assert path.read_text().count("\n") == cassette.count("\n")        # a one-line scalar stays one line
