"""`centinela serve ROOT`: replay a provider's recorded exchanges on loopback."""

from __future__ import annotations

from pathlib import Path

import click

from scanner.cli.common import RunError, refuse_inside


def _check_scenarios(ctx, param, value):
    """The --scenario schedules parse within their bounds, or it is a usage error (exit 2)."""
    from scanner.serve.catalog import ServeError
    from scanner.serve.scenarios import Scenarios

    try:
        Scenarios.parse(value)
    except ServeError as exc:
        raise click.BadParameter(str(exc).removeprefix("--scenario "), param_hint="--scenario") from None
    return value


@click.command("serve")
@click.argument("root", type=click.Path(path_type=Path))
@click.option("--provider", "-p", help="Serve this provider at the root of the base URL (default: every provider "
              "of the tree, each under /<provider>/).")
@click.option("--port", type=int, default=0, show_default=True, help="TCP port; 0 picks a free one.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Loopback address to listen on (nothing else "
              "is accepted).")
@click.option("--log", "log_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="JSONL request log (default: centinela-out/serve.jsonl).")
@click.option("--scenario", "scenarios", multiple=True, metavar="[PROVIDER:]OP:STEPS", callback=_check_scenarios,
              help="Schedule of recorded errors, e.g. 'search:429,429,ok' or 'search:5xx*' (repeatable).")
@click.option("--retry-after", "retry_after", type=click.FloatRange(0, 86400), default=None, metavar="SECONDS",
              help="Rewrite the retry-after header of served 429s to SECONDS (e.g. 0.05 in tests).")
@click.option("--idle-timeout", "idle_timeout", type=click.FloatRange(0, 86400), default=60.0, show_default=True,
              metavar="SECONDS", help="Close a connection that sends no complete request (or reads nothing) for "
              "SECONDS; 0: never. A connection held by the timeout fixture is never closed.")
def serve_command(root, provider, port, host, log_path, scenarios, retry_after, idle_timeout) -> None:
    """Replay the recorded fixtures under ROOT over HTTP on loopback for adapter tests (429, 5xx, a connection
    that never answers, partial answers); every request goes to a JSONL log."""
    from scanner.serve.catalog import ServeError
    from scanner.serve.command import DEFAULT_LOG, build_server, run

    refuse_inside("--log", log_path or DEFAULT_LOG, root)
    try:
        server = build_server(root, provider, host=host, port=port, log_path=log_path or DEFAULT_LOG,
                              scenarios=scenarios, retry_after=retry_after, idle_timeout=idle_timeout)
        run(server)
    except ServeError as exc:
        raise RunError(str(exc)) from None


COMMANDS = [serve_command]
