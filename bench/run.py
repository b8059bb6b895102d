"""Benchmarks, run by hand (`make bench`); never part of the test suite.

Every figure is a ratio against a baseline measured in the same run on the same files, so the numbers
travel between machines. Reads ../shared/realdata; skips what is absent.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
REALDATA = REPO.parent / "shared" / "realdata"
sys.path.insert(0, str(REPO))


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def bench_html_load(repeat: int) -> None:
    import lxml.html

    from scanner.loaders import load_bytes

    files = sorted((REALDATA / "html").glob("*.html"))
    if not files:
        print("html: ../shared/realdata/html absent, skipped")
        return
    data = [(p.name, p.read_bytes()) for p in files]
    mb = sum(len(b) for _, b in data) / 1e6

    def lxml_parse():
        for _, b in data:
            lxml.html.document_fromstring(b)

    def centinela_load():
        for name, b in data:
            load_bytes(b, name)

    base = best_of(lxml_parse, repeat)
    ours = best_of(centinela_load, repeat)
    print(f"html load: {len(data)} real pages, {mb:.2f} MB, best of {repeat}")
    print(f"  baseline lxml.html parse      {mb / base:7.1f} MB/s")
    print(f"  centinela load (units, exact) {mb / ours:7.1f} MB/s   = {ours / base:.1f}x the lxml parse time")


def bench_pdf_load(repeat: int) -> None:
    import io

    from pdfminer.high_level import extract_text

    from scanner.loaders import load_bytes
    from scanner.units import LoadError

    files = sorted((REALDATA / "pdf").glob("*.pdf"))
    if not files:
        print("pdf: ../shared/realdata/pdf absent, skipped")
        return
    data = [(p.name, p.read_bytes()) for p in files]

    def pdfminer_text():
        for _, b in data:
            extract_text(io.BytesIO(b))

    def centinela_load():
        for name, b in data:
            try:
                load_bytes(b, name)
            except LoadError:
                pass

    base = best_of(pdfminer_text, repeat)
    ours = best_of(centinela_load, repeat)
    print(f"pdf load: {len(data)} real PDFs, best of {repeat}")
    print(f"  baseline pdfminer extract_text {base:6.2f} s")
    print(f"  centinela load (runs, attrs)   {ours:6.2f} s   = {ours / base:.2f}x pdfminer's extract_text")


def bench_injection_scan(repeat: int) -> None:
    """Injection-only scan of the real pages against the lxml parse of the same files (the floor)."""
    import lxml.html

    from scanner.scan import Scanner

    files = sorted((REALDATA / "html").glob("*.html"))
    if not files:
        print("scan: ../shared/realdata/html absent, skipped")
        return
    mb = sum(p.stat().st_size for p in files) / 1e6

    def lxml_parse():
        for p in files:
            lxml.html.document_fromstring(p.read_bytes())

    fast = Scanner(("injection",))
    full = Scanner(("injection",), prefilter=False)
    base = best_of(lxml_parse, repeat)
    ours = best_of(lambda: fast.scan(files), repeat)
    exact = best_of(lambda: full.scan(files), repeat)
    loaded = sum(not fast.skip_clean_html(__import__("scanner.scan", fromlist=["Target"]).Target(p, p.name)) for p in files)
    print(f"injection scan: {len(files)} real pages, {mb:.2f} MB, best of {repeat}")
    print(f"  baseline: read + lxml.html parse   {mb / base:7.1f} MB/s")
    print(f"  centinela scan --kinds injection   {mb / ours:7.1f} MB/s   = {ours / base:.1f}x the parse time "
          f"({loaded} of {len(files)} pages needed the full load)")
    print(f"  same, prefilter off (every page)   {mb / exact:7.1f} MB/s   = {exact / base:.1f}x the parse time")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("which", nargs="*", default=["scan", "html", "pdf"])
    args = parser.parse_args()
    for name in args.which:
        {"scan": bench_injection_scan, "html": bench_html_load, "pdf": bench_pdf_load}[name](args.repeat)


if __name__ == "__main__":
    main()
