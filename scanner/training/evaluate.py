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

HIDDEN_GROUPS = ("comment", "attribute", "alt", "meta", "json_ld", "noscript", "template", "svg_text")
THRESHOLD_MARGIN = 0.25          # logits above the out-of-fold score of the benign page a threshold stops at
MIN_THRESHOLD = 0.5


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


PAGE_BUDGET = 0.0075            # at most this fraction of the training pages over a threshold, out of fold (3 of 442;
                                # 2 left the visible threshold at 0.99997 once Spanish texts trained; a margin
                                # under the 1 % bar for pages never trained on)
PROMPT_BUDGET = 0.005           # at most this fraction of benign instruction-like texts over a hidden threshold
                                # (0.01 until the twenty-first round: once the older blind splits trained, the model
                                # scored benign prose lower and 1 % let the CSS-hidden threshold down to 0.91; NotInject
                                # then 2.95 %, over its 2 % bar; at 0.5 % it is 0.98 and NotInject 1.77 %)
PROMPT_SOURCES = ("bipia-emails", "templates", "benign-extra", "benign-prompts")
# The benign texts written blind (sources es-written, en-written: AI talk, notices about bots, instructions for
# people) bound the cued thresholds (CUED_WRITTEN_BUDGET) and, since the thirty-fourth round, the plain hidden ones:
# at most this fraction of their windows, out of fold, may reach a hidden group's plain threshold (None: no such
# floor, as until the thirty-third round; at 0.01 the floor put the hidden thresholds at 0.9921 and blind28's benign
# texts were flagged as often as without it, 15 of 177; at 0.005, 0.9985 and 11 of 177).
WRITTEN_BUDGET: float | None = 0.005
CALIBRATED = ("comment", "attribute", "meta", "json_ld", "css_hidden", "visible")


def _spend_budget(groups, levels, allowed, budget, gain) -> None:
    """Greedy: raise, one group at a time, how many benign pages a group's threshold lets over it (`allowed`, in
    place; `levels[g]` its benign pages by score, highest first), always taking the step (1–3 more pages) with the
    most attacks gained (`gain(g, n)`) per page newly flagged, while the pages flagged in all stay within `budget`;
    stop when no step gains."""
    def flagged(extra=None):
        out = set()
        for g in groups:
            n = extra[1] if extra and extra[0] == g else allowed[g]
            out.update(p for p, _ in levels[g][:n])
        return out

    while True:
        base = flagged()
        best = None
        for g in groups:
            for step in (1, 2, 3):
                n = allowed[g] + step
                if n > len(levels[g]):
                    break
                new = flagged((g, n))
                if len(new) > budget:
                    continue
                dg = gain(g, n) - gain(g, allowed[g])
                cost = max(len(new) - len(base), 0.5)
                if dg > 0 and (best is None or dg / cost > best[0]):
                    best = (dg / cost, g, n)
        if best is None:
            return
        allowed[best[1]] = best[2]


def probability(logit: float) -> float:
    """A threshold as the rule file writes it: the probability rounded to 4 decimals, or to as many more as keep it
    strictly between 0 and 1 (a rule's threshold must be; a benign page scoring 9.3 logits out of fold puts the
    visible threshold at 0.99991, which 4 decimals would write as 1.0)."""
    p = float(M.sigmoid(logit))
    for digits in range(4, 13):
        r = round(p, digits)
        if 0.0 < r < 1.0:
            return r
    return min(max(p, 1e-12), 1.0 - 1e-12)


def _floor(scores: list[float], allowed: int) -> float:
    """The lowest level (logit) at which at most `allowed` of these benign scores are flagged: 0.05 over the score
    ranked `allowed + 1` from the top (-inf when there are no more than `allowed`)."""
    ranked = np.sort(np.array(scores))
    return float(ranked[-(allowed + 1)]) + 0.05 if len(ranked) > allowed else -np.inf


