"""No super-linear rules: every rule pattern runs in linear time on crafted worst cases (scanner.regexcheck),
and on 1 MB of the worst case it costs the size ratio times what a smaller one costs, never its square.

Inventory: the lexicon's patterns (each, and as the scanner runs them: one regex per group and the trigger
regex), every regex of every secret rule applied as the detector applies it, the personal-data recognizers'
patterns (Presidio runs them with the `regex` module), and the module-level regexes that the injection,
secret and personal-data scanners and the loaders run over whole unit texts. Helpers applied only to short
windows (a few dozen characters around a match) are left out: their input is bounded by construction.

Times are compared as ratios measured in the same run, so a loaded machine does not change the verdict.
"""

from __future__ import annotations

import re
import time

import pytest
import regex

from scanner import regexcheck
from scanner.injection.signals import CompiledLexicon
from scanner.rulepack import RuleError, load_pack
from scanner.secrets.rules import Compiled, load_rules, rule_regexes

MB = 1 << 20


def _apply(rx, mode: str):
    if mode == "finditer":
        return rx.finditer
    method = getattr(rx, mode)
    return lambda text: (method(text),)


def inventory() -> list[tuple[str, str, int, object]]:
    """(name, pattern, flags, apply(text)) of every pattern in scope."""
    items = []
    lexicon, _ = load_pack()
    for group, g in lexicon.groups.items():
        for i, pattern in enumerate(g.patterns):
            items.append((f"lexicon {group}[{i}]", pattern, re.M, re.compile(pattern, re.M).finditer))
    for rule in load_rules():
        for label, rx, mode in rule_regexes(Compiled(rule)):
            items.append((f"{rule.id} {label}", rx.pattern, rx.flags, _apply(rx, mode)))
    from scanner.pii.recognizers import mx_recognizers

    for rec in mx_recognizers():
        for p in rec.patterns:
            rx = regex.compile(p.regex, flags=rec.global_regex_flags)
            apply = rx.finditer
            if rec.supported_entities == ["EMAIL_ADDRESS"]:
                apply = _as_the_scanner_runs_email(rx)
            items.append((f"{rec.name} {p.name}", p.regex, rec.global_regex_flags & (re.I | re.M | re.S), apply))
    import scanner.injection.engine as engine
    import scanner.injection.prefilter as prefilter
    import scanner.loaders.html as html
    import scanner.loaders.html_tokens as html_tokens
    import scanner.loaders.json_positions as json_positions
    import scanner.loaders.text as text_loader
    import scanner.pii.scanner as pii
    import scanner.secrets.detect as detect

    whole_text = {
        engine: ("_TAG_RUN", "_ZW_RUN", "_B64_RUN", "_SENTENCE_END", "_TAG"),
        prefilter: ("_SUSPICIOUS", "_INVISIBLE_RUN", "_RAW_BLOCKS", "_TAGS", "_JSON_ESCAPE", "_B64", "_LD_BLOCK",
                    "_LD_CONFIG_KEY"),
        detect: ("_URL", "_PARAM"),
        pii: ("_LINK_PHONE", "_URL", "_HEXISH", "_LOWER_WORD", "_OBFUSCATION_RX", "_CHROME_CLASS"),
        html: ("_CHARREF",),
        html_tokens: ("_MARKUP", "_ATTR_RE", "_ATTR_STEP", "_ATTR_TILE", "_TAG_NAME", "_COMMENT_END"),
        json_positions: ("_STRING", "_NUMBER", "_ESCAPE"),
        text_loader: ("_PARAGRAPH", "_MD_COMMENT"),
    }
    for module, names in whole_text.items():
        for name in names:
            rx = getattr(module, name)
            items.append((f"{module.__name__}.{name}", rx.pattern, rx.flags & (re.I | re.M | re.S | re.X), rx.finditer))
    return items


def _as_the_scanner_runs_email(rx):
    """The email patterns run only on windows around each "@" (or "arroba", "[at]"), merged where they
    overlap (scanner.pii.scanner._at_windows): so the crafted cases include at-signs every few hundred
    characters, which merge into one long window."""
    from scanner.pii.scanner import _at_windows, _Joined
    from scanner.units import Channel, TextUnit

    def apply(text: str):
        unit = TextUnit(text, Channel.VISIBLE_TEXT, 0, len(text), None)
        return rx.finditer(_Joined(_at_windows([unit])).text)
    return apply


EMAIL_CASES = ("a." * 100 + "a@", "a" * 200 + "@", "+" * 200 + "@", "a@" + "a." * 150, "x arroba " + "a." * 150,
               "a [at] " + "a " * 100)
ITEMS = inventory()


def test_inventory_covers_every_rule_pattern():
    lexicon, _ = load_pack()
    assert sum(1 for n, *_ in ITEMS if n.startswith("lexicon ")) == sum(len(g.patterns) for g in lexicon.groups.values())
    with_regexes = {r.id for r in load_rules() if rule_regexes(Compiled(r))}
    assert {n.split()[0] for n, *_ in ITEMS if n.startswith("SEC")} == with_regexes and len(with_regexes) >= 20
    from scanner.pii.recognizers import mx_recognizers

    assert sum(1 for n, *_ in ITEMS if "Recognizer" in n) == sum(len(r.patterns) for r in mx_recognizers()) == 10


