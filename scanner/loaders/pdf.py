"""Load a PDF as per-page text plus the character attributes that tell whether a reader can see it.

Page text contract: a page's text is exactly what `pdfminer.high_level.extract_text(io.BytesIO(data),
page_numbers=[N-1], laparams=LAParams())` returns for that page, minus the trailing form feed. We run the same
interpreter and layout analysis (PDFPageAggregator with default LAParams) and walk the resulting LTPage the
way pdfminer's TextConverter does, so a span `page:N:START-END` means the same thing to anyone re-running
pdfminer. Along the walk every character keeps the attributes pdfminer does not put in its text: the text
render mode (3 and 7 are invisible), fill colour and alpha, effective size, and whether it lies outside the
CropBox. Consecutive characters with equal attributes are stored as one `PdfRun`.

One deliberate difference: pdfminer orders text boxes by grouping the closest pairs first and breaks ties
between equal distances by `id()`, a memory address, so on pages with evenly spaced boxes (tables)
extract_text's box order changes from run to run. We run pdfminer's own grouping code with ties broken by
creation order instead, so our text is always the same and is exactly what extract_text gives when its
addresses happen to be in creation order. Elsewhere the two are identical. The grouping itself runs in
scanner/loaders/pdf_grouping.py: the same merges as pdfminer's code, without its n² heap (tables of hundreds of
cells spent three quarters of their load there).

Attributes follow the PDF graphics state more closely than pdfminer does where that cannot move a character:
`gs` fill alpha is tracked, and a form XObject inherits render mode, fill colour and alpha from its `Do`.
"""

from __future__ import annotations

import contextlib
import copy
import io
import itertools
import logging
import types
import zlib
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

import pdfminer.layout
import pdfminer.pdftypes
from pdfminer.converter import PDFPageAggregator
from pdfminer.lzw import LZWDecoder
from pdfminer.layout import LAParams, LTChar, LTContainer, LTPage, LTText, LTTextBox
from pdfminer.pdfdocument import PDFDocument, PDFEncryptionError, PDFPasswordIncorrect
from pdfminer.pdfinterp import PDFGraphicState, PDFPageInterpreter, PDFResourceManager
from pdfminer.pdfpage import PDFPage
from pdfminer.pdfparser import PDFParser
from pdfminer.psparser import PSLiteral
from pdfminer.pdftypes import resolve1
from pdfminer.utils import apply_matrix_rect, decode_text

from scanner.loaders import pdf_grouping as _grouping
from scanner.loaders import pdfmemo as _pdfmemo
from scanner.offsetmap import OffsetMap
from scanner.units import Channel, Document, LoadError, TextUnit

Rect = tuple[float, float, float, float]
Fill = Optional[tuple[float, ...]]

INFO_KEYS = ("Author", "Title", "Subject", "Keywords", "Creator", "Producer")

# Decompression bombs (a few KB of nested FlateDecode unpack to gigabytes; a 284 KB file of several such
# streams cost 97 s of a scan before its error). Every stream pdfminer decodes while we read a PDF — content,
# form XObjects, fonts, CMaps, object and xref streams; images are never decoded — goes through bounded
# decoders that stop the moment a stage's output passes what is allowed, so a bomb costs about what a real
# file of its size costs, not the whole per-file budget. Allowed (measured on the 31 real and example PDFs
# here: all streams together decode to at most 4.4× the file's size, a content stream to at most 12.5× its
# encoded size, an xref stream to 124× but 9.5 KB):
# - one stream, at each stage of its filter chain: max(STREAM_FLOOR, STREAM_RATIO × its encoded size), and
#   never more than MAX_STREAM_BYTES;
# - the document, every stage of every stream counted: max(DOCUMENT_FLOOR, DOCUMENT_RATIO × the file's size),
#   at most MAX_DOCUMENT_BYTES;
# - content handed to the interpreter, which is what costs (about 10–20 µs a byte of dense operators here):
#   max(INTERPRET_FLOOR, INTERPRET_RATIO × the file's size), a form counted each time it is drawn, so
#   re-drawing a small form (or forms drawing each other) cannot stand in for a large stream (real files:
#   at most 4.4× their size).
MAX_STREAM_BYTES = 256 * 1024 * 1024
STREAM_RATIO = 100
STREAM_FLOOR = 1 << 20
DOCUMENT_RATIO = 16
DOCUMENT_FLOOR = 8 << 20
MAX_DOCUMENT_BYTES = 512 << 20
INTERPRET_RATIO = 8
INTERPRET_FLOOR = 1 << 20

