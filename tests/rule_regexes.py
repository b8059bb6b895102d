"""The regexes that run on untrusted text, in one list (tests/test_rule_regexes.py, bench/rule_regexes.py),
and a generator of texts from a pattern's own structure.

In scope: every lexicon pattern (each, and as the scanner compiles them: one regex per group and the trigger
regex), every regex of every secret rule, the keyword gates built from them, the personal-data recognizers'
patterns (as Presidio runs them), the context-word regexes, and the module-level regexes the injection, secret
and personal-data scanners and the loaders run over whole texts. Helpers applied only to short windows (a few
dozen characters around a match, a header value, the first KB of a file) or that are a single character class
are left out: their input or their work is bounded by construction. The HTML tokenizer's regexes
(scanner.loaders.html_tokens) are left out too: they are fixed code, written with possessive quantifiers so a
search never backtracks, and tests/test_html_tokens.py counts their work on unterminated tags to show it linear.
"""

from __future__ import annotations

import random
import re

try:                                   # Python 3.11+
    from re import _constants as SC
    from re import _parser as SP
except ImportError:                    # pragma: no cover - Python 3.10
    import sre_constants as SC         # type: ignore
    import sre_parse as SP             # type: ignore

WHOLE_TEXT = {
    "scanner.injection.engine": ("_TAG_RUN", "_ZW_RUN", "_B64_RUN", "_SENTENCE_END"),
    "scanner.injection.prefilter": ("_SUSPICIOUS", "_INVISIBLE_RUN", "_RAW_BLOCKS", "_JSON_ESCAPE", "_B64",
                                    "_LD_BLOCK", "_LD_CONFIG_KEY"),
    "scanner.secrets.detect": ("_URL", "_FORM", "_PARAM", "_NUMBER_AFTER_KEY"),
    "scanner.pii.candidates": ("_LINK_PHONE", "_OBFUSCATION_RX"),
    "scanner.pii.contacts": ("_HEXISH", "_EMAILISH", "_CHROME_CLASS"),
    "scanner.pii.names": ("_URL", "_EMAILISH"),
    "scanner.pii.recognizers.mx.rfc": ("RFC_MORAL",),
    "scanner.pii.recognizers.email": ("_EMAIL", "_EMAIL_OBF", "_DOT_NORM"),
    "scanner.loaders.html": ("_CHARREF",),
    "scanner.loaders.json_positions": ("_STRING", "_NUMBER", "_ESCAPE"),
    "scanner.loaders.text": ("_PARAGRAPH", "_MD_COMMENT"),
}


def in_scope() -> list[tuple[str, object, str]]:
    """(name, compiled pattern, how it is applied: finditer | search | match | fullmatch)."""
    import importlib

    from scanner import rx
    from scanner.injection.signals import CompiledLexicon
    from scanner.pii.data import context_rules
    from scanner.pii.names import title_regexes
    from scanner.pii.scanner import _recognizers
    from scanner.rulepack import LEXICON_FLAGS, load_pack
    from scanner.secrets.detect import SecretScanner
    from scanner.secrets.rules import Compiled, load_rules, rule_regexes

    items = []
    lexicon, _ = load_pack()
    for group, g in lexicon.groups.items():
        for i, pattern in enumerate(g.patterns):
            items.append((f"lexicon {group}[{i}]", rx.compile(pattern, LEXICON_FLAGS), "finditer"))
    compiled = CompiledLexicon(lexicon)
    items += [(f"lexicon group {name}", r, "finditer") for name, r in compiled.groups.items()]
    items.append(("lexicon triggers", compiled.triggers, "search"))
    for rule in load_rules():
        for label, r, mode in rule_regexes(Compiled(rule)):
            items.append((f"{rule.id} {label}", r, mode))
    scanner = SecretScanner()
    items += [("secret keyword gate", scanner._gate, "search"),
              ("secret keyword gate (scripts)", scanner._script_gate, "search")]
    for rec in _recognizers():
        for p in rec.patterns:
            items.append((f"{rec.name} {p.name}", p.compiled_regex, "finditer"))
        items.append((f"context words {rec.name}", rec.context_regex, "finditer"))
    ctx = context_rules()
    items += [("person words", ctx.person_words, "finditer"), ("company words", ctx.company_words, "finditer"),
              ("company markers", ctx.company_markers, "search"), ("titles", title_regexes()[0], "finditer")]
    from scanner.injection.deobfuscate import _patterns as deobfuscation
    singles, leet, cut_or_turn, hex_run, chain = deobfuscation()
    items += [("deobfuscate singles", singles, "finditer"), ("deobfuscate leet", leet, "finditer"),
              ("deobfuscate cut or turn", cut_or_turn, "search"), ("deobfuscate hex run", hex_run, "finditer"),
              ("deobfuscate chain", chain, "finditer")]
    for module, names in WHOLE_TEXT.items():
        mod = importlib.import_module(module)
        for name in names:
            items.append((f"{module}.{name}", getattr(mod, name), "finditer"))
    return items


