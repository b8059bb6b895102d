"""A document-level prefilter for injection-only scans of HTML: can this page hold a finding at all?

Where the time goes decides the design: building exact-position units costs far more than parsing (see
bench/), while almost no real page carries an instruction aimed at an AI. So before loading, the page's text
is folded (entities decoded, accents and compatibility forms removed, lower case) and searched once with
RE2 — a linear-time automaton — for every trigger phrase of the lexicon, relaxed to a superset (lookarounds
and clause-start anchors dropped). Only pages with a trigger, hidden-Unicode material, a base64 blob that
decodes to text, or an AI-configuration key in JSON-LD are loaded and scanned in full. A page the
prefilter passes cannot show any gated signal; tests check that on every rule example and corpus entry, and
that the page is folded exactly as the engine folds a unit (`fold_page` is `scanner.normalize.fold_text` after
decoding; tests/test_textfold.py).

When a pattern cannot be expressed in RE2, the prefilter is off and every page takes the full path: slower,
never less exact. The page-level regexes below run with RE2 too (scanner.rx).
"""

from __future__ import annotations

import html
import re

import re2

from scanner import rx
from scanner.injection.engine import decode_blob, prose_parts
from scanner.injection.predicates import AI_NAMES, ai_name
from scanner.injection.tagtext import strip_tags
from scanner.normalize import fold_text
from scanner.rulepack import Lexicon

# Look-alike letters from other scripts, tag characters: a page with any of them takes the full path (the fold
# reads the common confusables as the engine does; these are the rest, cheaper to load than to reason about).
_SUSPICIOUS = rx.compile("[\u0250-\u02af\u0131\u0370-\u03ff\u0400-\u052f\u0530-\u058f\U000e0000-\U000e007f]")
_INVISIBLE_CHARS = frozenset("\u034f\u180e\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064\ufeff")
_INVISIBLE_RUN = rx.compile("[\u034f\u180e\u200b-\u200f\u2060-\u2064\ufeff]{16,}")
# <script …>…</script> and <style …>…</style>; "script" not followed by a word character, as \b said before (RE2
# has no backreference to the tag name).
# No capturing group: RE2 then finds each match with its DFA alone, where groups made it run its NFA over every
# script (2.5x slower on the real pages); the attributes are the match's text before its first ">".
_RAW_BLOCKS = rx.compile(r"<(?:script(?:[^>\w][^>]*)?>.*?</script|style(?:[^>\w][^>]*)?>.*?</style)\s*>",
                         re.S | re.I)
_JSON_ESCAPE = rx.compile(r"\\u([0-9a-fA-F]{4})")
_B64 = rx.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{24,}={0,2}")
# INJ016's screen (`predicates.ai_named_attribute`): a word of `ai_name` (letters and digits, case ignored) as a whole
# word of a `data-*` attribute's name, or of the value of a name, property, http-equiv or itemprop attribute on any
# tag. One search of the raw page; a naming value with a character reference is decoded and judged by `ai_name`.
_AI_WORD = "(?:" + "|".join(sorted(AI_NAMES, key=lambda w: (-len(w), w))) + ")"
_AI_NAMED = rx.compile(
    r"data-(?:[^\s/>=\"']*[^a-z0-9\s/>=\"'])?" + _AI_WORD + r"(?![a-z0-9])"
    r"|(?:name|property|http-equiv|itemprop)\s*=\s*[\"']?(?:[^\"'\s>]*[^a-z0-9\"'\s>])?" + _AI_WORD + r"(?![a-z0-9])",
    re.I)
_NAMING_WITH_REFERENCE = rx.compile(
    r"""(?:name|property|http-equiv|itemprop)\s*=\s*(?:"([^"]*&[^"]*)"|'([^']*&[^']*)'|([^\s>]*&[^\s>]*))""", re.I)
