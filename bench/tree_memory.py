"""Peak memory and time per MB of `centinela scan` on generated trees of two sizes (`make bench`, by hand).

A tree is the real pages of ../shared/realdata/html copied again and again under new names (100 files to a
folder) until it holds the size asked for, in a temporary directory that is deleted afterwards. Each scan runs
as a child process (`python -m scanner scan TREE --format json -o OUT`, its default budgets, so files are
scanned in its forked workers); its peak resident set size is the child's `ru_maxrss` from `os.wait4`, which
on Linux covers the child and every worker it waited for (run this script in a fresh process: a child also
inherits the peak RSS of the process it was forked from, as `ru_maxrss` survives exec). The figures: peak RSS at each size, and the time per
MB of the large tree as a ratio against the small tree's, measured in the same run.

    python bench/tree_memory.py --small 10 --large 100            # the issue's figures
    python bench/tree_memory.py --small 2 --large 10 --kinds injection   # a quick look while working
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
REALDATA = REPO.parent / "shared" / "realdata"


def real_pages() -> list[tuple[str, bytes]]:
    return [(p.name, p.read_bytes()) for p in sorted((REALDATA / "html").glob("*.html"))]


def make_tree(base: Path, mb: float, pages: list[tuple[str, bytes]]) -> tuple[Path, int, int]:
    """A folder of at least `mb` MB of copies of `pages` under new names: (root, files, bytes)."""
    root = base / f"tree-{mb:g}mb"
    target = int(mb * 1e6)
    total = files = 0
    while total < target:
        name, data = pages[files % len(pages)]
        folder = root / f"d{files // 100:04d}"
        if files % 100 == 0:
            folder.mkdir(parents=True)
        (folder / f"copy{files:06d}-{name}").write_bytes(data)
        total += len(data)
        files += 1
    return root, files, total


def scan_child(root: Path, out: Path, kinds: str | None) -> tuple[float, int, int]:
    """(wall seconds, peak RSS in bytes, exit code) of one `centinela scan` of `root` in a child process."""
    cmd = [sys.executable, "-m", "scanner", "scan", str(root), "--format", "json", "-o", str(out), "--no-progress"]
    if kinds:
        cmd += ["--kinds", kinds]
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
    if proc.returncode not in (0, 1):
        print(f"  scan of {root.name} exited {proc.returncode}: {err.strip()[-300:]}")
    return wall, usage.ru_maxrss * 1024, proc.returncode


def bench_tree_memory(small_mb: float = 10, large_mb: float = 100, kinds_list=(None, "injection")) -> dict:
    """Print peak RSS and time/MB at both sizes for each kind set; return the figures (for the summary)."""
    pages = real_pages()
    if not pages:
        print("tree memory: ../shared/realdata/html absent, skipped")
        return {}
    figures: dict = {}
    base = Path(tempfile.mkdtemp(prefix="centinela-tree-bench-"))
    try:
        trees = {}
        for mb in (small_mb, large_mb):
            trees[mb] = make_tree(base, mb, pages)
        one = base / "one-page"
        one.mkdir()
        name, data = min(pages, key=lambda p: len(p[1]))
        (one / name).write_bytes(data)
        for kinds in kinds_list:
            label = f"--kinds {kinds}" if kinds else "all kinds"
            startup, _, _ = scan_child(one, base / "out.json", kinds)   # start-up: imports, rules, models, workers
            rows = {}
            for mb, (root, files, size) in trees.items():
                wall, rss, _ = scan_child(root, base / "out.json", kinds)
                rows[mb] = (wall, rss, size, files)
                (base / "out.json").unlink(missing_ok=True)
            (ws, rs, ss, fs), (wl, rl, sl, fl) = rows[small_mb], rows[large_mb]
            per_small, per_large = ws / (ss / 1e6), wl / (sl / 1e6)
            net_small, net_large = max(ws - startup, 1e-9) / (ss / 1e6), max(wl - startup, 1e-9) / (sl / 1e6)
            print(f"tree scan, {label}: real pages repeated under new names (start-up, one page: {startup:.2f} s)")
            print(f"  {ss / 1e6:6.1f} MB ({fs} files)   peak RSS {rs / 2**20:6.0f} MB   {per_small:6.3f} s/MB "
                  f"({net_small:.3f} s/MB without the start-up)")
            print(f"  {sl / 1e6:6.1f} MB ({fl} files)   peak RSS {rl / 2**20:6.0f} MB   {per_large:6.3f} s/MB "
                  f"({net_large:.3f} s/MB without the start-up)")
            print(f"  time per MB: {per_large / per_small:.2f}x the small tree's ({net_large / net_small:.2f}x "
                  f"without the start-up; goal <= 1.2x); peak RSS {rl / 2**20:.0f} MB = {rl / rs:.2f}x the small "
                  f"tree's (goal: under 400 MB)")
            figures[kinds or "all"] = {"rss_large": rl, "rss_small": rs, "time_ratio": per_large / per_small,
                                       "net_time_ratio": net_large / net_small, "startup": startup}
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return figures


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", type=float, default=10)
    ap.add_argument("--large", type=float, default=100)
    ap.add_argument("--kinds", action="append", help="kinds to scan (repeatable; default: all, then injection)")
    args = ap.parse_args()
    bench_tree_memory(args.small, args.large, tuple(args.kinds) if args.kinds else (None, "injection"))


if __name__ == "__main__":
    main()
