"""`centinela units FILE`: the text units a file loads into (for rule authors)."""

from __future__ import annotations

from pathlib import Path

import click

from scanner.cli.common import RunError, emit, format_option, output_option, refuse_same, to_json


@click.command("units")
@click.argument("file", type=click.Path(path_type=Path))
@format_option()
@output_option
def units_command(file: Path, fmt: str, output: Path | None) -> None:
    """Print the text units a file loads into: channel, exact position and text (for rule authors)."""
    from scanner.loaders import load_path
    from scanner.units import LoadError

    if not file.exists():
        raise RunError(f"{file}: no such file")
    refuse_same("FILE", file, "--output", output, "the output would overwrite its input")
    try:
        doc = load_path(file)
    except LoadError as exc:
        raise RunError(f"{exc.path}: {exc.message}") from None
    rows = []
    for u in doc.units:
        line, col = doc.line_col(u.start) if u.page is None else (None, None)
        rows.append({"channel": u.channel.value, "locator": u.locator, "start": u.start, "end": u.end,
                     "line": line, "column": col, "page": u.page, "text": u.text})
    if fmt == "json":
        emit(to_json({"path": str(file), "kind": doc.kind, "encoding": doc.encoding,
                      "problems": doc.problems, "units": rows}), output)
    else:
        lines = [f"{file}: {doc.kind}, {len(rows)} units" + (f", encoding {doc.encoding}" if doc.encoding else "")]
        lines += [f"  problem: {p}" for p in doc.problems]
        for r in rows:
            where = f"page {r['page']} {r['start']}-{r['end']}" if r["page"] else f"{r['line']}:{r['column']} [{r['start']}-{r['end']}]"
            snippet = " ".join(r["text"].split())
            lines.append(f"  {where} {r['channel']} {r['locator']}: {snippet[:100]}")
        emit("\n".join(lines), output)


COMMANDS = [units_command]
