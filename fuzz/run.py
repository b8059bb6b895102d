"""Coverage-guided fuzzing of the loaders and the span parser with atheris (libFuzzer for Python).

    python fuzz/run.py TARGET [--seconds S] [--realdata DIR]      # TARGET: html, pdf, json, http, recording, spans, all

`make fuzz` runs every target for $FUZZ_SECONDS each (default 60). Seeds: the files of ../shared/realdata (and
the example tree's fixtures), cut to --max-len, written to fuzz/corpus/<target>/ (not committed); libFuzzer
mutates them and keeps inputs that reach new code. An input that raises anything but LoadError/SpanError,
breaks an invariant (fuzz/targets.py) or runs longer than --timeout seconds is a crash: libFuzzer writes it
to fuzz/crashes/<target>-crash-<sha1> and stops that target. Copy it to tests/data/fuzz/<target>/ after
fixing the defect: tests/test_fuzz_regressions.py replays every file there. One line per target is
appended to fuzz/results.tsv: target, seconds, runs, crashes, seeds.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

TARGETS = ("html", "pdf", "json", "http", "recording", "spans")   # = targets.TARGETS (imported after instrumentation)

SUFFIXES = {"html": (".html", ".htm"), "pdf": (".pdf",), "json": (".json", ".jsonl", ".har"),
            "http": (".json",), "recording": (".yaml", ".yml", ".har", ".json"), "spans": ()}
SPAN_SEEDS = [b"offset:0-10", b"offset:812-871", b"page:1", b"page:2:0-5", b"selector:p#a > b",
              b"selector:div:nth-of-type(1)", b"page:0", b"offset:5-1", b"selector:"]


def build_corpus(target: str, realdata: Path, max_len: int) -> Path:
    """Seed files for a target: real files (the first max_len bytes) and the example tree's fixtures."""
    folder = HERE / "corpus" / target
    folder.mkdir(parents=True, exist_ok=True)
    sources: list[Path] = []
    for base in (realdata, REPO / "fixtures" / "web-search", REPO / "tests" / "data" / "fuzz" / target,
                 REPO / "tests" / "data" / "recordings"):
        if base.is_dir():
            sources += sorted(p for p in base.rglob("*") if p.is_file() and
                              (p.suffix.lower() in SUFFIXES[target] or base.name == target))
    seeds = [p.read_bytes()[:max_len] for p in sources]
    if target == "spans":
        seeds += SPAN_SEEDS
    if target == "http":
        seeds = [b"\x00" + s for s in seeds] + [bytes([sel]) + b"<p>hola</p>" for sel in range(0, 128, 9)]
    for i, data in enumerate(seeds):
        (folder / f"seed-{i:04d}").write_bytes(data)
    return folder


def fuzz_one(target: str, seconds: int, realdata: Path, max_len: int, timeout: int) -> dict:
    corpus = build_corpus(target, realdata, max_len)
    crashes = HERE / "crashes"
    crashes.mkdir(exist_ok=True)
    before = set(crashes.iterdir())
    cmd = [sys.executable, str(HERE / "run.py"), "--child", target, str(corpus), f"-max_total_time={seconds}",
           f"-max_len={max_len}", f"-timeout={timeout}", "-rss_limit_mb=3072", f"-artifact_prefix={crashes}/{target}-",
           "-print_final_stats=1"]
    started = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    elapsed = time.monotonic() - started
    log = proc.stdout + proc.stderr
    (HERE / "logs").mkdir(exist_ok=True)
    (HERE / "logs" / f"{target}.log").write_text(log)
    runs = re.findall(r"stat::number_of_executed_units:\s*(\d+)", log) or re.findall(r"Done (\d+) runs", log)
    found = sorted(str(p.name) for p in set(crashes.iterdir()) - before)
    return {"target": target, "seconds": round(elapsed), "runs": int(runs[-1]) if runs else 0,
            "crashes": found, "seeds": len(list(corpus.iterdir())), "exit": proc.returncode}


def child(target: str, argv: list[str]) -> None:
    import atheris

    # Instrument our code and pdfminer (pure Python) for coverage; everything must be imported here, first.
    with atheris.instrument_imports(include=["scanner", "pdfminer"]):
        import scanner.loaders  # noqa: F401
        import scanner.loaders.html  # noqa: F401
        import scanner.loaders.html_tokens  # noqa: F401
        import scanner.loaders.css  # noqa: F401
        import scanner.loaders.json_positions  # noqa: F401
        import scanner.loaders.jsondoc  # noqa: F401
        import scanner.loaders.recorded  # noqa: F401
        import scanner.loaders.yamldoc  # noqa: F401
        import scanner.exchanges  # noqa: F401
        import scanner.exchanges.yamltext  # noqa: F401
        import scanner.loaders.pdf  # noqa: F401
        import scanner.loaders.text  # noqa: F401
        import scanner.sourcetext  # noqa: F401
        import scanner.offsetmap  # noqa: F401
        import scanner.spans  # noqa: F401
        import scanner.scan  # noqa: F401
        import scanner.injection.engine  # noqa: F401
        import scanner.secrets.detect  # noqa: F401
        import scanner.pii.scanner  # noqa: F401
    import targets

    targets._scanners()            # build the rule sets before fuzzing starts
    atheris.Setup([sys.argv[0]] + argv, targets.FUNCTIONS[target])
    atheris.Fuzz()


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        from scanner import netlock

        netlock.install(allow_loopback=False)
        child(sys.argv[2], sys.argv[3:])
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("target", choices=TARGETS + ("all",))
    ap.add_argument("--seconds", type=int, default=int(os.environ.get("FUZZ_SECONDS", "60")))
    ap.add_argument("--realdata", type=Path, default=Path(os.environ.get("REALDATA", REPO.parent / "shared" / "realdata")))
    ap.add_argument("--max-len", type=int, default=16384)
    ap.add_argument("--timeout", type=int, default=20, help="seconds one input may take before it is a crash")
    args = ap.parse_args()
    try:
        import atheris  # noqa: F401
    except ImportError:
        print("atheris is not installed: pip install atheris (make fuzz does it)", file=sys.stderr)
        return 2
    names = TARGETS if args.target == "all" else (args.target,)
    failed = False
    with open(HERE / "results.tsv", "a") as out:
        for name in names:
            r = fuzz_one(name, args.seconds, args.realdata, args.max_len, args.timeout)
            line = f"{name}\t{r['seconds']}s\t{r['runs']} runs\t{len(r['crashes'])} crashes\t{r['seeds']} seeds"
            print(line + ("".join(f"\n  crash: fuzz/crashes/{c}" for c in r["crashes"])), flush=True)
            out.write(line + "\n")
            failed |= bool(r["crashes"])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
