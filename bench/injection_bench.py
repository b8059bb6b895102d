"""`make bench-injection`: how well the learned rule (INJ015) generalises, measured honestly.

For every attack source S (tensor-trust-extraction, tensor-trust-hijacking, llm-guard, bipia, greshake,
purplellama-english, purplellama-spanish, spikee, and the project's corpus): train without S, put every text of
S into the spec's carriers (comment, CSS-hidden, white on white, alt, JSON-LD, a hidden PDF layer, a visible
paragraph) and scan the documents through the real loaders — lexicon rules alone, the model alone, both.
False positives: page-level and window-level, on benign pages that never train (a fifth of
../shared/training/benign-pages and all of ../shared/realdata/html). The same folds compare model families
(this logistic regression and fastText) at the same operating point. Then the shipped model: every benign
page, NotInject and our held-out texts in carriers, per language.

Reads ../shared; skips when it is absent. Slow (about 15–25 minutes on 2 cores): run by hand.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from scanner.injection import features as F  # noqa: E402
from scanner.injection import model as M  # noqa: E402
from scanner.training import carriers as K  # noqa: E402
from scanner.training import evaluate as E  # noqa: E402
from scanner.training import sources as S  # noqa: E402
from scanner.training import train as T  # noqa: E402

HIDDEN_GROUPS = ("comment", "attribute", "alt", "meta", "json_ld")


def pct(a, b) -> str:
    return "—" if not b else f"{a / b:.2f}"


def text_best(scorer, texts) -> np.ndarray:
    """Each text's best window score."""
    out = []
    for t in texts:
        rows = T.text_rows(t)
        out.append(max(scorer([r.prepared for r in rows])))
    return np.array(out)


