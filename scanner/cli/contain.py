"""`centinela contain FILE`: a document as a language model would receive it."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from scanner.cli.common import EXIT_FAIL, EXIT_OK, RunError, emit, format_option, output_option, refuse_same, to_json


@click.command("contain")
@click.argument("file", type=click.Path(path_type=Path))
@format_option()
@output_option
def contain_command(file: Path, fmt: str, output: Path | None) -> None:
    """Print FILE as a model would receive it: an UntrustedText with hidden channels dropped and flagged
    spans fenced. Exit 1 if any injected payload would still be readable outside a fence."""
    from scanner.loaders import load_path
    from scanner.scan import Scanner
    from scanner.units import LoadError
    from scanner.untrusted import payload_escapes, render_untrusted

    if not file.exists() or file.is_dir():
        raise RunError(f"{file}: no such file")
    refuse_same("FILE", file, "--output", output, "the output would overwrite its input")
    try:
        doc = load_path(file)
    except LoadError as exc:
        raise RunError(f"{exc.path}: {exc.message} ({exc.code})") from None
    findings = Scanner(("injection",)).scan_document(doc)
    untrusted = render_untrusted(doc, findings)
    escaped = payload_escapes(untrusted, findings)
    if fmt == "json":
        data = untrusted.model_dump()
        data["payload_outside_fences"] = escaped
        emit(to_json(data), output)
    else:
        notes = [f"# {len(untrusted.flags)} flagged span(s): "
                 + ", ".join(f"{f.rule_id} {f.vector} ({'fenced' if f.rendered else 'dropped'})" for f in untrusted.flags)
                 if untrusted.flags else "# no injection found"]
        if untrusted.dropped_channels:
            notes.append("# dropped channels: " + ", ".join(untrusted.dropped_channels))
        emit("\n".join(notes + [untrusted.text]), output)
    sys.exit(EXIT_FAIL if escaped else EXIT_OK)


COMMANDS = [contain_command]