def choose_thresholds(material: T.Material, scores: np.ndarray, gate: set, gate_cues, page_budget: float =
                      PAGE_BUDGET, prompt_budget: float = PROMPT_BUDGET,
                      written_budget: float | None = WRITTEN_BUDGET, verbose: bool = False) -> dict:
    """Thresholds against the false-positive budgets, from out-of-fold scores.

    - Benign instruction-like texts (BIPIA's e-mails, the hard negatives of the templates and families): at most
      `prompt_budget` of them may reach a hidden group's threshold; and, unless `written_budget` is None, at most
      that fraction of the windows of the benign texts written blind (WRITTEN_SOURCES). The higher of the two
      levels is the hidden groups' floor.
    - Benign training pages: start every calibrated group just above its highest out-of-fold page score (no page
      flagged), then lower one group at a time — the one that gains the most attack windows (out of fold) per page
      newly flagged — while the pages flagged by any group stay within `page_budget` of the pages.
    Gated groups count only windows that pass their gate. Groups with too few benign windows to calibrate on
    (noscript, template, SVG, PDF) take the default: the stricter of comment and attribute.
    `gate_cues` maps a gated group to its cues (or is one set for all)."""
    cues_of = F.cues_of([r.prepared for r in material.rows])

    def passes(group, cues):
        if group not in gate:
            return True
        need = gate_cues.get(group, set()) if isinstance(gate_cues, dict) else gate_cues
        return bool(cues & set(need))

    pagemax: dict[str, dict[str, float]] = {g: {} for g in CALIBRATED}
    pages: set[str] = set()
    pos: dict[str, list[float]] = {g: [] for g in CALIBRATED}
    prompts: list[float] = []
    written: list[float] = []
    for r, s, c in zip(material.rows, scores, cues_of):
        if r.label:
            if r.source != "templates":
                for g in CALIBRATED:
                    pos[g].append(s if passes(g, c) else -np.inf)
            continue
        if r.source == "benign-pages" and r.group:
            pages.add(r.page)
            if r.group in pagemax and passes(r.group, c):
                pagemax[r.group][r.page] = max(pagemax[r.group].get(r.page, -np.inf), s)
        elif r.source in PROMPT_SOURCES:
            prompts.append(float(s))
        elif r.source in WRITTEN_SOURCES:
            written.append(float(s))
    posa = {g: np.array(v) for g, v in pos.items()}
    prompt_floor = _floor(prompts, int(prompt_budget * len(prompts)))
    written_floor = -np.inf if written_budget is None else _floor(written, int(written_budget * len(written)))
    hidden_floor = max(prompt_floor, written_floor)
    floor = M.logit(MIN_THRESHOLD)
    levels = {g: sorted(pagemax[g].items(), key=lambda kv: (-kv[1], kv[0])) for g in CALIBRATED}
    allowed = {g: 0 for g in CALIBRATED}
    budget = int(page_budget * len(pages))

    def level(g, n):
        lo = floor if g == "visible" else max(floor, hidden_floor)
        vals = levels[g]
        return lo if n >= len(vals) else max(vals[n][1] + THRESHOLD_MARGIN, lo)

    def gain(g, n):
        return int((posa[g] >= level(g, n)).sum())

    _spend_budget(CALIBRATED, levels, allowed, budget, gain)
    out = {g: level(g, allowed[g]) for g in CALIBRATED}
    out["default"] = max(out["comment"], out["attribute"])
    # A PDF's invisible text layer (render mode 3/7, white, tiny, off the crop box, under an image; an OCR layer over
    # a scanned page is not one) is prose nobody is meant to see, like a comment: it takes the comment's threshold.
    # The training material holds almost none of it (benign PDFs rarely have such a layer: none in the real PDFs of
    # ../shared/realdata); at the default (the attribute's, set by UI strings) the model found 121 of 144 never-trained
    # attack texts there, at the comment's 137, with 2 of 274 benign texts flagged (the hidden carriers' rate).
    out["pdf_hidden"] = out["comment"]
    # So do the fallbacks a browser does not render (`<noscript>` with scripts on, `<template>`): prose, like a comment,
    # where the training pages hold too few benign windows to calibrate on. Measured when this was written: our
    # never-trained attack texts in either, model alone 118 -> 137 of 144; benign texts 0 -> 2 of 274; the 545 benign
    # and real pages: no page newly flagged. SVG text (chart labels, icon captions: UI strings) keeps the default.
    out["noscript"] = out["template"] = out["comment"]
    # An image's alt text is prose no one sees on the page (a description, for a screen reader or a missing image):
    # the training pages' alt texts never came near any threshold out of fold, so nothing there calibrates it, and
    # the benign instruction-like texts alone put it far lower than the hard negatives bear. It is read like a
    # comment (it took the other attributes' threshold, set by UI strings — title, aria-label, data-* — until the
    # sixteenth round; see model/MODEL_CARD.md).
    out["alt"] = out["comment"]
    for g in HIDDEN_GROUPS:
        out.setdefault(g, out["default"])
    if verbose:
        print(f"thresholds: {len(pages)} training pages, budget {budget}; pages allowed over each group {allowed}; "
              f"benign instruction-like floor {M.sigmoid(prompt_floor):.4f} ({len(prompts)} texts), written benign "
              f"floor {M.sigmoid(written_floor):.4f} ({len(written)} windows)", flush=True)
    return {g: probability(v) for g, v in sorted(out.items())}


