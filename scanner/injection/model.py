"""The learned detector at scan time: load the weights once, cut texts into windows, score them, explain.

The model is a logistic regression over `scanner.injection.features` (hashed character and word n-grams plus
named structural cues), trained by `scanner/training/` (`make train-injection-model`). Its file is a small
deterministic container: a magic line, a JSON header (feature parameters, bias, weight scale, training
digests) and the float16 weights compressed with zlib. Loading it costs a few milliseconds and imports only
numpy; it happens on first use, so a scan that never reaches the model never reads it.

Long texts are cut into overlapping windows (`WINDOW` characters, `STRIDE` apart, on the normalised text) and
each window is scored on its own: a payload inside a long paragraph or a PDF page is not diluted by the
benign text around it, and the finding reports the window that scored.
"""

from __future__ import annotations

import json
import os
import re
import zlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from scanner.injection import features as F

MAGIC = b"centinela-injection-model/1\n"
WINDOW = 320
STRIDE = 160
MIN_CHARS = 12
MIN_WORDS = 3
TOP_TERMS = 5
BATCH_CHARS = 400_000
_WORD = re.compile(r"\w+")
SENTENCE_RUN = int(os.environ.get("CENTINELA_SENTENCE_RUN", "2"))   # sentences per sentence window, at most
_SENTENCE_END = re.compile(r"[.!?;]+(?=\s)|\n")


class ModelError(Exception):
    """A model file that cannot be used: the message names the file and the problem."""


@dataclass(frozen=True)
class Model:
    weights: np.ndarray        # float64, F.N_FEATURES
    bias: float
    header: dict
    path: str = ""

    def scores(self, prepared: list[str]) -> np.ndarray:
        """Logits (w·x + b) of prepared texts, in batches of at most BATCH_CHARS characters (memory stays
        bounded whatever the document's size: each character costs about 100 bytes while its batch is scored)."""
        if not prepared:
            return np.zeros(0)
        out = []
        batch: list[str] = []
        size = 0
        for p in prepared:
            if batch and size + len(p) > BATCH_CHARS:
                out.append(F.linear_scores(F.featurize(batch), self.weights, self.bias))
                batch, size = [], 0
            batch.append(p)
            size += len(p)
        out.append(F.linear_scores(F.featurize(batch), self.weights, self.bias))
        return np.concatenate(out)


def dump_model(weights: np.ndarray, bias: float, header: dict) -> bytes:
    """The file bytes of a model: the same weights and header always give the same bytes."""
    if weights.shape != (F.N_FEATURES,):
        raise ValueError(f"expected {F.N_FEATURES} weights, got {weights.shape}")
    scale = float(np.max(np.abs(weights))) or 1.0
    q = np.round(weights / scale * 32767.0).astype("<i2")      # 16-bit fixed point: exact and portable
    head = dict(header)
    head.update({"bias": float(bias), "scale": scale, "n_features": F.N_FEATURES, "hash_bits": F.HASH_BITS,
                 "char_ngrams": list(F.CHAR_NGRAMS), "cues": list(F.FEATURE_CUES), "window": WINDOW,
                 "concepts": list(F.C.CONCEPTS),
                 "stride": STRIDE})
    text = json.dumps(head, sort_keys=True, ensure_ascii=False).encode("utf-8")
    return MAGIC + len(text).to_bytes(4, "big") + text + zlib.compress(q.tobytes(), 9)


def parse_model(data: bytes, path: str = "") -> Model:
    if not data.startswith(MAGIC):
        raise ModelError(f"{path}: not a centinela injection model")
    try:
        i = len(MAGIC)
        n = int.from_bytes(data[i:i + 4], "big")
        header = json.loads(data[i + 4:i + 4 + n].decode("utf-8"))
        raw = zlib.decompress(data[i + 4 + n:])
    except (ValueError, zlib.error, UnicodeDecodeError) as exc:
        raise ModelError(f"{path}: damaged model file: {exc}") from None
    if (header.get("n_features") != F.N_FEATURES or header.get("cues") != list(F.FEATURE_CUES)
            or header.get("char_ngrams") != list(F.CHAR_NGRAMS) or header.get("concepts") != list(F.C.CONCEPTS)):
        raise ModelError(f"{path}: trained with other features than this version computes: retrain it "
                         "(make train-injection-model)")
    q = np.frombuffer(raw, dtype="<i2")
    if q.shape != (F.N_FEATURES,):
        raise ModelError(f"{path}: damaged model file: {q.shape[0]} weights")
    weights = q.astype(np.float64) * (float(header["scale"]) / 32767.0)
    return Model(weights, float(header["bias"]), header, path)


@lru_cache(maxsize=4)
def load_model(path: str) -> Model:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ModelError(f"{path}: cannot read the model: {exc}") from None
    return parse_model(data, path)