# Exact union of image rectangles costs O(n² log n); past this many images per page we use the largest one.
_MAX_IMAGES_FOR_UNION = 300


@dataclass
class PdfRun:
    """A maximal stretch [start, end) of a page's text whose characters share all attributes.

    `font_size` is pdfminer's `LTChar.size` rounded to 0.1: the height of the character's bounding box in
    page space (its width for vertical fonts), so it includes the text matrix and CTM scaling. For rotated
    text this is the extent along the page's y axis, not the glyph height.
    """

    start: int
    end: int
    render_mode: int | None
    fill: Fill                  # RGB 0..1; None for patterns, spot/indexed/Lab colours, or malformed colours
    font_size: float
    outside_cropbox: bool       # the character's bbox does not overlap the CropBox at all
    alpha: float | None         # fill alpha `ca` from ExtGState (1.0, the PDF default, unless one set it)
    covered_by_image: bool = False  # an image drawn after the text covers its characters' centres


@dataclass
class PdfPage:
    number: int                 # 1-based
    text: str
    runs: list[PdfRun] = field(default_factory=list)
    mediabox: Rect = (0.0, 0.0, 0.0, 0.0)   # as in the file (PDF user space)
    cropbox: Rect = (0.0, 0.0, 0.0, 0.0)    # as in the file; pdfminer defaults it to the MediaBox
    image_coverage: float = 0.0  # fraction of the CropBox covered by the union of image bboxes
    has_images: bool = False
    char_count: int = 0         # real characters (LTChar), not the spaces/newlines pdfminer inserts


# (render_mode, fill, font_size, outside_cropbox, alpha): a tuple so runs can be compared cheaply.
_Attrs = tuple[Optional[int], Fill, float, bool, Optional[float], bool]
_NO_ATTRS: _Attrs = (None, None, 0.0, False, None, False)


_creation_counter = itertools.count()


def _creation_order(obj: Any) -> int:
    """A stand-in for `id()` that numbers objects in the order it first sees them (their creation order)."""
    attrs = obj.__dict__
    if "_scan_seq" not in attrs:
        attrs["_scan_seq"] = next(_creation_counter)
    return attrs["_scan_seq"]


def _with_deterministic_ties(func: types.FunctionType) -> types.FunctionType:
    # The same code object, run with a globals dict in which `id` is _creation_order: pdfminer's grouping
    # algorithm unchanged except for the tie-break, without patching pdfminer for anyone else.
    namespace = dict(vars(pdfminer.layout), id=_creation_order)
    return types.FunctionType(func.__code__, namespace, func.__name__, func.__defaults__, func.__closure__)


_reference_group_textboxes = _with_deterministic_ties(LTPage.group_textboxes)


class _Page(LTPage):
    def group_textboxes(self, laparams: LAParams, boxes: Any) -> list:
        # pdfminer's grouping with creation-order ties, computed without its n² heap (scanner/loaders/pdf_grouping)
        return _grouping.group_textboxes(self, laparams, boxes, _reference_group_textboxes)


class _GraphicState(PDFGraphicState):
    """pdfminer's graphics state plus fill alpha: its `gs` operator is a no-op, so `ca` is otherwise lost."""

    def __init__(self) -> None:
        super().__init__()
        self.alpha = 1.0

    def copy(self) -> "_GraphicState":
        # The base copy() builds a plain PDFGraphicState and would drop alpha at every q/Q and text show.
        return copy.copy(self)


class _Interpreter(PDFPageInterpreter):
    # (render mode, fill colour space, fill colour, alpha) in force at the `Do` that invoked this form XObject.
    _inherited: tuple | None = None

    def init_state(self, ctm: Any) -> None:
        super().init_state(ctm)
        self.graphicstate = _GraphicState()
        if self._inherited is not None:
            mode, ncs, ncolor, alpha = self._inherited
            self.textstate.render = mode
            self.graphicstate.ncs, self.graphicstate.ncolor, self.graphicstate.alpha = ncs, ncolor, alpha

    def subinterp(self) -> "PDFPageInterpreter":
        # A form XObject inherits the graphics state at its `Do`, but pdfminer starts it from defaults, which
        # would report `3 Tr /Fm Do` text as visible. We carry over only what does not move characters, so
        # the layout (and so the page text) stays exactly pdfminer's.
        interp = super().subinterp()
        gs = self.graphicstate
        interp._inherited = (self.textstate.render, gs.ncs, gs.ncolor, getattr(gs, "alpha", 1.0))
        return interp

    def execute(self, streams: Any) -> None:
        # Content handed to the interpreter counts against the document's budget each time it is run: a small
        # form drawn thousands of times (or nested forms drawing each other) costs what its size says.
        budget = _BUDGET.get()
        if budget is not None:
            for obj in streams:
                try:
                    size = len(pdfminer.pdftypes.stream_value(obj).get_data())
                except StreamTooLarge:
                    raise
                except Exception:        # pdfminer reports a broken stream its own way
                    continue
                budget.interpret(size)
        super().execute(streams)

    def do_gs(self, name: Any) -> None:
        try:
            states = resolve1(resolve1(self.resources).get("ExtGState"))
            params = resolve1(states.get(name.name if isinstance(name, PSLiteral) else name))
            ca = resolve1(params.get("ca"))
        except Exception:  # a missing or malformed ExtGState leaves the state as it was
            return
        if isinstance(ca, (int, float)) and not isinstance(ca, bool):
            self.graphicstate.alpha = min(max(float(ca), 0.0), 1.0)


