"""Is a regex linear on hostile input? Crafted worst cases, timed at two sizes.

Python's `re` (and `regex`) backtrack: `\\w+@` searched over a megabyte of letters with no `@` retries the
whole run from every start position (quadratic), and `(a+)+b` is exponential. A recorded page is attacker
text, so every rule pattern must run in linear time on any input.

The worst cases are built from the pattern itself (parsed with the standard library's own parser): for every
repetition, its "pump" — a short string the repeated part matches — is repeated after a prefix that leads to
it, then followed by a character that makes the match fail, which is what forces backtracking. Generic
fillers (long runs of letters, digits, spaces, dots, `a.a.a.`…) are added. Each case is timed at two sizes
with a fixed ratio between them; linear time grows by that ratio, quadratic by its square. Ratios, never
absolute times, so a loaded machine does not change the verdict.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Callable

try:                                   # Python 3.11+
    from re import _constants as C
    from re import _parser as P
except ImportError:                    # pragma: no cover - Python 3.10
    import sre_constants as C          # type: ignore
    import sre_parse as P              # type: ignore

_ALPHABET = "a1 A.-_@/:\n\t=+#ñé,;'\"()[]{}<>!?%&*~^$|\\xX0zZ9" + "\u00a0\u2013"
_FILLERS = ("a", "A", "1", " ", ".", "-", "@", "a.", "a ", "1 ", "1-", "a-", "\n", "a@", "a:", "=a", "aA1",
            "\u00a0", "+", "/", "a\n")
_KILLERS = ("", "\x00", "!", " ", "a", "1", "@", ".")


@dataclass
class Verdict:
    pattern: str
    attack: str          # a short description of the worst case found
    growth: float        # time(large) / time(small) / size ratio: ~1 linear, ~size ratio for quadratic
    linear: bool


def _char_for(node, state, flags: int) -> str | None:
    """A character the single-character node (LITERAL, IN, ANY, …) matches."""
    op, av = node
    if op == C.LITERAL:
        return chr(av)
    try:
        compiled = _compile_nodes([node], state, flags)
    except Exception:
        return None
    for ch in _ALPHABET:
        if compiled.fullmatch(ch):
            return ch
    return None


def _compile_nodes(nodes, state, flags: int):
    from re import _compiler  # type: ignore[attr-defined]

    return _compiler.compile(P.SubPattern(state, list(nodes)), flags)


def _sample(nodes, state, flags: int, groups: dict) -> str:
    """A short string matching the sequence of nodes (best effort: a repetition is sampled at its minimum,
    or once when that is 0 and `once` is wanted by the caller)."""
    out = []
    for node in nodes:
        op, av = node
        if op in (C.AT, C.ASSERT, C.ASSERT_NOT):
            continue
        if op in (C.LITERAL, C.NOT_LITERAL, C.IN, C.ANY, C.CATEGORY):
            ch = _char_for(node, state, flags)
            out.append(ch or "a")
        elif op == C.BRANCH:
            out.append(_sample(av[1][0], state, flags, groups))
        elif op == C.SUBPATTERN:
            text = _sample(av[-1], state, flags, groups)
            if av[0] is not None:
                groups[av[0]] = text
            out.append(text)
        elif op == getattr(C, "ATOMIC_GROUP", None):
            out.append(_sample(av, state, flags, groups))
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", None)):
            lo, _, item = av
            out.append(_sample(item, state, flags, groups) * lo)
        elif op == C.GROUPREF:
            out.append(groups.get(av, ""))
        elif op == C.GROUPREF_EXISTS:
            out.append(_sample(av[1], state, flags, groups))
    return "".join(out)


def _pumps(nodes, state, flags: int, prefix: str, found: list, depth: int = 0) -> None:
    """(prefix, pump) for every repetition: `prefix` leads up to it, `pump` is one iteration of it."""
    if depth > 12:
        return
    groups: dict = {}
    for i, node in enumerate(nodes):
        op, av = node
        before = prefix + _sample(nodes[:i], state, flags, groups)
        if op in (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", None)):
            lo, hi, item = av
            if hi is C.MAXREPEAT or hi > 1:
                pump = _sample(item, state, flags, {}) or _sample(item, state, flags, {})
                if pump:
                    found.append((before, pump))
            _pumps(item, state, flags, before, found, depth + 1)
        elif op == C.BRANCH:
            for alt in av[1]:
                _pumps(alt, state, flags, before, found, depth + 1)
        elif op == C.SUBPATTERN:
            _pumps(av[-1], state, flags, before, found, depth + 1)
        elif op == getattr(C, "ATOMIC_GROUP", None):
            _pumps(av, state, flags, before, found, depth + 1)


def attacks(pattern: str, flags: int = 0, extra: tuple[str, ...] = ()) -> list[tuple[str, Callable[[int], str]]]:
    """(label, make(size) -> text) of the crafted worst cases for a pattern."""
    out: list[tuple[str, Callable[[int], str]]] = []
    try:
        parsed = P.parse(pattern, flags)
    except re.error:
        return out
    found: list = []
    _pumps(list(parsed), parsed.state, flags, "", found)
    seen = set()
    for prefix, pump in found:
        for killer in _KILLERS:
            for lead in (prefix, ""):
                key = (lead, pump, killer)
                if key in seen:
                    continue
                seen.add(key)
                out.append((f"{lead!r} + {pump!r}*n + {killer!r}",
                            lambda n, lead=lead, pump=pump, killer=killer:
                            lead + pump * max(1, (n - len(lead)) // len(pump)) + killer))
    for filler in _FILLERS + tuple(extra):
        if filler:
            out.append((f"{filler!r}*n", lambda n, f=filler: f * max(1, n // len(f))))
    unique, texts = [], set()
    for label, make in out:             # many pumps give the same text (every \s is a space): time each once
        sample = make(257)
        if sample not in texts:
            texts.add(sample)
            unique.append((label, make))
    return unique


def _time(search, text: str, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _m in search(text):
            pass
        best = min(best, time.perf_counter() - t0)
    return best


def plain_scan_time(text: str, repeats: int = 3) -> float:
    """The cost of the simplest linear scan of `text` by the regex engine: the unit of the ratios."""
    rx = re.compile(r"\x00\x01")
    return _time(rx.finditer, text, repeats)


def check(pattern: str, search: Callable[[str], object], flags: int = 0, small: int = 1024, factor: int = 4,
          repeats: int = 5, extra: tuple[str, ...] = (), limit: float = 2.0) -> Verdict:
    """Time every crafted case at `small` and `small * factor` characters. Linear time grows by `factor`;
    a case that grows more than `limit` times that (quadratic grows by factor²) is super-linear. The worst
    case is confirmed at the next size before the verdict is given, so one noisy timing does not decide."""
    worst = Verdict(pattern, "", 0.0, True)
    cases = attacks(pattern, flags, extra)
    for label, make in cases:          # exponential backtracking shows within a few dozen characters: stop there
        for n in range(8, 41, 4):
            if _time(search, make(n), 1) > 0.05:
                return Verdict(pattern, label, float("inf"), False)
    for label, make in cases:
        t_small = max(_time(search, make(small), repeats), 1e-6)
        t_large = _time(search, make(small * factor), max(1, repeats // 2))
        growth = t_large / t_small / factor
        if growth > worst.growth:
            worst = Verdict(pattern, label, growth, True)
            if growth > limit:
                t_larger = _time(search, make(small * factor * factor), 2)
                confirmed = t_larger / max(t_large, 1e-6) / factor
                worst = Verdict(pattern, label, max(growth, confirmed), confirmed <= limit)
                if not worst.linear:
                    return worst
    return worst
