"""Load measurement of `centinela serve` (by hand; never part of the test suite).

Starts the server as a subprocess on the example tree, opens TOTAL concurrent connections of which HELD
are held open by the timeout fixture, keeps them hanging for SECONDS while the answered connections keep
sending requests, and samples the server's resident memory (VmRSS from /proc/<pid>/status) throughout.
It also shows the listening socket is bound to 127.0.0.1 only (/proc/net/tcp) and that a connection to
this machine's other addresses at the same port is refused.

    .venv/bin/python bench/serve_load.py [--total 200] [--held 50] [--seconds 10]
    .venv/bin/python bench/serve_load.py --total 500 --held 0 --requests 20000 [--checkout DIR]

With `--requests N` the answered connections keep sending (keep-alive, one request per connection per round)
until N requests were answered, and the rate is printed; `--checkout DIR` runs the server from another
checkout of the project (PYTHONPATH=DIR), to compare two versions in one run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TREE = REPO / "fixtures" / "web-search"


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def listening_addresses(port: int) -> list[str]:
    found = []
    for table, family in (("/proc/net/tcp", 4), ("/proc/net/tcp6", 6)):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            cols = row.split()
            local, state = cols[1], cols[3]
            addr, port_hex = local.rsplit(":", 1)
            if state == "0A" and int(port_hex, 16) == port:
                if family == 4:
                    found.append(socket.inet_ntop(socket.AF_INET, bytes.fromhex(addr)[::-1]))
                else:
                    raw = bytes.fromhex(addr)
                    found.append(socket.inet_ntop(socket.AF_INET6, b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))))
    return found


def other_addresses() -> list[str]:
    try:
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=5).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return []
    return [a for a in out if not a.startswith("127.") and a != "::1"]


def refused(addr: str, port: int) -> str:
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.settimeout(2)
        try:
            s.connect((addr, port))
            return "CONNECTED (not loopback-only!)"
        except ConnectionRefusedError:
            return "refused"
        except OSError as exc:
            return f"failed: {exc}"


async def read_response(reader) -> int:
    line = await reader.readuntil(b"\r\n")
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(int(h.split(b":")[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length"))
    await reader.readexactly(length)
    return int(line.split()[1])


def request(query: str, held: bool) -> bytes:
    body = json.dumps({"query": query}).encode()
    extra = b"x-centinela-scenario: timeout\r\n" if held else b""
    return (b"POST /search HTTP/1.1\r\nhost: 127.0.0.1\r\n" + extra
            + b"content-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))


async def stats(port: int) -> dict:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /_centinela/stats HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
    await writer.drain()
    raw = await reader.read()
    writer.close()
    return json.loads(raw.partition(b"\r\n\r\n")[2])


async def load(pid: int, port: int, total: int, held_n: int, seconds: float, requests: int | None = None) -> dict:
    queries = [json.loads(p.read_text())["request"]["body"]["query"]
               for p in sorted((TREE / "tavily" / "search").glob("*.json"))]
    samples: list[tuple[float, int]] = []
    t0 = time.monotonic()
    before = rss_kib(pid)
    conns = await asyncio.gather(*(asyncio.open_connection("127.0.0.1", port, limit=1 << 20) for _ in range(total)))
    held = set(range(0, total, max(1, total // held_n))[:held_n]) if held_n else set()
    for i, (_, w) in enumerate(conns):
        w.write(request(queries[i % len(queries)], i in held))
    await asyncio.gather(*(w.drain() for _, w in conns))
    answered = [conns[i][0] for i in range(total) if i not in held]
    statuses = await asyncio.gather(*(read_response(r) for r in answered))
    opened = time.monotonic() - t0
    after_open = rss_kib(pid)
    server_stats = await stats(port)
    rounds = 0
    errors: list[str] = []
    t_rounds = time.monotonic()
    end = t_rounds + seconds
    while (len(statuses) < requests) if requests else (time.monotonic() < end):
        for i, (_, w) in enumerate(conns):        # keep the answered connections busy while the held ones hang
            if i not in held:
                w.write(request(queries[(i + rounds) % len(queries)], False))
        more = await asyncio.gather(*(read_response(r) for r in answered), return_exceptions=True)
        errors += [f"{type(m).__name__}: {m}" for m in more if isinstance(m, BaseException)]
        statuses += [m for m in more if not isinstance(m, BaseException)]
        rounds += 1
        samples.append((time.monotonic() - t0, rss_kib(pid)))
        if errors:
            break
        if not requests:
            await asyncio.sleep(0.1)
    rounds_s = time.monotonic() - t_rounds
    silent = 0
    for i in held:
        try:
            await asyncio.wait_for(conns[i][0].read(1), 0.01)
        except asyncio.TimeoutError:
            silent += 1
    end_stats = await stats(port)
    for _, w in conns:
        w.close()
    await asyncio.sleep(0.5)
    return {"before": before, "after_open": after_open, "samples": samples, "statuses": statuses,
            "errors": errors, "rounds_s": rounds_s,
            "opened_s": opened, "rounds": rounds, "silent_held": silent, "stats_open": server_stats,
            "stats_end": end_stats, "after_close": rss_kib(pid), "final_stats": await stats(port)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--total", type=int, default=200)
    ap.add_argument("--held", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--requests", type=int, default=None, help="keep sending until this many were answered")
    ap.add_argument("--checkout", type=Path, default=None, help="run the server from this checkout")
    args = ap.parse_args()
    env = dict(os.environ)
    if args.checkout is not None:
        env["PYTHONPATH"] = str(args.checkout.resolve())
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "serve.jsonl"
        proc = subprocess.Popen([sys.executable, "-m", "scanner", "serve", str(TREE), "--provider", "tavily",
                                 "--log", str(log)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        try:
            base = proc.stdout.readline().split()[1]
            port = int(base.rsplit(":", 1)[1])
            time.sleep(0.5)
            print(f"server from {args.checkout or REPO}, pid {proc.pid} at {base}; listening on {', '.join(listening_addresses(port))}")
            for addr in other_addresses():
                print(f"  connect to {addr}:{port}: {refused(addr, port)}")
            r = asyncio.run(load(proc.pid, port, args.total, args.held, args.seconds, args.requests))
        finally:
            proc.terminate()
            _, err = proc.communicate(timeout=30)
        lines = log.read_text().splitlines()
    rss = [kib for _, kib in r["samples"]]
    ok = sum(1 for s in r["statuses"] if s == 200)
    print(f"{args.total} concurrent connections, {args.held} held by the timeout fixture: opened and answered in "
          f"{r['opened_s']:.2f} s; server stats then {r['stats_open']}")
    print(f"answers: {ok}/{len(r['statuses'])} were 200 over {r['rounds']} rounds on the "
          f"{args.total - args.held} answered connections; held connections silent at the end: "
          f"{r['silent_held']}/{args.held}; stats at the end {r['stats_end']}")
    after_first = len(r["statuses"]) - (args.total - args.held)
    print(f"keep-alive rounds: {after_first} requests in {r['rounds_s']:.2f} s "
          f"({after_first / max(r['rounds_s'], 1e-9):,.0f} requests/s); errors: {len(r['errors'])}"
          + (f" (first: {r['errors'][0]})" if r["errors"] else "")
          + f"; statuses other than 200: {sum(1 for s in r['statuses'] if s != 200)}")
    print(f"server RSS: {r['before']} KiB idle; {r['after_open']} KiB with all open "
          f"(+{r['after_open'] - r['before']} KiB, {(r['after_open'] - r['before']) / max(1, args.total):.1f} KiB "
          f"per connection)")
    if rss:
        print(f"while held for {args.seconds:g} s ({len(rss)} samples): min {min(rss)} KiB, max {max(rss)} KiB, "
              f"first {rss[0]} KiB, last {rss[-1]} KiB (drift {rss[-1] - rss[0]:+d} KiB)")
    print(f"after the clients closed: {r['after_close']} KiB; server stats {r['final_stats']}")
    print(f"log: {len(lines)} entries; the server said: {err.strip().splitlines()[-1] if err.strip() else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