class _Aggregator(PDFPageAggregator):
    """Builds the same layout as TextConverter, with each LTChar carrying `scan_attrs`.

    Like TextConverter it drops paths and images from the layout (so the text layout is identical); image
    bboxes are only recorded for the coverage figure.
    """

    def __init__(self, rsrcmgr: PDFResourceManager, laparams: LAParams) -> None:
        super().__init__(rsrcmgr, laparams=laparams)
        self.crop: Rect = (0.0, 0.0, 0.0, 0.0)
        self.image_boxes: list[Rect] = []
        # Drawing order of characters and images, to tell text painted over by a later image.
        self._drawn: list[tuple[int, Any]] = []
        self._image_seq: list[tuple[int, Rect]] = []
        self._style: tuple[Optional[int], Fill, Optional[float]] = (0, None, None)

    def begin_page(self, page: PDFPage, ctm: Any) -> None:
        super().begin_page(page, ctm)
        self.cur_item = _Page(self.cur_item.pageid, self.cur_item.bbox)
        # Layout coordinates are the page's user space moved (and rotated) by ctm; put the CropBox there too.
        x0, y0, x1, y1 = apply_matrix_rect(ctm, page.cropbox)
        self.crop = (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))
        self.image_boxes = []
        self._drawn = []
        self._image_seq = []

    def end_page(self, page: PDFPage) -> None:
        self._mark_covered()
        super().end_page(page)

    def _mark_covered(self) -> None:
        """Flag characters whose centre lies under an image drawn after them (text hidden behind a picture)."""
        if not self._image_seq:
            return
        last_image = max(seq for seq, _ in self._image_seq)
        for seq, char in self._drawn:
            if seq > last_image:
                continue
            cx, cy = (char.x0 + char.x1) / 2, (char.y0 + char.y1) / 2
            for iseq, (x0, y0, x1, y1) in self._image_seq:
                if iseq > seq and x0 <= cx <= x1 and y0 <= cy <= y1:
                    char.scan_attrs = char.scan_attrs[:5] + (True,)
                    break

    def paint_path(self, gstate: Any, stroke: bool, fill: bool, evenodd: bool, path: Any) -> None:
        pass

    def render_image(self, name: str, stream: Any) -> None:
        fig = self.cur_item
        box = (fig.x0, fig.y0, fig.x1, fig.y1)
        self.image_boxes.append(box)
        self._image_seq.append((len(self._drawn) + len(self._image_seq), box))

    def render_string(self, textstate: Any, seq: Any, ncs: Any, graphicstate: Any) -> None:
        # Render mode, colour and alpha are fixed for one text-showing operator: work them out once here.
        mode = textstate.render if isinstance(textstate.render, int) else None
        self._style = (mode, _rgb(ncs, graphicstate.ncolor), getattr(graphicstate, "alpha", None))
        super().render_string(textstate, seq, ncs, graphicstate)

    def render_char(self, matrix: Any, font: Any, fontsize: float, scaling: float, rise: float, cid: int,
                    ncs: Any, graphicstate: Any) -> float:
        adv = super().render_char(matrix, font, fontsize, scaling, rise, cid, ncs, graphicstate)
        char = self.cur_item._objs[-1]  # the LTChar the base class just added
        cx0, cy0, cx1, cy1 = self.crop
        outside = char.x1 <= cx0 or char.x0 >= cx1 or char.y1 <= cy0 or char.y0 >= cy1
        mode, fill, alpha = self._style
        char.scan_attrs = (mode, fill, round(char.size, 1), outside, alpha, False)
        self._drawn.append((len(self._drawn) + len(self._image_seq), char))
        return adv


