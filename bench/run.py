"""Benchmarks, run by hand (`make bench`); never part of the test suite.

Every figure is a ratio against a baseline measured in the same run on the same files, so the numbers
travel between machines. Reads ../shared/realdata; skips what is absent.
"""

from __future__ import annotations

import argparse
import os
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


def interleaved(fns, repeat: int) -> list[list[float]]:
    """Each function's time in each of `repeat` rounds, every round running every function once in turn."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for k, fn in enumerate(fns):
            t = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t)
    return times


def round_ratio(times: list[float], base: list[float]) -> float:
    """The median over rounds of a time against the baseline's time in the same round."""
    import statistics

    return statistics.median(t / b for t, b in zip(times, base))


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
    from scanner.pipeline.run import scan_paths
    from scanner.scan import Scanner

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
    # "before": the lexicon rules and their prefilter alone, without the learned rule (INJ015), the rule on its
    # reading (INJ017) and their screen
    lexicon = Scanner(("injection",))
    lexicon.injection.learned = []
    lexicon.injection.reading = []
    if lexicon.prefilter is not None:
        lexicon.prefilter.model_screen = None
    # without INJ017 and its part of the screen: what the rule on the reading costs
    unread = Scanner(("injection",))
    unread.injection.reading = []
    if unread.prefilter is not None and unread.prefilter.model_screen is not None:
        unread.prefilter.model_screen.reading_rx = None
    # Round by round, each ratio the median of its rounds' ratios: on a shared machine the load then weighs on
    # the baseline and on each scan alike, where the best of a short baseline measured apart skewed every ratio.
    rounds = interleaved([lxml_parse, load_only, lambda: scan_paths(lexicon, files), lambda: scan_paths(unread, files),
                          lambda: scan_paths(fast, files), lambda: scan_paths(full, files)], repeat)
    base, loaded_time, before, no_reading, ours, exact = (min(t) for t in rounds)
    r_load, r_before, r_unread, r_ours, r_exact = (round_ratio(t, rounds[0]) for t in rounds[1:])
    loaded_before = sum(lexicon.clean_page(p.name, p.read_bytes()) is None for p in files)
    loaded_unread = sum(unread.clean_page(p.name, p.read_bytes()) is None for p in files)
    loaded = sum(fast.clean_page(p.name, p.read_bytes()) is None for p in files)
    print(f"injection scan: {len(files)} real pages, {mb:.2f} MB, {repeat} rounds (MB/s: the best round; ratios: "
          f"the median of the rounds' ratios)")
    print(f"  baseline: read + lxml.html parse   {mb / base:7.1f} MB/s")
    print(f"  read + html load (exact units)     {mb / loaded_time:7.1f} MB/s   = {r_load:.1f}x the parse time")
    print(f"  before: lexicon rules only         {mb / before:7.1f} MB/s   = {r_before:.1f}x the parse time "
          f"({loaded_before} of {len(files)} pages needed the full load)")
    print(f"  without INJ017 (reading rule)      {mb / no_reading:7.1f} MB/s   = {r_unread:.1f}x the parse time "
          f"({loaded_unread} of {len(files)} pages needed the full load; lexicon + learned rule and its screen)")
    print(f"  centinela scan --kinds injection   {mb / ours:7.1f} MB/s   = {r_ours:.1f}x the parse time "
          f"({loaded} of {len(files)} pages needed the full load; lexicon, learned rule, INJ017 and their screen)")
    print(f"  same, prefilter off (every page)   {mb / exact:7.1f} MB/s   = {r_exact:.1f}x the parse time "
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
    from scanner.pipeline.run import scan_paths

    full = Scanner(("injection",), prefilter=False)
    scan_paths(full, files)                     # warm: rule packs, model, regex programs
    prof = cProfile.Profile()
    prof.enable()
    scan_paths(full, files)
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

    # Wall and CPU time (this process's) of each run, the best of each: on a shared machine the load stretches
    # wall times, Presidio's more than ours, while CPU times move much less.
    def timed(fn, n):
        walls, cpus = [], []
        for _ in range(n):
            t, c = time.perf_counter(), time.process_time()
            fn()
            walls.append(time.perf_counter() - t)
            cpus.append(time.process_time() - c)
        return min(walls), min(cpus)

    base, base_cpu = timed(presidio, max(1, repeat // 2))
    full, full_cpu = timed(ours, repeat)
    print(f"full scan vs Presidio: {len(docs)} real pages; Presidio gets their visible text ({mb:.2f} MB), "
          f"centinela the whole loaded documents (every channel); wall / CPU, best of each")
    print(f"  baseline Presidio AnalyzerEngine (es)   {base:6.2f} s / {base_cpu:6.2f} s   found "
          f"{sum(presidio_found.values())}: {dict(presidio_found.most_common(6))}")
    print(f"  centinela scan (all kinds, NER)         {full:6.2f} s / {full_cpu:6.2f} s   found "
          f"{sum(ours_found.values())}: {dict(ours_found.most_common(8))}")
    print(f"  = {base / full:.1f}x faster than Presidio alone (CPU {base_cpu / full_cpu:.1f}x; load average "
          f"{os.getloadavg()[0]:.1f})")
    keys = ("EMAIL_ADDRESS", "PHONE_NUMBER", "CREDIT_CARD", "IBAN_CODE", "ES_NIF")
    print("  contact data and identifiers, Presidio: " + ", ".join(f"{k} {presidio_found.get(k, 0)}" for k in keys))
    mine = ("EMAIL_PERSONAL", "PHONE_NUMBER", "MX_CURP", "MX_RFC_PERSONA_FISICA", "MX_RFC_PERSONA_MORAL", "MX_NSS",
            "MX_CLABE", "API_KEY", "AUTH_HEADER", "COOKIE")
    print("  contact data, identifiers and secrets, centinela (role mailboxes and company phones kept, not "
          "counted): " + ", ".join(f"{k} {ours_found.get(k, 0)}" for k in mine if ours_found.get(k)))


def bench_precommit(repeat: int) -> None:
    """What a pre-commit hook waits for: a cold `centinela scan` (all kinds) of 10 small fixtures against a cold
    `--kinds injection` scan of the same files and a cold `--help`, each a fresh process, interleaved, best and
    median of N (at least 5). Two sets of the example tree: the 10 smallest page fixtures (`_shared/html`,
    `*/search|fetch|extract`), and the 10 smallest of those with contact data whose NER windows could hold a
    name (so spaCy's model must load: the worst case). Also which heavy libraries each cold scan imported
    (`python -X importtime`)."""
    import resource
    import statistics
    import subprocess

    tree = REPO / "fixtures" / "web-search"
    pages = sorted((p for p in tree.rglob("*") if p.is_file() and (
        p.parent.name in ("search", "fetch", "extract") or p.parent.as_posix().endswith("_shared/html"))),
        key=lambda p: (p.stat().st_size, p.as_posix()))
    if not pages:
        print("precommit: the example tree is absent, skipped")
        return
    from scanner.loaders import load_path
    from scanner.pii import PiiScanner

    pii = PiiScanner()
    needs_ner = []
    for p in pages:
        before = pii.stats["ner_windows"]
        pii.scan(load_path(p, p.name))
        if pii.stats["ner_windows"] > before:
            needs_ner.append(p)
        if len(needs_ner) == 10:
            break
    n = max(5, repeat)
    base = [sys.executable, "-m", "scanner"]
    # Bytecode cached, as an installed package has it (pip compiles it; a checkout writes __pycache__ on first
    # run): a PYTHONDONTWRITEBYTECODE=1 environment would make every run compile the sources again. The cache
    # goes to a temporary directory, never into the tree; a first run of each command fills it.
    import os
    import shutil
    import tempfile

    pycache = tempfile.mkdtemp(prefix="centinela-bench-pyc-")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "CENTINELA_NO_CACHE")}
    env["PYTHONPYCACHEPREFIX"] = pycache
    # The validated rule packs (scanner.packcache) likewise: in the user's cache once a hook has run; here in the
    # same temporary directory, filled by the first run of each command.
    env["CENTINELA_CACHE_DIR"] = os.path.join(pycache, "centinela-cache")

    def cold(args) -> tuple[float, float]:
        """(wall, CPU) seconds of one fresh process and its workers; CPU is what a busy machine distorts least."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        proc = subprocess.run(base + args, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode not in (0, 1):           # 1: findings; anything else did not measure a scan
            raise SystemExit(f"precommit: {' '.join(args[:3])} exited {proc.returncode}: {proc.stderr[-300:]!r}")
        return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

    def imported(args) -> str:
        err = subprocess.run(base[:1] + ["-X", "importtime"] + base[1:] + args, cwd=REPO, capture_output=True,
                             text=True, env=env).stderr
        names = {line.rsplit("|", 1)[-1].strip() for line in err.splitlines() if line.startswith("import time:")}
        heavy = ("spacy", "presidio_analyzer", "thinc", "tldextract", "phonenumbers", "stdnum", "pdfminer", "lxml")
        return ", ".join(h for h in heavy if h in names) or "none of them"

    try:
        for label, files in (("10 smallest page fixtures", pages[:10]), ("10 smallest needing NER", needs_ner)):
            paths = [str(p) for p in files]
            runs: dict[str, list] = {"full": [], "injection": [], "help": []}
            commands = {"full": ["scan", "--no-progress", "--format", "json", *paths],
                        "injection": ["scan", "--no-progress", "--format", "json", "--kinds", "injection", *paths],
                        "help": ["--help"]}
            for args in commands.values():
                cold(args)                           # fills the bytecode cache (not counted)
            for _ in range(n):
                for key, args in commands.items():
                    runs[key].append(cold(args))
            best = {k: min(w for w, _ in v) for k, v in runs.items()}
            med = {k: statistics.median(w for w, _ in v) for k, v in runs.items()}
            cpu = {k: min(c for _, c in v) for k, v in runs.items()}
            size = sum(p.stat().st_size for p in files) / 1024
            print(f"precommit: {label} ({len(files)} files, {size:.0f} KB), fresh processes (bytecode cached), of "
                  f"{n} runs: best / median wall, best CPU")
            for key in runs:
                print(f"  {key:<10} {best[key]:6.2f} s / {med[key]:6.2f} s   CPU {cpu[key]:6.2f} s")
            print(f"  = full scan {best['full'] / best['injection']:.2f}x the injection-only scan (median "
                  f"{med['full'] / med['injection']:.2f}x, CPU {cpu['full'] / cpu['injection']:.2f}x), "
                  f"{best['full'] / best['help']:.1f}x --help (CPU {cpu['full'] / cpu['help']:.1f}x)")
            print(f"  imported by the full scan: {imported(commands['full'])}")
    finally:
        shutil.rmtree(pycache, ignore_errors=True)   # also when a run fails


def bench_cold_score(repeat: int) -> None:
    """Issue 16: cold scoring of 10,000 cases × 5 providers (bench/score_bench.py), against ir_measures' P@10."""
    sys.path.insert(0, str(REPO / "bench"))
    from score_bench import bench_score

    bench_score(10_000, repeat)


def bench_tree(repeat: int) -> None:
    """Issue 16: peak RSS and time per MB of `centinela scan` on a 10 MB and a 100 MB tree of the real pages
    (bench/tree_memory.py), all kinds and `--kinds injection`; the 10 MB tree is the baseline."""
    import subprocess

    # In a fresh, small process: Linux hands a child the peak RSS of the process it was forked from (ru_maxrss
    # survives exec), and this one has built the scorer's 10,000 cases by now.
    subprocess.run([sys.executable, str(REPO / "bench" / "tree_memory.py"), "--small", "10", "--large", "100"],
                   cwd=REPO)


# Issue 16's figures by name (`bench/run.py precommit scan full score tree`); each prints its own baseline.
ISSUE16 = {"precommit": bench_precommit, "score": bench_cold_score, "tree": bench_tree}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("which", nargs="*", default=["scan", "secret", "full", "html", "pdf", *ISSUE16])
    args = parser.parse_args()
    for name in args.which:
        {"scan": bench_injection_scan, "secret": bench_secret_scan, "full": bench_full_scan_vs_presidio,
         "html": bench_html_load, "pdf": bench_pdf_load, "profile": profile_injection_scan,
         **ISSUE16}[name](args.repeat)


if __name__ == "__main__":
    main()
