"""Linear-time rules by construction: every regex that runs on untrusted text is an RE2 program (scanner.rx), and
means what it meant in Python. Nothing here measures time.

* every rule regex and whole-text scanner regex is an `rx.Pattern`, and Presidio runs ours, never its own;
* each one matches exactly what Python's engine (`re`, or `regex` for the recognizers) matches, on texts built
  from the pattern's own structure (seeded: the same texts every run);
* a `--rules` pattern RE2 cannot run with its Python meaning is refused at load, in one line naming the rule;
* the pattern that hung `scan --rules` (issue 12, item 5) loads, and a scan of a megabyte built to make a
  backtracking engine retry from every position returns with the right result.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import regex

from rule_regexes import TextGenerator, in_scope
from scanner import rx
from scanner.rulepack import RuleError
from scanner.secrets.rules import BUILTIN_SECRET_RULES, load_rules

ITEMS = in_scope()
MB = 1 << 20


def test_every_regex_on_untrusted_text_is_an_re2_program():
    from scanner.pii.recognizers import mx_recognizers
    from scanner.rulepack import load_pack

    assert all(isinstance(r, rx.Pattern) for _, r, _ in ITEMS), [n for n, r, _ in ITEMS
                                                                  if not isinstance(r, rx.Pattern)]
    lexicon, _ = load_pack()
    assert (sum(n.startswith("lexicon ") and "[" in n for n, _, _ in ITEMS)
            == sum(len(g.patterns) for g in lexicon.groups.values()))
    assert len({n.split()[0] for n, _, _ in ITEMS if re.match(r"SEC\d{3} ", n)}) >= 20
    assert sum("Recognizer" in n for n, _, _ in ITEMS) == sum(len(r.patterns) for r in mx_recognizers()) == 10
    for name, r, _ in ITEMS:
        assert r.programs and r.program_size() > 0, name


def test_presidio_runs_our_programs_and_never_compiles_its_own(monkeypatch):
    """Presidio compiles a pattern with the `regex` module unless it holds one; with that compile made to fail,
    the personal-data scan still finds everything."""
    import presidio_analyzer.pattern_recognizer as pr

    from scanner.loaders import load_bytes
    from scanner.pii.scanner import PiiScanner

    def refuse(*_a, **_k):
        raise AssertionError("Presidio compiled a pattern with a backtracking engine")

    monkeypatch.setattr(pr.re, "compile", refuse)
    page = ("<p>Escríbeme a juan.perez.lopez@gmail.com o al celular 55 1234 5678. "
            "CURP PEGJ850101HDFRRN08</p>").encode()
    found = {f.entity for f in PiiScanner().scan(load_bytes(page, "p.html"))}
    assert {"EMAIL_PERSONAL", "PHONE_NUMBER", "MX_CURP"} <= found


@pytest.mark.parametrize("name, compiled, mode", ITEMS, ids=[n for n, _, _ in ITEMS])
def test_re2_matches_what_python_matches(name, compiled, mode):
    """The RE2 program against the Python engine the pattern was written for, on 120 texts from the pattern
    (near-matches, lookaround conditions violated and met, characters of every class, edits), whole and
    between a random pos and endpos."""
    engine = regex if compiled.engine == "regex" else re
    python = engine.compile(compiled.pattern, compiled.flags & (re.I | re.M | re.S | re.X | re.A))
    gen = TextGenerator(compiled.pattern, compiled.flags & (re.I | re.M | re.S | re.X | re.A),
                        seed=sum(map(ord, name)))
    for _ in range(120):
        text = gen.text()
        p, e = sorted(gen.rng.sample(range(len(text) + 1), 2)) if len(text) > 1 else (0, len(text))
        for args in ((text,), (text, p, e)):
            if mode == "finditer":
                want = [(m.span(), m.groups()) for m in python.finditer(*args)]
                got = [(m.span(), m.groups()) for m in compiled.finditer(*args)]
            else:
                wm, gm = getattr(python, mode)(*args), getattr(compiled, mode)(*args)
                want = wm and (wm.span(), wm.groups())
                got = gm and (gm.span(), gm.groups())
            assert got == want, f"{name} on {args[0]!r}{args[1:]}"


# --- --rules packs -------------------------------------------------------------------------------------------

RULE = """id: SEC901
name: custom-key
entity: API_KEY
severity: error
precision: high
security_severity: 8.0
message: A custom key
match:
  value_pattern: '{pattern}'
  keywords: {keywords}
help: {{what: a, why: b, example: c, fix: d}}
examples:
  positive:
    - {{file: a.txt, content: "x"}}
    - {{file: b.txt, content: "y"}}
  negative:
    - {{file: c.txt, content: "z"}}
    - {{file: d.txt, content: "w"}}
