"""1. Inline directives: `<!-- centinela-ignore RULE: reason -->` in an HTML file (grammar and scope: the
package's docstring)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Optional

from scanner.findings import Finding
from scanner.loaders.html_tokens import tokenize
from scanner.sourcetext import LineIndex
from scanner.suppress.fingerprints import Fingerprinter
from scanner.suppress.report import SuppressionReport, SuppressionWarning

INLINE_KINDS = ("secret", "pii")                 # the only kinds an inline comment can suppress
HTML_EXT = (".html", ".htm", ".xhtml", ".shtml")  # = scanner.loaders.HTML_EXT
RULE_ID = r"[A-Za-z0-9][A-Za-z0-9_.\-]*"
_MARKER = "centinela-ignore"
_DIRECTIVE_RE = re.compile(
    rf"^centinela-ignore(?P<next>-next-line)?(?![\w-])\s*(?P<rules>{RULE_ID}(?:\s*,\s*{RULE_ID})*)?\s*"
    rf"(?P<colon>:)?\s*(?P<reason>.*?)\s*$",
    re.S,
)
_BREAK_RE = re.compile(r"\r\n|\r|\n")


@dataclass
class InlineDirective:
    line: int
    rules: tuple[str, ...]
    reason: str
    next_line_only: bool
    covers: tuple[int, ...]          # 1-based lines whose findings it covers
    used: bool = False
    refused: bool = False


def _line_bounds(text: str) -> list[tuple[int, int]]:
    """(start, end) of every line, without its break."""
    bounds = []
    pos = 0
    for m in _BREAK_RE.finditer(text):
        bounds.append((pos, m.start()))
        pos = m.end()
    bounds.append((pos, len(text)))
    return bounds


def parse_inline(text: str, path: str = "") -> tuple[list[InlineDirective], list[SuppressionWarning]]:
    """The inline directives of an HTML text, and a warning for each comment that mentions the marker but
    does not parse (see the module docstring for the grammar and scope)."""
    if _MARKER not in text.lower():
        return [], []
    index = LineIndex(text)
    bounds = _line_bounds(text)
    candidates = []                  # (line, token start, token end, content)
    for tok in tokenize(text):
        if tok.kind != "comment":
            continue
        content = text[tok.data_start:tok.data_end]
        if _MARKER in content.lower():
            candidates.append((index.line_col(tok.start)[0], tok.start, tok.end, content, tok.data_end))
    marker_spans: dict[int, list[tuple[int, int]]] = {}
    for line, start, end, _, _ in candidates:
        marker_spans.setdefault(line, []).append((start, end))

    def rest_of_line(line: int) -> str:
        s, e = bounds[line - 1]
        pieces, pos = [], s
        for a, b in sorted(marker_spans.get(line, [])):
            pieces.append(text[pos:max(a, pos)])
            pos = max(pos, b)
        pieces.append(text[pos:e] if pos < e else "")
        return "".join(pieces)

    def next_target(line: int) -> Optional[int]:
        for k in range(line + 1, len(bounds) + 1):
            s, e = bounds[k - 1]
            if not text[s:e].strip():
                continue
            if k in marker_spans and not rest_of_line(k).strip():
                continue
            return k
        return None

    directives: list[InlineDirective] = []
    warnings: list[SuppressionWarning] = []

    def malformed(line: int, why: str) -> None:
        warnings.append(SuppressionWarning(
            "inline-malformed", path,
            f"{why}; it suppresses nothing (expected <!-- centinela-ignore RULE_ID[, RULE_ID…]: reason -->)", line))

    for line, start, end, content, data_end in candidates:
        if data_end >= len(text):
            malformed(line, "unterminated comment")
            continue
        if _BREAK_RE.search(text, start, end):
            malformed(line, "a centinela-ignore comment must fit on one line")
            continue
        m = _DIRECTIVE_RE.match(content.strip())
        if m is None:
            malformed(line, "the comment mentions centinela-ignore but does not start with it (lower case)")
            continue
        if not m.group("rules"):
            malformed(line, "no rule id (there is no wildcard: name the rules)")
            continue
        reason = m.group("reason") or ""
        if not m.group("colon") or not any(ch.isalnum() for ch in reason):
            malformed(line, "no reason after the colon")
            continue
        rules = tuple(r.strip() for r in m.group("rules").split(","))
        next_only = bool(m.group("next"))
        if next_only and rest_of_line(line).strip():
            malformed(line, "centinela-ignore-next-line must stand alone on its line")
            continue
        target = next_target(line)
        covers = tuple(x for x in ((() if next_only else (line,)) + ((target,) if target else ())))
        directives.append(InlineDirective(line, rules, reason, next_only, covers))
    return directives, warnings


def is_html(path: str) -> bool:
    return path.lower().endswith(HTML_EXT)


def inline_pass(by_path: dict[str, list[Finding]], html_paths: Iterable[str], fpr: Fingerprinter,
                 active_rules: Optional[set], report: SuppressionReport, chosen: dict) -> None:
    for display in html_paths:
        text = fpr.text(display)
        if text is None:
            continue
        directives, warnings = parse_inline(text, display)
        report.warnings.extend(warnings)
        if not directives:
            continue
        index = LineIndex(text)
        for f in by_path.get(display, []):
            if f.page is not None or f.container or not 0 <= f.start <= len(text):
                continue
            line = index.line_col(f.start)[0]
            for d in directives:
                if line not in d.covers or f.rule_id not in d.rules:
                    continue
                if f.kind not in INLINE_KINDS:
                    d.refused = True
                    report.warnings.append(SuppressionWarning(
                        "inline-refused", display,
                        f"{f.rule_id} on line {line} is of kind {f.kind}: only secret and pii findings can be "
                        f"suppressed by a comment in the file (a recorded page could carry one); use the allowlist", d.line))
                    continue
                d.used = True
                chosen.setdefault(id(f), ("inline", d.reason))
        for d in directives:
            if d.used or d.refused:
                continue
            if active_rules is not None and not any(r in active_rules for r in d.rules):
                continue
            word = "centinela-ignore-next-line" if d.next_line_only else "centinela-ignore"
            report.warnings.append(SuppressionWarning(
                "inline-unused", display, f"{word} {', '.join(d.rules)} suppresses nothing", d.line))
