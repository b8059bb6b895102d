"""`record`: the recording proxy (the one command that may reach a live host: the one named by --upstream)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from scanner.cli.common import RunError, refuse_inside
from scanner.terminal import safe


@click.command("record")
@click.argument("root", type=click.Path(path_type=Path))
@click.option("--provider", "-p", required=True, help="Provider folder the exchanges are written under.")
@click.option("--upstream", required=True, metavar="URL",
              help="Origin of the provider's API (https://api.tavily.com): the one live host this command reaches.")
@click.option("--port", type=int, default=0, show_default=True, help="TCP port; 0 picks a free one.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Loopback address to listen on (nothing else "
              "is accepted).")
@click.option("--log", "log_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="JSONL log of the exchanges (default: centinela-out/record.jsonl); it holds no datum.")
@click.option("--provenance", type=click.Choice(["sha256", "hmac"]), default="sha256", show_default=True,
              help="sha256_original as a plain digest, or HMAC-SHA256 keyed by $CENTINELA_PROVENANCE_KEY.")
@click.option("--upstream-timeout", type=click.FloatRange(0, 3600, min_open=True), default=30.0, show_default=True,
              metavar="SECONDS", help="An upstream that does not answer within SECONDS is recorded as the timeout "
              "fixture (and answered 504).")
@click.option("--idle-timeout", "idle_timeout", type=click.FloatRange(0, 86400), default=60.0, show_default=True,
              metavar="SECONDS", help="Close a client connection that sends no complete request for SECONDS; 0: never.")
def record_command(root, provider, upstream, port, host, log_path, provenance, upstream_timeout, idle_timeout) -> None:
    """Record a provider's answers for the fixture tree ROOT: a proxy on loopback that an adapter's tests point
    their base URL at. Each exchange is redacted in memory, then written atomically where its class belongs,
    with its manifest.json entry; secrets and personal data never reach the disk or the log."""
    from scanner.record.command import DEFAULT_LOG, build_recorder, run
    from scanner.record.store import RecordError

    refuse_inside("--log", log_path or DEFAULT_LOG, root)

    def say(line: str) -> None:
        click.echo(safe(f"centinela record: {line}"), err=True)

    try:
        server = build_recorder(root, provider, upstream, host=host, port=port, log_path=log_path or DEFAULT_LOG,
                                provenance=provenance, upstream_timeout=upstream_timeout, idle_timeout=idle_timeout,
                                say=say)
        run(server, sys.stdout, sys.stderr)
    except RecordError as exc:
        raise RunError(str(exc)) from None


COMMANDS = [record_command]