_LD_BLOCK = rx.compile(r"<script[^>\w][^>]*ld\+json[^>]*>(.*?)</script", re.S | re.I)
# A JSON key naming AI configuration (keys are short: the search stays within 80 characters of a quote).
_LD_CONFIG_KEY = rx.compile(
    r'"[^"\n]{0,80}?(?:instruc|prompt|system|sistema|directiv|ai[_\-]?note|note[_\-]?for|llm|assistant|asistente|'
    r'agent[_\-]?note|model[_\-]?note|for[_\-]?ai|para[_\-]?(?:la[_\-]?)?ia)[^"\n]{0,80}"\s*:', re.I)
_LOOKAROUND_OPENERS = ("(?!", "(?<!", "(?=", "(?<=")


def relax(pattern: str) -> str:
    """A superset of `pattern` that RE2 accepts: lookarounds removed, possessive quantifiers made greedy,
    and a leading clause-start group `(?:^|[...])\\s*` (or `[^\\S\\n]*`) reduced to the word boundary it implies."""
    out: list[str] = []
    i = 0
    n = len(pattern)
    while i < n:
        if pattern.startswith(_LOOKAROUND_OPENERS, i) and (i == 0 or pattern[i - 1] != "\\"):
            i = _skip_group(pattern, i)
            continue
        out.append(pattern[i])
        if pattern[i] == "\\" and i + 1 < n:
            out.append(pattern[i + 1])
            i += 2
            continue
        i += 1
    relaxed = "".join(out).replace("*+", "*").replace("++", "+").replace("?+", "?")
    # A clause-start anchor before a word implies a word boundary there: keep that much of it. Before anything else
    # (`@assistant …`: no word boundary at the start of a text) it is dropped, which only widens the match.
    return re.sub(r"^\(\?:\^\|(?:\\n|\[[^\]]*\])\)(?:\\s\*|\[\^\\S\\n\]\*)",
                  lambda m: "\\b" if relaxed[m.end():m.end() + 1].isalnum() or relaxed[m.end():m.end() + 1] in "(\\"
                  else "", relaxed)


def _skip_group(pattern: str, i: int) -> int:
    depth = 0
    j = i
    in_class = False
    while j < len(pattern):
        c = pattern[j]
        if c == "\\":
            j += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return j


def fold_page(text: str) -> str:
    """The page's text as the rules read a unit's: character references and JSON `\\u` escapes decoded (as the
    loaders decode them), then folded exactly as `scanner.normalize` folds (`fold_text`, the same per-character
    table), so a phrase the engine would match in a unit is there, folded the same way, in the page."""
    text = html.unescape(text)
    if "\\u" in text:
        text = _JSON_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)
    return fold_text(text)


