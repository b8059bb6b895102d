"""What every command shares: exit codes, the one-line error, output (stdout or an atomic file), the common
options, and the usage errors for contradictory arguments.

Exit codes (contract): 0 ran and nothing fails; 1 ran and found something that fails; 2 could not run as
asked (usage error, unreadable input, missing file) with a one-line message on stderr and no traceback.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from scanner import TOOL_NAME
from scanner.atomic import atomic_write_text
from scanner.terminal import json_text, safe, safe_text

EXIT_OK, EXIT_FAIL, EXIT_ERROR = 0, 1, 2


class RunError(click.ClickException):
    """Could not run as asked: exit 2 with a one-line message."""

    exit_code = EXIT_ERROR


def format_option(choices=("text", "json")):
    return click.option("--format", "fmt", type=click.Choice(choices), default="text", show_default=True,
                        help="Output format.")


output_option = click.option("--output", "-o", "output", type=click.Path(dir_okay=False, path_type=Path),
                             help="Write the output to FILE (atomically) instead of standard output.")


def emit(text: str, output: Path | None, color: bool | None = None) -> None:
    """Write a command's output to stdout (or atomically to `output`). Every control, escape and bidi
    character left in it is shown as a visible escape (`scanner.terminal`), on a terminal or not; with
    `color`, our own SGR colours pass (the caller sanitised the data before colouring it)."""
    text = safe_text(text, keep_sgr=bool(color))
    if not text.endswith("\n"):
        text += "\n"
    if output is None:
        click.echo(text, nl=False, color=color)
        return
    try:
        atomic_write_text(output, text)
    except OSError as exc:
        raise RunError(f"{output}: cannot write: {exc.strerror or exc}") from None
    warn(f"wrote {output}")


def warn(message: str) -> None:
    """One line on stderr, every untrusted character in it escaped (a line break too: it stays one line)."""
    click.echo(safe(message), err=True)


def to_json(data) -> str:
    """JSON output: readable Spanish, and every character a terminal could act on as a `\\uXXXX` escape."""
    return json_text(json.dumps(data, indent=2, ensure_ascii=False)) + "\n"


def unkeyed_warning(findings, key: bytes | None) -> None:
    """Warn once per process when fingerprints of secrets or personal data are made without a key."""
    from scanner.fingerprint import unkeyed_warning_once

    message = unkeyed_warning_once(findings, key)
    if message:
        warn(f"{TOOL_NAME}: {message}")


def repo_root() -> Path:
    """The git work tree around the current directory, else the current directory (SARIF URIs are relative to it)."""
    here = Path.cwd().resolve()
    for folder in [here] + list(here.parents):
        if (folder / ".git").exists():
            return folder
    return here


# --- contradictory arguments are usage errors (exit 2), never resolved silently ---------------------------

def same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def refuse_same(option_a: str, a: Path | None, option_b: str, b: Path | None, why: str) -> None:
    if a is not None and b is not None and same_file(a, b):
        raise click.UsageError(f"{option_a} and {option_b} name the same file ({a}): {why}")


def refuse_inside(option: str, target: Path | None, root: Path) -> None:
    """An output never lands inside the fixture tree a command reads (it would be an unlisted file of it, or
    overwrite one of its files)."""
    if target is None or not root.is_dir():
        return
    where, base = os.path.realpath(target), os.path.realpath(root)
    if os.path.commonpath([where, base]) == base:
        raise click.UsageError(f"{option} {target} is inside the fixture tree {root}: outputs never go into the "
                               "tree they read; write it elsewhere")


def progress_bar():
    """A progress bar on stderr for long scans, or None: off when stderr is not a terminal, under CI
    (`CI` set) or pre-commit (`PRE_COMMIT` set)."""
    if not sys.stderr.isatty() or os.environ.get("CI") or os.environ.get("PRE_COMMIT"):
        return None

    def wrap(targets):
        if len(targets) < 20:
            yield from targets
            return
        with click.progressbar(targets, label="scanning", file=sys.stderr,
                               item_show_func=lambda t: safe(t.display)[-40:] if t else "") as bar:
            yield from bar
    return wrap