def _rgb(ncs: Any, color: Any) -> Fill:
    """The fill colour as RGB 0..1, or None when the colour space does not say which colour it is."""
    name = getattr(ncs, "name", None)
    if name in ("Pattern", "Separation", "DeviceN", "Indexed", "Lab"):
        return None
    comps = (color,) if isinstance(color, (int, float)) else color
    if not isinstance(comps, tuple) or not all(isinstance(c, (int, float)) for c in comps):
        return None
    if len(comps) != getattr(ncs, "ncomponents", len(comps)):
        return None  # `cs` switched space without setting a colour; pdfminer keeps the stale value
    comps = tuple(min(max(float(c), 0.0), 1.0) for c in comps)
    if len(comps) == 1:
        rgb = comps * 3
    elif len(comps) == 3:
        rgb = comps
    elif len(comps) == 4:
        c, m, y, k = comps
        rgb = ((1 - c) * (1 - k), (1 - m) * (1 - k), (1 - y) * (1 - k))
    else:
        return None
    return tuple(round(v, 4) for v in rgb)


def _union_area(rects: list[Rect]) -> float:
    """Area covered by the union of rectangles (sweep over x slabs, merging y intervals)."""
    xs = sorted({x for r in rects for x in (r[0], r[2])})
    area = 0.0
    for xa, xb in zip(xs, xs[1:]):
        spans = sorted((r[1], r[3]) for r in rects if r[0] <= xa and r[2] >= xb)
        covered, lo, hi = 0.0, None, None
        for y0, y1 in spans:
            if hi is None or y0 > hi:
                if hi is not None:
                    covered += hi - lo
                lo, hi = y0, y1
            else:
                hi = max(hi, y1)
        if hi is not None:
            covered += hi - lo
        area += covered * (xb - xa)
    return area


def _image_coverage(boxes: list[Rect], crop: Rect) -> float:
    cx0, cy0, cx1, cy1 = crop
    crop_area = (cx1 - cx0) * (cy1 - cy0)
    if crop_area <= 0:
        return 0.0
    clipped = []
    for x0, y0, x1, y1 in boxes:
        x0, x1 = max(min(x0, x1), cx0), min(max(x0, x1), cx1)
        y0, y1 = max(min(y0, y1), cy0), min(max(y0, y1), cy1)
        if x1 > x0 and y1 > y0:
            clipped.append((x0, y0, x1, y1))
    if not clipped:
        return 0.0
    if len(clipped) > _MAX_IMAGES_FOR_UNION:
        covered = max((r[2] - r[0]) * (r[3] - r[1]) for r in clipped)
    else:
        covered = _union_area(clipped)
    return round(min(covered / crop_area, 1.0), 4)


def _walk_layout(ltpage: Any) -> tuple[list[str], list[Optional[_Attrs]], int]:
    """Text pieces in TextConverter's order, with the attributes of each (None for pdfminer's virtual chars)."""
    pieces: list[str] = []
    attrs: list[Optional[_Attrs]] = []
    chars = 0

    def walk(item: Any) -> None:
        nonlocal chars
        if isinstance(item, LTContainer):
            for child in item:
                walk(child)
        elif isinstance(item, LTText):
            pieces.append(item.get_text())
            if isinstance(item, LTChar):
                chars += 1
                attrs.append(getattr(item, "scan_attrs", _NO_ATTRS))
            else:
                attrs.append(None)
        if isinstance(item, LTTextBox):
            pieces.append("\n")
            attrs.append(None)

    walk(ltpage)
    return pieces, attrs, chars


def _runs(pieces: list[str], attrs: list[Optional[_Attrs]]) -> list[PdfRun]:
    # Virtual spaces/newlines take the attributes of the preceding real char (the following one at the start).
    last = next((a for a in attrs if a is not None), _NO_ATTRS)
    runs: list[PdfRun] = []
    pos = 0
    cur: Optional[_Attrs] = None
    cur_start = 0
    for piece, a in zip(pieces, attrs):
        if a is None:
            a = last
        else:
            last = a
        if not piece:
            continue
        if a != cur:
            if cur is not None:
                runs.append(PdfRun(cur_start, pos, *cur))
            cur, cur_start = a, pos
        pos += len(piece)
    if cur is not None:
        runs.append(PdfRun(cur_start, pos, *cur))
    return runs


def _box(rect: Any) -> Rect:
    try:
        return tuple(float(v) for v in rect)[:4]  # type: ignore[return-value]
    except Exception:
        return (0.0, 0.0, 0.0, 0.0)


