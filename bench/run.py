"""Benchmarks, run by hand (`make bench`); never part of the test suite.

Every figure is a ratio against a baseline measured in the same run on the same files, so the numbers
travel between machines. Reads ../shared/realdata; skips what is absent.
"""

from __future__ import annotations

import argparse
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
    """Injection-only scan of the real pages against the lxml parse of the same files (the floor): with the
    prefilter, with every page fully loaded, and the full load alone (read + exact units), all in one run."""
    import lxml.html

    from scanner.loaders import load_bytes
    from scanner.scan import Scanner, Target

    files = sorted((REALDATA / "html").glob("*.html"))
    if not files:
        print("scan: ../shared/realdata/html absent, skipped")
        return
    mb = sum(p.stat().st_size for p in files) / 1e6

    def lxml_parse():
        for p in files:
            lxml.html.document_fromstring(p.read_bytes())

    def load_only():
        for p in files:
            load_bytes(p.read_bytes(), p.name)

    fast = Scanner(("injection",))
    full = Scanner(("injection",), prefilter=False)
    # "before": the lexicon rules and their prefilter alone, without the learned rule (INJ015) and its screen
    lexicon = Scanner(("injection",))
    lexicon.injection.learned = []
    if lexicon.prefilter is not None:
        lexicon.prefilter.model_screen = None
    base = best_of(lxml_parse, repeat)
    loaded_time = best_of(load_only, repeat)
    before = best_of(lambda: lexicon.scan(files), repeat)
    ours = best_of(lambda: fast.scan(files), repeat)
    exact = best_of(lambda: full.scan(files), repeat)
    loaded_before = sum(not lexicon.skip_clean_html(Target(p, p.name)) for p in files)
    loaded = sum(not fast.skip_clean_html(Target(p, p.name)) for p in files)
    print(f"injection scan: {len(files)} real pages, {mb:.2f} MB, best of {repeat}")
    print(f"  baseline: read + lxml.html parse   {mb / base:7.1f} MB/s")
    print(f"  read + html load (exact units)     {mb / loaded_time:7.1f} MB/s   = {loaded_time / base:.1f}x the parse time")
    print(f"  before: lexicon rules only         {mb / before:7.1f} MB/s   = {before / base:.1f}x the parse time "
          f"({loaded_before} of {len(files)} pages needed the full load)")
    print(f"  centinela scan --kinds injection   {mb / ours:7.1f} MB/s   = {ours / base:.1f}x the parse time "
          f"({loaded} of {len(files)} pages needed the full load; lexicon + learned rule and its screen)")
    print(f"  same, prefilter off (every page)   {mb / exact:7.1f} MB/s   = {exact / base:.1f}x the parse time "
          f"(the load {loaded_time / exact:.0%} of it, the injection rules the rest)")
    bench_model_load()


def bench_model_load() -> None:
    """Cold cost of the learned rule in a fresh process: importing its module (numpy) and reading the model."""
    import subprocess

    code = ("import time; t=time.perf_counter(); import numpy; t1=time.perf_counter(); "
            "from scanner.injection import model as M; from scanner.rulepack import BUILTIN_RULES; "
            "t2=time.perf_counter(); M.load_model(str(BUILTIN_RULES/'injection'/'model'/'injection-lr.bin')); "
            "t3=time.perf_counter(); print(f'{t1-t:.4f} {t2-t1:.4f} {t3-t2:.4f}')")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO).stdout.split()
            for _ in range(5)]
    runs = [list(map(float, r)) for r in runs if len(r) == 3]
    if runs:
        best = [min(r[k] for r in runs) for k in range(3)]
        print(f"  learned rule, cold (best of {len(runs)} fresh processes): import numpy {best[0] * 1000:.0f} ms, "
              f"its modules {best[1] * 1000:.0f} ms, read + decode the model {best[2] * 1000:.1f} ms")


def profile_injection_scan(repeat: int) -> None:
    """Where the time of a fully loaded injection scan of the real pages goes (cProfile, by own time)."""
    import cProfile
    import pstats

    from scanner.scan import Scanner

    files = sorted((REALDATA / "html").glob("*.html"))
    if not files:
        print("profile: ../shared/realdata/html absent, skipped")
        return
    full = Scanner(("injection",), prefilter=False)
    full.scan(files)
    prof = cProfile.Profile()
    prof.enable()
    full.scan(files)
    prof.disable()
    print("fully loaded injection scan, by own time (cProfile inflates Python-level calls):")
    pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(15)



