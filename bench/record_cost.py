"""What recording costs an adapter's test (by hand; never part of the test suite).

The same N searches (the example tree's Tavily queries, answered by tests/fakeupstream.py with its leaks) are
sent through `centinela record` (in this process, on its own event loop) and, as a baseline in the same run,
straight to the fake upstream; the time per request of each, and of the recording alone (what the log says
each exchange took minus the upstream's share is not separable, so the difference of the two is given).

    .venv/bin/python bench/record_cost.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]
TREE = REPO / "fixtures" / "web-search"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()

    import httpx

    from fakeupstream import FakeUpstream
    from scanner import netlock
    from scanner.record import build_recorder
    from scanner.serve import ServerThread

    netlock.install(allow_loopback=True)
    queries = [json.loads(p.read_text())["request"]["body"]["query"] for p in sorted((TREE / "tavily/search").glob("gs-0*.json"))]
    direct, recorded = [], []
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, FakeUpstream(TREE, "tavily", seed=1) as up:
        root = Path(tmp) / "tree"
        root.mkdir()
        shutil.copytree(TREE / "golden", root / "golden")
        server = build_recorder(root, "tavily", up.origin, log_path=Path(tmp) / "record.jsonl")
        start_up = time.perf_counter() - t0
        with ServerThread(server) as thread:
            proxy = httpx.Client(base_url=thread.base_url, headers={"authorization": "Bearer tvly-dev-bench"})
            plain = httpx.Client(base_url=up.origin, headers={"authorization": "Bearer tvly-dev-bench"})
            for _ in range(args.rounds):
                for q in queries:
                    t = time.perf_counter()
                    assert plain.post("/search", json={"query": q}).status_code == 200
                    direct.append(time.perf_counter() - t)
                    t = time.perf_counter()
                    answer = proxy.post("/search", json={"query": q})
                    assert answer.status_code == 200 and answer.headers.get("x-centinela-recorded"), answer.text[:200]
                    recorded.append(time.perf_counter() - t)
        files = len(json.loads((root / "manifest.json").read_text())["files"])
    ms = lambda xs: f"median {statistics.median(xs) * 1000:.1f} ms, max {max(xs) * 1000:.1f} ms"   # noqa: E731
    print(f"recorder start-up (models loaded once): {start_up:.2f} s")
    print(f"{len(direct)} searches straight to the fake upstream: {ms(direct)}")
    print(f"{len(recorded)} through record (redacted, written, listed; {files} files in the end): {ms(recorded)}")
    print(f"recording adds {statistics.median(recorded) * 1000 - statistics.median(direct) * 1000:.1f} ms a request "
          f"(median), {statistics.median(recorded) / statistics.median(direct):.1f}x the direct request")
    return 0


if __name__ == "__main__":
    sys.exit(main())