"""


def _pack(tmp_path: Path, value_pattern: str, keywords: str = "['q']") -> Path:
    """A --rules directory with one secret rule, SEC901, whose value_pattern is the given regex."""
    pack = tmp_path / "pack"
    shutil.rmtree(pack, ignore_errors=True)
    (pack / "secrets").mkdir(parents=True)
    text = RULE.format(pattern=value_pattern.replace("'", "''"), keywords=keywords)
    (pack / "secrets" / "SEC901-custom.yaml").write_text(text, encoding="utf-8")
    return pack


REFUSED = [
    (r"(?P<secret>[a-z]{8})\1", "backreference"),
    (r"key=(?P<secret>\w{8})(?<!x)q", "lookaround"),
    (r"key=(?=\w)(?P<secret>\w{8})q", "lookaround"),
    (r"key=(?P<secret>\w*+)q", "possessive"),
    (r"key=(?>(?P<secret>\w+))q", "atomic"),
    (r"(k)?(?(1)ey|q)(?P<secret>\w+)", "conditional"),
    (r"key=(?P<secret>\w{2000})", "1000"),
    (r"(?<!\w+)key=(?P<secret>\w+)", "lookbehind"),
    (r"key=[a-", "invalid regex"),
]


@pytest.mark.parametrize("pattern, why", REFUSED, ids=[w for _, w in REFUSED])
def test_a_rules_pattern_re2_cannot_run_is_refused_at_load_naming_the_rule(tmp_path, pattern, why):
    pack = _pack(tmp_path, pattern)
    with pytest.raises(RuleError) as err:
        load_rules((BUILTIN_SECRET_RULES, pack / "secrets"))
    message = str(err.value)
    assert "\n" not in message and "SEC901-custom.yaml" in message and "SEC901" in message, message
    assert "match.value_pattern" in message and why in message, message


def test_the_cli_refuses_such_a_pack_in_one_line_with_exit_2(tmp_path):
    pack = _pack(tmp_path, r"(?P<secret>[a-z]{8})\1")
    page = tmp_path / "page.txt"
    page.write_text("nothing here\n")
    proc = subprocess.run([sys.executable, "-m", "scanner", "scan", "--rules", str(pack), str(page)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "SEC901" in lines[0] and "backreference" in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_lookbehind_where_the_match_starts_is_kept(tmp_path):
    """One-character lookbehinds at the start (every built-in key rule has one) run exactly as before."""
    pack = _pack(tmp_path, r"(?<![A-Za-z0-9_-])q[0-9]{8}(?![0-9])")
    rule = next(r for r in load_rules((BUILTIN_SECRET_RULES, pack / "secrets")) if r.id == "SEC901")
    from scanner.secrets.rules import Compiled

    c = Compiled(rule).pattern
    assert [m.span() for m in c.finditer("q12345678 xq12345678 -q12345678,q123456789 q12345678")] == [(0, 9), (43, 52)]


# --- issue 12, item 5: the pattern that hung scan --rules ----------------------------------------------------

HANG = r"\d*\d*\d*\d*Q"


def _digits(n: int) -> bytes:
    """n digits, seeded (a run of one digit would read as a placeholder and give no finding)."""
    import random

    rng = random.Random(12)
    return "".join(rng.choice("0123456789") for _ in range(n)).encode()


def test_the_pattern_that_hung_loads_and_a_megabyte_against_it_returns(tmp_path):
    from scanner.loaders import load_bytes
    from scanner.secrets.detect import SecretScanner

    pack = _pack(tmp_path, HANG, keywords="['1']")
    scanner = SecretScanner(extra_rule_dirs=(pack / "secrets",))
    assert "SEC901" in scanner.by_id
    # digits with no Q: a backtracking engine retries every split of every suffix (degree-4 polynomial)
    digits = _digits(MB)
    doc = load_bytes(digits, "digits.txt")
    assert [f for f in scanner.scan(doc) if f.rule_id == "SEC901"] == []
    doc = load_bytes(digits + b"Q", "digits.txt")
    (hit,) = [f for f in scanner.scan(doc) if f.rule_id == "SEC901"]
    assert (hit.start, hit.end) == (0, MB + 1)


def test_scan_rules_with_the_pattern_that_hung_exits_with_its_findings(tmp_path):
    pack = _pack(tmp_path, HANG, keywords="['1']")
    (tmp_path / "digits.txt").write_bytes(_digits(MB) + b"\n")
    (tmp_path / "key.txt").write_text("token 31415Q\n")
    proc = subprocess.run([sys.executable, "-m", "scanner", "scan", "--rules", str(pack), "--kinds", "secret",
                           "--format", "json", str(tmp_path / "digits.txt"), str(tmp_path / "key.txt")],
                          capture_output=True, text=True, timeout=600)    # a guard against a hang, not a measure
    assert proc.returncode == 1, proc.stderr
    import json

    findings = [f for f in json.loads(proc.stdout)["findings"] if f["rule_id"] == "SEC901"]
    assert [Path(f["path"]).name for f in findings] == ["key.txt"]


def test_a_lexicon_pattern_re2_cannot_run_is_refused_naming_group_and_pattern(tmp_path):
    from scanner.rulepack import BUILTIN_RULES, load_lexicon

    text = (BUILTIN_RULES / "injection" / "lexicon.yaml").read_text(encoding="utf-8")
    bad = text.replace("      - '\\bsi\\s+(?:estas|esta)\\s+leyendo", "      - '(a)\\1|\\bsi\\s+(?:estas|esta)\\s+leyendo", 1)
    assert bad != text
    (tmp_path / "lexicon.yaml").write_text(bad, encoding="utf-8")
    with pytest.raises(RuleError) as err:
        load_lexicon(tmp_path / "lexicon.yaml")
    message = str(err.value)
    assert "\n" not in message and "lexicon.yaml: group ai_address: pattern " in message and "backreference" in message
