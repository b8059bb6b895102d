"""Hostile data files: YAML alias bombs and deep nesting, the parsed-YAML cache, non-finite and out-of-range
numbers in run records and invoices, and reports `gates` cannot judge. Each one a clear problem or a one-line
exit 2, never an internal error, a hang or a pass."""

from __future__ import annotations

import json
import os

import pytest
import yaml

from scanner import jsonsafe, yamlsafe
from scanner.cli import main
from scanner.score.report import score
from tests.hostile import alias_bomb_yaml
from tests.scorefactory import call, results, write_run, write_tree

CASES = [
    {"id": "gs-001", "category": "A", "query": "q", "claim_type": "t", "web_role": "required", "freshness_days": 30,
     "expect": {"families": ["gov"], "hosts": []}},
    {"id": "gs-002", "category": "A", "query": "q", "claim_type": "t", "web_role": "required",
     "expect": {"families": ["gov"], "hosts": []}},
]
FAMILIES = {"gov": ["gob.mx"]}
JUDGMENTS = {"gs-001": {"https://www.gob.mx/a": {"supports": True, "group": "a"}}}


def _exit(argv):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    return exc.value.code


def _tree(tmp_path):
    return write_tree(tmp_path / "tree", CASES, FAMILIES, JUDGMENTS, {})


# --- YAML ---------------------------------------------------------------------------------------------

def test_alias_bomb_is_a_bomb_for_plain_pyyaml():
    text = alias_bomb_yaml()
    assert 320 * 1024 < len(text) < 340 * 1024
    data = yaml.safe_load(text)               # shared objects: cheap to build, 10⁹ judgments to walk or dump
    node = data["gs-001"]["https://www.gob.mx/bomb"]
    for _ in range(9):
        assert isinstance(node, list) and len(node) == 10
        node = node[0]
    assert node["supports"] is True


def test_alias_bomb_judgments_are_a_problem_and_write_no_cache(tmp_path, monkeypatch, capsys):
    cache = tmp_path / "cache"
    monkeypatch.setenv("CENTINELA_CACHE_DIR", str(cache))
    root = _tree(tmp_path)
    (root / "golden" / "judgments.yaml").write_text(alias_bomb_yaml(), encoding="utf-8")
    run = write_run(tmp_path / "run", {"id": "r"}, {"p": [{"case": "gs-001", "calls": [call(cost=0.01)],
                                                          "results": results(("https://www.gob.mx/a", None))}]})
    for attempt in range(2):                   # the second run is not worse off than the first
        assert _exit(["score", str(root), "--run", str(run), "--out", str(tmp_path / "out")]) in (0, 1)
        report = json.loads((tmp_path / "out" / "report.json").read_text())
        problems = [p for p in report["problems"] if p["path"] == "golden/judgments.yaml"]
        assert len(problems) == 1 and "aliases (*name) are not allowed" in problems[0]["message"]
        assert report["providers"]["p"]["counts"]["cases_run"] == 1
    assert not cache.exists() or sum(f.stat().st_size for f in cache.iterdir()) == 0


@pytest.mark.parametrize("text, message", [
    ("a: &x [1, 2]\nb: *x\n", "aliases"),
    ("base: &b {k: 1}\nother:\n  <<: *b\n", "aliases"),
    ("x: " + "[" * 70 + "]" * 70 + "\n", "nested deeper than 64"),
    ("[" * 5000 + "]" * 5000, "nesting depth"),   # libyaml's own limit: still a YAMLError
])
def test_safe_load_refuses_aliases_and_depth(text, message):
    with pytest.raises(yaml.YAMLError, match=message):
        yamlsafe.safe_load(text)


def test_pure_python_loader_refuses_depth_too(monkeypatch):
    monkeypatch.setattr(yamlsafe, "_Loader", yaml.SafeLoader)
    with pytest.raises(yaml.YAMLError, match="nested deeper"):
        yamlsafe.safe_load("[" * 3000 + "]" * 3000)
    with pytest.raises(yaml.YAMLError, match="aliases"):
        yamlsafe.safe_load("a: &x 1\nb: *x\n")


