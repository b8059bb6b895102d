"""The `centinela` command line: a thin layer over the library, one module per command.

Exit codes (contract): 0 ran and nothing fails; 1 ran and found something that fails; 2 could not run as
asked (usage error, unreadable input, missing file) with a one-line message on stderr and no traceback.

Adding a command: write `scanner/cli/<name>.py` with its `@click.command` (or `@click.group`) functions,
using the helpers of `scanner.cli.common` (`RunError` for exit 2, `emit`, `warn`, `to_json`, the common
options), end it with `COMMANDS = [your_command, …]`, and add the module's name to `COMMAND_MODULES` below.
A command imports what it runs inside its function (the library, its detectors): `centinela --help` and the
other commands then never pay for it.
"""

from __future__ import annotations

import importlib
import logging
import sys

import click

from scanner import TOOL_NAME, __version__, netlock
from scanner.cli.common import (  # noqa: F401  (re-exported: the helpers a command module uses)
    EXIT_ERROR, EXIT_FAIL, EXIT_OK, RunError, emit, format_option, output_option, refuse_inside, refuse_same,
    to_json, warn,
)
from scanner.terminal import safe

# In the order `centinela --help` lists them (click sorts them by name anyway).
COMMAND_MODULES = ("manifest", "scan", "redact", "check", "contain", "corpus", "units", "serve", "record", "score",
                   "verify_run")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name=TOOL_NAME)
def cli() -> None:
    """Keep recorded web content safe before it reaches a language model or a repo."""


for _name in COMMAND_MODULES:
    for _command in importlib.import_module(f"{__name__}.{_name}").COMMANDS:
        cli.add_command(_command)


class _SafeLogFormatter(logging.Formatter):
    """A library's log line (pdfminer quotes a PDF's objects) on stderr: one line, every escape visible."""

    def format(self, record: logging.LogRecord) -> str:
        return safe(super().format(record))


def _safe_logging() -> None:
    root = logging.getLogger()
    if not root.handlers:            # otherwise logging's last-resort handler would print records raw
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(_SafeLogFormatter(f"{TOOL_NAME}: %(name)s: %(levelname)s: %(message)s"))
        root.addHandler(handler)


def main(argv=None) -> None:
    """Entry point: every failure to run is exit 2 with one line on stderr, never a traceback."""
    netlock.install(allow_loopback=True)  # loopback only: the replay server; nothing else is ever reached
    if argv is None:                      # the process's own command line: it exits after this command
        from scanner import startup

        startup.own_process()
    _safe_logging()
    try:
        rc = cli.main(args=argv, prog_name=TOOL_NAME, standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:  # pragma: no cover - click >= 8.2
        click.echo(exc.ctx.get_help(), err=True)
        sys.exit(EXIT_ERROR)
    except click.UsageError as exc:
        cmd = exc.ctx.command_path if exc.ctx else TOOL_NAME
        warn(f"{cmd}: error: {exc.format_message()} (see {cmd} --help)")
        sys.exit(EXIT_ERROR)
    except click.ClickException as exc:
        warn(f"{TOOL_NAME}: error: {exc.format_message()}")
        sys.exit(EXIT_ERROR)
    except click.exceptions.Abort:
        click.echo(f"{TOOL_NAME}: aborted", err=True)
        sys.exit(EXIT_ERROR)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo(f"{TOOL_NAME}: interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(EXIT_OK)
    except netlock.NetworkBlocked as exc:
        warn(f"{TOOL_NAME}: error: {exc}")
        sys.exit(EXIT_ERROR)
    except Exception as exc:  # a bug must still honour the contract: one line, exit 2
        warn(f"{TOOL_NAME}: internal error: {type(exc).__name__}: {exc}")
        sys.exit(EXIT_ERROR)
    sys.exit(rc if isinstance(rc, int) else EXIT_OK)
