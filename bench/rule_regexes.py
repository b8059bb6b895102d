"""Worst cases for every rule regex, timed at two sizes: linear time grows by the size ratio (run by hand:
`make bench-regex`; never part of the test suite, and no verdict on time is asserted anywhere).

Every rule pattern and whole-text scanner regex runs with RE2 (scanner.rx), which is linear by construction;
this shows it on crafted input. The worst cases are built from each pattern's own structure (parsed with the
standard library's parser): for every repetition, its "pump" — a short string the repeated part matches — is
repeated after a prefix that leads to it, then followed by a character that makes the match fail, which is
what forces a backtracking engine to retry (`\\w+@` over letters, `(a+)+b`, `\\d*\\d*\\d*\\d*Q` over digits).
Generic fillers (runs of letters, digits, spaces, dots, `a.a.a.`…) are added. Each case runs at `--size` and 8×
that; the figure is the time ratio divided by 8 (about 1 for linear time; quadratic time would show about 8).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

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


def inventory() -> list[tuple[str, object]]:
    """(name, compiled rx.Pattern) of every rule regex and whole-text scanner regex."""
    sys.path.insert(0, str(REPO / "tests"))
    from rule_regexes import in_scope        # tests/rule_regexes.py: the same inventory the tests check

    return [(name, rx) for name, rx, _mode in in_scope()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1 << 17, help="characters of the smaller case (default 128 K)")
    parser.add_argument("--only", default="", help="only patterns whose name contains this")
    args = parser.parse_args()
    worst = []
    for name, compiled in inventory():
        if args.only and args.only not in name:
            continue
        cases = attacks(compiled.pattern, compiled.flags & (re.I | re.M | re.S | re.X))
        growth, label = 0.0, ""
        for case, make in cases:
            small, big = make(args.size), make(args.size * 8)
            t_small = max(_time(compiled.finditer, small, 2), 1e-6)
            t_big = _time(compiled.finditer, big, 1)
            g = t_big / t_small / 8
            if g > growth:
                growth, label = g, case
        worst.append((growth, name, label, len(cases)))
        print(f"{growth:6.2f}  {name}  ({len(cases)} cases; worst {label})", flush=True)
    worst.sort(reverse=True)
    print(f"\n{len(worst)} regexes; worst growth per 8x input {worst[0][0]:.2f} ({worst[0][1]}): "
          "1 is linear, 8 quadratic")


if __name__ == "__main__":
    main()
