"""Compare what two versions of centinela say about the same trees, byte for byte (a refactoring check, by hand).

    .venv/bin/python scripts/compare_outputs.py --base-src DIR [--out DIR] [TREE ...]

`--base-src` is a source checkout of the other version (`git archive merge-14 | tar -x -C DIR`); both versions
run with this virtualenv's Python from this checkout's directory, each with its own source first on sys.path.
For each tree (default: the example tree and ../shared/realdata when present) it writes, per version:

- `scan --format json` (all kinds, every finding and document entry), and `--kinds injection` (where the
  prefilter decides which pages are loaded at all),
- `scan --format sarif` (results compared whole, each `ruleIndex` read as the id of the rule it points at;
  the `rules` of the tool driver reported apart, since a refactoring may give rules better help text or list
  more rules without changing any result),
- `redact --check --format json` (the redaction plan),

with budgets off (`--max-file-seconds 0`) so a busy machine cannot turn a file into a timeout in one run only.
Exit 0 when every output is identical (the SARIF rule metadata apart, listed), 1 otherwise, naming each
difference. Never run by the tests: it takes a few minutes.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
REALDATA = REPO.parent / "shared" / "realdata"

COMMANDS = {
    "scan.json": ["scan", "--format", "json", "--max-file-seconds", "0", "--no-progress"],
    "scan-injection.json": ["scan", "--format", "json", "--kinds", "injection", "--max-file-seconds", "0",
                            "--no-progress"],
    "scan.sarif": ["scan", "--format", "sarif", "--max-file-seconds", "0", "--no-progress"],
    "redact.json": ["redact", "--check", "--format", "json"],
}


def run_all(src: Path, trees: list[Path], out: Path) -> None:
    # `python -m` would put the working directory first on sys.path (this checkout, whatever PYTHONPATH says):
    # each version's source directory is put first explicitly, and both run from the same directory.
    launcher = f"import runpy, sys; sys.path.insert(0, {str(src)!r}); runpy.run_module('scanner', run_name='__main__')"
    out.mkdir(parents=True, exist_ok=True)
    for tree in trees:
        for name, args in COMMANDS.items():
            target = out / f"{tree.name}.{name}"
            proc = subprocess.run([sys.executable, "-c", launcher, *args, str(tree)], cwd=REPO, capture_output=True)
            target.write_bytes(proc.stdout)
            (out / f"{tree.name}.{name}.rc").write_text(f"{proc.returncode}\n{proc.stderr.decode(errors='replace')}")


def _first_difference(a: bytes, b: bytes) -> str:
    n = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return f"first difference at byte {n}: {a[max(0, n - 60):n + 60]!r} vs {b[max(0, n - 60):n + 60]!r}"


def compare(base: Path, mine: Path, trees: list[Path]) -> list[str]:
    problems = []
    for tree in trees:
        for name in COMMANDS:
            a, b = (d / f"{tree.name}.{name}" for d in (base, mine))
            ra, rb = ((d / f"{tree.name}.{name}.rc").read_text().split("\n", 1)[0] for d in (base, mine))
            if ra != rb:
                problems.append(f"{tree.name} {name}: exit code {ra} vs {rb}")
            da, db = a.read_bytes(), b.read_bytes()
            if name == "scan.sarif":
                sa, sb = json.loads(da), json.loads(db)
                rules_a = {r["id"]: r for run in sa["runs"] for r in run["tool"]["driver"].get("rules", [])}
                rules_b = {r["id"]: r for run in sb["runs"] for r in run["tool"]["driver"].get("rules", [])}
                changed = sorted(k for k in rules_a.keys() | rules_b.keys() if rules_a.get(k) != rules_b.get(k))
                if changed:
                    print(f"{tree.name} {name}: rule metadata changed for {', '.join(changed)} (results compared apart)")
                for run in sa["runs"] + sb["runs"]:
                    ids = [r["id"] for r in run["tool"]["driver"].pop("rules", [])]
                    for res in run.get("results", []):
                        if "ruleIndex" in res:
                            res["ruleIndex"] = ids[res["ruleIndex"]]
                da, db = (json.dumps(s, sort_keys=True).encode() for s in (sa, sb))
            if da != db:
                problems.append(f"{tree.name} {name}: differs ({len(da)} vs {len(db)} bytes); "
                                + _first_difference(da, db))
            else:
                print(f"{tree.name} {name}: identical ({len(da)} bytes)")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-src", type=Path, required=True, help="Source checkout of the version to compare with")
    parser.add_argument("--out", type=Path, default=Path("/tmp/centinela-compare"))
    parser.add_argument("--reuse-base", action="store_true", help="Keep the base outputs of an earlier run")
    parser.add_argument("trees", nargs="*", type=Path)
    args = parser.parse_args()
    trees = args.trees or [REPO / "fixtures" / "web-search"] + ([REALDATA] if REALDATA.is_dir() else [])
    base, mine = args.out / "base", args.out / "mine"
    if not (args.reuse_base and base.is_dir()):
        run_all(args.base_src.resolve(), trees, base)
    run_all(REPO, trees, mine)
    problems = compare(base, mine, trees)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