@dataclass
class PageLayout:
    """One page as pdfminer lays it out, for code that needs more than the page text (fixture classification).

    `layout` is pdfminer's LTPage; each of its LTChar carries `scan_attrs` = (render mode, fill, font size,
    outside the crop box, alpha, covered by a later image), the attributes PdfRun keeps.
    """

    number: int
    layout: LTPage
    image_coverage: float       # as PdfPage.image_coverage
    has_images: bool


def layout_page(page: PDFPage, number: int, rsrcmgr: PDFResourceManager, laparams: LAParams) -> PageLayout:
    """Interpret and lay out one page. With other LAParams than the loader's the text order may differ."""
    device = _Aggregator(rsrcmgr, laparams)
    _Interpreter(rsrcmgr, device).process_page(page)
    return PageLayout(number=number, layout=device.get_result(),
                      image_coverage=_image_coverage(device.image_boxes, device.crop),
                      has_images=bool(device.image_boxes))


def _read_page(page: PDFPage, number: int, rsrcmgr: PDFResourceManager, laparams: LAParams) -> PdfPage:
    laid = layout_page(page, number, rsrcmgr, laparams)
    pieces, attrs, chars = _walk_layout(laid.layout)
    return PdfPage(
        number=number,
        text="".join(pieces),
        runs=_runs(pieces, attrs),
        mediabox=_box(page.mediabox),
        cropbox=_box(page.cropbox),
        image_coverage=laid.image_coverage,
        has_images=laid.has_images,
        char_count=chars,
    )


def _decode(value: Any) -> Optional[str]:
    value = resolve1(value)
    if isinstance(value, bytes):
        if value.startswith(b"\xef\xbb\xbf"):  # PDF 2.0 allows UTF-8 text strings; decode_text does not
            return value[3:].decode("utf-8", "replace")
        return decode_text(value)
    if isinstance(value, str):
        return value
    return None


def _info_strings(doc: PDFDocument, problems: list[str]) -> Iterator[tuple[str, str]]:
    """(key, value) for the information dictionary strings, each distinct value once, newest trailer first."""
    seen: set[tuple[str, str]] = set()
    for info in doc.info:
        try:
            info = resolve1(info)
            if not isinstance(info, dict):
                continue
            for key in INFO_KEYS:
                text = _decode(info.get(key))
                if text and text.strip() and (key, text) not in seen:
                    seen.add((key, text))
                    yield key, text
        except Exception as e:
            problems.append(f"document information: {_reason(e)}")


def _reason(e: BaseException) -> str:
    text = " ".join(str(e).split())
    text = f"{type(e).__name__}: {text}" if text else type(e).__name__
    return text[:200]


@contextlib.contextmanager
def quiet_pdfminer() -> Iterator[None]:
    # pdfminer logs a warning for every oddity of a real-world file; only errors are worth seeing.
    logger = logging.getLogger("pdfminer")
    old = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(old)


class StreamTooLarge(Exception):
    """A PDF's streams decode (or its content is interpreted) past what DecodeBudget allows."""


@dataclass
class DecodeBudget:
    """What the streams of one PDF may decode to, in all, and what of it may be interpreted as content."""

    limit: int                  # decoded bytes, all stages of all streams
    interpret_limit: int = MAX_DOCUMENT_BYTES
    decoded: int = 0            # bytes out of every decoding stage of every stream so far
    interpreted: int = 0        # bytes of content streams handed to the interpreter so far
    exceeded: Optional[str] = None

    @classmethod
    def for_file(cls, size: int) -> "DecodeBudget":
        return cls(min(MAX_DOCUMENT_BYTES, max(DOCUMENT_FLOOR, DOCUMENT_RATIO * size)),
                   min(MAX_DOCUMENT_BYTES, max(INTERPRET_FLOOR, INTERPRET_RATIO * size)))

    def stage_limit(self, encoded: int) -> int:
        """The most one decoding stage of a stream of `encoded` bytes may produce now."""
        return max(0, min(MAX_STREAM_BYTES, max(STREAM_FLOOR, STREAM_RATIO * encoded), self.limit - self.decoded))

    def fail(self, reason: str) -> None:
        self.exceeded = self.exceeded or reason
        raise StreamTooLarge(self.exceeded)

    def over(self, encoded: int) -> None:
        """A stage of a stream of `encoded` bytes would produce more than stage_limit allows: say which bound."""
        mb = 1 << 20
        if self.limit - self.decoded < min(MAX_STREAM_BYTES, max(STREAM_FLOOR, STREAM_RATIO * encoded)):
            self.fail(f"its streams decode to more than {self.limit / mb:.0f} MB in all ({DOCUMENT_RATIO}× the "
                      f"file's size, at least {DOCUMENT_FLOOR // mb} MB)")
        if STREAM_RATIO * encoded >= MAX_STREAM_BYTES:
            self.fail(f"a stream decodes to more than {MAX_STREAM_BYTES // mb} MB")
        self.fail(f"a stream of {encoded:,} bytes decodes to more than "
                  f"{max(STREAM_FLOOR, STREAM_RATIO * encoded) / mb:.1f} MB ({STREAM_RATIO}× its size, "
                  f"at least {STREAM_FLOOR // mb} MB)")

    def charge(self, produced: int) -> None:
        self.decoded += produced

    def interpret(self, size: int) -> None:
        if self.interpreted + size <= self.interpret_limit:
            self.interpreted += size
        else:
            self.fail(f"its content is more than {self.interpret_limit / (1 << 20):.1f} MB to interpret "
                      f"({INTERPRET_RATIO}× the file's size, at least {INTERPRET_FLOOR >> 20} MB; a form drawn "
                      "again and again?)")


