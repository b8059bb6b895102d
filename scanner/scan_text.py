"""`scan`'s text listing: findings grouped by file, errors, and the summary lines."""

from __future__ import annotations

import click

from scanner.findings import Finding
from scanner.scrub import shown, shown_path
from scanner.terminal import safe

_COLORS = {"error": "red", "warning": "yellow", "note": "cyan"}


def format_text(result, color: bool = False) -> str:
    """The text listing, grouped by file. Every field that comes from a file (its name, a JSON key quoted in a
    message, an injection's evidence) is made terminal-safe first and only then coloured; a path holding a
    datum is masked (`scanner.scrub`)."""

    def paint(text: str, **style) -> str:
        return click.style(text, **style) if color else text

    lines: list[str] = []
    by_path: dict[str, list[Finding]] = {}
    for f in result.active():
        by_path.setdefault(f.path, []).append(f)
    for path in sorted(by_path):
        lines.append(paint(shown_path(path), bold=True))
        for f in by_path[path]:
            where = f"page {f.page} {f.line}:{f.column}" if f.page else f"{f.line}:{f.column}"
            label = safe(f.vector or f.entity or "")
            severity = paint(f"{safe(f.severity):<7}", fg=_COLORS.get(f.severity))
            lines.append(f"  {where:<12} {severity} {safe(f.rule_id)} {label}: {safe(f.message)}")
            lines.append(f"  {'':<12} evidence: {safe(f.evidence)}")
    for e in result.errors:
        lines.append(paint(f"{shown_path(e['path'])}: error: {safe(e['code'])}: {shown(e['message'])}", fg="red"))
    flagged = len(by_path)
    count = sum(len(v) for v in by_path.values())
    lines.append(f"{count} finding{'s' if count != 1 else ''} in {flagged} of "
                 f"{result.files_scanned} files"
                 + (f"; {len(result.errors)} could not be read" if result.errors else ""))
    if result.suppression is not None and result.suppression.total:
        lines.append(safe(result.suppression.summary_line()))
    return "\n".join(lines)
