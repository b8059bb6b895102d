"""Regexes that run on untrusted text: Python's syntax and meaning, RE2's linear time, Python's offsets.

Every pattern a rule or a scanner runs over a document — the injection lexicon, the secret rules (built-in and
`--rules`), the personal-data recognizers, the loaders' tokenizers — goes through `compile()`. A backtracking
engine (`re`, `regex`) can take quadratic or exponential time on crafted text; RE2 (google-re2) is an
automaton whose time is linear in the text whatever the pattern. `compile()` parses the pattern with Python's
own parser and writes RE2 programs that match exactly what the Python engine would match
(scanner.rx.translate, scanner.rx.charset): Unicode `\\w`/`\\d`/`\\s`, Python's case folding, `\\b`, and
lookarounds where the match starts or ends. What RE2 cannot run with the same meaning — a backreference, a
lookaround inside the pattern, possessive quantifiers, atomic or conditional groups, repetition counts over
1000, a program over its memory budget — raises `RegexError` naming the construct. Nothing ever falls back
to a backtracking engine.

The compiled object answers like a `re.Pattern` (search, match, fullmatch, finditer, findall, sub, subn;
`pos`/`endpos` as in `re`: lookbehinds see before `pos`, the text ends at `endpos`) with Python character
offsets. RE2 reads a text as one byte per character (scanner.rx.alphabet), encoded once per text
(scanner.rx.text), so offsets need no conversion and a tokenizer calling `match(text, pos)` in a loop stays
linear. One difference from `re`, by design: after an empty match the next search starts one character on
(`re` first retries for a non-empty match at the same place).
"""

from __future__ import annotations

import re as _re
import weakref
from dataclasses import dataclass
from functools import lru_cache

import re2
from re2 import _re2

from scanner.rx import stored as _stored
from scanner.rx.alphabet import ALPHABET, AlphabetFull
from scanner.rx.charset import ALL, CharSet
from scanner.rx.text import encoded
from scanner.rx.translate import (
    Alt,
    Chars,
    Group,
    Look,
    Marker,
    RegexError,
    Rep,
    Seq,
    Writer,
    _Builder,
    check_runnable,
    cond_sets,
    continuation,
    peel_lead,
    peel_trail,
    plain,
    resolve,
    top_alternatives,
    tree_sets,
    width,
)

try:                                   # Python 3.11+
    from re import _parser as _P
except ImportError:                    # pragma: no cover - Python 3.10
    import sre_parse as _P             # type: ignore

__all__ = ["Pattern", "Match", "RegexError", "compile", "escape", "refresh", "DEFAULT_MAX_MEM"]

IGNORECASE, MULTILINE, DOTALL, VERBOSE, ASCII, UNICODE = 2, 8, 16, 64, 256, 32
_ALLOWED_FLAGS = IGNORECASE | MULTILINE | DOTALL | VERBOSE | ASCII | UNICODE
DEFAULT_MAX_MEM = 64 << 20             # RE2's budget per program (its DFA cache; the program itself gets 2/3)
MAX_PATTERN_CHARS = 100_000

_UNANCHORED = _re2.RE2.Anchor.UNANCHORED
_START = _re2.RE2.Anchor.ANCHOR_START
_BOTH = _re2.RE2.Anchor.ANCHOR_BOTH
_NULL = (-1, -1)

escape = _re.escape


@dataclass(frozen=True)
class _AltInfo:
    group: int | None          # RE2 group holding the match proper (None: the whole RE2 match)
    markers: tuple[int, ...]   # RE2 groups marking where the match ends, before a continuation
    group_map: tuple[tuple[int, int], ...]   # (pattern group, RE2 group)


def _re2_program(text: str, max_mem: int):
    options = re2.Options()
    options.max_mem = max_mem
    options.log_errors = False
    options.encoding = re2.Options.Encoding.LATIN1
    program = _re2.RE2(text.encode("ascii"), options)
    if not program.ok():
        error = program.error()
        error = error.decode("utf-8", "replace") if isinstance(error, bytes) else str(error)
        if "too large" in error or "too big" in error:
            raise RegexError(f"the pattern is too large for RE2's memory budget ({max_mem >> 20} MB)")
        raise RegexError(f"RE2 refused the pattern: {error}")   # pragma: no cover - we write what RE2 reads
    return program