def test_size_limits(tmp_path):
    big = tmp_path / "big.yaml"
    with open(big, "wb") as fh:                # sparse: never read
        fh.truncate(yamlsafe.DATA_FILE_BYTES + 1)
    with pytest.raises(yaml.YAMLError, match="larger than 64 MB"):
        yamlsafe.read_yaml(big)
    rule = tmp_path / "rule.yaml"
    rule.write_text("x: " + "a" * yamlsafe.RULE_FILE_BYTES + "\n")
    with pytest.raises(yaml.YAMLError, match="larger than 1 MB"):
        yamlsafe.read_yaml(rule, max_bytes=yamlsafe.RULE_FILE_BYTES)


@pytest.mark.parametrize("reader", ["golden", "rules", "allowlist", "gaps", "merge"])
def test_every_yaml_reader_refuses_an_alias(tmp_path, reader, capsys):
    bomb = "a: &a [1, 1]\nb: [*a, *a]\n"
    if reader == "golden":
        root = _tree(tmp_path)
        (root / "golden" / "cases.yaml").write_text(bomb)
        from scanner.fixtures.tree import read_golden

        assert any("aliases" in e for e in read_golden(root).errors)
        return
    if reader == "rules":
        rules = tmp_path / "rules"
        rules.mkdir()
        (rules / "x.yaml").write_text(bomb)
        target = tmp_path / "a.txt"
        target.write_text("hola\n")
        assert _exit(["scan", str(target), "--kinds", "injection", "--rules", str(rules)]) == 2
    elif reader == "allowlist":
        (tmp_path / "allow.yaml").write_text("version: 1\nentries: &e []\nx: *e\n")
        target = tmp_path / "a.txt"
        target.write_text("hola\n")
        assert _exit(["scan", str(target), "--kinds", "secret", "--allowlist", str(tmp_path / "allow.yaml")]) == 2
    elif reader == "gaps":
        corpus = tmp_path / "corpus"
        corpus.mkdir()
        (corpus / "injection.jsonl").write_text("")
        (corpus / "known_gaps.yaml").write_text(bomb)
        assert _exit(["corpus", "check", "--corpus", str(corpus)]) == 2
    else:
        root = _tree(tmp_path)
        (tmp_path / "review.yaml").write_text(bomb)
        assert _exit(["pool", str(root), "--merge", str(tmp_path / "review.yaml")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "aliases (*name) are not allowed" in err[0], err


def test_oversized_or_corrupt_cache_is_ignored_and_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("CENTINELA_CACHE_DIR", str(tmp_path))
    text = "# judgments\ngs-001:\n" + "".join(f'  "https://x.gob.mx/{i}": {{supports: true, group: "g"}}\n'
                                            for i in range(8000))
    assert len(text) >= yamlsafe.CACHE_MIN_BYTES
    expected = yamlsafe.safe_load(text)
    assert yamlsafe.load_text(text) == expected
    (entry,) = tmp_path.iterdir()
    assert entry.stat().st_size <= yamlsafe.cache_limit(len(text))
    with open(entry, "wb") as fh:              # a 4 GB entry (sparse): must not be read
        fh.truncate(4 << 30)
    assert yamlsafe.load_text(text) == expected
    assert entry.stat().st_size <= yamlsafe.cache_limit(len(text))      # rebuilt
    entry.write_bytes(b'{"format": "x", "data": ' + b"[" * 100_000)   # corrupt and deep
    assert yamlsafe.load_text(text) == expected
    entry.write_text(json.dumps({"format": yamlsafe._FORMAT, "data": {"forged": 1}})[:-1])   # truncated
    assert yamlsafe.load_text(text) == expected


def test_cache_entry_over_the_limit_is_not_written(tmp_path, monkeypatch):
    monkeypatch.setenv("CENTINELA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(yamlsafe, "cache_limit", lambda n: 1000)
    text = "x:\n" + "".join(f"  - {i}\n" for i in range(60000))
    assert yamlsafe.load_text(text)["x"][-1] == 59999
    assert list(tmp_path.iterdir()) == []


# --- JSON ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, message", [
    ("[" * 100_000 + "]" * 100_000, "nested deeper"),
    ('{"a": ' * 300 + "1" + "}" * 300, "nested deeper"),
    ('{"x": NaN}', "NaN"),
    ('{"x": -Infinity}', "Infinity"),
    ('{"x": 1e999}', "out of range"),
    ('{"x": ' + "9" * 5000 + "}", "digits"),
])
def test_jsonsafe_refuses(text, message):
    with pytest.raises(ValueError, match=message):
        jsonsafe.loads(text)


# --- numbers in runs ----------------------------------------------------------------------------------

def test_non_finite_and_out_of_range_numbers_are_problems_naming_the_file(tmp_path, capsys):
    root = _tree(tmp_path)
    good = {"case": "gs-001", "calls": [call(cost=0.01, latency=120)], "results": results(("https://www.gob.mx/a", None))}
    run = write_run(tmp_path / "run", {"id": "r"}, {"good": [good], "big": [good], "nan": [good], "inf": [good],
                                                     "neg": [good], "rank": [good], "urls": [good]})
    raw = json.dumps({**good, "provider": "big", "outcome": "honest_no_data"})
    (run / "big" / "gs-001.json").write_text(raw.replace('"cost_usd": 0.01', '"cost_usd": 1e30'))
    (run / "nan" / "gs-001.json").write_text(raw.replace('"big"', '"nan"').replace('"latency_ms": 120', '"latency_ms": NaN'))
    (run / "inf" / "gs-001.json").write_text(raw.replace('"big"', '"inf"').replace('"cost_usd": 0.01', '"cost_usd": Infinity'))
    (run / "neg" / "gs-001.json").write_text(raw.replace('"big"', '"neg"').replace('"cost_usd": 0.01', '"cost_usd": -5'))
    (run / "rank" / "gs-001.json").write_text(raw.replace('"big"', '"rank"').replace('"rank": 1', '"rank": 1e999'))
    (run / "urls" / "gs-001.json").write_text(raw.replace('"big"', '"urls"').replace(
        '"op": "search"', '"op": "search", "requested_urls": 99999999999999999999'))
    (run / "good" / "gs-002.json").write_text(json.dumps({**good, "case": "gs-002", "provider": "good",
                                                         "outcome": "honest_no_data"}))
    (run / "invoices").mkdir()
    (run / "invoices" / "good.json").write_text('{"total_usd": 1e999}')
    rc = _exit(["score", str(root), "--run", str(run), "--out", str(tmp_path / "out")])
    assert rc == 1                              # good's invoice cannot be judged: cost_divergence fails closed
    captured = capsys.readouterr()
    assert "internal error" not in captured.err
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    by_path = {p["path"]: p["message"] for p in report["problems"]}
    for provider, words in [("big", "less than or equal"), ("nan", "finite"), ("inf", "finite"),
                            ("neg", "greater than or equal"), ("rank", "results.0.rank: Input should be a finite number"),
                            ("urls", "calls.0.requested_urls: Input should be less than or equal to 1000000")]:
        msg = by_path[f"{provider}/gs-001.json"]
        assert msg.startswith("not a run record: ") and words in msg, (provider, msg)
    assert "not an invoice" in by_path["invoices/good.json"]
    good_p = report["providers"]["good"]
    assert good_p["counts"]["cases_run"] == 2                  # the rest scores
    assert good_p["gates"]["cost_divergence"] == "fail"
    assert "not an invoice" in good_p["gate_details"]["cost_divergence"]["invoice_error"]
    for name in ("report.md", "report.html"):
        assert (tmp_path / "out" / name).stat().st_size > 0


def test_render_formats_any_magnitude():
    from scanner.score.render_format import cost, millis, ratio

    assert cost(1e30) == "$1000000000000000000000000000000.0000"
    assert ratio(float("nan")) == millis(float("inf")) == cost(float("-inf")) == "—"


# --- gates fail closed --------------------------------------------------------------------------------

PASS = {"citation_coverage": "pass", "abstention": "pass", "injection_containment": "pass",
        "honest_partial": "pass", "cost_divergence": "pass"}


@pytest.mark.parametrize("report, message", [
    ({"ranking": ["a"], "providers": {"a": {"gates": {}}}}, "gate citation_coverage is missing"),
    ({"ranking": ["a"], "providers": {"a": {}}}, "has no gates block"),
    ({"ranking": ["a"], "providers": {"a": {"gates": None}}}, "gates is not an object"),
    ({"ranking": ["a"], "providers": {"a": {"gates": {**PASS, "abstention": "ok"}}}}, "unknown value 'ok'"),
    ({"ranking": ["a"], "providers": {"a": {"gates": {**PASS, "abstention": True}}}}, "unknown value True"),
    ({"ranking": ["a"], "providers": {"a": {"gates": {**PASS, "new_gate": "pass"}}}}, "unknown gate 'new_gate'"),
    ({"ranking": ["b"], "providers": {"a": {"gates": PASS}}}, "names 'b'"),
    ({"ranking": "a", "providers": {"a": {"gates": PASS}}}, "ranking is not a list"),
    ({"ranking": ["a", "a"], "providers": {"a": {"gates": PASS}}}, "twice"),
    ({"ranking": [], "providers": {}}, "no provider"),
    ({"ranking": ["a"]}, "no providers"),
    ([], "not a JSON object"),
    ({"ranking": ["a"], "providers": {"a": {"gates": PASS}}, "disqualified": [{"provider": "a"}]}, "disqualified"),
    ({"ranking": ["a"], "providers": {"a": {"gates": PASS}},
      "disqualified": [{"provider": "a", "reasons": []}]}, "both ranked and disqualified"),
    ({"ranking": ["a"], "providers": {"a": {"gates": PASS, "gate_details": []}}}, "gate_details"),
])
def test_gates_fail_closed(tmp_path, capsys, report, message):
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    assert _exit(["gates", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("centinela: error:") and message in err[0], err
    assert "internal error" not in err[0]


@pytest.mark.parametrize("text, message", [
    ('{"providers": ' * 100_000 + "{}" + "}" * 100_000, "nested deeper"),
    ('{"ranking": ["a"], "providers": {"a": {"gates": {"abstention": NaN}}}}', "NaN"),
    ("\xff\xfe", "not a report"),
])
def test_gates_malformed_json(tmp_path, capsys, text, message):
    path = tmp_path / "report.json"
    path.write_bytes(text.encode("latin-1") if text.startswith("\xff") else text.encode())
    assert _exit(["gates", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and "internal error" not in err[0]


def test_gates_odd_details_do_not_break_the_block(tmp_path, capsys):
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"ranking": ["a"], "providers": {"a": {"gates": PASS, "gate_details": {
        "cost_divergence": {"divergence": "0.01"}, "honest_partial": {"violations": 3},
        "abstention": "x"}}}}))
    assert _exit(["gates", str(path)]) == 0
    assert "a passes every hard gate" in capsys.readouterr().out


def test_gates_still_pass_a_real_report(tmp_path):
    root = _tree(tmp_path)
    run = write_run(tmp_path / "run", {"id": "r"}, {"p": [
        {"case": "gs-001", "calls": [call(cost=0.01)], "results": results(("https://www.gob.mx/a", None)),
         "claims": []}, {"case": "gs-002"}]})
    out = score(root, run)
    from scanner.score.gates import check_report

    check_report(json.loads(json.dumps(out.report)))
    assert os.path.exists(root)


# --- more data files, each a clear line or a problem, never an internal error ----------------------------

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("rel, content, expect", [
    ("golden/judgments.yaml", "gs-001:\n  https://a: {supports: true, verified_published_at: 2026-13-45}\n",
     "invalid value: month must be in 1..12"),
    ("golden/cases.yaml", "!!python/object/apply:os.system ['echo hi']", "could not determine a constructor"),
    ("golden/cases.yaml", "- {id: gs-001, category: A, web_role: required, freshness_days: 99999999999}",
     "less than or equal to 36500"),
    ("run/gs-001.json", DEEP, "recursion limit exceeded"),
    ("run/gs-001.json", "[]", "Input should be an object"),
])
def test_hostile_score_inputs_are_problems(tmp_path, capsys, rel, content, expect):
    root = _tree(tmp_path)
    run = write_run(tmp_path / "run", {"id": "r"}, {"p": [{"case": "gs-001", "calls": [call(cost=0.01)]}]})
    target = (run / "p" / "gs-001.json") if rel.startswith("run/") else root / rel
    target.write_text(content)
    rc = _exit(["score", str(root), "--run", str(run), "--out", str(tmp_path / "out")])
    captured = capsys.readouterr()
    assert "internal error" not in captured.err and rc in (0, 1)
    assert expect in captured.out, captured.out


def test_a_corrupt_redaction_journal_is_one_line(tmp_path, capsys):
    from tests.treefactory import build_tree

    tree = build_tree(tmp_path / "tree")
    for content in ("[[[[", "[1, 2]", '{"x.json": 5}'):
        (tree / ".centinela-redact.journal").write_text(content)
        rc = _exit(["redact", str(tree), "--write"])
        err = capsys.readouterr().err.strip().splitlines()
        if content.startswith("{"):
            assert rc in (0, 1) and not any("internal error" in e for e in err)   # a bad entry is skipped
        else:
            assert rc == 2 and len(err) == 1 and "from version control" in err[0], err


@pytest.mark.parametrize("line, message", [
    ('{"id": "a", "ts_start": "x", "ts_end": "y", "status": 200, "provider": "p"}', "ISO 8601"),
    ('{"id": "a", "ts_start": "2026-01-01T00:00:00Z", "ts_end": "2026-01-01T00:00:01Z", "status": 429, '
     '"provider": ["p"]}', "must be strings"),
    ('{"id": "a", "ts_start": "2026-01-01T00:00:00Z", "ts_end": "2026-01-01T00:00:01Z", "status": NaN}', "NaN"),
    (DEEP, "nested deeper"),
])
def test_a_hostile_request_log_is_one_line(tmp_path, capsys, line, message):
    from scanner.behaviour import BehaviourError, read_log

    log = tmp_path / "serve.jsonl"
    log.write_text(line + "\n")
    with pytest.raises(BehaviourError, match=message):
        read_log(log)


@pytest.mark.parametrize("line, message", [
    ('{"id": 1, "vector": "x", "language": "es", "label": "benign", "format": "html", "source": "s", "document": "x"}',
     "id must be a string"),
    ('{"id": "x", "vector": "x", "language": "es", "label": "benign", "format": "html", "source": "s", "document": 5}',
     "document must be a string"),
    ("[1]", "an entry is a JSON object"),
    ('{"id": "x", "vector": "x", "language": "es", "label": "benign", "format": "html", "source": "s", '
     '"file": "../../etc/passwd"}', "not read: climbs out"),
])
def test_a_hostile_corpus_is_one_line(tmp_path, capsys, line, message):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "injection.jsonl").write_text(line + "\n")
    assert _exit(["corpus", "check", "--corpus", str(corpus)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