def fasttext_scorer(material: T.Material, seed: int):
    """fastText supervised on the same rows (positives repeated to the same class balance as the LR's weights)."""
    import fasttext

    pos_w = sum(r.weight * T.POSITIVE_WEIGHT for r in material.rows if r.label)
    neg_w = sum(r.weight for r in material.rows if not r.label)
    n_pos = sum(1 for r in material.rows if r.label)
    repeat = max(1, round((pos_w / max(neg_w, 1)) * (len(material.rows) - n_pos) / max(n_pos, 1)))
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as fh:
        for r in material.rows:
            line = f"__label__{r.label} {r.prepared.strip()}\n"
            fh.write(line * (repeat if r.label else 1))
        path = fh.name
    model = fasttext.train_supervised(path, lr=0.1, epoch=10, wordNgrams=2, minn=3, maxn=5, dim=32, bucket=2 ** 18,
                                      thread=1, seed=seed, verbose=0, loss="softmax")
    Path(path).unlink()

    def score(prepared: list[str]) -> list[float]:
        labels, probs = model.predict([p.strip() for p in prepared], k=2)
        out = []
        for ls, ps in zip(labels, probs):
            d = dict(zip(ls, ps))
            p1 = float(d.get("__label__1", 1.0 - d.get("__label__0", 0.0)))
            out.append(M.logit(p1))
        return out
    return score, model


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sources", nargs="*", default=list(S.ATTACK_SOURCES))
    parser.add_argument("--no-fasttext", action="store_true")
    parser.add_argument("--json", type=Path, default=None, help="also write every figure as JSON here")
    parser.add_argument("--no-card", action="store_true", help="do not write the figures into the model card")
    args = parser.parse_args()
    if not S.available():
        print("bench-injection: ../shared/training absent, skipped")
        return 0
    t0 = time.perf_counter()
    lab = E.Lab()
    shipped = E.scanner_with(None)
    rule = shipped.learned[0]
    thresholds = dict(rule.spec.thresholds)
    held = lab.held_docs()
    from scanner.injection.learned import collect, item_windows

    held_rows = []
    held_page = []
    for k, (name, doc) in enumerate(held):
        for w in item_windows(collect(doc, rule.channels)):
            if name == "benign-pages":
                held_rows.append(w.prepared)
            held_page.append((k, w.prepared))
    print(f"material loaded in {time.perf_counter() - t0:.0f} s: {len(lab.page_rows)} benign training windows, "
          f"{len(held)} held-apart benign pages")
    results: dict = {"loso": {}, "families": {}, "fp": {}, "shipped": {}}
    family_rows = []
    det = E.Detection()
    for source in args.sources:
        texts = [t for t in lab.attacks if t.source == source]
        if source == "corpus":
            texts = corpus_texts()
        if not texts:
            continue
        t1 = time.perf_counter()
        material = lab.material(exclude=source)
        w, b = T.fit(material)
        model = T.to_model(w, b)
        fold_scanner = E.scanner_with(model, thresholds)
        E.detect_in_carriers(fold_scanner, texts, det)
        fp = E.false_positives(fold_scanner, held)
        results["fp"][source] = {k: {x: v for x, v in row.items() if x != "flagged_names"} for k, row in fp.items()}
        # families on the same fold: text-level recall at the threshold that flags no held-apart benign window
        lr_thr = max(model.scores(held_rows)) if held_rows else 0.0
        lr_rec = float(np.mean(text_best(model.scores, texts) > lr_thr))
        row = {"source": source, "n": len(texts), "lr": lr_rec, "lr_fit_s": round(time.perf_counter() - t1, 1),
               "curve": recall_at_page_fpr(model.scores, texts, held_page, len(held))}
        if not args.no_fasttext:
            try:
                t2 = time.perf_counter()
                ft, _ = fasttext_scorer(material, T.SEED)
                ft_thr = max(ft(held_rows)) if held_rows else 0.0
                row["fasttext"] = float(np.mean(text_best(ft, texts) > ft_thr))
                row["ft_fit_s"] = round(time.perf_counter() - t2, 1)
            except (ImportError, RuntimeError) as exc:      # not installed, or diverged on this fold
                row["fasttext_error"] = str(exc)
        family_rows.append(row)
        if args.json:                                     # partial results survive an interrupted run
            results["loso"] = {"|".join(k): v for k, v in det.counts.items()}
            results["families"] = family_rows
            args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False, default=str), encoding="utf-8")
        print(f"fold {source}: {len(texts)} texts, {time.perf_counter() - t1:.0f} s; "
              f"model-alone text recall {lr_rec:.2f}" + (f", fastText {row.get('fasttext', 0):.2f}" if 'fasttext' in row else ""),
              flush=True)
    results["loso"] = {"|".join(k): v for k, v in det.counts.items()}
    results["families"] = family_rows
    tee = Tee()
    with contextlib.redirect_stdout(tee):
        print_loso(det)
        print_fp(results["fp"])
        print_families(family_rows)
        shipped_figures(lab, shipped, held, results)
    if set(args.sources) == set(S.ATTACK_SOURCES) and not args.no_card:
        write_card_section(rule, tee.getvalue(), time.perf_counter() - t0)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False, default=str), encoding="utf-8")
    print(f"done in {time.perf_counter() - t0:.0f} s")
    return 0


class Tee(io.StringIO):
    """Printed figures go to the terminal and are kept for the model card."""

    def write(self, text):
        sys.__stdout__.write(text)
        return super().write(text)


def write_card_section(rule, printed: str, seconds: float) -> None:
    """The figures of a full run (every fold), in the model card's generalisation section, with the digest of the
    model they were measured on (training keeps the section; a digest that no longer matches says it is stale)."""
    import hashlib

    from scanner.training.card import write_bench_section

    model = Path(rule.path)
    digest = hashlib.sha256(model.read_bytes()).hexdigest()
    body = (f"## Generalisation, measured by `make bench-injection`\n\nMeasured on the model with sha256 `{digest}` "
            f"(the shipped file when this section was written; {seconds / 60:.0f} minutes on the machine it ran on). "
            "Leave-one-source-out: each fold's model is trained without one attack source and every text of that "
            "source is put into the seven carriers and scanned through the real loaders, at the shipped thresholds. "
            "Cells: lexicon alone / model alone / **both**.\n" + printed)
    write_bench_section(model.parent / "MODEL_CARD.md", body)
    print(f"figures written into {model.parent / 'MODEL_CARD.md'}")


FPR_POINTS = (0.0, 0.01, 0.02, 0.05)