class _Program:
    """One RE2 program and how to read a pattern match off its groups."""

    __slots__ = ("re2", "alts", "text", "direct")

    def __init__(self, text: str, alts: list[_AltInfo], max_mem: int, ngroups: int):
        self.re2 = _re2_program(text, max_mem)
        self.alts = alts
        self.text = text
        # direct: RE2's groups are the pattern's, in order (no condition, no alternative left out)
        self.direct = (len(alts) > 0 and all(a.group is None for a in alts)
                       and sorted(g for a in alts for g, _ in a.group_map) == list(range(1, ngroups + 1))
                       and all(g == k for a in alts for g, k in a.group_map)
                       and self.re2.NumberOfCapturingGroups() == ngroups)


    @classmethod
    def stored(cls, entry: dict | None, max_mem: int, ngroups: int) -> "_Program | None":
        if entry is None:
            return None
        alts = [_AltInfo(g, tuple(markers), tuple(tuple(pair) for pair in gmap)) for g, markers, gmap in entry["alts"]]
        return cls(entry["text"], alts, max_mem, ngroups)

    def to_json(self) -> dict:
        return {"text": self.text, "alts": [[a.group, list(a.markers), [list(p) for p in a.group_map]]
                                            for a in self.alts]}


@dataclass
class _Item:
    prev: CharSet              # the character before the match must be in it (ALL: no condition)
    bos_ok: bool               # the leading conditions hold at the start of the text
    checks: list               # leading lookarounds checked on each candidate
    body: object
    trail: list                # trailing conditions


class _Check:
    """A leading lookaround other than one character behind: run (with RE2) at each candidate start."""

    __slots__ = ("look", "behind", "negative", "program", "width", "text")

    def __init__(self, look: Look):
        self.look = look
        self.behind = look.behind
        self.negative = look.negative
        lo, hi = width(look.body)
        if look.behind and hi is None:
            raise RegexError("a lookbehind of unbounded length")
        self.width = hi or 0
        self.program = None

    @classmethod
    def stored(cls, entry: dict) -> "_Check":
        check = cls.__new__(cls)
        check.look = None
        check.behind, check.negative, check.width = entry["behind"], entry["negative"], entry["width"]
        check.program = None
        check.text = entry["text"]
        return check

    def write(self, max_mem: int) -> None:
        body = plain(self.look.body, ALPHABET)
        self.text = f"(?:{body})\\z" if self.behind else f"(?:{body})"
        self.program = _re2_program(self.text, max_mem)

    def holds(self, buf, bend: int, p: int) -> bool:
        if self.behind:
            window = memoryview(buf)[:p] if p < bend else buf      # the text ends at p (a view: no copy)
            found = self.program.Match(_UNANCHORED, window, max(0, p - self.width), p)[0]
        else:
            found = self.program.Match(_START, buf, p, bend)[0]
        return (found != _NULL) != self.negative