def bench_secret_scan(repeat: int) -> None:
    """The secret scanner alone on the loaded real pages (tests/test_secrets.py checks what it finds there),
    against the lxml parse of the same files."""
    import lxml.html

    from scanner.loaders import load_path
    from scanner.secrets.detect import SecretScanner

    files = sorted((REALDATA / "html").glob("*.html"))
    if not files:
        print("secret: ../shared/realdata/html absent, skipped")
        return
    docs = [load_path(p) for p in files]
    scanner = SecretScanner()
    mb = sum(p.stat().st_size for p in files) / 1e6
    base = best_of(lambda: [lxml.html.document_fromstring(p.read_bytes()) for p in files], repeat)
    ours = best_of(lambda: [scanner.scan(d) for d in docs], repeat)
    print(f"secret scan: {len(files)} real pages, {mb:.2f} MB ({sum(len(d.units) for d in docs)} units), best of {repeat}")
    print(f"  baseline: read + lxml.html parse   {mb / base:7.1f} MB/s")
    print(f"  secret scan of the loaded pages    {mb / ours:7.1f} MB/s   = {ours / base:.2f}x the parse time")


def bench_full_scan_vs_presidio(repeat: int) -> None:
    """The full scan (injection + secrets + personal data, NER included) against Presidio's AnalyzerEngine alone
    (Spanish model, MX phone region) on the same real pages, in the same run."""
    from collections import Counter

    from scanner.loaders import load_bytes
    from scanner.pii.baseline import presidio_engine, visible_text
    from scanner.scan import Scanner

    files = sorted((REALDATA / "html").glob("*.html"))
    if not files:
        print("full scan: ../shared/realdata/html absent, skipped")
        return
    docs = [load_bytes(p.read_bytes(), p.name) for p in files]
    texts = [visible_text(d) for d in docs]
    mb = sum(len(t.encode()) for t in texts) / 1e6
    engine = presidio_engine()
    scanner = Scanner()                       # injection, secret, pii
    engine.analyze(text="calentamiento", language="es")
    scanner.scan_document(docs[0])
    presidio_found: Counter = Counter()
    ours_found: Counter = Counter()

    def presidio():
        presidio_found.clear()
        for t in texts:
            for r in engine.analyze(text=t, language="es"):
                presidio_found[r.entity_type] += 1

    def ours():
        ours_found.clear()
        for d in docs:
            for f in scanner.scan_document(d):
                ours_found[f.entity or f.vector or f.kind] += 1

    base = best_of(presidio, max(1, repeat // 2))
    full = best_of(ours, repeat)
    print(f"full scan vs Presidio: {len(docs)} real pages; Presidio gets their visible text ({mb:.2f} MB), "
          f"centinela the whole loaded documents (every channel)")
    print(f"  baseline Presidio AnalyzerEngine (es)   {base:6.2f} s   found {sum(presidio_found.values())}: "
          f"{dict(presidio_found.most_common(6))}")
    print(f"  centinela scan (all kinds, NER)         {full:6.2f} s   found {sum(ours_found.values())}: "
          f"{dict(ours_found.most_common(8))}")
    print(f"  = {base / full:.1f}x faster than Presidio alone")
    keys = ("EMAIL_ADDRESS", "PHONE_NUMBER", "CREDIT_CARD", "IBAN_CODE", "ES_NIF")
    print("  contact data and identifiers, Presidio: " + ", ".join(f"{k} {presidio_found.get(k, 0)}" for k in keys))
    mine = ("EMAIL_PERSONAL", "PHONE_NUMBER", "MX_CURP", "MX_RFC_PERSONA_FISICA", "MX_RFC_PERSONA_MORAL", "MX_NSS",
            "MX_CLABE", "API_KEY", "AUTH_HEADER", "COOKIE")
    print("  contact data, identifiers and secrets, centinela (role mailboxes and company phones kept, not "
          "counted): " + ", ".join(f"{k} {ours_found.get(k, 0)}" for k in mine if ours_found.get(k)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("which", nargs="*", default=["scan", "secret", "full", "html", "pdf"])
    args = parser.parse_args()
    for name in args.which:
        {"scan": bench_injection_scan, "secret": bench_secret_scan, "full": bench_full_scan_vs_presidio,
         "html": bench_html_load, "pdf": bench_pdf_load, "profile": profile_injection_scan}[name](args.repeat)


if __name__ == "__main__":
    main()
