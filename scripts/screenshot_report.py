"""Render a report.json to report.html and screenshot it in headless Chromium, then check the PNG is not blank.

    python scripts/screenshot_report.py REPORT_JSON OUT_PNG [--html OUT_HTML] [--size 1400,2000]

For looking at the report's design (`make report-shot`) and for the rendering test. Chromium runs offline:
no first-run, sync, component update or background networking, QUIC off, a throw-away profile; the page itself
names no external resource. The PNG is decoded with the standard library (zlib and the five PNG row filters),
so checking it needs no imaging package. Exit codes: 0 written and checked, 1 the screenshot is missing, of
the wrong size or blank, 2 could not run (no report, no Chromium).
"""

from __future__ import annotations

import argparse
import json
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}      # colour type → samples per pixel


def chromium_command(binary: str, profile: Path, png: Path, html: Path, width: int, height: int) -> list[str]:
    return [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--hide-scrollbars", f"--user-data-dir={profile}", f"--window-size={width},{height}",
            f"--screenshot={png}", html.resolve().as_uri()]


def screenshot(html: Path, png: Path, width: int = 1400, height: int = 2000, binary: str | None = None,
               timeout: float = 120.0) -> subprocess.CompletedProcess:
    binary = binary or shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        raise FileNotFoundError("chromium is not installed (apt-get install -y chromium)")
    with tempfile.TemporaryDirectory(prefix="centinela-chromium-") as profile:
        return subprocess.run(chromium_command(binary, Path(profile), png, html, width, height),
                              capture_output=True, text=True, timeout=timeout, check=False)


def read_png(path: Path, max_rows: int | None = None) -> tuple[int, int, list[bytes], int]:
    """(width, height, the first `max_rows` unfiltered rows, bytes per pixel) of an 8-bit, non-interlaced PNG."""
    data = path.read_bytes()
    if not data.startswith(PNG_SIGNATURE):
        raise ValueError(f"{path}: not a PNG")
    pos, idat, header = len(PNG_SIGNATURE), [], None
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if header is None:
        raise ValueError(f"{path}: no IHDR chunk")
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or interlace != 0 or colour not in CHANNELS:
        raise ValueError(f"{path}: only 8-bit non-interlaced PNGs are read (depth {depth}, interlace {interlace})")
    bpp = CHANNELS[colour]
    stride = width * bpp
    wanted = height if max_rows is None else min(height, max_rows)
    raw = zlib.decompressobj().decompress(b"".join(idat), wanted * (stride + 1))
    rows: list[bytes] = []
    previous = bytes(stride)
    for y in range(wanted):
        line = raw[y * (stride + 1):(y + 1) * (stride + 1)]
        if len(line) != stride + 1:
            raise ValueError(f"{path}: image data ends at row {y}")
        previous = _unfilter(line[0], bytearray(line[1:]), previous, bpp)
        rows.append(previous)
    return width, height, rows, bpp


def _unfilter(kind: int, cur: bytearray, prev: bytes, bpp: int) -> bytes:
    n = len(cur)
    if kind == 0:
        pass
    elif kind == 1:
        for i in range(bpp, n):
            cur[i] = (cur[i] + cur[i - bpp]) & 0xFF
    elif kind == 2:
        cur = bytearray((a + b) & 0xFF for a, b in zip(cur, prev))
    elif kind == 3:
        for i in range(n):
            left = cur[i - bpp] if i >= bpp else 0
            cur[i] = (cur[i] + ((left + prev[i]) >> 1)) & 0xFF
    elif kind == 4:
        for i in range(n):
            a = cur[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            cur[i] = (cur[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
    else:
        raise ValueError(f"unknown PNG filter type {kind}")
    return bytes(cur)


def colours(rows: list[bytes], bpp: int) -> set[bytes]:
    """The distinct pixel values (alpha ignored) in the given rows."""
    keep = 3 if bpp >= 3 else 1
    return {row[i:i + keep] for row in rows for i in range(0, len(row), bpp)}


def check_png(png: Path, width: int, height: int, rows_to_read: int = 400) -> str:
    """A one-line verdict; raises ValueError when the PNG is of the wrong size or blank."""
    got_w, got_h, rows, bpp = read_png(png, rows_to_read)
    if (got_w, got_h) != (width, height):
        raise ValueError(f"{png}: {got_w}×{got_h}, expected {width}×{height}")
    found = colours(rows, bpp)
    if len(found) < 16:
        raise ValueError(f"{png}: looks blank ({len(found)} distinct colours in the first {len(rows)} rows)")
    return f"{png}: {got_w}×{got_h}, {len(found)} distinct colours in the first {len(rows)} rows"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("png", type=Path)
    parser.add_argument("--html", type=Path, help="where to keep the rendered HTML (default: beside the PNG)")
    parser.add_argument("--size", default="1400,2000", help="window WIDTH,HEIGHT in CSS pixels")
    args = parser.parse_args(argv)
    try:
        width, height = (int(v) for v in args.size.split(","))
    except ValueError:
        print(f"--size: expected WIDTH,HEIGHT, got {args.size!r}", file=sys.stderr)
        return 2
    try:
        report = json.loads(args.report.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"{args.report}: cannot read the report: {exc}", file=sys.stderr)
        return 2
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from scanner.atomic import atomic_write_text
    from scanner.score.render_html import render_html

    args.png.parent.mkdir(parents=True, exist_ok=True)
    html = args.html or args.png.with_suffix(".html")
    atomic_write_text(html, render_html(report))
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
