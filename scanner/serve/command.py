"""`centinela serve`: load the catalogs, start the server, print the base URLs, run until SIGINT/SIGTERM."""

from __future__ import annotations

import sys
from pathlib import Path

from scanner.serve.catalog import ServeError, load_catalog, tree_providers
from scanner.serve.listener import run_until_signal
from scanner.serve.scenarios import Scenarios
from scanner.serve.server import DEFAULT_IDLE_TIMEOUT, ReplayServer, RequestLog
from scanner.terminal import safe

DEFAULT_LOG = Path("centinela-out") / "serve.jsonl"


def build_server(root: Path, provider: str | None = None, *, host: str = "127.0.0.1", port: int = 0,
                 log_path: Path | None = None, scenarios=(), retry_after: float | None = None,
                 idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT) -> ReplayServer:
    """A server for ROOT: one provider at the root of its base URL, or (no PROVIDER) every provider of the
    tree under `/<provider>/`. Raises ServeError, naming the file, on anything that cannot be served."""
    if not root.is_dir():
        raise ServeError(f"{root}: no such fixture tree")
    names = [provider] if provider else tree_providers(root)
    if not names:
        raise ServeError(f"{root}: no provider folder to serve")
    if port < 0 or port > 65535:
        raise ServeError(f"--port {port}: not a TCP port")
    catalogs = {name: load_catalog(root, name) for name in names}
    parsed = Scenarios.parse(scenarios)
    server = ReplayServer(catalogs, prefixed=provider is None, scenarios=parsed, log=None,
                          retry_after=retry_after, host=host, port=port, idle_timeout=idle_timeout)
    server.log = RequestLog(log_path)   # opened last: a server that cannot start leaves no empty log behind
    return server


def run(server: ReplayServer, out=sys.stdout, err=sys.stderr) -> None:
    def announce() -> None:
        answers = sum(len(c.answers) for c in server.catalogs.values())
        print(safe(f"centinela serve: {answers} recorded answers; scenarios: "
                   + ("; ".join(f"{p}: {', '.join(c.scenario_names())}" for p, c in server.catalogs.items()))
                   + (f"; log: {server.log.path}" if server.log.path else "")
                   + "; stop with Ctrl-C or SIGTERM"), file=err, flush=True)

    def farewell(stats: dict) -> None:
        print(f"centinela serve: stopped after {stats['requests']} requests "
              f"({stats['held']} still held open were closed)", file=err, flush=True)

    run_until_signal(server, announce, farewell, out)
