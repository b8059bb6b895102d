"""A fast, text-level leave-one-source-out evaluation, in process: for trying ideas in minutes, not in the
twenty of `make bench-injection` (which scans every text in seven carriers through the real loaders).

    python -m scanner.training.loso [--sources bipia spikee …] [--fitter lr] [--cache FILE]

The training material is gathered and featurised once (`--cache` keeps it between runs; the cache holds
features and row metadata, never shared text). Each fold trains on every row whose source is not the held-out
source S and scores:

- S's attack texts, cut into the windows the rule scores (a text counts when its best window reaches the
  threshold);
- the benign sets as they would appear in a hidden channel: the windows of the held-apart benign pages (hidden
  groups only: comment, attribute, meta, JSON-LD, CSS-hidden, with its gate where a pack gives it one), NotInject, the held-out benign texts
  of `corpus/heldout_texts.jsonl` and the held-out fifth of the hard negatives of `families.py` — the benign
  instruction-like texts.

Operating point, the same for every variant so that they compare at equal false positives: the lowest threshold
that flags at most `--pages` held-apart pages and at most `--prompts` of the benign instruction-like texts. The
recall of S at that threshold is the figure; the texts of S it misses, with their score and the benign texts
above them, are printed with `--misses`.
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scanner.injection import features as F
from scanner.training import sources as S
from scanner.training import train as T

HIDDEN = ("comment", "attribute", "alt", "meta", "json_ld", "css_hidden")
WEAK = ("bipia", "purplellama-spanish", "spikee", "purplellama-english", "llm-guard")


@dataclass
class Evalset:
    """Windows of a set of texts: which text each window belongs to, its features, its cues."""
    names: list[str]           # per text: an identifier (source and id)
    languages: list[str]
    owner: np.ndarray          # per window: its text's index
    X: object                  # csr, windows × features
    cues: list[set]
    prepared: list[str]

    def best(self, scores: np.ndarray) -> np.ndarray:
        out = np.full(len(self.names), -np.inf)
        np.maximum.at(out, self.owner, scores)
        return out


def _texts_evalset(texts) -> Evalset:
    prepared, owner = [], []
    for k, t in enumerate(texts):
        for r in T.text_rows(t):
            prepared.append(r.prepared)
            owner.append(k)
    return Evalset([f"{t.source}:{t.ident}" for t in texts], [t.language for t in texts], np.array(owner, dtype=int),
                   T.matrix(prepared), F.cues_of(prepared), prepared)


def _pages_evalset(rule) -> Evalset:
    from scanner.loaders import load_path
    from scanner.units import LoadError

    prepared, owner, names = [], [], []
    gated = "css_hidden" in rule.gate       # a pack may gate CSS-hidden text (the shipped one no longer does)
    gate = set(rule.gate_cues_of.get("css_hidden", ()))
    for p in [p for p in S.benign_pages() + S.realdata_pages() if S.held_apart(p)]:
        try:
            doc = load_path(p, p.name)
        except LoadError:
            continue
        wins = [(g, pr) for g, pr, _ in T.doc_windows(doc, rule) if g in HIDDEN]
        cues = F.cues_of([pr for _, pr in wins])
        for (g, pr), c in zip(wins, cues):
            if g == "css_hidden" and gated and not c & gate:
                continue
            prepared.append(pr)
            owner.append(len(names))
        names.append(p.name)
    return Evalset(names, ["?"] * len(names), np.array(owner, dtype=int), T.matrix(prepared), F.cues_of(prepared),
                   prepared)


class Data:
    """Everything a fold needs, featurised once."""

    def __init__(self):
        from scipy.sparse import csr_matrix  # noqa: F401  (the matrices below are csr)

        from scanner.training.families import held_out_texts

        rule = T.learned_rule()
        material = T.gather(rule)
        self.rows = [(r.label, r.weight, r.source, r.group, r.page) for r in material.rows]
        self.prepared = [r.prepared for r in material.rows]
        self.X = T.matrix(self.prepared)
        self.y = np.array([r.label for r in material.rows])
        self.w = np.array([r.weight for r in material.rows])
        self.source = np.array([r.source for r in material.rows])
        attacks = [t for t in T.all_texts() if t.label == 1 and t.source != "templates"]
        self.attack = {s: _texts_evalset([t for t in attacks if t.source == s])
                       for s in sorted({t.source for t in attacks})}
        benign = S.notinject() + [t for t in S.heldout_texts() if not t.label] + \
            [t for t in held_out_texts() if not t.label]
        self.prompts = _texts_evalset(benign)
        self.heldout_attacks = _texts_evalset([t for t in S.heldout_texts() if t.label])
        self.pages = _pages_evalset(rule)


def load(cache: Path | None) -> Data:
    if cache and cache.is_file():
        return pickle.loads(cache.read_bytes())
    d = Data()
    if cache:
        cache.write_bytes(pickle.dumps(d, protocol=pickle.HIGHEST_PROTOCOL))
    return d


def fit_lr(X, y, w, seed=T.SEED, c=T.C):
    from sklearn.linear_model import LogisticRegression

    clf = LogisticRegression(C=c, solver="liblinear", random_state=seed, max_iter=300, tol=1e-5)
    clf.fit(X, y, sample_weight=w * np.where(y == 1, T.POSITIVE_WEIGHT, 1.0))
    return lambda Z: Z @ clf.coef_[0] + clf.intercept_[0]


SVM_C = [T.SVM_C]


def fit_svm(X, y, w, seed=T.SEED):
    from sklearn.svm import LinearSVC

    clf = LinearSVC(C=SVM_C[0], random_state=seed, max_iter=3000)
    clf.fit(X, y, sample_weight=w * np.where(y == 1, T.POSITIVE_WEIGHT, 1.0))
    return lambda Z: clf.decision_function(Z)


def fit_sgd(X, y, w, seed=T.SEED):
    from sklearn.linear_model import SGDClassifier

    clf = SGDClassifier(loss="modified_huber", alpha=2e-6, max_iter=30, tol=None, random_state=seed)
    clf.fit(X, y, sample_weight=w * np.where(y == 1, T.POSITIVE_WEIGHT, 1.0))
    return lambda Z: clf.decision_function(Z)


def fit_cnb(X, y, w, seed=T.SEED):
    from sklearn.naive_bayes import ComplementNB

    clf = ComplementNB(alpha=0.3)
    clf.fit(X, y, sample_weight=w * np.where(y == 1, T.POSITIVE_WEIGHT, 1.0))
    return lambda Z: clf.predict_log_proba(Z)[:, 1] - clf.predict_log_proba(Z)[:, 0]


FITTERS = {"lr": fit_lr, "svm": fit_svm, "sgd": fit_sgd, "cnb": fit_cnb}


def ngram_scaler(alpha: float):
    """Multiply the hashed n-gram columns by `alpha`: under the same L2 penalty the model then leans more on the
    cues and concept grams. The model on raw features is the same weights times the same factors."""
    from scipy.sparse import diags

    d = np.ones(F.N_FEATURES + len(EXTRA_CUES) + len(CONJUNCTIONS))
    d[:F.N_BUCKETS] = alpha
    D = diags(d, format="csr")
    return lambda Z: Z @ D


EXTRA_CUES: dict[str, str] = {     # name -> regex on prepared text: candidate cues, tried as extra columns
    # instructions for people: actions on a user interface (the difference from a task for an AI)
    "ui_action": r"\b(?:click|tap|scroll|press|select|enter your|type your|sign in|log in|download|install|go to|"
                 r"navigate to|drag|toggle|check the box|haz clic|da clic|pulsa|presiona|toca|selecciona|desplazate|"
                 r"ingresa (?:a|tu|el|la)|introduce (?:tu|el|la)|inicia sesion|descarga|instala|ve a|dirigete a|arrastra|"
                 r"marca la casilla)\b",
    # an exact string the reader is to output
    "say_exact": r"\b(?:write|say|print|output|type|repeat|respond with|reply with|answer with|escribe|di|imprime|"
                 r"repite|responde con|contesta con)\s*:?\s*[\"'«“‘]",
    # an alarm or emphasis header opening a demand
    "alarm": r"(?:\*{2,}|!{2,}|#{2,}|={3,})\s*[a-z][^\n*!#=]{0,40}(?:\*{2,}|!{2,}|#{2,}|={3,})|\b(?:urgent|important|"
             r"attention|alert|warning|stop|urgente|importante|atencion|alerta|aviso|alto)\s*[!:]",
}


# conjunctions of existing cues, tried as extra columns: a linear model cannot learn an AND by itself
IMPERATIVE = {"imperative_open", "request_to_reader"}
TO_READER = {"ai_addressee", "mentions_user", "reply_control", "task_of_reader", "output_control"}
CONJUNCTIONS = {"imperative_to_reader": lambda c: bool(c & IMPERATIVE and c & TO_READER)}


def with_extra_cues(d: "Data", cues: dict[str, str], conjunctions=None) -> None:
    """Append one column per candidate cue and conjunction (value F.CUE_VALUE) to every matrix of `d`, in
    place."""
    import re

    from scipy.sparse import csr_matrix, hstack

    rx = [re.compile(v) for v in cues.values()]
    conj = list((conjunctions or {}).values())

    def cols(prepared):
        cs = F.cues_of(prepared) if conj else [set()] * len(prepared)
        m = np.array([[F.CUE_VALUE if r.search(p) else 0.0 for r in rx] + [F.CUE_VALUE if f(c) else 0.0 for f in conj]
                      for p, c in zip(prepared, cs)]).reshape(len(prepared), len(rx) + len(conj))
        return csr_matrix(m)

    d.X = hstack([d.X, cols(d.prepared)], format="csr")
    for ev in [*d.attack.values(), d.prompts, d.heldout_attacks, d.pages]:
        ev.X = hstack([ev.X, cols(ev.prepared)], format="csr")


def operating_point(page_best: np.ndarray, prompt_best: np.ndarray, max_pages: int, max_prompts: float) -> float:
    """The lowest threshold (just above a benign score) flagging at most max_pages pages and max_prompts of the
    benign instruction-like texts."""
    p = np.sort(page_best)[::-1]
    q = np.sort(prompt_best)[::-1]
    k = int(max_prompts * len(q))
    t_pages = p[max_pages] if len(p) > max_pages else -np.inf
    t_prompts = q[k] if len(q) > k else -np.inf
    return float(max(t_pages, t_prompts)) + 1e-9


def run_fold(d: Data, source: str, fitter, max_pages: int, max_prompts: float, misses: int = 0,
             transform=None) -> dict:
    mask = d.source != source
    X = transform(d.X) if transform else d.X
    score = fitter(X[mask], d.y[mask], d.w[mask])
    tx = (lambda Z: transform(Z)) if transform else (lambda Z: Z)
    ev = d.attack[source]
    att = ev.best(score(tx(ev.X)))
    pages = d.pages.best(score(tx(d.pages.X)))
    prompts = d.prompts.best(score(tx(d.prompts.X)))
    held = d.heldout_attacks.best(score(tx(d.heldout_attacks.X)))
    t = operating_point(pages, prompts, max_pages, max_prompts)
    out = {"source": source, "n": len(att), "recall": float(np.mean(att >= t)), "threshold": t,
           "pages": int((pages >= t).sum()), "prompts": int((prompts >= t).sum()),
           "heldout_attack_recall": float(np.mean(held >= t))}
    for lang in ("es", "en"):
        sel = np.array([x == lang for x in d.heldout_attacks.languages])
        out[f"heldout_{lang}"] = float(np.mean(held[sel] >= t)) if sel.any() else float("nan")
    if misses:
        order = np.argsort(att)
        top_benign = np.argsort(prompts)[::-1][:3]
        print(f"  benign instruction-like above the operating point or nearest: "
              + "; ".join(f"{prompts[i]:.2f} {d.prompts.names[i]}" for i in top_benign))
        for i in order[:misses]:
            if att[i] >= t:
                break
            w = np.flatnonzero(ev.owner == i)
            best = w[np.argmax(score(tx(ev.X[w])))]
            print(f"  miss {att[i]:6.2f} cues={sorted(ev.cues[best])} {ev.prepared[best][:160]!r}")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sources", nargs="*", default=list(WEAK))
    ap.add_argument("--fitter", nargs="*", default=["lr"], choices=sorted(FITTERS))
    ap.add_argument("--cache", type=Path, default=None)
    ap.add_argument("--pages", type=int, default=1, help="held-apart pages the operating point may flag")
    ap.add_argument("--prompts", type=float, default=0.01, help="fraction of benign instruction-like texts")
    ap.add_argument("--misses", type=int, default=0, help="print this many missed texts per fold")
    ap.add_argument("--extra-cues", action="store_true", help="add the candidate cues of EXTRA_CUES")
    ap.add_argument("--svm-c", type=float, default=T.SVM_C)
    ap.add_argument("--conjunctions", action="store_true", help="add the cue conjunctions of CONJUNCTIONS")
    ap.add_argument("--scale", nargs="*", type=float, default=[1.0],
                    help="factors for the hashed n-gram columns (the cues and concept grams keep theirs)")
    args = ap.parse_args(argv)
    if not S.available():
        print(f"{S.TRAINING}: training material not found (../shared/training)", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    d = load(args.cache)
    print(f"material: {d.X.shape[0]} windows, {len(d.pages.names)} held-apart pages, {len(d.prompts.names)} benign "
          f"instruction-like texts ({time.perf_counter() - t0:.0f} s)", flush=True)
    SVM_C[0] = args.svm_c
    if not args.extra_cues:
        EXTRA_CUES.clear()
    if not args.conjunctions:
        CONJUNCTIONS.clear()
    if EXTRA_CUES or CONJUNCTIONS:
        with_extra_cues(d, EXTRA_CUES, CONJUNCTIONS)
        for name, rx in EXTRA_CUES.items():
            import re
            r = re.compile(rx)
            hits = lambda ps: sum(bool(r.search(p)) for p in ps)
            print(f"cue {name}: training windows {hits(d.prepared)}, benign instruction-like {hits(d.prompts.prepared)}, "
                  f"held-apart page windows {hits(d.pages.prepared)}", flush=True)
    for name, scale in [(n, a) for n in args.fitter for a in args.scale]:
        rec = []
        for s in args.sources:
            t1 = time.perf_counter()
            r = run_fold(d, s, FITTERS[name], args.pages, args.prompts, args.misses,
                         None if scale == 1.0 else ngram_scaler(scale))
            rec.append(r["recall"])
            print(f"{name:4} x{scale:<4} {s:24} n={r['n']:3} recall {r['recall']:.2f}  pages {r['pages']} prompts {r['prompts']} "
                  f"held-out attacks es {r['heldout_es']:.2f} en {r['heldout_en']:.2f} "
                  f"({time.perf_counter() - t1:.0f} s)", flush=True)
        print(f"{name:4} x{scale:<4} mean recall {np.mean(rec):.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
