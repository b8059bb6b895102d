"""Cross-validated thresholds, leave-one-source-out recall in carriers, false positives on held-apart pages.

Used by `make train-injection-model` (thresholds) and `make bench-injection` (the tables in the README).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from scanner.injection import features as F
from scanner.injection import model as M
from scanner.training import carriers as K
from scanner.training import sources as S
from scanner.training import train as T

HIDDEN_GROUPS = ("comment", "attribute", "meta", "json_ld", "noscript", "template", "svg_text")
THRESHOLD_MARGIN = 0.25          # logits above the highest benign out-of-fold score of the group
MIN_THRESHOLD = 0.5
MIN_GROUP_WINDOWS = 500          # a group with fewer benign windows takes the default threshold


def fold_of(key: str, k: int) -> int:
    return int(hashlib.sha256(key.encode()).hexdigest(), 16) % k


class Lab:
    """The material loaded once: training rows by part, held-apart benign documents, attack texts."""

    def __init__(self, verbose: bool = False):
        self.rule = T.learned_rule()
        self.verbose = verbose
        self.texts = T.all_texts()
        self.attacks = [t for t in self.texts if t.label == 1 and t.source != "templates"]
        self.page_rows = T.page_rows(S.training_pages(), self.rule)
        self.corpus_rows = T.corpus_rows(self.rule)
        self._held_docs = None

    def material(self, exclude: str | None = None) -> T.Material:
        rows = T.attack_rows([t for t in self.texts if t.source != exclude])
        if exclude != "corpus":
            rows += self.corpus_rows
        rows += self.page_rows
        return T.Material(rows).dedup()

    def held_docs(self):
        """Benign documents never trained on: a fifth of the training pages and ../shared/realdata/html."""
        if self._held_docs is None:
            from scanner.loaders import load_path

            docs = []
            for p in [p for p in S.benign_pages() if S.held_apart(p)]:
                docs.append(("benign-pages", load_path(p, p.name)))
            for p in [p for p in S.realdata_pages() if S.held_apart(p)]:
                docs.append(("realdata-html", load_path(p, p.name)))
            self._held_docs = docs
        return self._held_docs


def oof_scores(material: T.Material, k: int = 5, seed: int = T.SEED, fitter=None) -> np.ndarray:
    """Out-of-fold logits of every row: benign rows are split by page, the others by text."""
    fitter = fitter or T.fit
    folds = np.array([fold_of(r.page or r.prepared, k) for r in material.rows])
    out = np.zeros(len(material.rows))
    for f in range(k):
        train = T.Material([r for r, g in zip(material.rows, folds) if g != f])
        test_idx = np.flatnonzero(folds == f)
        w, b = fitter(train, seed)
        model = T.to_model(w, b)
        out[test_idx] = model.scores([material.rows[i].prepared for i in test_idx])
    return out


def choose_thresholds(material: T.Material, scores: np.ndarray, gate: set, gate_cues: set) -> dict:
    """Per group: just above the highest out-of-fold score of a benign window of that group on the training
    pages (gated groups: of a window that passes the gate), never below MIN_THRESHOLD; groups with fewer than
    MIN_GROUP_WINDOWS benign windows (noscript, template, SVG, PDF) take the default."""
    top: dict[str, float] = defaultdict(lambda: -np.inf)
    count: dict[str, int] = defaultdict(int)
    for r, s in zip(material.rows, scores):
        if r.label or not r.group or r.source != "benign-pages":
            continue                  # real pages only: the corpus's hard negatives are checked by `corpus check`
        count[r.group] += 1
        if r.group in gate and not (F.cues_of([r.prepared])[0] & gate_cues):
            continue
        top[r.group] = max(top[r.group], s)
    floor = M.logit(MIN_THRESHOLD)
    out = {}
    for g in HIDDEN_GROUPS + ("css_hidden", "visible"):
        if g in top and count[g] >= MIN_GROUP_WINDOWS:
            out[g] = max(top[g] + THRESHOLD_MARGIN, floor)
    # the default (groups with too few benign windows to calibrate on): the stricter of the two groups with the
    # most benign windows (comments and attributes), whose maxima are the best estimated
    hidden = [out[g] for g in ("comment", "attribute") if g in out]
    out["default"] = max(hidden) if hidden else floor
    for g in HIDDEN_GROUPS + ("pdf_hidden", "css_hidden", "visible"):
        out.setdefault(g, out["default"])
    return {g: round(float(M.sigmoid(v)), 4) for g, v in sorted(out.items())}


def cv_summary(material: T.Material, scores: np.ndarray, thresholds: dict, rule) -> dict:
    """Out-of-fold figures at the chosen thresholds: recall of each source's windows as a comment would judge
    them, and benign windows over the threshold of their group, by group."""
    from scanner.injection.learned import GROUP_VECTOR

    del GROUP_VECTOR
    t_comment = M.logit(thresholds["comment"])
    by_source: dict = defaultdict(lambda: [0, 0])
    benign: dict = defaultdict(lambda: [0, 0])
    for r, s in zip(material.rows, scores):
        if r.label:
            by_source[r.source][0] += 1
            by_source[r.source][1] += int(s >= t_comment)
        elif r.group:
            gated = r.group in rule.spec.gate and not (F.cues_of([r.prepared])[0] & set(rule.spec.gate_cues))
            benign[r.group][0] += 1
            benign[r.group][1] += int(not gated and s >= M.logit(thresholds.get(r.group, thresholds["default"])))
    return {"positive_windows_over_comment_threshold": {k: f"{v[1]}/{v[0]}" for k, v in sorted(by_source.items())},
            "benign_windows_over_their_threshold": {k: f"{v[1]}/{v[0]}" for k, v in sorted(benign.items())}}


@dataclass
class Detection:
    """Per source, carrier and language: how many texts, how many found by lexicon / model / both."""
    counts: dict = field(default_factory=lambda: defaultdict(lambda: [0, 0, 0, 0]))

    def add(self, source, carrier, language, lex: bool, mod: bool):
        for key in ((source, carrier, language), (source, carrier, "*")):
            c = self.counts[key]
            c[0] += 1
            c[1] += lex
            c[2] += mod
            c[3] += lex or mod


def scanner_with(model: M.Model | None, thresholds: dict | None = None):
    from scanner.injection.engine import InjectionScanner

    s = InjectionScanner()
    if model is not None:
        for lr in s.learned:
            lr._model = model
            if thresholds:
                lr.logit = {g: M.logit(t) for g, t in thresholds.items()}
    return s


def detect_in_carriers(scanner, texts, det: Detection, pdf_limit: int = 40, carriers=K.CARRIERS) -> None:
    from scanner.loaders import load_bytes
    from scanner.units import LoadError

    for k, t in enumerate(texts):
        for carrier in carriers:
            if carrier == "pdf_hidden" and k % max(1, len(texts) // pdf_limit or 1) and len(texts) > pdf_limit:
                continue
            data, name = K.document(carrier, t.text)
            try:
                findings = scanner.scan(load_bytes(data, name))
            except LoadError:
                continue
            lex = any(f.rule_id != "INJ015" for f in findings)
            mod = any(f.rule_id == "INJ015" for f in findings)
            det.add(t.source, carrier, t.language, lex, mod)


def false_positives(scanner, docs) -> dict:
    """Pages flagged (lexicon, model, either) and model findings per scored window, by set."""
    out: dict = defaultdict(lambda: {"pages": 0, "lexicon": 0, "model": 0, "either": 0, "model_findings": 0,
                                     "windows": 0, "flagged_names": []})
    from scanner.injection.learned import collect, item_windows

    for name, doc in docs:
        findings = scanner.scan(doc)
        lex = any(f.rule_id != "INJ015" for f in findings)
        mod = [f for f in findings if f.rule_id == "INJ015"]
        row = out[name]
        row["pages"] += 1
        row["lexicon"] += lex
        row["model"] += bool(mod)
        row["either"] += lex or bool(mod)
        row["model_findings"] += len(mod)
        row["windows"] += len(item_windows(collect(doc, scanner.learned[0].channels))) if scanner.learned else 0
        if lex or mod:
            row["flagged_names"].append((doc.path, sorted({f.rule_id for f in findings}),
                                         [f.evidence[:80] for f in findings][:2]))
    return dict(out)


def texts_in_carriers_fp(scanner, texts, carriers=K.CARRIERS) -> dict:
    """Benign texts (NotInject, held-out benign instructions) placed in carriers: fraction flagged."""
    det = Detection()
    detect_in_carriers(scanner, texts, det, pdf_limit=1000, carriers=carriers)
    return det.counts