# The budget of the PDF this context is reading, and the encoded size of the stream being decoded. Outside
# `bounded_decoding()` both are unset and the decoders below are exactly pdfminer's.
_BUDGET: ContextVar[Optional[DecodeBudget]] = ContextVar("centinela_pdf_budget", default=None)
_ENCODED: ContextVar[int] = ContextVar("centinela_pdf_encoded", default=0)


@contextlib.contextmanager
def bounded_decoding(budget: DecodeBudget) -> Iterator[DecodeBudget]:
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)


def _stage() -> tuple[Optional[DecodeBudget], int]:
    budget = _BUDGET.get()
    return budget, (budget.stage_limit(_ENCODED.get()) if budget is not None else 0)


def _produced(budget: Optional[DecodeBudget], out, limit: int):
    if budget is not None:
        if len(out) > limit:
            budget.charge(limit)
            budget.over(_ENCODED.get())
        budget.charge(len(out))
    return out


class _BoundedZlib:
    """What pdfminer's stream decoder sees as `zlib`: `decompress` stops at the stage limit; otherwise the same
    results and errors as zlib.decompress (trailing bytes after the stream are ignored, a truncated stream is
    an error)."""

    error = zlib.error
    decompressobj = staticmethod(zlib.decompressobj)

    @staticmethod
    def decompress(data: bytes) -> bytes:
        budget, limit = _stage()
        if budget is None:
            return zlib.decompress(data)
        d = zlib.decompressobj()
        out = d.decompress(data, limit + 1)
        if len(out) > limit:
            _produced(budget, out, limit)            # raises: not one byte more is decoded
        if not d.eof:
            raise zlib.error("Error -5 while decompressing data: incomplete or truncated stream")
        budget.charge(len(out))
        return out


def _bounded_corrupted(data: bytes) -> bytes:
    """pdfminer's decompress_corrupted (a stream whose checksum is broken: keep what decodes, unless the error
    comes before the last 3 bytes), in linear time — pdfminer feeds it byte by byte and concatenates — and
    bounded: 4 KB at a time, byte by byte only inside the 4 KB that fails."""
    budget, limit = _stage()
    d = zlib.decompressobj()
    out = bytearray()
    pos = 0
    while pos < len(data):
        chunk = data[pos:pos + 4096]
        saved = d.copy()
        try:
            out += d.decompress(chunk)
        except zlib.error:
            d = saved
            for j in range(len(chunk)):
                try:
                    out += d.decompress(chunk[j:j + 1])
                except zlib.error:
                    if pos + j < len(data) - 3:      # not yet in the checksum: pdfminer lets it propagate too
                        raise
                    return bytes(_produced(budget, out, limit))
        if budget is not None and len(out) > limit:
            _produced(budget, out, limit)
        pos += len(chunk)
    return bytes(_produced(budget, out, limit))


def _bounded_lzw(data: bytes) -> bytes:
    budget, limit = _stage()
    if budget is None:
        return _PDFMINER["lzwdecode"](data)
    out = bytearray()
    for chunk in LZWDecoder(io.BytesIO(data)).run():
        out += chunk
        if len(out) > limit:
            _produced(budget, out, limit)
    return bytes(_produced(budget, out, limit))


