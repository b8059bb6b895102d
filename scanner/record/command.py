"""`centinela record`: build the recorder and the proxy, print the base URL, run until SIGINT/SIGTERM."""

from __future__ import annotations

import sys
from pathlib import Path

from scanner.record.proxy import DEFAULT_UPSTREAM_TIMEOUT, RecordServer, parse_upstream
from scanner.record.store import Recorder, RecordError
from scanner.serve.listener import run_until_signal
from scanner.serve.server import DEFAULT_IDLE_TIMEOUT, RequestLog
from scanner.terminal import safe

DEFAULT_LOG = Path("centinela-out") / "record.jsonl"


def build_recorder(root: Path, provider: str, upstream: str, *, host: str = "127.0.0.1", port: int = 0,
                   log_path: Path | None = None, provenance: str = "sha256",
                   upstream_timeout: float = DEFAULT_UPSTREAM_TIMEOUT,
                   idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT, say=None) -> RecordServer:
    """A recording proxy for PROVIDER's exchanges with UPSTREAM, written under ROOT. Raises RecordError, naming
    the option or file, on anything that cannot run as asked (before anything is written)."""
    parse_upstream(upstream)
    if port < 0 or port > 65535:
        raise RecordError(f"--port {port}: not a TCP port")
    server = RecordServer(Recorder(root, provider, provenance), upstream, host=host, port=port, log=None,
                          idle_timeout=idle_timeout, upstream_timeout=upstream_timeout, say=say)
    try:
        server.log = RequestLog(log_path)     # opened last: a proxy that cannot start leaves no empty log behind
    except Exception as exc:
        raise RecordError(str(exc)) from None
    return server


def run(server: RecordServer, out=sys.stdout, err=sys.stderr) -> None:
    def announce() -> None:
        print(safe(f"centinela record: forwarding to {server.upstream} (the only host reached), writing "
                   f"{server.recorder.root / server.recorder.provider}"
                   + (f"; log: {server.log.path}" if server.log.path else "") + "; stop with Ctrl-C or SIGTERM"),
              file=err, flush=True)

    def farewell(stats: dict) -> None:
        print(f"centinela record: stopped after {stats['requests']} requests: {stats['recorded']} recorded, "
              f"{stats['not_recorded']} not recorded", file=err, flush=True)

    run_until_signal(server, announce, farewell, out)
