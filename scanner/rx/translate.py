"""A Python-syntax pattern, parsed by Python's own parser, written out as RE2 programs with the same matches.

The pattern becomes a small tree (`Chars` for one character as an exact code-point set, `Seq`, `Alt`,
`Group`, `Rep`, `Look` for a lookaround, `Edge` for an anchor or word boundary). Then:

1. Every `\\b` / `\\B` is decided where the characters on both sides are fixed by the pattern (dropped when
   it always holds, a dead end when it never does), or turned into a one-character lookbehind (at the start:
   `\\bfoo` = not after a word character) or lookahead (at the end: `foo\\b` = not before one). Next to an
   alternation it moves into each alternative (`(?:ab|c:)\\b`); around a run of one class between two of them
   (`\\b[^.]{0,60}\\b`) the run's first and last characters are written with the class each boundary leaves.
2. The top-level alternatives are taken apart; each keeps its
   * leading conditions, on the position where the match starts: a one-character lookbehind is matched as
     that character, consumed before the match proper (so the program for a search from `pos` starts at
     `pos - 1`; a match at the very start of the text is tried first by a second program, `first`, in which
     the condition is decided for "no character before"); a longer lookbehind or a lookahead becomes a
     check run on each candidate (only in a single-alternative pattern of bounded length, where retrying
     one character on is exact and linear);
   * trailing conditions, on what follows the match (lookaheads of bounded shape, `\\b` after a word, `$`):
     written as a consumed continuation that can match exactly when every condition holds — a small
     automaton over the characters that follow — with an empty group before it marking where the match ends
     (inside a final alternation, each alternative gets its own).
3. Anything left that RE2 cannot run raises `RegexError`: a backreference, a lookaround elsewhere,
   possessive quantifiers, atomic or conditional groups, repetition counts over RE2's 1000.

The programs never carry `(?i)` or `\\w`: classes are exact code-point sets (scanner.rx.charset), written as
the bytes of the alphabet (scanner.rx.alphabet).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from scanner.rx.charset import ALL, EMPTY, NEWLINE, CharSet, category, fold

try:                                   # Python 3.11+
    from re import _constants as C
except ImportError:                    # pragma: no cover - Python 3.10
    import sre_constants as C          # type: ignore

IGNORECASE, MULTILINE, DOTALL, VERBOSE, ASCII, UNICODE, LOCALE = 2, 8, 16, 64, 256, 32, 4
_CATEGORY_FLAGS = ASCII | UNICODE
_KNOWN_FLAGS = IGNORECASE | MULTILINE | DOTALL | VERBOSE | ASCII | UNICODE
MAX_REPEAT = 1000                      # RE2's limit on {m,n}
MAX_SEQUENCES = 2000                   # expansions of one lookahead body
# The rewritten trailing conditions of one pattern: states of the automaton that checks them, and characters of
# its RE2 text. A negative lookahead that looks far for a word («(?![^.]{0,80}(?:word|…))») needs a state for every
# set of places a word may have started: unbounded, it took 19 GB before any text was matched. The shipped rules need
# at most 167 states and 13,426 characters.
MAX_CONTINUATION_STATES = 10_000
MAX_CONTINUATION_CHARS = 2_000_000
_CATEGORY_SOURCE = {
    C.CATEGORY_DIGIT: r"\d", C.CATEGORY_NOT_DIGIT: r"\D", C.CATEGORY_SPACE: r"\s",
    C.CATEGORY_NOT_SPACE: r"\S", C.CATEGORY_WORD: r"\w", C.CATEGORY_NOT_WORD: r"\W",
}


class RegexError(ValueError):
    """A pattern that cannot be run by RE2 with the meaning it has in Python (the message says why)."""


# --- the tree -------------------------------------------------------------------------------------------

@dataclass(eq=False)
class Chars:
    cs: CharSet


@dataclass(eq=False)
class Seq:
    items: list


@dataclass(eq=False)
class Alt:
    alts: list


@dataclass(eq=False)
class Group:
    index: int | None          # the pattern's own group number; None: non-capturing
    body: object


@dataclass(eq=False)
class Rep:
    lo: int
    hi: int | None             # None: unbounded
    body: object
    greedy: bool


@dataclass(eq=False)
class Look:
    behind: bool
    negative: bool
    body: object
    word: CharSet | None = None   # set when it stands for a \b


@dataclass(eq=False)
class Edge:
    kind: str                  # b, B, bol (^ multiline), bos (\A), eol ($ multiline), eos (\Z), eos_nl ($)
    word: CharSet = EMPTY


@dataclass(eq=False)
class Marker:
    conds: list                # trailing conditions checked where this alternative ends


NEVER = Chars(EMPTY)


def _never(n) -> bool:
    return isinstance(n, Chars) and not n.cs


# --- from Python's parse tree --------------------------------------------------------------------------

def _py_char(cp: int) -> str:
    ch = chr(cp)
    if ch.isascii() and ch.isalnum():
        return ch
    return "\\u%04x" % cp if cp <= 0xFFFF else "\\U%08x" % cp


def _class_source(op, av) -> str:
    """Python syntax for one character node (to let the engine itself decide case-insensitive matches)."""
    if op is C.LITERAL:
        return _py_char(av)
    if op is C.NOT_LITERAL:
        return "[^" + _py_char(av) + "]"
    if op is C.ANY:
        return "."
    parts = []
    for iop, iav in av:
        if iop is C.NEGATE:
            parts.append("^")
        elif iop is C.LITERAL:
            parts.append(_py_char(iav))
        elif iop is C.RANGE:
            parts.append(_py_char(iav[0]) + "-" + _py_char(iav[1]))
        elif iop is C.CATEGORY:
            parts.append(_CATEGORY_SOURCE[iav])
        else:
            raise RegexError(f"unsupported class item {iop}")
    return "[" + "".join(parts) + "]"


_SETS: dict = {}           # (engine, node, flags) -> CharSet, shared by every pattern compiled


class _Builder:
    def __init__(self, engine: str):
        self.engine = engine
        self._sets = _SETS

    def word(self, flags: int) -> CharSet:
        return category(self.engine, r"\w", flags & _CATEGORY_FLAGS)

    def chars(self, op, av, flags: int) -> Chars:
        key = (self.engine, op, tuple(av) if op is C.IN else av, flags & (IGNORECASE | DOTALL | _CATEGORY_FLAGS))
        cs = self._sets.get(key)
        if cs is None:
            cs = self._sets[key] = self._charset(op, av, flags)
        return Chars(cs)

    def _charset(self, op, av, flags: int) -> CharSet:
        if op is C.ANY:
            return ALL if flags & DOTALL else ALL - NEWLINE
        if op is C.LITERAL:
            literal = CharSet.of(av)
        elif op is C.NOT_LITERAL:
            literal = CharSet.of(av).complement()
        else:
            literal, negate = EMPTY, False
            for iop, iav in av:
                if iop is C.NEGATE:
                    negate = True
                elif iop is C.LITERAL:
                    literal = literal | CharSet.of(iav)
                elif iop is C.RANGE:
                    literal = literal | CharSet([iav])
                elif iop is C.CATEGORY:
                    literal = literal | category(self.engine, _CATEGORY_SOURCE[iav], flags & _CATEGORY_FLAGS)
                else:
                    raise RegexError(f"unsupported class item {iop}")
            if negate:
                literal = literal.complement()
        if flags & IGNORECASE:
            literal = fold(self.engine, _class_source(op, av), flags & (IGNORECASE | _CATEGORY_FLAGS), literal)
        return literal

    def seq(self, nodes, flags: int) -> Seq:
        return Seq([self.node(op, av, flags) for op, av in nodes])

    def node(self, op, av, flags: int):
        if op in (C.LITERAL, C.NOT_LITERAL, C.ANY, C.IN):
            return self.chars(op, av, flags)
        if op is C.BRANCH:
            return Alt([self.seq(a, flags) for a in av[1]])
        if op is C.SUBPATTERN:
            group, add, remove, body = av
            return Group(group, self.seq(body, (flags | add) & ~remove))
        if op in (C.MAX_REPEAT, C.MIN_REPEAT):
            lo, hi, body = av
            hi = None if hi is C.MAXREPEAT else int(hi)
            if lo > MAX_REPEAT or (hi is not None and hi > MAX_REPEAT):
                raise RegexError(f"a repetition count over {MAX_REPEAT} (RE2's limit)")
            return Rep(int(lo), hi, self.seq(body, flags), op is C.MAX_REPEAT)
        if op is C.AT:
            kind = {C.AT_BEGINNING: "bol" if flags & MULTILINE else "bos", C.AT_BEGINNING_STRING: "bos",
                    C.AT_END: "eol" if flags & MULTILINE else "eos_nl", C.AT_END_STRING: "eos",
                    C.AT_BOUNDARY: "b", C.AT_NON_BOUNDARY: "B"}.get(av)
            if kind is None:
                raise RegexError(f"unsupported anchor {av}")
            return Edge(kind, self.word(flags) if kind in ("b", "B") else EMPTY)
        if op in (C.ASSERT, C.ASSERT_NOT):
            direction, body = av
            return Look(direction < 0, op is C.ASSERT_NOT, self.seq(body, flags))
        if op is C.GROUPREF:
            raise RegexError("a backreference (\\1, (?P=name)): RE2 has none (it is what makes matching linear)")
        if op is C.GROUPREF_EXISTS:
            raise RegexError("a conditional group (?(1)…): RE2 has none")
        if op is getattr(C, "ATOMIC_GROUP", None):
            raise RegexError("an atomic group (?>…): RE2 has none")
        if op is getattr(C, "POSSESSIVE_REPEAT", None):
            raise RegexError("a possessive quantifier (*+, ++, ?+): RE2 has none")
        raise RegexError(f"unsupported construct {op}")


# --- first / last characters, widths ------------------------------------------------------------------

def first(n) -> tuple[CharSet, bool]:
    """(the characters a match of n can start with, whether n can match the empty string)."""
    cached = getattr(n, "_first", None)
    if cached is None:
        cached = n._first = _first(n)
    return cached


def last(n) -> tuple[CharSet, bool]:
    cached = getattr(n, "_last", None)
    if cached is None:
        cached = n._last = _last(n)
    return cached


def _first(n) -> tuple[CharSet, bool]:
    if isinstance(n, Chars):
        return n.cs, False
    if isinstance(n, Seq):
        out = EMPTY
        for item in n.items:
            cs, nullable = first(item)
            out = out | cs
            if not nullable:
                return out, False
        return out, True
    if isinstance(n, Alt):
        parts = [first(a) for a in n.alts]
        return CharSet._sorted(list(heapq.merge(*(cs.ranges for cs, _ in parts)))), any(nl for _, nl in parts)
    if isinstance(n, Group):
        return first(n.body)
    if isinstance(n, Rep):
        cs, nullable = first(n.body)
        return cs, nullable or n.lo == 0
    return EMPTY, True                 # Look, Edge, Marker: zero width


def _last(n) -> tuple[CharSet, bool]:
    if isinstance(n, Seq):
        out = EMPTY
        for item in reversed(n.items):
            cs, nullable = last(item)
            out = out | cs
            if not nullable:
                return out, False
        return out, True
    if isinstance(n, Alt):
        parts = [last(a) for a in n.alts]
        return CharSet._sorted(list(heapq.merge(*(cs.ranges for cs, _ in parts)))), any(nl for _, nl in parts)
    if isinstance(n, Group):
        return last(n.body)
    if isinstance(n, Rep):
        cs, nullable = last(n.body)
        return cs, nullable or n.lo == 0
    return first(n)


def width(n) -> tuple[int, int | None]:
    if isinstance(n, Chars):
        return 1, 1
    if isinstance(n, Seq):
        lo, hi = 0, 0
        for item in n.items:
            a, b = width(item)
            lo += a
            hi = None if hi is None or b is None else hi + b
        return lo, hi
    if isinstance(n, Alt):
        ws = [width(a) for a in n.alts]
        return min(w[0] for w in ws), (None if any(w[1] is None for w in ws) else max(w[1] for w in ws))
    if isinstance(n, Group):
        return width(n.body)
    if isinstance(n, Rep):
        a, b = width(n.body)
        return a * n.lo, (None if n.hi is None or b is None else b * n.hi)
    return 0, 0


# --- \b and \B -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Ctx:
    cs: CharSet                # characters of the pattern that can stand on this side
    edge: bool                 # the pattern's own edge can stand there (a character of the text, or none)


_OUT = _Ctx(EMPTY, True)


def _side(ctx: _Ctx, word: CharSet) -> str:
    if ctx.edge:
        return "out" if not ctx.cs else "mixed"
    if ctx.cs.issubset(word):
        return "word"
    if ctx.cs.isdisjoint(word):
        return "non"
    return "mixed"


def _contexts(items: list, before: _Ctx, after: _Ctx) -> tuple[list, list]:
    """What can stand before and after each item of a sequence."""
    befores, ctx = [], before
    for item in items:
        befores.append(ctx)
        cs, nullable = last(item)
        ctx = _Ctx(cs | ctx.cs, ctx.edge) if nullable else _Ctx(cs, False)
    afters, ctx = [None] * len(items), after
    for i in range(len(items) - 1, -1, -1):
        afters[i] = ctx
        cs, nullable = first(items[i])
        ctx = _Ctx(cs | ctx.cs, ctx.edge) if nullable else _Ctx(cs, False)
    return befores, afters


def _alternation(n):
    """The Alt that n is (or that a group holding only it is), else None."""
    while isinstance(n, Group):
        n = n.body
        if isinstance(n, Seq) and len(n.items) == 1:
            n = n.items[0]
    return n if isinstance(n, Alt) else None


def _into_alternatives(n, edge: Edge, at_end: bool):
    """n (an alternation, maybe in a group) with the zero-width edge moved into each alternative:
    (?:a|b)\\b = (?:a\\b|b\\b), \\b(?:a|b) = (?:\\ba|\\bb)."""
    if isinstance(n, Group):
        body = n.body
        if isinstance(body, Seq) and len(body.items) == 1:
            body = body.items[0]
        return Group(n.index, _into_alternatives(body, edge, at_end))
    return Alt([Seq([a, edge] if at_end else [edge, a]) for a in n.alts])


def _one_char_rep(n):
    if not isinstance(n, Rep):
        return None
    body = n.body
    while isinstance(body, Seq) and len(body.items) == 1:
        body = body.items[0]
    return body.cs if isinstance(body, Chars) else None


def _allowed(edge: Edge, side: str, cs: CharSet) -> CharSet:
    """The characters of cs that satisfy `edge` next to a neighbour on `side` (word / non)."""
    differ = edge.kind == "b"
    want_word = (side == "word") != differ
    return cs & edge.word if want_word else cs - edge.word


def _sandwich(e1: Edge, rep: Rep, cs: CharSet, e2: Edge, pw: str, nw: str):
    """\\b[C]{lo,hi}\\b between known neighbours, written without the boundaries, lengths in the same order."""
    f, g = _allowed(e1, pw, cs), _allowed(e2, nw, cs)
    lo, hi = rep.lo, rep.hi
    alts = []
    if hi is None or hi >= 2:
        alts.append(Seq([Chars(f), Rep(max(lo - 2, 0), None if hi is None else hi - 2, Chars(cs), rep.greedy),
                         Chars(g)]))
    if lo <= 1 and (hi is None or hi >= 1):
        alts.append(Chars(f & g))
    empty_ok = all(((pw == "word") != (nw == "word")) == (e.kind == "b") for e in (e1, e2))
    if lo == 0 and empty_ok:
        alts.append(Seq([]))
    if not rep.greedy:
        alts.reverse()
    return Alt(alts) if alts else NEVER


def _rewrite_boundaries(items: list, before: _Ctx, after: _Ctx) -> list:
    """Move \\b / \\B where its neighbours are decided: into the alternatives of an adjacent alternation, or
    across a run of one character class between two of them."""
    items = list(items)
    if not any(isinstance(it, Edge) and it.kind in ("b", "B") for it in items):
        return items
    known = ("word", "non")
    for _ in range(200):
        befores, afters = _contexts(items, before, after)
        for i, it in enumerate(items):
            if not (isinstance(it, Edge) and it.kind in ("b", "B")):
                continue
            pw, nw = _side(befores[i], it.word), _side(afters[i], it.word)
            if pw == "mixed" and i > 0 and _alternation(items[i - 1]) is not None:
                items[i - 1:i + 1] = [_into_alternatives(items[i - 1], it, at_end=True)]
                break
            if nw == "mixed" and i + 1 < len(items) and _alternation(items[i + 1]) is not None:
                items[i:i + 2] = [_into_alternatives(items[i + 1], it, at_end=False)]
                break
            if (nw == "mixed" and pw in known and i + 2 < len(items) and _one_char_rep(items[i + 1]) is not None
                    and isinstance(items[i + 2], Edge) and items[i + 2].kind in ("b", "B")
                    and _side(afters[i + 2], items[i + 2].word) in known):
                e2 = items[i + 2]
                items[i:i + 3] = [_sandwich(it, items[i + 1], _one_char_rep(items[i + 1]), e2, pw,
                                            _side(afters[i + 2], e2.word))]
                break
        else:
            return items
    raise RegexError("too many word boundaries to rewrite")


def _has_boundary(n) -> bool:
    cached = getattr(n, "_boundary", None)
    if cached is None:
        if isinstance(n, Edge):
            cached = n.kind in ("b", "B")
        elif isinstance(n, Seq):
            cached = any(_has_boundary(i) for i in n.items)
        elif isinstance(n, Alt):
            cached = any(_has_boundary(a) for a in n.alts)
        elif isinstance(n, (Group, Rep)):
            cached = _has_boundary(n.body)
        else:
            cached = False
        n._boundary = cached
    return cached


def resolve(n, before: _Ctx = _OUT, after: _Ctx = _OUT):
    """n with every \\b and \\B decided or turned into a lookaround (see the module's docstring)."""
    if not _has_boundary(n):
        return n
    if isinstance(n, Seq):
        items = _rewrite_boundaries(n.items, before, after)
        befores, afters = _contexts(items, before, after)
        return Seq([resolve(item, b, a) for item, b, a in zip(items, befores, afters)])
    if isinstance(n, Alt):
        return Alt([resolve(a, before, after) for a in n.alts])
    if isinstance(n, Group):
        return Group(n.index, resolve(n.body, before, after))
    if isinstance(n, Rep):
        again = n.hi is None or n.hi > 1
        b = _Ctx(before.cs | last(n.body)[0], before.edge) if again else before
        a = _Ctx(after.cs | first(n.body)[0], after.edge) if again else after
        return Rep(n.lo, n.hi, resolve(n.body, b, a), n.greedy)
    if isinstance(n, Edge) and n.kind in ("b", "B"):
        return _boundary(n, before, after)
    return n


def _boundary(n: Edge, before: _Ctx, after: _Ctx):
    w = n.word
    pw, nw = _side(before, w), _side(after, w)
    holds_if_differ = n.kind == "b"
    known = ("word", "non")
    if pw in known and nw in known:
        return Seq([]) if (pw != nw) == holds_if_differ else NEVER
    if pw == "out" and nw in known:
        # \bfoo: no word character before; \b, : a word character before (\B the other way round)
        negative = (nw == "word") == holds_if_differ
        return Look(True, negative, Chars(w), word=w)
    if nw == "out" and pw in known:
        negative = (pw == "word") == holds_if_differ
        return Look(False, negative, Chars(w), word=w)
    raise RegexError(f"\\{n.kind} where the pattern does not decide whether a word character stands on each side "
                     "(RE2's \\b is ASCII-only): put it between fixed characters, or at the start or end")


# --- leading and trailing conditions -------------------------------------------------------------------

def top_alternatives(n) -> list:
    """The pattern's top-level alternatives, in order. A leading non-capturing alternation whose alternatives
    start with their own conditions (`(?:\\btel:|wa\\.me/)rest`) is distributed: `\\btel:rest|wa\\.me/rest`."""
    if isinstance(n, Alt):
        return [x for a in n.alts for x in top_alternatives(a)]
    if isinstance(n, Seq) and len(n.items) == 1 and isinstance(n.items[0], (Alt, Group, Seq)):
        return top_alternatives(n.items[0])
    if isinstance(n, Group) and n.index is None:
        return top_alternatives(n.body)
    if isinstance(n, Seq):
        i = 0
        while i < len(n.items) and isinstance(n.items[i], (Look, Edge)):
            i += 1
        if i < len(n.items):
            head = n.items[i]
            while isinstance(head, (Group, Seq)):
                if isinstance(head, Group):
                    if head.index is not None:
                        break
                    head = head.body
                elif len(head.items) == 1:
                    head = head.items[0]
                else:
                    break
            if isinstance(head, Alt) and any(peel_lead(a)[0] for a in head.alts):
                return [x for a in head.alts for x in top_alternatives(Seq(n.items[:i] + [a] + n.items[i + 1:]))]
    return [n]


def peel_lead(n) -> tuple[list, object]:
    """(the lookarounds standing where every match of n starts, n without them)."""
    if isinstance(n, Group):
        conds, body = peel_lead(n.body)
        return conds, Group(n.index, body)
    if not isinstance(n, Seq):
        return [], n
    conds, out, items = [], [], list(n.items)
    i = 0
    while i < len(items):
        item = items[i]
        if isinstance(item, Look):
            conds.append(item)
        elif isinstance(item, Edge) and item.kind in ("bol", "bos"):
            out.append(item)
        elif isinstance(item, (Group, Seq)):
            c, rest = peel_lead(item)
            conds += c
            out.append(rest)
            i += 1
            break
        else:
            break
        i += 1
    return conds, Seq(out + items[i:])


def _trailing_cond(item) -> bool:
    return (isinstance(item, Look) and not item.behind) or (isinstance(item, Edge) and item.kind == "eos_nl")


def peel_trail(n, outer: list):
    """(n', conditions left to check at n's end) — None when they were pushed into markers inside n."""
    if isinstance(n, Group):
        body, rest = peel_trail(n.body, outer)
        return Group(n.index, body), rest
    if isinstance(n, Alt):
        results = [peel_trail(a, list(outer)) for a in n.alts]
        if all(rest is not None and len(rest) == len(outer) for _, rest in results):
            return Alt([a for a, _ in results]), outer
        alts = []
        for a, rest in results:
            alts.append(Seq([a, Marker(rest)]) if rest else a)
        return Alt(alts), None
    if not isinstance(n, Seq):
        return n, outer
    items = list(n.items)
    conds = list(outer)
    while items and _trailing_cond(items[-1]):
        conds.insert(0, items.pop())
    if items and isinstance(items[-1], (Group, Alt, Seq)):
        sub, rest = peel_trail(items[-1], conds)
        return Seq(items[:-1] + [sub]), rest
    return Seq(items), conds


def check_runnable(n, where: str = "") -> None:
    """RegexError for any lookaround or \\b left where RE2 cannot express it."""
    if isinstance(n, Look):
        kind = ("(?<!" if n.negative else "(?<=") if n.behind else ("(?!" if n.negative else "(?=")
        raise RegexError(f"a lookaround {kind}…) inside the pattern: RE2 has none; only a lookbehind where the "
                         "match starts or a lookahead where it ends can be rewritten exactly")
    if isinstance(n, Edge) and n.kind == "eos_nl":
        raise RegexError("$ inside the pattern (without MULTILINE it means end or before a final newline): use \\Z")
    if isinstance(n, Seq):
        for item in n.items:
            check_runnable(item)
    elif isinstance(n, Alt):
        for a in n.alts:
            check_runnable(a)
    elif isinstance(n, (Group, Rep)):
        check_runnable(n.body)


# --- the continuation: what follows the match, as an automaton -----------------------------------------

END = "END"


@dataclass(frozen=True)
class Star:
    cs: object                 # a CharSet while expanding, a byte mask once written for an alphabet


def _concat(a: tuple, b: tuple) -> tuple | None:
    if a and a[-1] == END:
        return a if not b else None     # nothing can follow the end of the text
    return a + b


def _product(parts: list[list[tuple]]) -> list[tuple]:
    out = [()]
    for options in parts:
        nxt = []
        for left in out:
            for right in options:
                joined = _concat(left, right)
                if joined is not None:
                    nxt.append(joined)
        out = nxt
        if len(out) > MAX_SEQUENCES:
            raise RegexError("a lookahead too complex to rewrite for RE2")
    return out


def expand(n) -> list[tuple]:
    """The lookahead body as a finite set of sequences of character sets (Star: a run; END: end of text)."""
    if isinstance(n, Chars):
        return [(n.cs,)] if n.cs else []
    if isinstance(n, Seq):
        for item in n.items[:-1]:
            if isinstance(item, Edge) and item.kind == "eol":
                raise RegexError("$ (MULTILINE) before more of a lookahead: RE2 cannot run it")
        return _product([expand(item) for item in n.items])
    if isinstance(n, Alt):
        out = [s for a in n.alts for s in expand(a)]
        if len(out) > MAX_SEQUENCES:
            raise RegexError("a lookahead too complex to rewrite for RE2")
        return out
    if isinstance(n, Group):
        if n.index is not None:
            raise RegexError("a capturing group inside a lookaround: use (?:…)")
        return expand(n.body)
    if isinstance(n, Rep):
        if n.hi is None:
            body = n.body
            while isinstance(body, Seq) and len(body.items) == 1:
                body = body.items[0]
            if not isinstance(body, Chars):
                raise RegexError("an unbounded repetition of more than one character inside a lookaround")
            return [(body.cs,) * n.lo + (Star(body.cs),)]
        body = expand(n.body)
        return [s for k in range(n.lo, n.hi + 1) for s in _product([body] * k)]
    if isinstance(n, Edge):
        if n.kind == "eos":
            return [(END,)]
        if n.kind == "eos_nl":
            return [(END,), (NEWLINE, END)]
        if n.kind == "eol":            # at the end of the body: peeking at "\n" is as good as consuming it
            return [(END,), (NEWLINE,)]
    raise RegexError("an anchor, \\b or lookaround inside a lookaround: RE2 cannot run it")


def _cond_sequences(c) -> tuple[bool, list[tuple]]:
    """(positive?, sequences of CharSets) of a trailing condition."""
    if isinstance(c, Edge):            # $ without MULTILINE: end, or a final newline then the end
        return True, [(END,), (NEWLINE, END)]
    return not c.negative, expand(c.body)


def cond_sets(conds: list):
    """Every character set the conditions use (to refine the alphabet with)."""
    for c in conds:
        for seq in _cond_sequences(c)[1]:
            for x in seq:
                if isinstance(x, CharSet):
                    yield x
                elif isinstance(x, Star):
                    yield x.cs


def _nullable(s: tuple) -> bool:
    return all(isinstance(x, Star) for x in s)


def _at_end(s: tuple) -> bool:
    for x in s:
        if x == END:
            return True
        if not isinstance(x, Star):
            return False
    return True


def _heads(s: tuple):
    for x in s:
        if x == END:
            return
        if isinstance(x, Star):
            yield x.cs
            continue
        yield x
        return


def _step(s: tuple, b: int) -> set:
    """The rests of sequence s after one character read as byte b (masks: an atom of the state's partition
    lies wholly inside or outside each class, so one byte of it stands for all)."""
    out = set()
    for i, x in enumerate(s):
        if x == END:
            break
        if isinstance(x, Star):
            if (x.cs >> b) & 1:
                out.add(s[i:])
            continue
        if (x >> b) & 1:
            out.add(s[i + 1:])
        break
    return out


def _partition(classes, universe: int) -> list[int]:
    """The byte values cut into the coarsest parts no class splits (masks)."""
    atoms = [universe]
    for c in classes:
        nxt = []
        for a in atoms:
            inside = a & c
            if inside:
                nxt.append(inside)
            if inside != a:
                nxt.append(a & ~c)
        atoms = nxt
    return atoms


def _lowest(m: int) -> int:
    return (m & -m).bit_length() - 1


class _Continuation:
    """The RE2 text of "what follows can satisfy every condition", built state by state over byte masks."""

    def __init__(self, alphabet):
        self.alphabet = alphabet
        self.memo: dict = {}
        self.stack: set = set()

    @staticmethod
    def canonical(pos, neg):
        if any(_nullable(s) for s in neg):
            return None
        pos = frozenset(p for p in pos if not any(_nullable(s) for s in p))
        if any(not p for p in pos):
            return None
        return pos, frozenset(neg)

    def build(self, state) -> str | None:
        """None: never satisfiable; "": always."""
        if state is None:
            return None
        pos, neg = state
        if not pos and not neg:
            return ""
        if state in self.memo:
            return self.memo[state]
        if state in self.stack or len(self.memo) + len(self.stack) >= MAX_CONTINUATION_STATES:
            raise RegexError("a lookahead too complex to rewrite for RE2")
        self.stack.add(state)
        options: list[str] = []
        if all(any(_at_end(s) for s in p) for p in pos) and not any(_at_end(s) for s in neg):
            options.append(r"\z")
        classes = {h for p in pos for s in p for h in _heads(s)} | {h for s in neg for h in _heads(s)}
        loop = 0
        by_sub: dict[str, int] = {}
        for atom in _partition(classes, self.alphabet.universe):
            b = _lowest(atom)
            npos = [frozenset(x for s in p for x in _step(s, b)) for p in pos]
            nneg = {x for s in neg for x in _step(s, b)}
            nstate = self.canonical(npos, nneg)
            if nstate == state:
                loop |= atom
                continue
            sub = self.build(nstate)
            if sub is None:
                continue
            by_sub[sub] = by_sub.get(sub, 0) | atom
        self.stack.discard(state)
        options += [self.alphabet.write(m) + sub for sub, m in by_sub.items()]
        if not options:
            result = None
        else:
            body = options[0] if len(options) == 1 else "(?:" + "|".join(options) + ")"
            result = (f"(?:{self.alphabet.write(loop)})*" if loop else "") + body
            if len(result) > MAX_CONTINUATION_CHARS:
                raise RegexError("a lookahead too complex to rewrite for RE2")
        self.memo[state] = result
        return result

    def initial(self, conds: list):
        def masked(seq):
            return tuple(x if x == END else Star(self.alphabet.mask(x.cs)) if isinstance(x, Star)
                         else self.alphabet.mask(x) for x in seq)

        pos, neg = [], set()
        for c in conds:
            positive, seqs = _cond_sequences(c)
            seqs = [masked(s) for s in seqs]
            if positive:
                pos.append(frozenset(seqs))
            else:
                neg.update(seqs)
        return self.canonical(pos, neg)


def continuation(conds: list, at_end: bool, alphabet) -> str | None:
    """RE2 text that can match at a position exactly when every trailing condition holds there (None: never).
    at_end: the position is the end of the text (for fullmatch)."""
    if not conds:
        return ""
    builder = _Continuation(alphabet)
    state = builder.initial(conds)
    if state is None:
        return None
    pos, neg = state
    if not pos and not neg:
        return ""
    if at_end:
        ok = all(any(_at_end(s) for s in p) for p in pos) and not any(_at_end(s) for s in neg)
        return "" if ok else None
    return builder.build(state)


# --- writing RE2 ---------------------------------------------------------------------------------------

def _quant(lo: int, hi: int | None, greedy: bool) -> str:
    if (lo, hi) == (0, None):
        q = "*"
    elif (lo, hi) == (1, None):
        q = "+"
    elif (lo, hi) == (0, 1):
        q = "?"
    elif hi is None:
        q = "{%d,}" % lo
    elif lo == hi:
        q = "{%d}" % lo
    else:
        q = "{%d,%d}" % (lo, hi)
    return q + ("" if greedy else "?")


class Writer:
    """RE2 (Latin-1) text of a tree, classes written as bytes of the alphabet (scanner.rx.alphabet)."""

    def __init__(self, alphabet, at_end: bool, conts: dict):
        self.alphabet = alphabet
        self.at_end = at_end           # continuations for fullmatch: the match ends the text
        self.conts = conts             # continuation text per list of conditions, shared by a pattern's programs
        self.ngroups = 0
        self.group_map: dict[int, int] = {}
        self.markers: list[int] = []

    def group(self) -> int:
        self.ngroups += 1
        return self.ngroups

    def continuation(self, conds: list) -> str | None:
        key = (tuple(map(id, conds)), self.at_end)
        if key not in self.conts:
            self.conts[key] = (list(conds), continuation(conds, self.at_end, self.alphabet))
        return self.conts[key][1]

    def write(self, n) -> str | None:
        """RE2 text of n (None: n can never match)."""
        if isinstance(n, Chars):
            return None if not n.cs else self.alphabet.cls(n.cs)
        if isinstance(n, Seq):
            parts = []
            for item in n.items:
                s = self.write(item)
                if s is None:
                    return None
                parts.append(s)
            return "".join(parts)
        if isinstance(n, Alt):
            parts = [s for s in (self.write(a) for a in n.alts) if s is not None]
            if not parts:
                return None
            return "(?:" + "|".join(parts) + ")"
        if isinstance(n, Group):
            if n.index is None:
                s = self.write(n.body)
                return None if s is None else "(?:" + s + ")"
            k = self.group()
            self.group_map[n.index] = k
            s = self.write(n.body)
            return None if s is None else "(" + s + ")"
        if isinstance(n, Rep):
            s = self.write(n.body)
            if s is None:
                return "" if n.lo == 0 else None
            return "(?:" + s + ")" + _quant(n.lo, n.hi, n.greedy)
        if isinstance(n, Edge):
            return {"bol": "(?m:^)", "bos": r"\A", "eol": "(?m:$)", "eos": r"\z"}[n.kind]
        if isinstance(n, Marker):
            cont = self.continuation(n.conds)
            if cont is None:
                return None
            k = self.group()
            self.markers.append(k)
            return "()" + cont
        raise RegexError(f"cannot write {type(n).__name__}")   # pragma: no cover - check_runnable ran first


def plain(n, alphabet) -> str:
    """RE2 text of an assertion-free body (the check of a leading lookaround)."""
    check_runnable(n)
    s = Writer(alphabet, at_end=False, conts={}).write(n)
    return r"[^\x00-\xff]" if s is None else s


def tree_sets(n):
    """Every character set a tree uses, conditions in markers included."""
    if isinstance(n, Chars):
        yield n.cs
    elif isinstance(n, Seq):
        for item in n.items:
            yield from tree_sets(item)
    elif isinstance(n, Alt):
        for a in n.alts:
            yield from tree_sets(a)
    elif isinstance(n, (Group, Rep)):
        yield from tree_sets(n.body)
    elif isinstance(n, Look):
        yield from tree_sets(n.body)
    elif isinstance(n, Marker):
        yield from cond_sets(n.conds)
