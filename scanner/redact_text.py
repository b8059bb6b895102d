"""`redact`'s text output: per file, what is replaced, truncated, invalidated or left alone, and why."""

from __future__ import annotations

from scanner.scrub import shown, shown_path
from scanner.terminal import safe


def format_text(plan, wrote: bool) -> str:
    lines = []
    for fp in plan.files:
        if not (fp.changes or fp.unredactable or fp.spans_invalidated):
            continue
        ents: dict[str, int] = {}
        for r, _ in fp.all_redactions():
            ents[r.entity] = ents.get(r.entity, 0) + 1
        what = ", ".join(f"{n} {e}" for e, n in sorted(ents.items())) or "nothing to replace"
        lines.append(f"{shown_path(fp.path)}: {safe(what)}" + (f"; truncate at {fp.truncate_at}" if fp.truncate else ""))
        for r, body in fp.all_redactions():
            where = (f"{body.region.start}-{body.region.end} {safe(body.region.container)}[{r.start}-{r.end}]"
                     if body is not None else f"{r.start}-{r.end}")
            lines.append(f"  {where} {safe(r.entity)} -> {safe(r.replacement)} ({safe(r.rule_id)})")
        for s in fp.spans_invalidated:
            lines.append(f"  span invalidated: {shown_path(s)} (re-capture the expected file; never adjust the span by hand)")
        for u in fp.unredactable:
            lines.append(f"  not redacted: {shown(u)}")
        for w in fp.warnings:
            lines.append(f"  warning: {shown(w)}")
    for e in plan.errors:
        lines.append(f"{shown_path(e['path'])}: error: {safe(e['code'])}: {shown(e['message'])}")
    n = sum(len(fp.all_redactions()) for fp in plan.files)
    files = sum(1 for fp in plan.files if fp.changes)
    verb = "redacted" if wrote else "to redact"
    if files and not wrote:
        lines.append("run `centinela redact --write` on these paths to apply the plan (it updates manifest.json)")
    lines.append(f"{n} value(s) {verb} in {files} file(s) of {len(plan.files)} checked"
                 + (f"; {len(plan.written)} written" if wrote else "")
                 + (f"; {len(plan.errors)} could not be read" if plan.errors else ""))
    return "\n".join(lines)
