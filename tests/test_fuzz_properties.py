"""Property tests over every loader (HTML, PDF, JSON, recorded HTTP exchanges, text) and the span parser, with
the invariants of the atheris targets (fuzz/targets.py): any bytes give a Document whose unit spans lie in the
file and map exactly, or a one-line LoadError — nothing else — and scanning the Document raises nothing.
Inputs: arbitrary bytes, and mutations (byte edits, cuts, splices) of real files and the example tree's
fixtures. Every input the fuzzer ever crashed on is in tests/data/fuzz/<target>/ and replayed here.

The generated-document offset properties (HTML, HTML inside an envelope, JSON) are in test_offsets_property.py,
the PDF mutations in test_pdf_loader.py; this file covers what they do not: raw bytes for every format, the
envelope variants, text, and the span grammar.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import EXAMPLE_TREE, REALDATA
from scanner.spans import Span, SpanError, apply_span, parse_span

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "fuzz"))
import targets  # noqa: E402

REGRESSIONS = REPO / "tests" / "data" / "fuzz"
SLOW = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _seeds(suffixes: tuple[str, ...], limit: int = 12_000) -> list[bytes]:
    files = [p for base in (EXAMPLE_TREE, REALDATA) if base.is_dir() for p in sorted(base.rglob("*"))
             if p.is_file() and p.suffix.lower() in suffixes and p.stat().st_size < 400_000]
    return [p.read_bytes()[:limit] for p in files[:40]] or [b"<p>x</p>"]


@st.composite
def mutated(draw, seeds: list[bytes]):
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(0, 6))):
        op = draw(st.sampled_from(["flip", "insert", "delete", "cut", "splice"]))
        pos = draw(st.integers(0, max(0, len(data) - 1)))
        if op == "flip" and data:
            data[pos] = draw(st.integers(0, 255))
        elif op == "insert":
            data[pos:pos] = draw(st.sampled_from([b"<", b">", b"<!--", b"-->", b'"', b"\\", b"\\u00", b"{", b"[",
                                                  b"&#", b"&amp", b"\xff", b"\xc3", b"\x00", b"]]>", b"<script>"]))
        elif op == "delete":
            del data[pos:pos + draw(st.integers(1, 64))]
        elif op == "cut":
            del data[pos:]
        elif op == "splice":
            other = draw(st.sampled_from(seeds))
            start = draw(st.integers(0, max(0, len(other) - 1)))
            data[pos:pos] = other[start:start + draw(st.integers(1, 400))]
    return bytes(data)


HTML_SEEDS = _seeds((".html", ".htm"))
JSON_SEEDS = _seeds((".json", ".jsonl", ".har"))
PDF_SEEDS = [s for s in _seeds((".pdf",), limit=200_000) if len(s) < 200_000][:8] or [b"%PDF-1.4\n"]


@SLOW
@given(st.one_of(st.binary(max_size=3000), mutated(HTML_SEEDS)))
def test_html_loader_on_any_bytes(data):
    targets.fuzz_html(data)


@SLOW
@given(st.one_of(st.binary(max_size=3000), mutated(JSON_SEEDS)))
def test_json_loader_on_any_bytes(data):
    targets.fuzz_json(data)


@SLOW
@given(st.one_of(st.binary(max_size=3000), mutated(JSON_SEEDS), mutated(HTML_SEEDS)))
def test_http_envelopes_and_har_on_any_body(data):
    targets.fuzz_http(data)


RECORDING_SEEDS = [p.read_bytes()[:4000] for p in sorted((Path(__file__).parent / "data" / "recordings").rglob("*"))
                   if p.suffix in (".yaml", ".har", ".json")]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.one_of(st.binary(max_size=3000), mutated(RECORDING_SEEDS), mutated(HTML_SEEDS)))
def test_cassettes_har_and_nock_recordings_on_any_body(data):       # five recordings of each input
    targets.fuzz_recording(data)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.one_of(st.binary(max_size=2000).map(lambda b: b"%PDF-1.4\n" + b), mutated(PDF_SEEDS)))
def test_pdf_loader_on_any_bytes(data):
    targets.fuzz_pdf(data)


@SLOW
@given(st.binary(max_size=3000))
def test_text_loader_on_any_bytes(data):
    targets._load(data, "fuzz.txt")


# --- the span grammar ----------------------------------------------------------------------------------

numbers = st.integers(0, 10**12)
span_texts = st.one_of(
    st.builds(lambda a, b: f"offset:{a}-{b}", numbers, numbers),
    st.builds(lambda p: f"page:{p}", numbers),
    st.builds(lambda p, a, b: f"page:{p}:{a}-{b}", numbers, numbers, numbers),
    st.builds(lambda s: "selector:" + s, st.text(max_size=40)),
    st.text(max_size=60),
    st.builds(lambda s, ws: ws + s + ws, st.sampled_from(["offset:1-2", "page:3", "selector:p"]), st.sampled_from(["", " ", "\n\t"])),
)


@settings(max_examples=500, deadline=None)
@given(span_texts)
def test_span_parser_accepts_exactly_the_grammar(text):
    targets.fuzz_spans(text.encode("utf-8", "surrogatepass"))
    try:
        span = parse_span(text)
    except SpanError as exc:
        assert str(exc).startswith("span ") or str(exc).startswith("selector ")
        return
    assert isinstance(span, Span)
    canonical = {"offset": lambda s: f"offset:{s.start}-{s.end}", "selector": lambda s: f"selector:{s.selector}",
                 "page": lambda s: f"page:{s.page}" + ("" if s.start is None else f":{s.start}-{s.end}")}[span.kind](span)
    assert parse_span(canonical) == span                        # a parsed span prints back to itself
    if span.kind == "offset":
        got = apply_span(span, source_text="abcdef")
        assert got == ("abcdef"[span.start:span.end] if span.end <= 6 else None)
    if span.kind == "page":
        got = apply_span(span, page_texts=["uno", "dos"])
        assert got is None or got in ("uno", "dos") or got in "unodos"


# --- every input the fuzzer crashed on, and the hostile shapes fixed in this code ------------------------

def _regressions():
    if not REGRESSIONS.is_dir():
        return []
    return sorted((p.parent.name, p) for p in REGRESSIONS.rglob("*") if p.is_file())


@pytest.mark.parametrize("target, path", _regressions(), ids=lambda v: v.name if isinstance(v, Path) else v)
def test_fuzz_regression(target, path):
    started = time.process_time()      # CPU seconds of this process: other jobs on the machine do not count
    targets.FUNCTIONS[target](path.read_bytes())
    assert time.process_time() - started < 20, "a regression input must load in linear time"
