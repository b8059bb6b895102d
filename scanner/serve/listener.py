"""The asyncio listener `serve` and `record` share: listen on a host and port, stop (every open connection
cancelled and awaited), and run a server until SIGINT or SIGTERM, printing each provider's base URL on stdout."""

from __future__ import annotations

import asyncio
import signal
import sys

from scanner.terminal import safe


def origin(host: str, port: int) -> str:
    """The http:// origin of a listener (an IPv6 host in brackets)."""
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


async def listen(handler, host: str, port: int) -> asyncio.Server:
    """A TCP listener calling `handler(reader, writer)` per connection; raises OSError when it cannot listen."""
    return await asyncio.start_server(handler, host, port, limit=64 * 1024, backlog=1024, reuse_address=True)


async def close(server: asyncio.Server | None, tasks: set[asyncio.Task]) -> None:
    """Stop listening, cancel the connections still open and wait until they and the listener are done."""
    if server is not None:
        server.close()
    pending = list(tasks)
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)
    if server is not None:
        await server.wait_closed()


def run_until_signal(server, announce, farewell, out=sys.stdout) -> None:
    """Start `server`, print `provider base-url` lines on `out` (a client reads them: terminal-safe), call
    `announce()`, wait for SIGINT or SIGTERM, stop the server and call `farewell(stats)` with its last stats."""
    async def main() -> None:
        await server.start()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        for provider, url in server.base_urls.items():
            print(f"{safe(provider)} {safe(url)}", file=out, flush=True)
        announce()
        await stop.wait()
        stats = server.stats()
        await server.stop()
        farewell(stats)

    asyncio.run(main())