def recall_at_page_fpr(scorer, texts, held_page, n_pages) -> dict:
    """Model-alone text recall (a text counts when its best window reaches the threshold) at the thresholds that
    flag at most 0 %, 1 %, 2 %, 5 % of the held-apart benign pages (a page counts by its best window, any
    channel, no gate): the recall-at-fixed-false-positive-rate curve of one fold."""
    scores = scorer([p for _, p in held_page]) if held_page else np.zeros(0)
    page_max = np.full(n_pages, -np.inf)
    for (k, _), s in zip(held_page, scores):
        page_max[k] = max(page_max[k], s)
    page_max = np.sort(page_max)[::-1]
    best = text_best(scorer, texts)
    out = {}
    for fpr in FPR_POINTS:
        allowed = int(fpr * n_pages)
        thr = page_max[allowed] if allowed < n_pages else -np.inf
        out[f"{fpr:.0%}"] = round(float(np.mean(best > thr)), 3)
    return out


def corpus_texts() -> list[S.Text]:
    """The corpus fold: the payload texts of its injection entries (the text its lexicon findings cover)."""
    from scanner.corpus import EXT, entry_bytes, read_entries
    from scanner.injection.engine import InjectionScanner
    from scanner.loaders import load_bytes

    lex = InjectionScanner(learned=False)
    out = []
    for e in read_entries(S.CORPUS):
        if e["label"] != "injection" or e["format"] == "pdf":
            continue
        doc = load_bytes(entry_bytes(S.CORPUS, e), f"{e['id']}{EXT[e['format']]}")
        units = []
        for f in lex.scan(doc):
            for u in doc.units:
                if u.page == f.page and u.start < f.end and f.start < u.end and u.text not in units:
                    units.append(u.text)
        text = " ".join(" ".join(units).split())
        if text and not f.extra.get("decoded"):
            lang = e["language"] if e["language"] in ("es", "en") else "other"
            out.append(S.Text(text, 1, "corpus", lang, e["id"]))
    return out


def print_loso(det: E.Detection) -> None:
    print("\n## Leave-one-source-out recall in carriers (lexicon alone / model alone / both)\n")
    sources = sorted({k[0] for k in det.counts})
    head = "| source | n | " + " | ".join(K.CARRIERS) + " | hidden (all six) |"
    print(head)
    print("|" + "---|" * (len(K.CARRIERS) + 3))
    for s in sources:
        cells = []
        hid = [0, 0, 0, 0]
        n = det.counts.get((s, "comment", "*"), [0])[0]
        for c in K.CARRIERS:
            row = det.counts.get((s, c, "*"), [0, 0, 0, 0])
            cells.append(f"{pct(row[1], row[0])} / {pct(row[2], row[0])} / **{pct(row[3], row[0])}**")
            if c in K.HIDDEN_CARRIERS:
                hid = [a + b for a, b in zip(hid, row)]
        cells.append(f"{pct(hid[1], hid[0])} / {pct(hid[2], hid[0])} / **{pct(hid[3], hid[0])}**")
        print(f"| {s} | {n} | " + " | ".join(cells) + " |")
    print("\nPer language (all sources, both together): hidden carriers / visible paragraph")
    by_lang: dict = defaultdict(lambda: [[0, 0], [0, 0]])
    for (s, c, lang), row in det.counts.items():
        if lang == "*":
            continue
        k = 1 if c == "visible" else 0
        by_lang[lang][k][0] += row[0]
        by_lang[lang][k][1] += row[3]
    for lang, ((hn, hd), (vn, vd)) in sorted(by_lang.items()):
        print(f"  {lang}: hidden {pct(hd, hn)} ({hd}/{hn}), visible {pct(vd, vn)} ({vd}/{vn})")


def print_fp(fp: dict) -> None:
    print("\n## False positives of each fold's model on held-apart benign pages (pages flagged: lexicon / model / "
          "either; model findings per scored window)\n")
    for source, sets in fp.items():
        parts = []
        for name, row in sorted(sets.items()):
            parts.append(f"{name} {row['lexicon']}/{row['model']}/{row['either']} of {row['pages']} pages, "
                         f"{row['model_findings']} of {row['windows']} windows")
        print(f"  without {source}: " + "; ".join(parts))