class Pattern:
    """A compiled pattern: `re.Pattern`'s interface, RE2 underneath."""

    def __init__(self, pattern: str, flags: int, engine: str, max_mem: int, stored: dict | None = None):
        if not isinstance(pattern, str):
            raise RegexError("patterns are str")
        if len(pattern) > MAX_PATTERN_CHARS:
            raise RegexError(f"a pattern longer than {MAX_PATTERN_CHARS} characters")
        if flags & ~_ALLOWED_FLAGS:
            raise RegexError("unsupported flags (only IGNORECASE, MULTILINE, DOTALL, VERBOSE, ASCII)")
        self.pattern = pattern
        self.engine = engine
        self._key = (pattern, flags, engine, max_mem)
        self._max_mem = max_mem
        self._search = self._full = None
        self._stored = stored
        if stored is not None:
            # Written ahead (scanner.rx.stored): its programs for the alphabet the stored file installed. The
            # tree is built only if the alphabet changes or a program that was not stored is asked for.
            self.flags = stored["gflags"]
            self.groups = stored["groups"]
            self.groupindex = dict(stored["groupindex"])
            self._items = None
            self._uses_prev = stored["uses_prev"]
            self._checks = [_Check.stored(c) for c in stored["checks"]]
            self._plain = not self._uses_prev and not self._checks
            self._version = -1
            _PATTERNS.add(self)
            return
        self._analyse_source()
        # The trailing conditions rewritten once now, so that one too complex to rewrite is refused here, by the
        # rule pack that holds it, and not at its first search (see MAX_CONTINUATION_STATES).
        with ALPHABET.lock:            # the alphabet as one state (another thread may be refining it)
            for it in self._items:
                if it.trail:
                    continuation(it.trail, False, ALPHABET)
        self._version = -1            # the programs are written on first use (or by refresh(), or program_size())
        _PATTERNS.add(self)

    def _analyse_source(self) -> None:
        """Parse the pattern and build what its programs are written from (and refine the alphabet)."""
        pattern, flags, engine = self._key[:3]
        try:
            parsed = _P.parse(pattern, flags)
        except (_re.error, OverflowError, RecursionError) as exc:
            raise RegexError(f"invalid regex: {exc}") from None
        gflags = parsed.state.flags
        if gflags & ~_ALLOWED_FLAGS:     # LOCALE, DEBUG
            raise RegexError("unsupported flags (LOCALE / DEBUG)")
        self.flags = gflags
        self._conts: dict = {}
        self.groups = parsed.state.groups - 1
        self.groupindex = dict(parsed.state.groupdict)
        try:
            tree = resolve(_Builder(engine).seq(list(parsed), gflags))
            self._items = self._analyse(tree)
        except RecursionError:
            raise RegexError("a pattern nested too deeply") from None
        self._uses_prev = any(it.prev != ALL for it in self._items)
        self._checks = [c for it in self._items for c in it.checks]
        self._plain = not self._uses_prev and not self._checks
        sets = [it.prev for it in self._items]
        for it in self._items:
            sets += tree_sets(it.body)
            sets += cond_sets(it.trail)
            for c in it.checks:
                sets += tree_sets(c.look.body)
        try:
            ALPHABET.refine(sets)
        except AlphabetFull as exc:
            raise RegexError(str(exc)) from None
        self._stored = None

    # -- compile -------------------------------------------------------------------------------------

    def _analyse(self, tree) -> list[_Item]:
        items = []
        for alt in top_alternatives(tree):
            lead, body = peel_lead(alt)
            body, trail = peel_trail(body, [])
            check_runnable(body)
            prev, bos_ok, checks = ALL, True, []
            for look in lead:
                one = _one_char(look.body)
                if look.behind and one is not None:
                    prev = prev & (one.complement() if look.negative else one)
                    bos_ok = bos_ok and look.negative
                else:
                    checks.append(look)
            items.append(_Item(prev, bos_ok, checks, body, list(trail or [])))
        if any(it.checks for it in items):
            if len(items) > 1:
                raise RegexError("a lookaround at the start of one alternative of several (only a one-character "
                                 "lookbehind, or \\b, can be rewritten there)")
            if width(items[0].body)[1] is None:
                raise RegexError("a lookahead, or a lookbehind longer than one character, at the start of a pattern "
                                 "of unbounded length: RE2 cannot check it in linear time")
            items[0].checks = [_Check(c) for c in items[0].checks]
        return items

    def _write(self) -> None:
        """The RE2 programs for the alphabet as it is now (again when it has been refined since)."""
        with ALPHABET.lock:
            if self._version == ALPHABET.version:
                return
            if self._stored is not None and ALPHABET.version == _stored.version():
                self._write_stored()
                return
            if self._items is None:          # stored, but the alphabet has changed since: from the source
                self._analyse_source()
            self._conts: dict = {}
            search = self._programs(at_end=False)
            full = self._programs(at_end=True) if self._full is not None else None
            for c in self._checks:
                c.write(self._max_mem)
            self._search, self._full = search, full
            self._version = ALPHABET.version

    def _write_stored(self) -> None:
        stored, mem, groups = self._stored, self._max_mem, self.groups
        self._search = tuple(_Program.stored(p, mem, groups) for p in stored["search"])
        for c, text in zip(self._checks, (c["text"] for c in stored["checks"])):
            c.program = _re2_program(text, mem)
        self._version = ALPHABET.version

    def _full_programs(self) -> None:
        """Write the programs of a whole-text match (before the text is encoded: building a stored pattern's
        tree may refine the alphabet, and then `_prepare` writes every program again)."""
        with ALPHABET.lock:
            if self._full is not None:
                return
            stored = self._stored
            if stored is not None and stored["full"] is not None and ALPHABET.version == _stored.version():
                self._write()
                self._full = tuple(_Program.stored(p, self._max_mem, self.groups) for p in stored["full"])
                return
            if self._items is None:
                self._analyse_source()
            self._full = self._programs(at_end=True)

    def _programs(self, at_end: bool) -> tuple:
        """(main, first): main searches from the character before pos when matches need one; first tries a
        match at the very start of the text, where that character is missing."""
        main = self._program(at_end, first=False)
        first = self._program(at_end, first=True) if self._uses_prev else None
        return main, first

    def _program(self, at_end: bool, first: bool) -> _Program | None:
        # Simple: no condition anywhere, so the RE2 match is the match (no group around each alternative).
        simple = not self._uses_prev and not any(it.trail or _has_marker(it.body) for it in self._items)
        parts, alts, ngroups, run = [], [], 0, None
        for it in self._items:
            if first and not it.bos_ok:
                continue
            if self._uses_prev and not first and not it.prev:
                continue
            w = Writer(ALPHABET, at_end, self._conts)
            w.ngroups = ngroups
            outer = None if simple else w.group()
            body = w.write(it.body)
            cont = w.continuation(it.trail)
            if body is None or cont is None:
                continue
            prefix = ALPHABET.cls(it.prev) if (self._uses_prev and not first) else ""
            part = body if simple else f"({body}){cont}"
            # consecutive alternatives that need the same character before them share its class
            if run is not None and run[0] == prefix:
                run[1].append(part)
            else:
                run = (prefix, [part])
                parts.append(run)
            alts.append(_AltInfo(outer, tuple(w.markers), tuple(sorted(w.group_map.items()))))
            ngroups = w.ngroups
        if not parts:
            return None
        chunks = []
        for prefix, ps in parts:
            if prefix:
                chunks.append(prefix + (ps[0] if len(ps) == 1 else "(?:" + "|".join(ps) + ")"))
            else:
                chunks.extend(ps)
        text = "|".join(chunks)
        return _Program(text, alts, self._max_mem, self.groups)

    @property
    def programs(self) -> list[str]:
        """The RE2 texts this pattern runs (for tests and size limits)."""
        self._write()
        return [p.text for p in self._search if p is not None]

    def program_size(self) -> int:
        self._write()
        return max((p.re2.ProgramSize() for p in self._search if p is not None), default=0)

    # -- run -----------------------------------------------------------------------------------------

    def _prepare(self, string: str, pos: int, endpos: int | None):
        if not isinstance(string, str):
            raise TypeError("centinela regexes run on str")
        if self._version != ALPHABET.version:
            self._write()
        n = len(string)
        if endpos is None or endpos > n:
            endpos = n
        data = encoded(string)
        buf = data if endpos == n else memoryview(data)[:endpos]
        return buf, max(0, pos), endpos

    def _find(self, string: str, pos: int, endpos: int | None, anchor):
        buf, pos, endpos = self._prepare(string, pos, endpos)
        if pos > endpos:
            return None
        return self._at(string, buf, pos, endpos, anchor)

    def _at(self, string, buf, pos: int, endpos: int, anchor):
        """The first match at or after pos (at pos only, when anchored)."""
        if self._plain and anchor is not _BOTH:          # the common case, kept short: no condition to handle
            main = self._search[0]
            if main is None:
                return None
            spans = main.re2.Match(anchor, buf, pos, endpos)
            if spans[0][0] < 0:
                return None
            return Match(self, string, spans if main.direct else self._spans(main, spans), pos, endpos)
        if anchor is _BOTH:
            if self._full is None:
                with ALPHABET.lock:
                    self._full = self._programs(at_end=True)
            main, first = self._full
        else:
            main, first = self._search
        while True:
            spans = None
            program = main
            if self._uses_prev:
                if pos == 0:
                    if first is not None:
                        spans = first.re2.Match(_START if anchor is _UNANCHORED else anchor, buf, 0, endpos)
                        if spans[0] != _NULL:
                            program = first
                        else:
                            spans = None
                    if spans is None:
                        if anchor is not _UNANCHORED or main is None:
                            return None
                        spans = main.re2.Match(anchor, buf, 0, endpos)
                elif main is not None:
                    spans = main.re2.Match(anchor, buf, pos - 1, endpos)
            elif main is not None:
                spans = main.re2.Match(anchor, buf, pos, endpos)
            if spans is None or spans[0] == _NULL:
                return None
            m = Match(self, string, spans if program.direct else self._spans(program, spans), pos, endpos)
            if not self._checks or all(c.holds(buf, endpos, m._spans[0][0]) for c in self._checks):
                return m
            if anchor is not _UNANCHORED:
                return None
            pos = m._spans[0][0] + 1
            if pos > endpos:
                return None

    def _spans(self, program: _Program, spans) -> list:
        alt = None
        for a in program.alts:
            if a.group is None or spans[a.group] != _NULL:
                alt = a
                break
        if alt is None or alt.group is None:
            s, e = spans[0]
        else:
            s, e = spans[alt.group]
            for k in alt.markers:
                if spans[k] != _NULL:
                    e = spans[k][0]
                    break
        out = [(s, e)] + [_NULL] * self.groups
        for a in (program.alts if alt is None or alt.group is None else (alt,)):
            for g, k in a.group_map:
                gs, ge = spans[k]
                if gs != -1:
                    out[g] = (min(gs, e), min(ge, e))
        return out

    def search(self, string: str, pos: int = 0, endpos: int | None = None) -> "Match | None":
        return self._find(string, pos, endpos, _UNANCHORED)

    def match(self, string: str, pos: int = 0, endpos: int | None = None) -> "Match | None":
        return self._find(string, pos, endpos, _START)

    def fullmatch(self, string: str, pos: int = 0, endpos: int | None = None) -> "Match | None":
        if self._full is None:
            self._full_programs()
        return self._find(string, pos, endpos, _BOTH)

    def finditer(self, string: str, pos: int = 0, endpos: int | None = None, **_ignored):
        """Non-overlapping matches, left to right (`timeout=` and other keywords some callers pass are ignored:
        RE2 needs none)."""
        buf, pos, end = self._prepare(string, pos, endpos)
        while pos <= end:
            m = self._at(string, buf, pos, end, _UNANCHORED)
            if m is None:
                return
            yield m
            s, e = m._spans[0]
            pos = e + 1 if e == s else e

    def findall(self, string: str, pos: int = 0, endpos: int | None = None) -> list:
        out = []
        for m in self.finditer(string, pos, endpos):
            if self.groups == 0:
                out.append(m.group(0))
            elif self.groups == 1:
                out.append(m.group(1) or "")
            else:
                out.append(tuple(g or "" for g in m.groups()))
        return out

    def subn(self, repl, string: str, count: int = 0) -> tuple[str, int]:
        if not callable(repl):
            if "\\" in repl:
                raise RegexError("replacement templates with backslashes are not supported: pass a function")
            text = repl
            repl = lambda _m: text  # noqa: E731
        out, last, k = [], 0, 0
        for m in self.finditer(string):
            s, e = m.span()
            out.append(string[last:s])
            out.append(repl(m))
            last = e
            k += 1
            if count and k >= count:
                break
        out.append(string[last:])
        return "".join(out), k

    def sub(self, repl, string: str, count: int = 0) -> str:
        return self.subn(repl, string, count)[0]

    def __repr__(self) -> str:
        return f"rx.compile({self.pattern!r})"


