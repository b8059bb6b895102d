"""bench/compare_flagged.py: two `blind_probe.py --flagged` runs compared text by text (each, and their union),
on small files written here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HIDDEN = ["comment", "alt"]


def flagged(path: Path, texts: dict) -> Path:
    path.write_text(json.dumps({"carriers": HIDDEN + ["visible"], "hidden": HIDDEN, "texts": {
        tid: {"split": split, "label": label, "language": "es", "carriers": carriers}
        for tid, (split, label, carriers) in texts.items()}}), encoding="utf-8")
    return path


def run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "bench" / "compare_flagged.py"), *map(str, args)],
                          capture_output=True, text=True)


def test_each_run_and_their_union(tmp_path):
    a = flagged(tmp_path / "a.json", {"t1": ("s1", "injection", ["comment"]), "t2": ("s1", "injection", ["visible"]),
                                       "b1": ("s1", "benign", []), "b2": ("s2", "benign", ["alt"])})
    b = flagged(tmp_path / "b.json", {"t1": ("s1", "injection", ["alt"]), "t2": ("s1", "injection", []),
                                       "b1": ("s1", "benign", ["comment"]), "b2": ("s2", "benign", [])})
    out = run(a, b, "--list", "5")
    assert out.returncode == 0, out.stderr
    lines = {ln.split()[0] if not ln.strip().startswith("A or B") else "U": ln for ln in out.stdout.splitlines()[1:4]}
    # A: hidden 1 of 4, visible 1 of 2, benign 1 of 2 -> 1 + 1 - 10; B: 1, 0, 1 -> -9; union: 2, 1, 2 -> -17
    assert "score     -8   hidden 1/4 = 0.250   visible 1/2 = 0.500   benign texts 1/2 = 0.500" in lines["A"]
    assert "score     -9   hidden 1/4 = 0.250   visible 0/2 = 0.000   benign texts 1/2 = 0.500" in lines["B"]
    assert "score    -17   hidden 2/4 = 0.500   visible 1/2 = 0.500   benign texts 2/2 = 1.000" in lines["U"]
    assert "texts A alone flags in some hidden carrier: 2" in out.stdout     # t1 (comment) and b2 (alt)
    only = run(a, b, "--splits", "s2")
    assert "A or B  score    -10   hidden -   visible -   benign texts 1/1 = 1.000" in only.stdout


def test_files_of_different_texts_are_refused(tmp_path):
    a = flagged(tmp_path / "a.json", {"t1": ("s1", "injection", [])})
    b = flagged(tmp_path / "b.json", {"t2": ("s1", "injection", [])})
    out = run(a, b)
    assert out.returncode != 0 and "different texts" in out.stderr
    (tmp_path / "c.json").write_text("[]", encoding="utf-8")
    out = run(tmp_path / "c.json", b)
    assert out.returncode != 0 and "not a `blind_probe.py --flagged` file" in out.stderr