@pytest.mark.parametrize("name, pattern, flags, apply", ITEMS, ids=[i[0] for i in ITEMS])
def test_pattern_is_linear_on_crafted_worst_cases(name, pattern, flags, apply):
    extra = EMAIL_CASES if name.startswith("OfflineEmailRecognizer") else ()
    verdict = regexcheck.check(pattern, apply, flags, repeats=3, extra=extra)
    assert verdict.linear, f"{name}: super-linear on {verdict.attack} (x{verdict.growth:.1f} per size step)"
    # The worst case found, at 1 MB: 8 times the input costs about 8 times the time (quadratic: 64 times).
    make = dict(regexcheck.attacks(pattern, flags, extra)).get(verdict.attack) if verdict.attack else None
    if make is None:
        return
    big, small = make(MB), make(MB // 8)
    t_small = _time(apply, small)
    t_big = _time(apply, big)
    ratio = t_big / max(t_small, 1e-5)
    assert ratio < 8 * 3, f"{name}: 1 MB of {verdict.attack} took {ratio:.1f}x the time of 128 KB"
    plain = regexcheck.plain_scan_time(big)
    assert t_big / max(plain, 1e-6) < 5000, f"{name}: {t_big / plain:.0f}x a plain scan of the same 1 MB"


def _time(apply, text: str) -> float:
    best = float("inf")
    for _ in range(2):
        t0 = time.perf_counter()
        for _m in apply(text):
            pass
        best = min(best, time.perf_counter() - t0)
    return best


def test_the_lexicon_as_the_scanner_runs_it_is_linear_on_1_mb():
    """The trigger regex (every gated group's alternatives in one) and the three ungated groups, as the scanner
    compiles them, on 1 MB of the cases that were worst for single patterns, against 128 KB of the same."""
    from scanner.injection.signals import GATE_EXEMPT

    lexicon, _ = load_pack()
    compiled = CompiledLexicon(lexicon)
    cases = {"'\\n'*n": lambda n: "\n" * n, "' '*n": lambda n: " " * n, "'a '*n": lambda n: "a " * (n // 2),
             "'nota' + ' '*n": lambda n: "nota" + " " * n, "'<' + ' '*n": lambda n: "<" + " " * n}
    worst = []
    for rx in [compiled.triggers] + [compiled.groups[g] for g in GATE_EXEMPT]:
        for label, make in cases.items():
            t_small = _time(rx.finditer, make(MB // 8))
            t_big = _time(rx.finditer, make(MB))
            worst.append((t_big / max(t_small, 1e-5), label))
    ratio, label = max(worst)
    assert ratio < 8 * 3, f"{ratio:.1f}x for 8x the input on {label}"


def test_checker_finds_what_it_must():
    """The checker itself: the classic quadratic and exponential shapes are caught, their fixes pass."""
    for bad in (r"\w+@", r"(?:^|\n)\s*system:", r"<\s*/?\s*sys>", r"(a+)+b", r"[a-z][a-z0-9]*://", r"a+b"):
        rx = re.compile(bad)
        assert not regexcheck.check(bad, rx.finditer).linear, bad
    for good in (r"(?<![\w])\w+@", r"(?:^|\n)[^\S\n]*system:", r"<\s*(?:/\s*)?sys>", r"(?<!a)a+b", r"\bsystem\b"):
        rx = re.compile(good)
        assert regexcheck.check(good, rx.finditer).linear, good


def test_rules_pack_with_a_super_linear_regex_is_refused(tmp_path):
    import shutil

    from scanner.secrets.rules import BUILTIN_SECRET_RULES, load_rules as load

    pack = tmp_path / "secrets"
    pack.mkdir()
    text = (BUILTIN_SECRET_RULES / "SEC011-tavily-api-key.yaml").read_text()
    text = text.replace("id: SEC011", "id: SEC901")
    slow = re.sub(r"value_pattern: .*", "value_pattern: '[a-z]+tvly-(?P<secret>[A-Za-z0-9]{20,})'", text, count=1)
    (pack / "SEC901.yaml").write_text(slow)
    with pytest.raises(RuleError) as err:
        load((BUILTIN_SECRET_RULES, pack))
    assert "SEC901.yaml: match.value_pattern: the regex takes super-linear time" in str(err.value)
    shutil.rmtree(pack)
    pack.mkdir()
    fast = re.sub(r"value_pattern: .*", "value_pattern: '(?<![a-z])[a-z]+tvly-(?P<secret>[A-Za-z0-9]{20,})'", text, count=1)
    (pack / "SEC901.yaml").write_text(fast)
    assert any(r.id == "SEC901" for r in load((BUILTIN_SECRET_RULES, pack)))
