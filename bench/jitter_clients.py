"""How the jitter part of the `retry_after` check judges real clients (by hand; never part of the test suite).

Each client variant sends 10 concurrent searches through one 429 each (`search:429x10`) against `centinela
serve` in a subprocess; the serve log is judged by `check_retry_after`. Printed per variant: the jitter spread
and the Kendall tau of the 429s' order against their retries' order in every run, and how many runs got the
verdict meant for the variant (pass for a jittered client, "no jitter" for the others). The clients are the
test suite's (`tests/realclients.py`: httpx + tenacity; `tests/node/adapter.mjs`: p-retry) with other waits.

    .venv/bin/python bench/jitter_clients.py [--runs 4] [--retry-after 0.05] [--only "TEXT|TEXT"]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]
NODE_DIR = REPO / "tests" / "node"

import tenacity  # noqa: E402

from realclients import NoJitter, Replay, TavilyAdapter, concurrently, wait_retry_after  # noqa: E402
from scanner.behaviour import check_retry_after, jitter_spread, order_kept, _time  # noqa: E402

QUERY = "registro sanitario COFEPRIS Laboratorios Sierra Madre"


def tenacity_client(wait):
    class Client(TavilyAdapter):
        def wait(self):
            return wait()
    return Client


# name → (jittered?, how). Python: the wait after a 429 is retry-after plus the tenacity wait named.
PYTHON = {
    "tenacity random_exponential(0.1, max 0.2)": (True, tenacity_client(
        lambda: wait_retry_after() + tenacity.wait_random_exponential(multiplier=0.1, max=0.2))),
    "tenacity random_exponential(0.05, max 0.1)": (True, tenacity_client(
        lambda: wait_retry_after() + tenacity.wait_random_exponential(multiplier=0.05, max=0.1))),
    "tenacity random(0, 0.05)": (True, tenacity_client(lambda: wait_retry_after() + tenacity.wait_random(0, 0.05))),
    "tenacity fixed 0.5": (False, NoJitter),
    "tenacity fixed 0.25": (False, tenacity_client(lambda: wait_retry_after() + tenacity.wait_fixed(0.25))),
    "tenacity fixed 0.1": (False, tenacity_client(lambda: wait_retry_after() + tenacity.wait_fixed(0.1))),
    "tenacity exponential(0.05), no jitter": (False, tenacity_client(
        lambda: wait_retry_after() + tenacity.wait_exponential(multiplier=0.05))),
    "retry-after only": (False, tenacity_client(lambda: wait_retry_after())),
}
# Node: retry-after, then p-retry's own delay.
NODE = {
    "p-retry minTimeout 50, randomize": (True, {"MIN_TIMEOUT": "50"}),
    "p-retry minTimeout 100, randomize": (True, {"MIN_TIMEOUT": "100"}),
    "p-retry minTimeout 200, randomize": (True, {"MIN_TIMEOUT": "200"}),
    "p-retry minTimeout 250, no randomize": (False, {"MODE": "nojitter"}),
    "p-retry minTimeout 50, no randomize": (False, {"MODE": "nojitter", "FIXED_TIMEOUT": "50"}),
}


def one_run(name: str, tmp: Path, retry_after: str) -> list[dict]:
    with Replay(tmp, retry_after=retry_after) as replay:
        replay.scenario("search:429x10")
        if name in PYTHON:
            client = PYTHON[name][1](replay.base_url)
            try:
                concurrently(client.search, [QUERY] * 10)
            finally:
                client.close()
        else:
            env = {"PATH": "/usr/bin:/bin", **NODE[name][1]}
            mode = env.pop("MODE", "good")
            subprocess.run([shutil.which("node"), str(NODE_DIR / "adapter.mjs"), replay.base_url, "rate_limit", mode,
                            str(tmp / "out.json")], cwd=NODE_DIR, env=env, capture_output=True, text=True,
                           timeout=120, check=True)
    return [e for e in replay.log if not e.get("control")]


def waits_of(log: list[dict]) -> tuple[list[float], list[float], list[float]]:
    """(429 served at, retried at, wait) per call retried after its 429, in serving order."""
    by_call: dict[str, list[dict]] = {}
    for e in sorted(log, key=lambda e: e["ts_start"]):
        by_call.setdefault(e["call"], []).append(e)
    rows = sorted((_time(es[0]["ts_end"]), _time(es[1]["ts_start"])) for es in by_call.values()
                  if es[0]["status"] == 429 and len(es) > 1)
    return [s for s, _ in rows], [r for _, r in rows], [r - s for s, r in rows]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--retry-after", default="0.05")
    ap.add_argument("--only", default="", help="variants whose name holds one of these texts, separated by |")
    args = ap.parse_args(argv)
    variants = {**PYTHON, **(NODE if shutil.which("node") and (NODE_DIR / "node_modules" / "p-retry").is_dir() else {})}
    names = [n for n in variants if not args.only or any(t and t in n for t in args.only.split("|"))]
    print(f"retry-after {args.retry_after} s, {args.runs} runs, load {os.getloadavg()[0]:.1f}")
    for name in names:
        jittered = variants[name][0]
        right, cells = 0, []
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as d:
                log = one_run(name, Path(d), args.retry_after)
            served, retried, waits = waits_of(log)
            result = check_retry_after(log, "tavily")
            meant = result.status == "pass" if jittered else (result.status == "fail" and "no jitter" in (result.reason or ""))
            right += meant
            cells.append(f"{jitter_spread(waits):.2f}/{order_kept(served, retried):+.2f}{'' if meant else '!'}")
        print(f"{name:40s} {'jitter' if jittered else 'none  '} {right}/{args.runs} right   spread/tau: {'  '.join(cells)}")
    print(f"load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