CUED_GROUPS = ("comment", "attribute", "meta", "json_ld", "css_hidden")
CUED_PAGE_BUDGET = 0.0025       # training pages the cued thresholds may flag on top of the plain ones, out of fold
CUED_PROMPT_BUDGET = 0.005      # benign instruction-like texts they may flag on top of the plain ones
# The benign texts written blind as hard negatives (AI talk, notices about bots, instructions for people: sources
# es-written, en-written) hold cues far more often than the datasets' prompts; out of fold, the cued thresholds may
# flag at most this fraction of their windows that hold a cue (issue 13's bar for benign instruction-like text is
# 1 %; counted against all their windows, the floor let the cued thresholds down to 0.93 and the blind splits'
# benign texts were flagged two to three times as often as with the previous model). 1 % until the twenty-first
# round; with the older blind splits training, 1 % of their 3,512 cued benign windows let the cued thresholds down to
# 0.85 (NotInject 2.95 %); at 0.25 % they stay at 0.98 and the never-trained blind splits' benign texts are flagged
# half as often as before the round (README).
WRITTEN_SOURCES = ("es-written", "en-written")
CUED_WRITTEN_BUDGET = 0.0025
MIN_CUED_THRESHOLD = 0.2


def choose_cued_thresholds(material: T.Material, scores: np.ndarray, thresholds: dict, rule,
                           page_budget: float = CUED_PAGE_BUDGET, prompt_budget: float = CUED_PROMPT_BUDGET,
                           verbose: bool = False) -> dict:
    """Lower thresholds for hidden groups, applied to windows holding a cue of `rule.cued_by` (text that addresses
    an AI reader or sets what the reader outputs), from out-of-fold scores.

    Starting from the plain thresholds, a group's cued threshold goes down one benign training page at a time (the
    page whose cued window scores highest out of fold), while the pages newly flagged stay within `page_budget`
    of the pages and the benign instruction-like texts holding such a cue that it newly flags within
    `prompt_budget` of those texts; at each step the group that gains the most attack windows per page newly
    flagged goes down. Never below MIN_CUED_THRESHOLD."""
    cued_by = set(rule.cued_by)
    if not cued_by:
        return {}
    cues_of = F.cues_of([r.prepared for r in material.rows])
    plain = {g: M.logit(thresholds.get(g, thresholds["default"])) for g in CUED_GROUPS}
    gate = {g: set(rule.gate_cues_of.get(g, ())) for g in rule.gate}
    pages: set[str] = set()
    flagged0: set[str] = set()
    pagemax: dict[str, dict[str, float]] = {g: {} for g in CUED_GROUPS}
    pos: list[float] = []
    prompts: list[float] = []
    n_prompts = 0
    written: list[float] = []
    n_written = 0
    lowest_plain = min(plain.values())          # a benign window over it is flagged by a plain threshold already
    for r, s, c in zip(material.rows, scores, cues_of):
        cued = bool(c & cued_by)
        if r.label:
            if r.source != "templates":
                pos.append(s if cued else -np.inf)
            continue
        if r.source in WRITTEN_SOURCES:
            if cued:
                n_written += 1
                if s < lowest_plain:
                    written.append(float(s))
            continue
        if r.source == "benign-pages" and r.group:
            pages.add(r.page)
            g = r.group
            if g in gate and not c & gate[g]:
                continue
            if s >= M.logit(thresholds.get(g, thresholds["default"])):
                flagged0.add(r.page)
            if g in pagemax and cued and s < plain[g]:
                pagemax[g][r.page] = max(pagemax[g].get(r.page, -np.inf), s)
        elif r.source in PROMPT_SOURCES:
            n_prompts += 1
            if cued and s < lowest_plain:
                prompts.append(float(s))
    posa = np.array(pos)
    prompt_floor = _floor(prompts, int(prompt_budget * n_prompts))
    written_floor = _floor(written, int(CUED_WRITTEN_BUDGET * n_written))
    floor = max(M.logit(MIN_CUED_THRESHOLD), prompt_floor, written_floor)
    levels = {g: sorted(((p, v) for p, v in pagemax[g].items() if p not in flagged0), key=lambda kv: (-kv[1], kv[0]))
              for g in CUED_GROUPS}
    allowed = {g: 0 for g in CUED_GROUPS}
    budget = int(page_budget * len(pages))

    def level(g, n):
        vals = levels[g]
        lo = max(floor, min(plain[g], floor))
        return min(plain[g], lo if n >= len(vals) else max(vals[n][1] + THRESHOLD_MARGIN, lo))

    def gain(g, n):
        return int((posa >= level(g, n)).sum())

    _spend_budget(CUED_GROUPS, levels, allowed, budget, gain)
    out = {g: probability(level(g, allowed[g])) for g in CUED_GROUPS}
    out["alt"] = out["comment"]                 # read like a comment (choose_thresholds)
    if verbose:
        print(f"cued thresholds: budget {budget} more pages; pages allowed over each group {allowed}; cued benign "
              f"instruction-like floor {M.sigmoid(prompt_floor):.4f} ({len(prompts)} of {n_prompts} texts), written "
              f"benign floor {M.sigmoid(written_floor):.4f} ({len(written)} of {n_written} windows): {out}",
              flush=True)
    return out