def print_families(rows) -> None:
    print("\n## Model families on the same folds (text-level recall of the held-out source at the threshold that "
          "flags no held-apart benign window)\n")
    print(f"| held-out source | n | {'linear SVM' if T.FAMILY == 'svm' else 'logistic regression'} (ours) | fastText |")
    print("|---|---|---|---|")
    for r in rows:
        ft = f"{r['fasttext']:.2f}" if "fasttext" in r else "diverged" if "fasttext_error" in r else "—"
        print(f"| {r['source']} | {r['n']} | {r['lr']:.2f} | {ft} |")
    if rows:
        lr = np.mean([r["lr"] for r in rows])
        fts = [r["fasttext"] for r in rows if "fasttext" in r]
        print(f"| mean | | {lr:.2f} | {f'{np.mean(fts):.2f}' if fts else '—'} |")
    print("\n## Recall at fixed false-positive rates (model alone, each fold's model: text recall of the held-out source "
          "at the thresholds flagging at most this fraction of the held-apart benign pages, any channel, no gate)\n")
    print("| held-out source | " + " | ".join(f"pages ≤ {p:.0%}" for p in FPR_POINTS) + " |")
    print("|---|" + "---|" * len(FPR_POINTS))
    for r in rows:
        if "curve" in r:
            print(f"| {r['source']} | " + " | ".join(f"{v:.2f}" for v in r["curve"].values()) + " |")


def shipped_figures(lab: E.Lab, shipped, held, results) -> None:
    from scanner.loaders import load_path

    print("\n## The shipped model\n")
    all_pages = [("benign-pages (4/5 trained on)", load_path(p, p.name)) for p in S.benign_pages() if not S.held_apart(p)]
    fp = E.false_positives(shipped, all_pages + held)
    for name, row in sorted(fp.items()):
        print(f"  {name}: pages flagged lexicon {row['lexicon']}, model {row['model']}, either {row['either']} of "
              f"{row['pages']} ({row['either'] / row['pages']:.2%}); model findings {row['model_findings']} of "
              f"{row['windows']} windows")
        for path, rules, ev in row["flagged_names"][:8]:
            print(f"     {path}: {rules} {ev}")
    results["shipped"]["pages"] = {k: {x: v for x, v in r.items()} for k, r in fp.items()}
    total = sum(r["pages"] for r in fp.values())
    flagged = sum(r["either"] for r in fp.values())
    print(f"  all benign pages: {flagged} of {total} flagged ({flagged / total:.2%})")
    from scanner.training.families import held_out_texts

    for label, texts in (("NotInject (benign prompts with trigger words)", S.notinject()),
                         ("held-out texts (ours, never trained)", S.heldout_texts()),
                         ("held-out fifth of the attack families and hard negatives (ours, never trained)",
                          held_out_texts())):
        if not texts:
            continue
        det = E.Detection()
        E.detect_in_carriers(shipped, texts, det, pdf_limit=10 ** 6)
        print(f"\n  {label}:")
        for lab_value in (0, 1):
            subset = [t for t in texts if t.label == lab_value]
            if not subset:
                continue
            for lang in ("es", "en", "other", "*"):
                keys = [(t.source, lang) for t in subset]
                srcs = sorted({k[0] for k in keys})
                hid = [0, 0]
                vis = [0, 0]
                for s in srcs:
                    for c in K.CARRIERS:
                        row = det.counts.get((s, c, lang))
                        if not row:
                            continue
                        tgt = vis if c == "visible" else hid
                        tgt[0] += row[0]
                        tgt[1] += row[3]
                if hid[0]:
                    what = "flagged" if lab_value == 0 else "found"
                    print(f"    {'benign' if lab_value == 0 else 'injection'} [{lang}]: hidden carriers {what} "
                          f"{hid[1]}/{hid[0]} ({hid[1] / hid[0]:.2%}), visible {vis[1]}/{vis[0]} "
                          f"({(vis[1] / vis[0]) if vis[0] else 0:.2%})")
        results["shipped"][label] = {"|".join(k): v for k, v in det.counts.items()}


if __name__ == "__main__":
    sys.exit(main())
