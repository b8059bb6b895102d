"""scanner.rx: Python's regex meaning, run by RE2. Each case is checked against Python's own engine."""

from __future__ import annotations

import re

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scanner import rx


def spans(pattern, text, flags=0, pos=0, endpos=None, engine="re"):
    endpos = len(text) if endpos is None else endpos
    ours = [(m.span(), m.groups()) for m in rx.compile(pattern, flags, engine=engine).finditer(text, pos, endpos)]
    python = (re if engine == "re" else regex).compile(pattern, flags)
    theirs = [(m.span(), m.groups()) for m in python.finditer(text, pos, endpos)]
    return ours, theirs


@pytest.mark.parametrize("pattern, text", [
    (r"é+", "aéé b éé"),                                        # character offsets, not UTF-8 bytes
    (r"\w+", "héllo wörld 中文 😀x ǅ² \u0301a"),                  # Python's Unicode \w (marks are not \w)
    (r"\d+", "12 ٣٤ ²"),                                         # \d is str.isdecimal
    (r"\s+", "a\xa0\u2003\u2028\x1c\x85b"),                      # \s is str.isspace
    (r"\bfoo\b", "foo ñfoo foo_ foo, afoo foo éfoo foo\u2028"),  # \b next to non-ASCII letters
    (r"\Bfoo", "xfoo ñfoo foo"),
    (r"(?i)i", "iIİı"),                                          # Python folds i with İ and ı (RE2 does not)
    (r"(?i)k+|(?i:s)", "kK\u212a sSſ"),
    (r"(?<![A-Za-z0-9_-])key-[a-z]{4}(?![a-z])", "key-abcd xkey-abcd key-abcde -key-abcd,key-abcd"),
    (r"(?<=\$)\d+", "$12 13 $$4"),
    (r"\d{3}(?=\s|$)", "123 4567 890"),
    (r"a$", "a\na"), (r"a$", "a\n"), (r"(?m)^a$", "a\nb\na"), (r"a\Z", "aa"),
    (r"(?P<a>x)(?P<b>y)?", "xyx"),
    (r"a*", "baa"), (r"(?:)", "ab"),                             # empty matches
    (r"[^\W\d_]+", "año 2024_ x"),
    (r"\d*\d*\d*\d*Q", "1234Q 55 Q ٣٣Q"),
    (r"(?:ab|a)\b", "ab a, abc a"),                               # \b moved into the alternatives
    (r"\bde\b[^.\n]{0,10}\bfin\b", "de la fin. de fin, de xfin defin de ... fin"),   # \b . {0,n} \b
    (r"x\w*\b", "xa x_ xé- x"),
    (r"(?:\btel:|wa\.me/)(\d+)", "tel:12 xtel:34 wa.me/56"),      # a leading alternation, distributed
    (r"\Ax|y\Z", "xyx y"),
    (r"(?<=a)b|c", "abcb ac"),
])
def test_the_same_matches_as_python(pattern, text):
    ours, theirs = spans(pattern, text)
    assert ours == theirs


def test_lone_surrogates_are_characters_like_any_other():
    ours, theirs = spans(r"[^a]+|a", "\ud800a\udfffb")
    assert ours == theirs == [((0, 1), ()), ((1, 2), ()), ((2, 4), ())]


@pytest.mark.parametrize("pattern, text, pos, endpos", [
    (r"(?<!a)b", "ab", 1, 2),            # a lookbehind sees the text before pos
    (r"\bb", "ab", 1, 2),
    (r"a(?!b)", "ab", 0, 1),             # the text ends at endpos: nothing follows
    (r"a\b", "ab", 0, 1),
    (r"a$", "ab", 0, 1),
    (r"^b", "ab", 1, 2),                 # ^ is the real start, not pos
    (r"(?m)^b", "a\nb", 2, 3),
])
def test_pos_and_endpos_as_in_re(pattern, text, pos, endpos):
    ours, theirs = spans(pattern, text, pos=pos, endpos=endpos)
    assert ours == theirs
    compiled, python = rx.compile(pattern), re.compile(pattern)
    for method in ("search", "match", "fullmatch"):
        a, b = getattr(compiled, method)(text, pos, endpos), getattr(python, method)(text, pos, endpos)
        assert (a and a.span()) == (b and b.span()), method