def _bounded_runlength(data: bytes) -> bytes:
    """RunLengthDecode (PDF 1.7 §7.4.5) with bytes operations and the stage limit; pdfminer's builds a list
    of ints. The same output for valid data; data that ends inside a run is an error, as in pdfminer."""
    budget, limit = _stage()
    if budget is None:
        return _PDFMINER["rldecode"](data)
    out = bytearray()
    i, n = 0, len(data)
    while i < n:
        length = data[i]
        i += 1
        if length == 128:
            break
        if length < 128:
            if i + length + 1 > n:
                raise ValueError("run-length data ends inside a literal run")
            out += data[i:i + length + 1]
            i += length + 1
        else:
            if i >= n:
                raise ValueError("run-length data ends inside a repeated run")
            out += data[i:i + 1] * (257 - length)
            i += 1
        if len(out) > limit:
            _produced(budget, out, limit)
    return bytes(_produced(budget, out, limit))


def _counted(name: str):
    """An ASCII decoder (at most 4 bytes out per byte in), counted against the budget."""
    original = _PDFMINER[name]

    def decode(data: bytes) -> bytes:
        budget, limit = _stage()
        return _produced(budget, original(data), limit)
    return decode


def _ccitt_not_decoded(data: bytes, params: Any) -> bytes:
    # A fax-coded stream is an image, and images are never decoded here; a content, font or xref stream that
    # claims to be one is left as it is, like DCT, JBIG2 and JPX data (pdfminer's decoder is pure Python and
    # its output size is the image's, not the stream's).
    if _BUDGET.get() is None:
        return _PDFMINER["ccittfaxdecode"](data, params)
    return data


def _decode_stream(self: Any) -> None:
    """PDFStream.decode, with the encoded size of this stream known to the bounded decoders."""
    budget = _BUDGET.get()
    if budget is None:
        return _PDFMINER["decode"](self)
    if budget.exceeded:
        raise StreamTooLarge(budget.exceeded)
    token = _ENCODED.set(len(self.rawdata or b""))
    try:
        return _PDFMINER["decode"](self)
    finally:
        _ENCODED.reset(token)


# pdfminer's decoders, replaced once by bounded ones that behave exactly like them outside bounded_decoding()
# (no budget set in this context), so nothing changes for any other user of pdfminer, in any thread. The
# originals are kept on pdfminer's module, so importing this module again never wraps a wrapper.
_PDFMINER: dict = getattr(pdfminer.pdftypes, "_centinela_originals", None) or {
    "decode": pdfminer.pdftypes.PDFStream.decode, "lzwdecode": pdfminer.pdftypes.lzwdecode,
    "rldecode": pdfminer.pdftypes.rldecode, "ccittfaxdecode": pdfminer.pdftypes.ccittfaxdecode,
    "ascii85decode": pdfminer.pdftypes.ascii85decode, "asciihexdecode": pdfminer.pdftypes.asciihexdecode}
if not getattr(pdfminer.pdftypes, "_centinela_originals", None):
    pdfminer.pdftypes._centinela_originals = _PDFMINER
    pdfminer.pdftypes.zlib = _BoundedZlib
    pdfminer.pdftypes.decompress_corrupted = _bounded_corrupted
    pdfminer.pdftypes.lzwdecode = _bounded_lzw
    pdfminer.pdftypes.rldecode = _bounded_runlength
    pdfminer.pdftypes.ascii85decode = _counted("ascii85decode")
    pdfminer.pdftypes.asciihexdecode = _counted("asciihexdecode")
    pdfminer.pdftypes.ccittfaxdecode = _ccitt_not_decoded
    pdfminer.pdftypes.PDFStream.decode = _decode_stream


@contextlib.contextmanager
def reading_pdf(data: bytes, budget: Optional[DecodeBudget] = None) -> Iterator[DecodeBudget]:
    """Quiet pdfminer and bound every stream decoded while reading `data` (a budget for its size, unless one
    is given). Whoever reads a PDF with pdfminer does it inside this."""
    budget = budget or DecodeBudget.for_file(len(data))
    with quiet_pdfminer(), bounded_decoding(budget):
        yield budget


def load_pdf(data: bytes, path: str, budget: Optional[DecodeBudget] = None) -> Document:
    """Load a PDF's page text and metadata. Raises only LoadError (codes unparsed, encrypted,
    format_tables_ocr, too_large). `budget` (default: DecodeBudget.for_file) bounds what its streams decode to.
    Within a run (`scanner.loaders.pdfmemo.active`) bytes loaded before under the default budget are not laid
    out again."""
    memo = _pdfmemo.current() if budget is None else None
    if memo is not None:
        return memo.load(data, path, lambda: _load_bounded(data, path, None))
    return _load_bounded(data, path, budget)


