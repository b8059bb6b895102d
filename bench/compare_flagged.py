"""Two runs of `bench/blind_probe.py --flagged` compared text by text: each run, their union, and the texts only one
of them flags.

    python bench/compare_flagged.py A.json B.json [--splits blind15 blind16 …] [--list N]

Per split family (the `--splits` given, else every split of the files) and for all of them together: hidden
carriers found (attacks), visible paragraphs found, and texts flagged in some hidden carrier (benign), for A, for B
and for "A or B" (a text in a carrier counts for the union when either run flagged it there: what shipping both
rule sets side by side would flag). Then the score the injection rounds choose by: hidden + visible − 10 × benign
texts flagged in some hidden carrier. `--list N` prints up to N ids each run alone finds or flags.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def load(path: Path) -> dict:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not {"carriers", "hidden", "texts"} <= set(data):
        raise SystemExit(f"{path}: not a `blind_probe.py --flagged` file")
    return data


def tally(texts: dict, flags_of, hidden: list[str], splits: set[str] | None) -> dict:
    """hidden/visible found over attacks, benign texts flagged in some hidden carrier, with their totals."""
    t = {"hidden": [0, 0], "visible": [0, 0], "benign": [0, 0]}
    hidden_set = set(hidden)
    for tid, row in texts.items():
        if splits is not None and row["split"] not in splits:
            continue
        flagged = flags_of(tid)
        if row["label"] == "injection":
            t["hidden"][0] += len(flagged & hidden_set)
            t["hidden"][1] += len(hidden)
            t["visible"][0] += "visible" in flagged
            t["visible"][1] += 1
        else:
            t["benign"][0] += bool(flagged & hidden_set)
            t["benign"][1] += 1
    return t


def line(name: str, t: dict) -> str:
    def frac(k: str) -> str:
        n, d = t[k]
        return f"{n}/{d} = {n / d:.3f}" if d else "-"
    score = t["hidden"][0] + t["visible"][0] - 10 * t["benign"][0]
    return (f"  {name:7s} score {score:6d}   hidden {frac('hidden')}   visible {frac('visible')}   "
            f"benign texts {frac('benign')}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    ap.add_argument("--splits", nargs="*", default=None, help="only these splits (default: all in the files)")
    ap.add_argument("--list", type=int, default=0, help="print up to this many ids each run alone finds or flags")
    args = ap.parse_args()
    a, b = load(args.a), load(args.b)
    if set(a["texts"]) != set(b["texts"]) or a["hidden"] != b["hidden"]:
        raise SystemExit("the two files measure different texts or carriers")
    hidden, texts = a["hidden"], a["texts"]
    fa = {k: set(v["carriers"]) for k, v in a["texts"].items()}
    fb = {k: set(v["carriers"]) for k, v in b["texts"].items()}
    splits = set(args.splits) if args.splits else None
    print(f"{args.a} (A) and {args.b} (B), {len(texts)} texts; splits: "
          f"{', '.join(sorted(splits)) if splits else 'all'}")
    for name, flags_of in (("A", fa.get), ("B", fb.get), ("A or B", lambda k: fa[k] | fb[k])):
        print(line(name, tally(texts, flags_of, hidden, splits)))
    if args.list:
        hidden_set = set(hidden)
        for who, mine, other in (("A", fa, fb), ("B", fb, fa)):
            only = [k for k in sorted(texts) if (splits is None or texts[k]["split"] in splits)
                    and (mine[k] - other[k]) & hidden_set]
            print(f"  texts {who} alone flags in some hidden carrier: {len(only)}")
            for k in only[:args.list]:
                print(f"    {k} ({texts[k]['label']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