# --- texts from a pattern ------------------------------------------------------------------------------------

ALPHABET = list("aeiosnlrtdmcpuvgbhfyqjzxkwAEIOSNKX0123456789 \t\n\r.,;:!?¡¿-_@/\\=+#&%*~^$|\"'()[]{}<>«»—–")
ALPHABET += [
    "ñ", "Ñ", "é", "ó", "İ", "ı", "\u212a", "ſ", "\xa0", "\u2028", "\u2003", "٣", "\u0301", "中", "ø", "ß", "😀",
    "\u200b", "\x85", "\x1c", "\x0b", "\x0c", "ª", "²", "Ⅻ", "ǅ", "\U000e0041", "\u202e"]
_CATEGORY = {SC.CATEGORY_DIGIT: "0123456789٣", SC.CATEGORY_SPACE: " \t\n\r\x0b\x0c\xa0\u2003\u2028\x85\x1c",
             SC.CATEGORY_WORD: "aZ_9ñÉ中ǅ²ß", SC.CATEGORY_NOT_DIGIT: "a .-٫", SC.CATEGORY_NOT_SPACE: "a.\u200b-",
             SC.CATEGORY_NOT_WORD: " .-@\u0301\u200b"}


class TextGenerator:
    """Texts built by walking the pattern: mostly near-matches, with lookaround bodies written out now and then
    (so the conditions are violated as often as met), characters from every class, and random edits."""

    def __init__(self, pattern: str, flags: int, seed: int):
        parsed = SP.parse(pattern, flags)
        self.nodes = list(parsed)
        self.flags = parsed.state.flags
        self.rng = random.Random(seed)
        self._classes: dict = {}

    def _pick(self, op, av, flags) -> str:
        from scanner.rx.translate import _class_source

        key = (op, repr(av), flags & (re.I | re.S))
        if key not in self._classes:
            one = re.compile(_class_source(op, av), flags & (re.I | re.S))
            cands = set(ALPHABET) | set("".join(_CATEGORY.values()))
            if op is SC.IN:
                for iop, iav in av:
                    if iop is SC.LITERAL:
                        cands.add(chr(iav))
                    elif iop is SC.RANGE:
                        cands.update(chr(c) for c in (iav[0], iav[1], (iav[0] + iav[1]) // 2))
            elif op is SC.LITERAL:
                cands.update((chr(av), chr(av).upper(), chr(av).lower()))
            self._classes[key] = sorted(c for c in cands if one.fullmatch(c))
        options = self._classes[key]
        return self.rng.choice(options) if options else ""

    def _walk(self, nodes, flags, depth=0) -> str:
        rng, out = self.rng, []
        for op, av in nodes:
            if op in (SC.LITERAL, SC.NOT_LITERAL, SC.ANY, SC.IN):
                out.append(chr(av) if op is SC.LITERAL and not flags & re.I else self._pick(op, av, flags))
            elif op is SC.BRANCH:
                out.append(self._walk(rng.choice(av[1]), flags, depth + 1))
            elif op is SC.SUBPATTERN:
                out.append(self._walk(av[3], (flags | av[1]) & ~av[2], depth + 1))
            elif op in (SC.MAX_REPEAT, SC.MIN_REPEAT):
                lo, hi, body = av
                hi = lo + 4 if hi is SC.MAXREPEAT else min(hi, lo + 4)
                k = rng.randint(lo, hi) if rng.random() < 0.8 else lo
                out.append("".join(self._walk(body, flags, depth + 1) for _ in range(k)))
            elif op in (SC.ASSERT, SC.ASSERT_NOT):
                if rng.random() < 0.35 and depth < 6:
                    out.append(self._walk(av[1], flags, depth + 1))
            elif op is SC.AT and av in (SC.AT_BOUNDARY, SC.AT_NON_BOUNDARY) and rng.random() < 0.2:
                out.append(rng.choice(["a", " ", "ñ", "_", "-"]))
        return "".join(out)

    def text(self) -> str:
        rng, parts = self.rng, []
        for _ in range(rng.randint(1, 3)):
            if rng.random() < 0.3:
                parts.append(rng.choice(ALPHABET) * rng.randint(1, 3))
            parts.append(self._walk(self.nodes, self.flags))
        s = "".join(parts)
        for _ in range(rng.randint(0, 3)):
            if not s:
                break
            i, r = rng.randrange(len(s) + 1), rng.random()
            if r < 0.4:
                s = s[:i] + rng.choice(ALPHABET) + s[i:]
            elif r < 0.7:
                s = s[:i] + s[i + 1:]
            else:
                s = s[:i] + rng.choice(ALPHABET) + s[i + 1:]
        return s