def windows(text: str, sentences: bool = True) -> list[tuple[int, int]]:
    """Windows over `text` (normalised): `char_windows`, then (with `sentences`) every run of 1 to
    SENTENCE_RUN consecutive sentences of a text of two or more, up to WINDOW characters, not already a window."""
    out = char_windows(text)
    if sentences and SENTENCE_RUN:
        seen = set(out)
        for w in sentence_windows(text):
            if w not in seen:
                seen.add(w)
                out.append(w)
    return out


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """The sentences of `text`: cut after . ! ? ; (followed by a space) and at line breaks, spaces trimmed."""
    out = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        out.append((start, m.end()))
        start = m.end()
    out.append((start, len(text)))
    spans = []
    for s, e in out:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            spans.append((s, e))
    return spans


def sentence_windows(text: str) -> list[tuple[int, int]]:
    if _SENTENCE_END.search(text) is None:      # one sentence at most (most texts of a page): no cut to trim
        return []
    spans = sentence_spans(text)
    if len(spans) < 2:
        return []
    out = []
    for i in range(len(spans)):
        for k in range(1, SENTENCE_RUN + 1):
            if i + k > len(spans):
                break
            s, e = spans[i][0], spans[i + k - 1][1]
            if e - s > WINDOW:
                break
            out.append((s, e))
    return out


def char_windows(text: str) -> list[tuple[int, int]]:
    """Windows over `text` (normalised): the whole text when short, else WINDOW characters every STRIDE,
    their edges moved to the nearest space so words stay whole."""
    n = len(text)
    if n <= WINDOW + STRIDE // 2:
        return [(0, n)]
    out = []
    start = 0
    while True:
        end = min(start + WINDOW, n)
        if end < n:
            cut = text.rfind(" ", start + WINDOW // 2, end)
            end = cut if cut > 0 else end
        out.append((start, end))
        if end >= n:
            break
        nxt = start + STRIDE
        space = text.find(" ", nxt, nxt + 40)
        start = space + 1 if space >= 0 else nxt
        if n - start <= STRIDE // 2:            # a short tail is inside the last window already
            out[-1] = (out[-1][0], n)
            break
    return out


def worth_scoring(prepared: str) -> bool:
    """Too short to instruct anyone: fewer than MIN_WORDS words or MIN_CHARS characters."""
    return len(prepared) - 2 >= MIN_CHARS and prepared.count(" ") - 1 >= MIN_WORDS


def explain(model: Model, prepared: str, k: int = TOP_TERMS) -> list[tuple[str, float]]:
    """The words (and word pairs) of a window that weighed most towards "injection": each character n-gram's
    share of the score goes to the word it starts in, a pair's to the pair. Positive shares only, largest first."""
    rows, buckets, starts, ends, _ = F.ngram_occurrences([prepared], positions=True)
    if len(rows) == 0:
        return []
    contrib = model.weights[buckets] / np.sqrt(len(rows))
    words = [(m.start(), m.end()) for m in _WORD.finditer(prepared)]
    if not words:
        return []
    word_starts = np.array([s for s, _ in words])
    totals: dict[str, float] = {}
    for s, e, c in zip(starts.tolist(), ends.tolist(), contrib.tolist()):
        w = int(np.searchsorted(word_starts, s, side="right")) - 1
        w = max(w, 0)
        ws, we = words[w]
        if e > we + 1 and w + 1 < len(words) and e <= words[w + 1][1] and s >= ws:
            term = prepared[ws:words[w + 1][1]]           # a word pair (or an n-gram across two words)
        else:
            term = prepared[ws:we]
        totals[term] = totals.get(term, 0.0) + c
    ranked = sorted(((t, v) for t, v in totals.items() if v > 0 and showable(t)), key=lambda tv: (-tv[1], tv[0]))
    return [(t, round(v, 3)) for t, v in ranked[:k]]


_LONG_WORD = re.compile(r"[^\W\d_]{21,}")


def showable(term: str) -> bool:
    """Whether a weighed term may be shown in a finding: no digit and no run of more than 20 letters. A figure, a
    phone number, an account, a key or a token can weigh in the score, and its fragment in a message is a datum
    the outputs' scrubbing no longer recognises (a key's hex tail without its `tvly-` prefix)."""
    return not any(c.isdigit() for c in term) and _LONG_WORD.search(term) is None


def explain_concepts(model: Model, prepared: str, k: int = 3) -> list[tuple[str, float]]:
    """The concept grams (`scanner.injection.concepts`) of a window that weighed most towards "injection"."""
    cols = F.concept_columns(prepared)
    if not cols or F.CONCEPT_VALUE <= 0:
        return []
    value = F.CONCEPT_VALUE / len(cols) ** 0.5
    ranked = sorted(((F.concept_name(c), float(model.weights[c]) * value) for c in cols), key=lambda tv: (-tv[1], tv[0]))
    return [(t, round(v, 3)) for t, v in ranked[:k] if v > 0]


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=np.float64)))


def logit(p: float) -> float:
    # clipped where a double still tells 1 - p apart (logit ±34.5): a Platt-calibrated margin can be steep, and a
    # pack's strict threshold must still be able to stand above a window that scores 25
    p = min(max(p, 1e-15), 1 - 1e-15)
    return float(np.log(p / (1 - p)))
