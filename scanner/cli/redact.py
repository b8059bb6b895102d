"""`centinela redact PATH... --check | --write`: plan or apply the spec's redaction rules."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from scanner.cli.common import (
    EXIT_FAIL, EXIT_OK, RunError, emit, format_option, output_option, refuse_inside, refuse_same, to_json, warn,
)


@click.command("redact")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--check", "check_flag", is_flag=True, help="Print the plan; change nothing (the default).")
@click.option("--write", "write_flag", is_flag=True, help="Apply the plan atomically and update manifest.json.")
@click.option("--provenance", type=click.Choice(["sha256", "hmac"]), default="sha256", show_default=True,
              help="How sha256_original is computed: the spec's plain digest, or HMAC-SHA256 keyed by "
                   "$CENTINELA_PROVENANCE_KEY (never committed).")
@click.option("--kinds", default="secret,pii", show_default=True, help="What to redact: secret, pii or both.")
@format_option()
@output_option
def redact_command(paths, check_flag, write_flag, provenance, kinds, fmt, output) -> None:
    """Plan (--check) or apply (--write) the spec's redaction rules to files and fixture trees."""
    # Imported here, not at the top: `centinela --help` and the other commands do not load the detectors.
    from scanner.pipeline.run import plan_redactions
    from scanner.redact import RedactError, Redactor, find_root, finish_journal
    from scanner.redact_text import format_text

    if check_flag and write_flag:
        raise click.UsageError("--check and --write contradict each other: give one (--check plans, --write applies)")
    mode = "write" if write_flag else "check"
    kind_list = tuple(k.strip() for k in kinds.split(",") if k.strip())
    if not kind_list or any(k not in ("secret", "pii") for k in kind_list):
        raise click.BadParameter(f"choose from secret, pii (got {kinds!r})", param_hint="--kinds")
    missing = [p for p in paths if not p.exists()]
    if missing:
        raise RunError(f"{missing[0]}: no such file or directory")
    roots = {r for r in (find_root(p if p.is_dir() else p.parent) for p in paths) if r is not None}
    for root in sorted(roots):
        refuse_inside("--output", output, root)
    for p in paths:
        if p.is_file():
            refuse_same("PATH", p, "--output", output, "the output would overwrite a file it redacts")
    finished = []
    for root in sorted(roots):
        journal = root / ".centinela-redact.journal"
        if journal.exists():
            if mode == "write":
                try:
                    finished += [f"{root}/{rel}" for rel in finish_journal(root)]
                except RedactError as exc:
                    raise RunError(str(exc)) from None
            else:
                warn(f"{root}: an interrupted redaction left {journal.name}: run redact --write to finish it")
    try:
        redactor = Redactor(kind_list)
        plan = plan_redactions(list(paths), redactor, provenance)
        if mode == "write":
            redactor.write(plan, provenance)
    except RedactError as exc:
        raise RunError(str(exc)) from None
    if fmt == "json":
        data = plan.to_json()
        if finished:
            from scanner.scrub import scrub_path

            data["finished_from_journal"] = [scrub_path(f) for f in finished]
        emit(to_json(data), output)
    else:
        emit(format_text(plan, wrote=mode == "write"), output)
    left = plan.pending if mode == "check" else any(f.changes and f.path not in plan.written for f in plan.files)
    sys.exit(EXIT_FAIL if (left or plan.fails) else EXIT_OK)


COMMANDS = [redact_command]