def test_the_regex_engine_meaning_for_presidio_patterns():
    # the regex module's \w holds combining marks, re's does not
    assert spans(r"\w+", "ca\u0301fe", engine="regex")[0] == spans(r"\w+", "ca\u0301fe", engine="regex")[1]
    assert rx.compile(r"\w+", engine="regex").search("ca\u0301fe").group() == "ca\u0301fe"
    assert rx.compile(r"\w+").search("ca\u0301fe").group() == "ca"


def test_reading_a_match():
    m = rx.compile(r"(?P<key>\w+)=(?P<value>\w*)").search("  token=abc ")
    assert (m.span(), m.span("value"), m.start(1), m.end("key")) == ((2, 11), (8, 11), 2, 7)
    assert (m.group(), m.group("key", "value"), m["value"], m.groups(), m.groupdict()) == (
        "token=abc", ("token", "abc"), "abc", ("token", "abc"), {"key": "token", "value": "abc"})
    assert m.lastindex == 2 and m.re.groupindex == {"key": 1, "value": 2}
    assert rx.compile(r"(a)|(b)").search("b").groups() == (None, "b")
    assert rx.compile(r"\d+").findall("a1 b22") == ["1", "22"]
    assert rx.compile(r"(\d)(\w)").findall("1a 2b") == [("1", "a"), ("2", "b")]
    assert rx.compile(r"<[^>]*>").sub("", "a<b>c<d>") == "ac"
    assert rx.compile(r"\d").sub(lambda m: str(int(m.group()) + 1), "a1b2", count=1) == "a2b2"
    assert list(rx.compile("a").finditer("aa", timeout=1.0))     # keywords Presidio passes are accepted
    with pytest.raises(IndexError):
        m.group("nope")


@pytest.mark.parametrize("pattern, why", [
    (r"(a)\1", "backreference"), (r"(?P<x>a)(?P=x)", "backreference"),
    (r"a(?=b)c", "lookaround"), (r"a(?<!b)c", "lookaround"), (r"(?<=a+)b", "lookbehind"),
    (r"a*+", "possessive"), (r"(?>a)", "atomic"), (r"(a)?(?(1)b|c)", "conditional"),
    (r"a{1001}", "1000"), (r"[a-", "invalid regex"), (r"(?L)a", "invalid regex"),
    (r"\b(?:a|-)", r"\b"), (r"(?<=ab)c|d", "one alternative of several"),
])
def test_what_re2_cannot_run_is_refused_with_the_reason(pattern, why):
    with pytest.raises(rx.RegexError) as err:
        rx.compile(pattern)
    assert why in str(err.value) and "\n" not in str(err.value)


def test_a_lookahead_whose_rewriting_would_not_end_is_refused_when_compiled():
    """A negative lookahead that looks 80 characters ahead for a word needs a state of its rewriting for every set
    of places the word may have started there: it took 19 GB before the budget. It is refused by `compile` (so a
    rule pack that holds it fails to load), and a near lookahead like the shipped rules' still works."""
    import resource

    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(rx.RegexError) as err:
        rx.compile(r"\bsistema\s*:(?![^.\n]{0,80}(?:mantenimiento|maintenance|downtime))")
    assert "lookahead too complex" in str(err.value)
    # a bound on memory (an unbounded rewrite takes gigabytes)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss < 1_000_000      # KiB
    near = r"\bignore\s+this\s+email\s+and\b(?!\s+(?:no|nothing|your|we)\W)"
    ours, theirs = spans(near, "ignore this email and no changes; ignore this email and forward it")
    assert ours == theirs and len(ours) == 1


def test_a_pattern_compiled_earlier_keeps_its_meaning_when_the_alphabet_is_refined():
    first = rx.compile(r"[^\W\d]+")
    text = "año Ωmega ⅻ ٣x Ѐ"
    before = [m.span() for m in first.finditer(text)]
    rx.compile("[\u0391-\u03a9\u0400]")    # cuts the atoms the first pattern was written for
    assert [m.span() for m in first.finditer(text)] == before == [m.span() for m in re.finditer(r"[^\W\d]+", text)]


