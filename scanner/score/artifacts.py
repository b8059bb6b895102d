"""Stored artifacts as claims cite them: spans applied mechanically (spec §4.3, contract span grammar).

A claim is citable when its `span` parses, its `artifact` is a path inside the fixture root that exists, and
the span applied to the stored file returns text that contains the claim's `text` (whitespace-normalised on
both sides; case and accents count). `offset:` indexes the decoded source (for HTML the markup itself);
`selector:` takes the text content of the first element it selects; `page:` takes a PDF page's extracted text.
Every artifact is read (and an HTML one parsed for selectors) once, every (artifact, span) applied once and
every (artifact, span, claim text) judged once, however many claims cite it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from scanner.spans import Span, SpanError, apply_span, normalise_ws, parse_span


@dataclass
class Artifact:
    text: str | None = None            # decoded source text
    pages: list[str] | None = None     # PDF page texts, when the file is a PDF
    error: str | None = None


@dataclass
class Citation:
    citable: bool
    reason: str                        # "ok" or why not
    span: Span | None = None
    got: str | None = None             # what the span returned (normalised), when it returned something


class ArtifactStore:
    def __init__(self, root: Path):
        self.root = root
        self._artifacts: dict[str, Artifact] = {}
        self._applied: dict[tuple[str, str], tuple[Span | None, str | None, str]] = {}
        self._soups: dict[str, object] = {}
        self._cited: dict[tuple, Citation] = {}

    def artifact(self, rel: str) -> Artifact:
        got = self._artifacts.get(rel)
        if got is None:
            got = self._artifacts[rel] = self._read(rel)
        return got

    def _read(self, rel: str) -> Artifact:
        from scanner.fixtures.tree import unsafe_reason

        why = unsafe_reason(self.root, rel)
        if why:
            return Artifact(error=f"artifact {rel}: {why}")
        path = self.root / rel
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return Artifact(error=f"artifact {rel}: not found")
        except OSError as exc:
            return Artifact(error=f"artifact {rel}: cannot read: {exc.strerror or exc}")
        from scanner.loaders import HTML_EXT, sniff_kind
        from scanner.sourcetext import decode_bytes

        if sniff_kind(rel, data) == "pdf":
            from scanner.loaders.pdf import load_pdf
            from scanner.units import LoadError

            try:
                doc = load_pdf(data, rel)
            except LoadError as exc:
                return Artifact(error=f"artifact {rel}: {exc.message}")
            return Artifact(text=decode_bytes(data).text, pages=[p.text for p in doc.pages])
        if rel.lower().endswith(HTML_EXT):
            from scanner.loaders.html import decode_html

            return Artifact(text=decode_html(data).text)
        return Artifact(text=decode_bytes(data).text)

    def apply(self, rel: str, span_text: str) -> tuple[Span | None, str | None, str]:
        """(parsed span, the normalised text it returns or None, "ok" or the reason it returns nothing)."""
        key = (rel, span_text)
        got = self._applied.get(key)
        if got is None:
            got = self._applied[key] = self._apply(rel, span_text)
        return got

    def _apply(self, rel: str, span_text: str):
        try:
            span = parse_span(span_text)
        except SpanError as exc:
            return None, None, str(exc)
        art = self.artifact(rel)
        if art.error:
            return span, None, art.error
        if span.kind == "page" and art.pages is None:
            return span, None, f"span {span_text!r}: {rel} is not a PDF"
        try:
            if span.kind == "selector" and art.text is not None:
                text = self._select(rel, art.text, span.selector)
            else:
                text = apply_span(span, source_text=art.text, page_texts=art.pages)
        except SpanError as exc:
            return span, None, str(exc)
        if text is None:
            what = "selects nothing" if span.kind == "selector" else "is out of range"
            return span, None, f"span {span_text!r} {what} in {rel}"
        return span, normalise_ws(text), "ok"

    def _select(self, rel: str, html_text: str, selector: str) -> str | None:
        """`scanner.spans.select_text` with the artifact's HTML parsed once, however many selectors cite it
        (select_one and get_text leave the tree as it is); the same text, and the same error for a bad selector."""
        from bs4 import BeautifulSoup

        soup = self._soups.get(rel)
        try:
            if soup is None:
                soup = self._soups[rel] = BeautifulSoup(html_text, "lxml")
            el = soup.select_one(selector)
        except Exception as exc:  # soupsieve raises on invalid selectors
            raise SpanError(f"selector {selector!r}: {exc}") from None
        return None if el is None else el.get_text()

    def cite(self, artifact: str | None, span_text: str | None, claim_text: str) -> Citation:
        """Whether a claim is citable; judged once per (artifact, span, text), however many claims repeat them
        (the Citation returned is shared: callers read it, never change it)."""
        key = (artifact, span_text, claim_text)
        got = self._cited.get(key)
        if got is None:
            got = self._cited[key] = self._cite(artifact, span_text, claim_text)
        return got

    def _cite(self, artifact: str | None, span_text: str | None, claim_text: str) -> Citation:
        if not artifact or not span_text:
            return Citation(False, "no artifact" if not artifact else "no span")
        span, got, reason = self.apply(artifact.strip(), span_text)
        if got is None:
            return Citation(False, reason, span)
        if normalise_ws(claim_text) in got:
            return Citation(True, "ok", span, got)
        return Citation(False, "the span's text does not contain the claim's text", span, got)
