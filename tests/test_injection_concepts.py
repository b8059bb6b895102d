"""The concept sequence's fast path (no word that opens a phrase) gives what the phrase-folding walk gives."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from scanner.injection import concepts as C
from scanner.injection.features import prepare

REPO = Path(__file__).resolve().parents[1]
_VOCAB = sorted({w for ws in C.definition()["words"].values() for w in ws.split()})[:400] + [
    w for p in C.definition()["phrases"] for w in p.split()] + ["la", "the", "de", "xyz", "instruccionesx"]


def _walk(text: str) -> list[tuple[int, int]]:
    return C._sequence_with_phrases(C.WORD_RX.findall(text))


def test_sequence_equals_the_walk_on_the_corpus_texts():
    texts = [json.loads(line)["text"] for p in sorted((REPO / "corpus" / "blind").glob("blind1*.jsonl"))
             for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(texts) > 1_000
    folded = sum(C.holds_phrase(C.WORD_RX.findall(prepare(t))) for t in texts)
    assert 0 < folded < len(texts)              # both paths are taken
    for t in texts:
        p = prepare(t)
        assert C.sequence(p) == _walk(p)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_VOCAB), max_size=30))
def test_sequence_equals_the_walk_on_word_salads(words):
    p = prepare(" ".join(words))
    assert C.sequence(p) == _walk(p)