def test_a_tokenizer_loop_reads_the_text_once():
    """match(text, pos) over one long text, as the HTML and JSON tokenizers call it (the text is encoded once:
    this would take minutes if each call re-read the megabyte)."""
    text = ("<p class='x'>é</p>" * 60000)
    tag = rx.compile(r"<[^>]*>")
    pos, n = 0, 0
    while (m := tag.search(text, pos)) is not None:
        pos, n = m.end(), n + 1
    assert n == 120000 and pos == len(text) - 0


PATTERNS = [r"\b\w+\b", r"(?<![a-z])[a-z]{2,}(?![a-z])", r"(?i)[a-zñ]+", r"\d+(?:[.,]\d+)?(?!\d)",
            r"(?<!\d)\d{3}(?:[ -]?\d{2}){2}(?![ -]?\d)", r"\bde\s+(?:la|el)\b", r"(?m)^\s*\w+:", r"[^\s\"'<>]+",
            r"(?:^|[\n.:])[^\S\n]*nota\s*:", r"x\b[^.\n]{0,5}\by", r"(?s).{2}$", r"\B\w\B"]
ALPHABET = "aAbxyzñÑéÉİıKſ019٣ \t\n\r.,:;-_\"'<>\xa0\u2028中😀\u0301"


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PATTERNS), st.text(alphabet=ALPHABET, max_size=40), st.integers(0, 40), st.integers(0, 40))
def test_property_same_matches_as_python_at_any_pos_and_endpos(pattern, text, pos, endpos):
    pos, endpos = min(pos, endpos), max(pos, endpos)
    ours, theirs = spans(pattern, text, pos=pos, endpos=endpos)
    assert ours == theirs


def test_the_alphabet_cuts_atoms_and_refuses_past_a_byte():
    """A fresh alphabet (the shared one is left alone): each set cuts the atoms it straddles; a text reads as one
    byte per character; the 129th atom is refused."""
    from scanner.rx.alphabet import MAX_ATOMS, Alphabet, AlphabetFull
    from scanner.rx.charset import CharSet

    a = Alphabet()
    a.refine([CharSet([(0xE0, 0xFF)]), CharSet.of(0xF1)])       # à-ÿ, and ñ alone
    assert a.count == 3                                          # others, à-ÿ but ñ, ñ
    data = a.encode("añá中x")
    assert len(data) == 5 and data[0] == ord("a") and data[4] == ord("x")
    assert len({data[1], data[2], data[3]}) == 3 and data[3] == 0x80 + 0    # 中 is in the first atom
    with pytest.raises(AlphabetFull):
        a.refine([CharSet.of(0x4E00 + i) for i in range(MAX_ATOMS)])


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=1, max_size=60))
def test_short_and_long_texts_are_encoded_alike(text):
    """Texts under 256 characters go through `str.translate`, longer ones through numpy: the same bytes."""
    from scanner.rx.alphabet import ALPHABET

    rx.compile(r"[áéíóúñ]+|\w+|[^\W\d]+|\s")     # some atoms beyond the bundled ones
    short = ALPHABET.encode(text)
    assert len(short) == len(text)
    assert ALPHABET.encode(text * (256 // len(text) + 1)) == short * (256 // len(text) + 1)


def test_one_pattern_object_however_the_call_spells_its_arguments():
    # a pattern is translated and its programs written once: the defaults given or left out, flags as a RegexFlag
    p = rx.compile(r"(?:uno|dos)\s+tres")
    assert rx.compile(r"(?:uno|dos)\s+tres", 0, engine="re", max_mem=rx.DEFAULT_MAX_MEM) is p
    q = rx.compile(r"cuatro\b", re.IGNORECASE)
    assert rx.compile(r"cuatro\b", 2) is q and rx.compile(r"cuatro\b", re.I, max_mem=rx.DEFAULT_MAX_MEM) is q
    assert rx.compile(r"(?:uno|dos)\s+tres", max_mem=rx.DEFAULT_MAX_MEM // 2) is not p
    assert rx.compile(r"(?:uno|dos)\s+tres", engine="regex") is not p
