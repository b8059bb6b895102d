"""Scan a fixture tree, render its reviewer page (review.html) and screenshot it in headless Chromium.

    python scripts/screenshot_review.py TREE OUT_PNG [--html OUT_HTML] [--size 1400,3000]

For looking at the page's design (`make review-shot`) and for the rendering tests. The scan runs every kind
(injection, secrets, personal data) with the views kept (`Scanner(review=True)`), exactly as `scan --format
html` does; Chromium runs offline as in scripts/screenshot_report.py, whose screenshot and PNG checks this reuses.
Exit codes: 0 written and checked, 1 the screenshot is missing, of the wrong size or blank, 2 could not run.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from screenshot_report import check_png, chromium_command, colours, read_png, screenshot  # noqa: E402,F401


def dump_dom(page: Path, proxy_port: int | None = None, budget_ms: int = 4000, binary: str | None = None,
             timeout: float = 120.0) -> subprocess.CompletedProcess:
    """Chromium's DOM of `page` once loaded (`--dump-dom`), with `budget_ms` of virtual time for scripts, timers
    and refreshes to act, under the same offline flags as the screenshots. With `proxy_port`, every fetch goes
    through a proxy on that loopback port — loopback too — so a test serving it sees any attempt to fetch."""
    import shutil
    import tempfile

    binary = binary or shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        raise FileNotFoundError("chromium is not installed (apt-get install -y chromium)")
    with tempfile.TemporaryDirectory(prefix="centinela-chromium-") as profile:
        cmd = chromium_command(binary, Path(profile), Path(profile) / "unused.png", page, 1400, 1000)
        cmd = [a for a in cmd[:-1] if not a.startswith("--screenshot")]
        cmd += ["--dump-dom", f"--virtual-time-budget={budget_ms}"]
        if proxy_port is not None:
            cmd += [f"--proxy-server=http://127.0.0.1:{proxy_port}", "--proxy-bypass-list=<-loopback>"]
        cmd.append(page.resolve().as_uri())
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


def render_tree(tree: Path) -> str:
    from scanner.budget import Budget
    from scanner.pipeline.run import scan_paths
    from scanner.review.render import render_review, rule_names
    from scanner.scan import Scanner

    scanner = Scanner(review=True)
    result = scan_paths(scanner, [tree], budget=Budget())
    return render_review(result, rule_names(scanner))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("png", type=Path)
    parser.add_argument("--html", type=Path, help="where to keep the rendered HTML (default: beside the PNG)")
    parser.add_argument("--size", default="1400,3000", help="window WIDTH,HEIGHT in CSS pixels")
    args = parser.parse_args(argv)
    try:
        width, height = (int(v) for v in args.size.split(","))
    except ValueError:
        print(f"--size: expected WIDTH,HEIGHT, got {args.size!r}", file=sys.stderr)
        return 2
    if not args.tree.exists():
        print(f"{args.tree}: no such file or directory", file=sys.stderr)
        return 2
    from scanner import netlock
    from scanner.atomic import atomic_write_text

    netlock.install(allow_loopback=False)       # the scan reaches nothing; Chromium is a separate process
    args.png.parent.mkdir(parents=True, exist_ok=True)
    html = args.html or args.png.with_suffix(".html")
    atomic_write_text(html, render_tree(args.tree))
    args.png.unlink(missing_ok=True)
    try:
        done = screenshot(html, args.png, width, height)
    except (FileNotFoundError, subprocess.TimeoutExpired) as exc:
        print(f"{html}: no screenshot: {exc}", file=sys.stderr)
        return 2
    if not args.png.is_file():
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        print(f"{args.png}: chromium wrote no screenshot (exit {done.returncode}: {tail})", file=sys.stderr)
        return 1
    try:
        print(check_png(args.png, width, height))
    except ValueError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    print(f"wrote {html}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