def _has_marker(n) -> bool:
    if isinstance(n, Marker):
        return True
    if isinstance(n, Seq):
        return any(_has_marker(i) for i in n.items)
    if isinstance(n, Alt):
        return any(_has_marker(a) for a in n.alts)
    if isinstance(n, (Group, Rep)):
        return _has_marker(n.body)
    return False


def _one_char(n) -> "object | None":
    """The CharSet when n matches exactly one character from a set, else None."""
    while isinstance(n, Seq) and len(n.items) == 1:
        n = n.items[0]
    while isinstance(n, Group) and n.index is None:
        n = n.body
        while isinstance(n, Seq) and len(n.items) == 1:
            n = n.items[0]
    return n.cs if isinstance(n, Chars) else None


class Match:
    """A match, with `re.Match`'s reading methods; offsets are characters of the str searched."""

    __slots__ = ("re", "string", "_spans", "pos", "endpos")

    def __init__(self, pattern: Pattern, string: str, spans: list, pos: int, endpos: int):
        self.re = pattern
        self.string = string
        self._spans = spans
        self.pos = pos
        self.endpos = endpos

    def _index(self, g) -> int:
        if g.__class__ is str:
            try:
                return self.re.groupindex[g]
            except KeyError:
                raise IndexError("no such group") from None
        if not 0 <= g <= self.re.groups:
            raise IndexError("no such group")
        return g

    def span(self, g=0) -> tuple[int, int]:
        return self._spans[self._index(g)]

    def start(self, g=0) -> int:
        return self._spans[self._index(g)][0]

    def end(self, g=0) -> int:
        return self._spans[self._index(g)][1]

    def group(self, *gs):
        if len(gs) < 2:
            s, e = self._spans[self._index(gs[0]) if gs else 0]
            return None if s < 0 else self.string[s:e]
        out = []
        for g in gs:
            s, e = self._spans[self._index(g)]
            out.append(None if s < 0 else self.string[s:e])
        return tuple(out)

    def __getitem__(self, g):
        return self.group(g)

    def groups(self, default=None) -> tuple:
        return tuple(default if (s := self.group(i)) is None else s for i in range(1, self.re.groups + 1))

    def groupdict(self, default=None) -> dict:
        return {name: (default if (s := self.group(i)) is None else s) for name, i in self.re.groupindex.items()}

    @property
    def lastindex(self):
        best, best_end = None, -1
        for i in range(1, self.re.groups + 1):
            s, e = self._spans[i]
            if s != -1 and e > best_end:
                best, best_end = i, e
        return best

    def __repr__(self) -> str:
        return f"<rx.Match span={self.span()} match={self.group()!r}>"


_PATTERNS: "weakref.WeakSet[Pattern]" = weakref.WeakSet()


def refresh() -> None:
    """Write every compiled pattern for the alphabet as it is now (each would on its next use): called before
    forking workers, so they inherit programs ready to run."""
    for p in list(_PATTERNS):
        p._write()


def compile(pattern: str, flags: int = 0, *, engine: str = "re", max_mem: int = DEFAULT_MAX_MEM) -> Pattern:
    """The pattern (Python syntax, meant as `engine` — "re" or "regex" — means it) as an RE2-run Pattern: one
    object per (pattern, flags, engine, max_mem), however the call spells them (`max_mem` left out or given as
    its default, flags as an int or a RegexFlag), so a pattern is translated and its programs written once."""
    if engine not in ("re", "regex"):
        raise ValueError("engine is 're' or 'regex'")
    return _compiled(pattern, int(flags), engine, max_mem)


@lru_cache(maxsize=2048)
def _compiled(pattern: str, flags: int, engine: str, max_mem: int) -> Pattern:
    return Pattern(pattern, flags, engine, max_mem, _stored.entry(pattern, flags, engine, max_mem))