class Prefilter:
    def __init__(self, lexicon: Lexicon, exempt: tuple[str, ...], learned: tuple = (), reading: tuple = ()):
        """`learned`: the learned rules (`learned.LearnedRule`); `reading`: the rules on the de-obfuscated reading
        (`reading.ReadingRule`). Each needs its own screen (`model_screen.py`)."""
        self.regex = None
        self.model_screen = None
        relaxed = {name: [relax(p) for p in g.patterns] for name, g in lexicon.groups.items()}
        patterns = [p for name, ps in relaxed.items() if name not in exempt for p in ps]
        options = re2.Options()
        options.max_mem = 256 << 20
        try:
            self.regex = re2.compile("|".join(f"(?:{p})" for p in patterns), options)
        except Exception:  # a pattern RE2 cannot express: stay exact, take the full path everywhere
            self.regex = None
        # Every group (the exempt ones too) for text decoded from base64: compiled on first use, as few pages hold
        # a printable base64 blob (its compile was about 16 ms of CPU of every scan's start). A union RE2 cannot build lets every
        # such blob pass (the page takes the full load), as no screen at all would.
        self._decoded_pattern = "|".join(f"(?:{p})" for ps in relaxed.values() for p in ps)
        self._decoded_options = options
        self._decoded_rx = None
        if learned or reading:
            from scanner.injection.model_screen import ModelScreen

            reading_rx = None
            if reading and self.regex is not None:
                # a gated signal (`ReadingRule.gated`: each conjunction needs a trigger group) shows a trigger
                # phrase; any other needs any group at all
                reading_rx = self.regex if all(r.gated for r in reading) else self.decoded_regex()
                if reading_rx is None:
                    self.regex = None              # no screen for the reading: every page takes the full path
            self.model_screen = ModelScreen(learned, reading_rx)

    def decoded_regex(self):
        """The union of every group's relaxed patterns (None: RE2 cannot build it)."""
        if self._decoded_rx is None:
            try:
                self._decoded_rx = re2.compile(self._decoded_pattern, self._decoded_options)
            except Exception:
                self._decoded_rx = False
        return self._decoded_rx or None

    @property
    def enabled(self) -> bool:
        return self.regex is not None

    def may_hold_injection(self, text: str) -> bool:
        """False only when no rule of the built-in pack can fire on this HTML page."""
        if self.regex is None:
            return True
        if not text.isascii():
            # The page's distinct characters (a C-speed set) answer what a search of each class would.
            chars = set(text)
            if any(_SUSPICIOUS.fullmatch(c) for c in chars if c >= "\u0131"):
                return True
            if not _INVISIBLE_CHARS.isdisjoint(chars) and _INVISIBLE_RUN.search(text):
                return True
        body = _RAW_BLOCKS.sub(_keep_json_ld, text)
        # Twice: the markup as it is (comments, attributes, chat tokens such as <|im_start|> intact), and with
        # every tag removed (a sentence split by inline tags, as the block-scope rules read it).
        folded = fold_page(body)
        if self.regex.search(folded):
            return True
        joined = fold_page(strip_tags(body))
        if self.regex.search(joined):
            return True
        if "ld+json" in body.lower():
            for block in _LD_BLOCK.finditer(body):
                if _LD_CONFIG_KEY.search(block.group(1)):
                    return True
        if _ai_named_attribute(body):
            return True
        if self._base64_text(body):
            return True
        # The learned rule (INJ015) and the rule on the de-obfuscated reading (INJ017) need their own screen: see
        # model_screen.py.
        return self.model_screen is not None and self.model_screen.screen(text, body, folded, joined)

    def _base64_text(self, body: str) -> bool:
        """Whether a base64 run of the raw page decodes to text a rule could flag. The runs are the engine's
        (`decode_blob` decodes each) found with a wider pattern — no look-ahead after the run, so a run the
        markup or a fourth "=" ends is still read: over the raw page the prefilter must see every run the
        engine's units can hold."""
        for m in _B64.finditer(body):
            decoded = decode_blob(m.group(0))
            if decoded is None:
                continue
            decoded_rx = self.decoded_regex()
            if decoded_rx is None or decoded_rx.search(fold_page(decoded)):
                return True
            # the learned and the reading rules read what a blob decodes to when it reads as words
            # (learned.decoded_items)
            if self.model_screen is not None:
                words = prose_parts(decoded)
                if words and (self.model_screen.may_read(words)
                              or (self.model_screen.rules and self.model_screen.may_fire_decoded(words))):
                    return True
        return False


def _ai_named_attribute(body: str) -> bool:
    """Whether the page may hold an attribute INJ016 reads: every page `predicates.ai_named_attribute` could hold
    on passes (a whole word of `ai_name` in a data-* name or in any naming value; references decoded)."""
    if _AI_NAMED.search(body):
        return True
    for m in _NAMING_WITH_REFERENCE.finditer(body):
        if ai_name(html.unescape(m.group(1) or m.group(2) or m.group(3) or "")):
            return True
    return False


def _keep_json_ld(m: rx.Match) -> str:
    block = m.group(0)
    start_tag = block[:block.find(">")]           # "<script" or "<style" and the attributes ("ld+json" in neither name)
    return block if "ld+json" in start_tag.lower() else " "
