"""Run the commands users build on with two versions of the code and compare their outputs byte for byte:
stdout, stderr, exit code and every file a command writes.

    python scripts/output_identity.py --ref merge-14            # `git archive` of REF against this checkout
    python scripts/output_identity.py --ref main --keep /tmp/ids  # keep both sets of outputs for a closer look
    python scripts/output_identity.py --ref merge-14 --only tree # the example tree only (skip ../shared/realdata)
    python scripts/output_identity.py --ref merge-14 --keep /tmp/ids --reuse  # compare again, old outputs kept

The older code runs from an extracted copy of its `scanner/` package (PYTHONPATH puts it before this
checkout's editable install; `python -P` keeps the working directory off the module path), with this checkout's interpreter and libraries, from the same working directory,
so SARIF URIs and repo-relative paths are the same for both. The inputs are this checkout's example tree
(`fixtures/web-search`, `fixtures/example-run`) and `../shared/realdata` when present (read only). No
fingerprint key is set for either run. Exit 0 when every output is identical, 1 otherwise (each difference is
named, with the first differing lines).
"""

from __future__ import annotations

import argparse
import difflib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TREE = "fixtures/web-search"
RUN = "fixtures/example-run"
REALDATA = REPO.parent / "shared" / "realdata"


def commands(only: str | None) -> list[tuple[str, list[str]]]:
    """(name, argv after `python -m scanner`); `{out}` is a scratch folder outside every input."""
    tree = [
        ("tree-scan-json", ["scan", TREE, "--format", "json"]),
        ("tree-scan-sarif", ["scan", TREE, "--format", "sarif"]),
        ("tree-scan-text", ["scan", TREE, "--color", "never"]),
        ("tree-scan-jobs2-json", ["scan", TREE, "--format", "json", "--jobs", "2"]),
        ("tree-scan-hook-injection", ["scan", "--kinds", "injection", "--allow-class", "prompt-injection", TREE]),
        ("tree-scan-injection-sarif", ["scan", "--kinds", "injection", "--format", "sarif", TREE]),
        ("tree-scan-write-baseline", ["scan", TREE, "--format", "json", "--write-baseline", "{out}/baseline.json"]),
        ("tree-scan-html", ["scan", TREE, "--format", "html", "--output", "{out}/review.html"]),
        ("tree-redact-check", ["redact", "--check", "--format", "json", TREE]),
        ("tree-redact-check-text", ["redact", "--check", TREE]),
        ("tree-manifest-verify", ["manifest", "verify", "--format", "json", TREE]),
        ("tree-check", ["check", TREE, "--out", "{out}/check"]),
        ("tree-check-run", ["check", TREE, "--run", RUN, "--out", "{out}/check", "--format", "json"]),
    ]
    helps = [(f"help-{'-'.join(c) or 'top'}", [*c, "--help"]) for c in (
        [], ["scan"], ["redact"], ["check"], ["manifest"], ["manifest", "verify"], ["manifest", "update"],
        ["score"], ["gates"], ["pool"], ["verify-run"], ["serve"], ["contain"], ["units"], ["corpus"],
        ["corpus", "check"])]
    tree += helps + [("usage-error", ["scan"]), ("no-such-file", ["scan", "does-not-exist"]),
                     ("version", ["--version"])]
    real = [
        ("real-scan-json", ["scan", str(REALDATA), "--format", "json"]),
        ("real-scan-sarif", ["scan", str(REALDATA), "--format", "sarif"]),
        ("real-scan-text", ["scan", str(REALDATA), "--color", "never"]),
        ("real-scan-injection", ["scan", "--kinds", "injection", str(REALDATA), "--format", "json"]),
        ("real-redact-check", ["redact", "--check", "--format", "json", str(REALDATA)]),
    ] if REALDATA.is_dir() else []
    return {"tree": tree, "real": real}.get(only, tree + real) if only else tree + real


def extract(ref: str, into: Path) -> Path:
    data = subprocess.run(["git", "archive", ref, "scanner"], cwd=REPO, check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return into


def env_for(code: Path | None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CENTINELA_")}
    env.update(CI="1", NO_COLOR="1", PYTHONHASHSEED="0")
    env.pop("PYTHONPATH", None)
    if code is not None:
        env["PYTHONPATH"] = str(code)
    return env


def run_all(code: Path | None, out: Path, scratch: Path, names) -> None:
    for name, argv in names:
        if scratch.exists():
            shutil.rmtree(scratch)
        scratch.mkdir(parents=True)
        args = [a.replace("{out}", str(scratch)) for a in argv]
        # -P: the working directory (this checkout) is not put before PYTHONPATH on the module path.
        proc = subprocess.run([sys.executable, "-P", "-m", "scanner", *args], cwd=REPO, env=env_for(code),
                              capture_output=True)
        dest = out / name
        dest.mkdir(parents=True)
        (dest / "stdout").write_bytes(proc.stdout)
        (dest / "stderr").write_bytes(proc.stderr)
        (dest / "rc").write_text(f"{proc.returncode}\n")
        for f in sorted(scratch.rglob("*")):
            if f.is_file():
                target = dest / "files" / f.relative_to(scratch)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(f, target)
        print(f"  {name}: exit {proc.returncode}", flush=True)


def compare(before: Path, after: Path, commands_run) -> list[str]:
    """Every output file of every command run, compared byte for byte."""
    problems = []
    names = sorted({p.relative_to(side) for side in (before, after) for name, _ in commands_run
                    for p in (side / name).rglob("*") if p.is_file()})
    for rel in names:
        a, b = before / rel, after / rel
        if not a.exists() or not b.exists():
            problems.append(f"{rel}: only in {'after' if b.exists() else 'before'}")
            continue
        da, db = a.read_bytes(), b.read_bytes()
        if da == db:
            continue
        diff = difflib.unified_diff(da.decode("utf-8", "replace").splitlines(),
                                    db.decode("utf-8", "replace").splitlines(), "before", "after", lineterm="", n=1)
        problems.append(f"{rel}: differs\n    " + "\n    ".join(list(diff)[:14]))
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ref", required=True, help="git ref of the code to compare against (e.g. merge-14)")
    ap.add_argument("--keep", type=Path, help="keep the outputs here (before/, after/)")
    ap.add_argument("--only", choices=("tree", "real"), help="only the example tree, or only realdata")
    ap.add_argument("--reuse", action="store_true", help="with --keep: reuse the 'before' outputs kept there")
    ap.add_argument("--before-only", action="store_true", help="with --keep: only produce the 'before' outputs")
    args = ap.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="centinela-identity-"))
    before, after, scratch = base / "before", base / "after", base / "scratch"
    reuse = args.reuse and args.keep is not None and before.is_dir()
    for d in (after,) if reuse else (before, after, base / "code"):
        if d.exists():
            shutil.rmtree(d)
    names = commands(args.only)
    try:
        if not reuse:
            print(f"before: {args.ref}", flush=True)
            run_all(extract(args.ref, base / "code"), before, scratch, names)
        if args.before_only:
            return 0
        print("after: this checkout", flush=True)
        # This checkout's package by path: the editable install's finder maps `scanner` to wherever it was
        # installed from, another checkout when this one is a git worktree sharing its virtualenv.
        run_all(REPO, after, scratch, names)
        problems = compare(before, after, names)
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    for p in problems:
        print(p)
    print(f"{len(names)} commands, {len(problems)} difference(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