REQUEST_GROUPS = ("comment", "attribute", "meta", "json_ld", "css_hidden")
MIN_REQUEST_THRESHOLD = 0.5


def request_flags(material: T.Material, rule) -> list[bool]:
    """Each row's window holds a reader request (`rule.request`, on its prepared text: a window cut inside a
    sentence reads as opening a clause here, so training sees a request at least wherever the scan does)."""
    if rule.request is None:
        return [False] * len(material.rows)
    return [rule.request.holds(r.prepared) for r in material.rows]


def choose_request_thresholds(material: T.Material, scores: np.ndarray, thresholds: dict, cued: dict, rule,
                              verbose: bool = False) -> dict:
    """One lower threshold for the hidden groups, applied to windows holding a reader request (`request_by`), from
    out-of-fold scores: the lowest level at which no benign window holding a request is flagged on top of what the
    plain and cued thresholds flag — on the training pages (pages already flagged by those excepted), the benign
    instruction-like texts and the corpus's benign windows — plus THRESHOLD_MARGIN logits; capped at each group's
    cued (else plain) threshold, never below MIN_REQUEST_THRESHOLD."""
    if rule.request is None:
        return {}
    requested = request_flags(material, rule)
    cues_of = F.cues_of([r.prepared for r in material.rows])
    cued_by = set(rule.cued_by)
    plain = {g: M.logit(thresholds.get(g, thresholds["default"])) for g in REQUEST_GROUPS}
    cued_l = {g: M.logit(cued[g]) if g in cued else plain[g] for g in REQUEST_GROUPS}
    gate = {g: set(rule.gate_cues_of.get(g, ())) for g in rule.gate}

    def effective(g, c):
        return min(plain[g], cued_l[g]) if c & cued_by else plain[g]

    flagged0: set[str] = set()
    page_best: dict[str, float] = {}
    benign_best = -np.inf
    pos: list[tuple[float, float]] = []
    n_benign_requests = 0
    for r, s, c, q in zip(material.rows, scores, cues_of, requested):
        s = float(s)
        if r.label:
            if r.source != "templates" and q:
                pos.append((s, min(effective(g, c) for g in REQUEST_GROUPS)))
            continue
        if r.source == "benign-pages" and r.group:
            g = r.group
            if g in gate and not c & gate[g]:
                continue
            eff = effective(g, c) if g in plain else M.logit(thresholds.get(g, thresholds["default"]))
            if s >= eff:
                flagged0.add(r.page)
            elif g in plain and q:
                n_benign_requests += 1
                page_best[r.page] = max(page_best.get(r.page, -np.inf), s)
        elif (r.source in PROMPT_SOURCES or r.source == "corpus") and q:
            n_benign_requests += 1
            if s < min(effective(g, c) for g in REQUEST_GROUPS):
                benign_best = max(benign_best, s)
    pages_best = max((v for p, v in page_best.items() if p not in flagged0), default=-np.inf)
    level = max(pages_best + THRESHOLD_MARGIN, benign_best + THRESHOLD_MARGIN, M.logit(MIN_REQUEST_THRESHOLD))
    out = {g: probability(min(level, cued_l[g], plain[g])) for g in REQUEST_GROUPS}
    out["alt"] = out["comment"]                 # read like a comment (choose_thresholds)
    if verbose:
        gained = sum(1 for s, eff in pos if level <= s < eff)
        print(f"request thresholds: {n_benign_requests} benign windows hold a request (best out of fold: page "
              f"{M.sigmoid(pages_best):.4f}, text {M.sigmoid(benign_best):.4f}); {len(pos)} attack windows hold one, "
              f"{gained} of them newly over the threshold: {out}", flush=True)
    return out


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
            gated = r.group in rule.gate and not (F.cues_of([r.prepared])[0] & rule.gate_cues_of[r.group])
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
