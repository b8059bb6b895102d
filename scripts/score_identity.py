"""Compare what two checkouts of centinela's scorer write for the same 10,000-case × 5-provider run, byte for
byte (a speed-work check, by hand).

    .venv/bin/python scripts/score_identity.py OTHER_CHECKOUT [--cases N] [--keep DIR]

Generates the golden identity tree and run once (tests/scoregolden.py: the bench's seeded generator plus the
records that take the problem paths), then runs `python -m scanner score TREE --run RUN --out OUT` once per
checkout — this virtualenv's Python, from each checkout's directory so each imports its own source — with an
empty YAML cache each, and compares the exit codes, standard output and every file written (report.json,
cascade.json, report.md, report.html). Prints each checkout's CPU time (user+system of the child). Exit 0 when
everything is identical, 1 naming each difference. Never run by the tests: it takes about a minute.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.scoregolden import build  # noqa: E402


def run_score(checkout: Path, tree: Path, run: Path, out: Path, cache: Path) -> tuple[int, bytes, float]:
    env = dict(os.environ, CENTINELA_CACHE_DIR=str(cache), PYTHONPATH=str(checkout))
    proc = subprocess.Popen([sys.executable, "-m", "scanner", "score", str(tree), "--run", str(run), "--out", str(out)],
                            cwd=checkout, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    stdout = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, stdout, usage.ru_utime + usage.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("other", type=Path, help="the other checkout (e.g. /work/main)")
    ap.add_argument("--cases", type=int, default=10_000)
    ap.add_argument("--keep", type=Path, help="generate into (and leave) this directory instead of a temporary one")
    args = ap.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="centinela-score-identity-"))
    base.mkdir(parents=True, exist_ok=True)
    try:
        tree, run = build(base, args.cases)
        seen = {}
        for name, checkout in (("this", REPO), ("other", args.other.resolve())):
            rc, stdout, cpu = run_score(checkout, tree, run, base / f"out-{name}", base / f"cache-{name}")
            files = {f.name: f.read_bytes() for f in sorted((base / f"out-{name}").iterdir())}
            seen[name] = (rc, stdout, files)
            print(f"{name:5} {checkout}: exit {rc}, cpu {cpu:.2f} s, " +
                  ", ".join(f"{n} {len(b):,} B {hashlib.sha256(b).hexdigest()[:12]}" for n, b in files.items()))
        (rc_a, out_a, files_a), (rc_b, out_b, files_b) = seen["this"], seen["other"]
        diffs = []
        if rc_a != rc_b:
            diffs.append(f"exit code {rc_a} != {rc_b}")
        if out_a != out_b:
            diffs.append("standard output differs")
        for name in sorted(set(files_a) | set(files_b)):
            if files_a.get(name) != files_b.get(name):
                diffs.append(f"{name} differs" if name in files_a and name in files_b else f"{name} written by one only")
        for d in diffs:
            print("DIFF:", d)
        print("identical" if not diffs else f"{len(diffs)} differences")
        return 1 if diffs else 0
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