def _load_bounded(data: bytes, path: str, budget: Optional[DecodeBudget]) -> Document:
    with reading_pdf(data, budget) as budget:
        try:
            doc = _load(data, path)
        except LoadError:
            raise
        except StreamTooLarge:
            pass
        except Exception as e:  # pdfminer fails on broken files with all kinds of built-in exceptions
            if budget.exceeded is None:
                raise LoadError(path, f"broken PDF: {_reason(e)}", "unparsed") from e
        if budget.exceeded is not None:   # also when pdfminer swallowed the error and went on with less
            raise LoadError(path, f"decompression bomb? {budget.exceeded}: not loaded", "too_large") from None
        return doc


def open_pdf(data: bytes, path: str) -> tuple[PDFDocument, list[PDFPage], list[str]]:
    """The document, its pages (read from the page tree, not laid out) and the problems met on the way.

    Raises LoadError (unparsed, encrypted) like load_pdf. Call it inside `reading_pdf(data)`."""
    if not data:
        raise LoadError(path, "not a PDF (empty file)", "unparsed")
    if b"%PDF-" not in data[:1024]:
        raise LoadError(path, "not a PDF (no %PDF header)", "unparsed")
    try:
        doc = PDFDocument(PDFParser(io.BytesIO(data)), password="")
    except PDFPasswordIncorrect as e:
        raise LoadError(path, "encrypted PDF: cannot extract text without a password", "encrypted") from e
    except PDFEncryptionError as e:
        raise LoadError(path, f"encrypted PDF: cannot decrypt ({_reason(e)})", "encrypted") from e

    problems: list[str] = []
    page_objs: list[PDFPage] = []
    try:
        for page in PDFPage.create_pages(doc):
            page_objs.append(page)
    except StreamTooLarge:
        raise
    except Exception as e:
        if not page_objs:
            raise LoadError(path, f"broken PDF: page tree unreadable ({_reason(e)})", "unparsed") from e
        problems.append(f"page tree: {_reason(e)} (kept the first {len(page_objs)} pages)")
    if not page_objs:
        raise LoadError(path, "broken PDF: no pages found", "unparsed")
    return doc, page_objs, problems


def _load(data: bytes, path: str) -> Document:
    doc, page_objs, problems = open_pdf(data, path)
    rsrcmgr = PDFResourceManager(caching=True)
    laparams = LAParams()
    pages: list[PdfPage] = []
    failed = 0
    for number, page in enumerate(page_objs, start=1):
        try:
            pages.append(_read_page(page, number, rsrcmgr, laparams))
        except StreamTooLarge:
            raise
        except Exception as e:
            failed += 1
            problems.append(f"page {number}: {_reason(e)}")
            # Keep a placeholder so pages[N-1] is always page N.
            pages.append(PdfPage(number=number, text="", mediabox=_box(getattr(page, "mediabox", None)),
                                 cropbox=_box(getattr(page, "cropbox", None))))
    if failed == len(pages):
        raise LoadError(path, f"broken PDF: no page could be read ({problems[-1]})", "unparsed")

    if not any(p.char_count for p in pages) and any(p.has_images for p in pages):
        raise LoadError(path, "scanned PDF with no text layer: needs OCR (format_tables_ocr)", "format_tables_ocr")

    units: list[TextUnit] = []
    for page in pages:
        for run in page.runs:
            text = page.text[run.start:run.end]
            if not text.strip():
                continue
            units.append(TextUnit(
                text=text, channel=Channel.PDF_TEXT, start=run.start, end=run.end,
                map=OffsetMap.identity(run.start, run.end - run.start), page=page.number,
                locator=f"page {page.number}",
                attrs={"render_mode": run.render_mode, "fill": run.fill, "font_size": run.font_size,
                       "outside_cropbox": run.outside_cropbox, "alpha": run.alpha, "covered_by_image": run.covered_by_image,
                       "image_coverage": page.image_coverage},
            ))

    producer = None
    for key, text in _info_strings(doc, problems):
        if key == "Producer" and producer is None:
            producer = text
        units.append(TextUnit(text=text, channel=Channel.PDF_METADATA, start=0, end=len(text),
                              map=OffsetMap.identity(0, len(text)), page=None, locator=f"/{key}"))

    return Document(
        path=path, kind="pdf", text="", units=units, pages=pages, problems=problems,
        meta={"page_count": len(pages), "encrypted": doc.encryption is not None, "producer": producer},
    )
