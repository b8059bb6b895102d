"""Tests for scanner.loaders.pdf: attributes of generated PDFs, the page-text contract, and real-world files.

Test PDFs are written by hand below (standard Helvetica, exact xref offsets) so each test controls precisely
which operator produced which text.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import itertools
import logging
import random
import struct
from pathlib import Path

import pdfminer.layout
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pdfminer.high_level import extract_text
from pdfminer.layout import LAParams

from scanner.loaders.pdf import PdfPage, load_pdf
from scanner.pdfwriter import assemble
from scanner.units import Channel, Document, LoadError

from conftest import SHARED  # noqa: E402  (../shared, or CENTINELA_SHARED)
REALDATA = SHARED / "realdata" / "pdf"


# --- a minimal PDF writer --------------------------------------------------------------------------------

def _stream(data: bytes, extra: bytes = b"") -> bytes:
    return b"<< /Length %d %s >>\nstream\n" % (len(data), extra) + data + b"\nendstream"


def _assemble(objects: dict[int, bytes], trailer: bytes) -> bytes:
    """Objects numbered 1..n, a classic xref table with real offsets, and the trailer entries given."""
    return assemble(objects, trailer)


FONT, IMAGE, INFO, ENCRYPT, FORM, FIRST_PAGE = 3, 4, 5, 6, 7, 10


def make_pdf(contents: list[bytes], *, mediabox=(0, 0, 300, 300), cropbox=None, info: dict[str, str | bytes] | None = None,
             encrypt=None, form: bytes = b"") -> bytes:
    """One page per content stream. Resources: /F1 Helvetica, /Im1 a 1x1 grey image, /Fm1 a form XObject
    whose content is `form`, /GS0 (ca 0.25), /GS1 (ca 0). `encrypt(objnum, data) -> bytes` encrypts streams
    and strings, with its dict and /ID given as `encrypt.dict` and `encrypt.id`."""
    crypt = encrypt or (lambda num, data: data)
    objects: dict[int, bytes] = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        FONT: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        IMAGE: _stream(crypt(IMAGE, b"\x80"), b"/Type /XObject /Subtype /Image /Width 1 /Height 1 "
                                               b"/ColorSpace /DeviceGray /BitsPerComponent 8"),
        FORM: _stream(crypt(FORM, form), b"/Type /XObject /Subtype /Form /BBox [0 0 300 300] "
                                         b"/Resources << /Font << /F1 %d 0 R >> >>" % FONT),
    }
    kids = []
    box = b"/MediaBox [%s]" % b" ".join(b"%g" % v for v in mediabox)
    if cropbox is not None:
        box += b" /CropBox [%s]" % b" ".join(b"%g" % v for v in cropbox)
    for i, content in enumerate(contents):
        page, stream = FIRST_PAGE + 2 * i, FIRST_PAGE + 2 * i + 1
        kids.append(b"%d 0 R" % page)
        objects[page] = (b"<< /Type /Page /Parent 2 0 R %s /Contents %d 0 R /Resources << /Font << /F1 %d 0 R >> "
                         b"/XObject << /Im1 %d 0 R /Fm1 %d 0 R >> /ExtGState << /GS0 << /ca 0.25 >> /GS1 << /ca 0 >> >> >> >>"
                         % (box, stream, FONT, IMAGE, FORM))
        objects[stream] = _stream(crypt(stream, content))
    objects[2] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(kids), len(kids))
    trailer = b"/Root 1 0 R"
    if info:
        objects[INFO] = b"<< %s >>" % b" ".join(
            b"/%s <%s>" % (k.encode(), crypt(INFO, v if isinstance(v, bytes) else v.encode("latin-1")).hex().encode())
            for k, v in info.items())
        trailer += b" /Info %d 0 R" % INFO
    if encrypt:
        objects[ENCRYPT] = encrypt.dict
        trailer += b" /Encrypt %d 0 R /ID [<%s> <%s>]" % (ENCRYPT, encrypt.id.hex().encode(), encrypt.id.hex().encode())
    return _assemble(objects, trailer)


def text_at(x: float, y: float, s: str, ops: str = "", size: float = 12) -> bytes:
    return f"BT {ops} /F1 {size} Tf {x} {y} Td ({s}) Tj ET\n".encode("latin-1")


# --- PDF standard security handler, revision 2 (40-bit RC4), for a real encrypted file --------------------

_PAD = bytes.fromhex("28bf4e5e4e758a4164004e56fffa01082e2e00b6d0683e802f0ca9fe6453697a")


def _rc4(key: bytes, data: bytes) -> bytes:
    s = list(range(256))
    j = 0
    for i in range(256):
        j = (j + s[i] + key[i % len(key)]) % 256
        s[i], s[j] = s[j], s[i]
    out = bytearray()
    i = j = 0
    for byte in data:
        i = (i + 1) % 256
        j = (j + s[i]) % 256
        s[i], s[j] = s[j], s[i]
        out.append(byte ^ s[(s[i] + s[j]) % 256])
    return bytes(out)


class Rc4R2:
    """Encrypts objects as the R2 handler does; `dict` is the /Encrypt dictionary (algorithms 2, 3, 4)."""

    def __init__(self, user: str, owner: str):
        self.id = hashlib.md5(b"test-id").digest()
        pad = lambda pw: (pw.encode("latin-1") + _PAD)[:32]  # noqa: E731
        o = _rc4(hashlib.md5(pad(owner)).digest()[:5], pad(user))
        p = -44  # print + copy allowed, the rest not: any value works, it only enters the key
        self.key = hashlib.md5(pad(user) + o + struct.pack("<i", p) + self.id).digest()[:5]
        u = _rc4(self.key, _PAD)
        self.dict = b"<< /Filter /Standard /V 1 /R 2 /Length 40 /P %d /O <%s> /U <%s> >>" % (
            p, o.hex().encode(), u.hex().encode())

    def __call__(self, num: int, data: bytes) -> bytes:
        key = hashlib.md5(self.key + struct.pack("<i", num)[:3] + b"\x00\x00").digest()[:10]
        return _rc4(key, data)


# --- helpers ------------------------------------------------------------------------------------------------

@contextlib.contextmanager
def pdfminer_ties(next_key):
    """Make pdfminer break text-box grouping ties by `next_key()` values instead of by memory address.

    pdfminer.layout's group_textboxes keys its heap on (…, distance, id(a), id(b)), so boxes at equal
    distances are grouped in address order, which varies between runs. The name `id` is looked up in the
    module globals first, so shadowing it there changes only the tie-break.
    """
    def key(obj):
        if "_test_key" not in obj.__dict__:
            obj.__dict__["_test_key"] = next_key()
        return obj.__dict__["_test_key"]

    pdfminer.layout.id = key
    try:
        yield
    finally:
        del pdfminer.layout.id


def creation_order_ties():
    return pdfminer_ties(itertools.count().__next__)


def pdfminer_page_texts(data: bytes, page_count: int) -> list[str]:
    """The contract: extract_text for each page on its own, without the trailing form feed."""
    return list(pdfminer_texts_of(data, range(1, page_count + 1)).values())


def pdfminer_texts_of(data: bytes, numbers) -> dict[int, str]:
    """extract_text of each of the pages `numbers` (1-based) on its own, without the trailing form feed."""
    texts = {}
    for n in numbers:
        text = extract_text(io.BytesIO(data), page_numbers=[n - 1], laparams=LAParams())
        assert text.endswith("\x0c")
        texts[n] = text[:-1]
    return texts


def sample_pages(page_count: int) -> list[int]:
    """The pages of a long real file compared with pdfminer: the first, the middle and the last (extract_text
    lays out a page as the load does, so comparing every page doubles the file's cost; each file is still loaded
    whole and every page checked for structure)."""
    return sorted({1, (page_count + 1) // 2, page_count})


def check_page_texts(doc: Document, data: bytes, skip: set[int] = frozenset(), pages: list[int] | None = None) -> list[int]:
    """Each page text (of `pages`, default all) equals extract_text's. Returns the pages where it equals it only
    up to the order of text boxes that pdfminer leaves to memory addresses; for those, it must equal extract_text
    exactly once ties are broken by creation order, and the plain run must hold the same lines."""
    numbers = [p.number for p in doc.pages] if pages is None else [n for n in pages if 1 <= n <= len(doc.pages)]
    plain = pdfminer_texts_of(data, numbers)
    differ = [n for n in numbers if n not in skip and doc.pages[n - 1].text != plain[n]]
    if differ:
        with creation_order_ties():
            ordered = pdfminer_texts_of(data, differ)
        for n in differ:
            page = doc.pages[n - 1]
            assert page.text == ordered[n], f"page {n} differs from extract_text (creation-order ties)"
            assert sorted(page.text.split("\n")) == sorted(plain[n].split("\n")), f"page {n}: not a reordering"
    return differ


def runs_covering(page: PdfPage, word: str) -> list:
    """The runs that overlap the first occurrence of `word` in the page text."""
    i = page.text.find(word)
    assert i >= 0, f"{word!r} not in page text {page.text!r}"
    j = i + len(word)
    return [r for r in page.runs if r.start < j and r.end > i]


def attr_of(doc: Document, word: str, name: str):
    values = {getattr(r, name) for r in runs_covering(doc.pages[0], word)}
    assert len(values) == 1, f"{word!r} spans runs with different {name}: {values}"
    return values.pop()


def check_runs(page) -> None:
    """The page's runs tile its text, and each is maximal (no two neighbours share every attribute)."""
    pos = 0
    for run in page.runs:
        assert run.start == pos and run.end > run.start
        pos = run.end
    assert pos == len(page.text)
    for a, b in zip(page.runs, page.runs[1:]):
        assert (a.render_mode, a.fill, a.font_size, a.outside_cropbox, a.alpha, a.covered_by_image) != \
               (b.render_mode, b.fill, b.font_size, b.outside_cropbox, b.alpha, b.covered_by_image)


def check_structure(doc: Document, data: bytes, pages: list[int] | None = None) -> list[int]:
    """Offsets, runs and units are consistent, and each page text is what pdfminer itself extracts
    (up to pdfminer's address-dependent box order, see check_page_texts). Returns the reordered pages."""
    assert doc.meta["page_count"] == len(doc.pages)
    for n, page in enumerate(doc.pages, start=1):
        assert page.number == n
        check_runs(page)
        assert 0.0 <= page.image_coverage <= 1.0
    for unit in doc.units:
        if unit.channel is Channel.PDF_TEXT:
            page = doc.pages[unit.page - 1]
            assert page.text[unit.start:unit.end] == unit.text
            assert unit.text.strip()
            assert unit.source_span(0, len(unit.text)) == (unit.start, unit.end)
        else:
            assert unit.channel is Channel.PDF_METADATA and unit.page is None
            assert (unit.start, unit.end) == (0, len(unit.text)) and unit.locator.startswith("/")
    failed = {int(p.split(":")[0].split()[1]) for p in doc.problems if p.startswith("page ")}
    return check_page_texts(doc, data, skip=failed, pages=pages)


# --- attributes on generated PDFs ---------------------------------------------------------------------------

def test_render_modes():
    data = make_pdf([text_at(20, 250, "Visible words") + text_at(20, 200, "Invisible words", "3 Tr")
                     + text_at(20, 150, "Clipping words", "7 Tr") + text_at(20, 100, "Outline words", "1 Tr")])
    doc = load_pdf(data, "modes.pdf")
    assert attr_of(doc, "Visible words", "render_mode") == 0
    assert attr_of(doc, "Invisible words", "render_mode") == 3
    assert attr_of(doc, "Clipping words", "render_mode") == 7
    assert attr_of(doc, "Outline words", "render_mode") == 1
    hidden = [u for u in doc.units if u.attrs["render_mode"] == 3]
    assert [u.text.strip() for u in hidden] == ["Invisible words"]
    check_structure(doc, data)


def test_render_mode_does_not_leak_across_q_Q():
    data = make_pdf([b"q " + text_at(20, 250, "Hidden first", "3 Tr") + b"Q " + text_at(20, 200, "Shown after")])
    doc = load_pdf(data, "q.pdf")
    assert attr_of(doc, "Hidden first", "render_mode") == 3
    assert attr_of(doc, "Shown after", "render_mode") == 0


def test_fill_colours_normalised_to_rgb():
    data = make_pdf([text_at(20, 260, "Black default") + text_at(20, 230, "White text", "1 1 1 rg")
                     + text_at(20, 200, "Grey text", "0.5 g") + text_at(20, 170, "Cmyk black", "0 0 0 1 k")
                     + text_at(20, 140, "Cmyk cyan", "1 0 0 0 k") + text_at(20, 110, "Red text", "1 0 0 rg")
                     + text_at(20, 80, "Via scn", "/DeviceRGB cs 0 0 1 sc")])
    doc = load_pdf(data, "colours.pdf")
    assert attr_of(doc, "Black default", "fill") == (0.0, 0.0, 0.0)
    assert attr_of(doc, "White text", "fill") == (1.0, 1.0, 1.0)
    assert attr_of(doc, "Grey text", "fill") == (0.5, 0.5, 0.5)
    assert attr_of(doc, "Cmyk black", "fill") == (0.0, 0.0, 0.0)
    assert attr_of(doc, "Cmyk cyan", "fill") == (0.0, 1.0, 1.0)
    assert attr_of(doc, "Red text", "fill") == (1.0, 0.0, 0.0)
    assert attr_of(doc, "Via scn", "fill") == (0.0, 0.0, 1.0)
    white = [u for u in doc.units if u.attrs["fill"] == (1.0, 1.0, 1.0)]
    assert [u.text.strip() for u in white] == ["White text"]
    check_structure(doc, data)


def test_font_size_is_effective_size():
    data = make_pdf([text_at(20, 250, "Normal size") + text_at(20, 200, "Tiny size", size=0.5)
                     + b"q 0.05 0 0 0.05 20 150 cm " + text_at(0, 0, "Scaled down", size=12) + b"Q\n"])
    doc = load_pdf(data, "sizes.pdf")
    assert attr_of(doc, "Normal size", "font_size") == 12.0
    assert attr_of(doc, "Tiny size", "font_size") < 1
    # 12 pt under a 0.05 CTM scale is 0.6 pt on the page
    assert attr_of(doc, "Scaled down", "font_size") == pytest.approx(0.6, abs=0.05)
    check_structure(doc, data)


def test_outside_cropbox():
    data = make_pdf([text_at(20, 20, "Inside crop") + text_at(250, 250, "Beyond crop")
                     + text_at(20, -50, "Below page")],
                    mediabox=(0, 0, 300, 300), cropbox=(0, 0, 200, 200))
    doc = load_pdf(data, "crop.pdf")
    assert attr_of(doc, "Inside crop", "outside_cropbox") is False
    assert attr_of(doc, "Beyond crop", "outside_cropbox") is True
    assert attr_of(doc, "Below page", "outside_cropbox") is True
    page = doc.pages[0]
    assert page.mediabox == (0, 0, 300, 300) and page.cropbox == (0, 0, 200, 200)
    check_structure(doc, data)


def test_cropbox_with_offset_mediabox():
    # pdfminer's layout coordinates start at the MediaBox origin; the CropBox must be moved the same way.
    data = make_pdf([text_at(120, 120, "Inside crop") + text_at(20, 20, "Left of crop")],
                    mediabox=(100, 100, 400, 400), cropbox=(110, 110, 300, 300))
    doc = load_pdf(data, "offset.pdf")
    assert attr_of(doc, "Inside crop", "outside_cropbox") is False
    assert attr_of(doc, "Left of crop", "outside_cropbox") is True


def test_fill_alpha_from_extgstate():
    data = make_pdf([text_at(20, 250, "Opaque words") + b"q /GS0 gs " + text_at(20, 200, "Faint words")
                     + b"/GS1 gs " + text_at(20, 150, "Transparent words") + b"Q " + text_at(20, 100, "Opaque again")])
    doc = load_pdf(data, "alpha.pdf")
    assert attr_of(doc, "Opaque words", "alpha") == 1.0
    assert attr_of(doc, "Faint words", "alpha") == 0.25
    assert attr_of(doc, "Transparent words", "alpha") == 0.0
    assert attr_of(doc, "Opaque again", "alpha") == 1.0
    check_structure(doc, data)


def test_form_xobject_inherits_mode_fill_and_alpha_at_do():
    # The form's text sets none of these itself, so it is drawn with the state in force at `Do`.
    form = text_at(20, 250, "Form words")
    data = make_pdf([b"q 3 Tr /Fm1 Do Q", b"q 1 1 1 rg /Fm1 Do Q", b"q /GS1 gs /Fm1 Do Q", b"/Fm1 Do"], form=form)
    doc = load_pdf(data, "form.pdf")
    runs = [runs_covering(page, "Form words") for page in doc.pages]
    assert all(len(r) == 1 for r in runs)
    assert [(r[0].render_mode, r[0].fill, r[0].alpha) for r in runs] == [
        (3, (0.0, 0.0, 0.0), 1.0), (0, (1.0, 1.0, 1.0), 1.0), (0, (0.0, 0.0, 0.0), 0.0), (0, (0.0, 0.0, 0.0), 1.0)]
    check_structure(doc, data)


def test_form_xobject_own_settings_win():
    form = b"0 Tr 0 0 1 rg " + text_at(20, 250, "Form words")
    data = make_pdf([b"q 3 Tr 1 1 1 rg /Fm1 Do Q " + text_at(20, 100, "Page words")], form=form)
    doc = load_pdf(data, "form.pdf")
    assert attr_of(doc, "Form words", "render_mode") == 0
    assert attr_of(doc, "Form words", "fill") == (0.0, 0.0, 1.0)
    assert attr_of(doc, "Page words", "render_mode") == 0  # Q restored the page state
    check_structure(doc, data)


def test_virtual_chars_take_preceding_attributes():
    # "Shown" then hidden text on the same line: pdfminer inserts a space between them, which belongs to
    # the run of "Shown" (the preceding real char).
    data = make_pdf([b"BT /F1 12 Tf 20 250 Td (Shown) Tj 3 Tr 40 0 Td (Hidden) Tj ET\n"])
    doc = load_pdf(data, "line.pdf")
    page = doc.pages[0]
    assert page.text == "Shown Hidden\n\n"  # end of line, then end of text box
    assert [(r.start, r.end, r.render_mode) for r in page.runs] == [(0, 6, 0), (6, 14, 3)]
    check_structure(doc, data)


def test_image_coverage_and_has_images():
    full = b"q 300 0 0 300 0 0 cm /Im1 Do Q\n"
    quarter = b"q 150 0 0 150 0 0 cm /Im1 Do Q\n"
    overlapping = b"q 150 0 0 150 0 0 cm /Im1 Do Q q 150 0 0 150 75 0 cm /Im1 Do Q\n"
    data = make_pdf([full + text_at(20, 20, "Over image", "3 Tr"), quarter + text_at(20, 20, "Quarter"),
                     overlapping + text_at(20, 20, "Union"), text_at(20, 20, "No image")])
    doc = load_pdf(data, "images.pdf")
    assert [p.has_images for p in doc.pages] == [True, True, True, False]
    assert [p.image_coverage for p in doc.pages] == [1.0, 0.25, 0.375, 0.0]
    unit = next(u for u in doc.units if "Over image" in u.text)
    assert unit.attrs["image_coverage"] == 1.0 and unit.attrs["render_mode"] == 3
    check_structure(doc, data)


def test_multi_page_units_and_metadata():
    data = make_pdf([text_at(20, 250, "First page"), text_at(20, 250, "Second page")],
                    info={"Author": "Ana Ruiz", "Title": "Informe", "Producer": "handmade"})
    doc = load_pdf(data, "multi.pdf")
    assert doc.kind == "pdf" and doc.text == "" and doc.path == "multi.pdf"
    assert doc.meta == {"page_count": 2, "encrypted": False, "producer": "handmade"}
    assert [(u.page, u.text.strip(), u.locator) for u in doc.units if u.channel is Channel.PDF_TEXT] == \
           [(1, "First page", "page 1"), (2, "Second page", "page 2")]
    meta = {u.locator: u.text for u in doc.units if u.channel is Channel.PDF_METADATA}
    assert meta == {"/Author": "Ana Ruiz", "/Title": "Informe", "/Producer": "handmade"}
    check_structure(doc, data)


def test_utf16_and_pdfdoc_metadata_are_decoded():
    title = "\ufeffJosé Ñandú".encode("utf-16-be")  # UTF-16BE with its byte order mark
    subject = "Año".encode("latin-1")               # PDFDocEncoding: ñ is the same byte as in Latin-1
    data = make_pdf([text_at(20, 250, "Body")], info={"Title": title, "Subject": subject, "Keywords": b""})
    doc = load_pdf(data, "utf16.pdf")
    meta = {u.locator: u.text for u in doc.units if u.channel is Channel.PDF_METADATA}
    assert meta == {"/Title": "José Ñandú", "/Subject": "Año"}  # empty /Keywords gives no unit


def test_encrypted_with_empty_user_password_loads():
    enc = Rc4R2(user="", owner="owner-secret")
    data = make_pdf([text_at(20, 250, "Readable anyway")], info={"Author": "Someone"}, encrypt=enc)
    doc = load_pdf(data, "open-enc.pdf")
    assert doc.meta["encrypted"] is True
    assert [u.text.strip() for u in doc.units if u.channel is Channel.PDF_TEXT] == ["Readable anyway"]
    assert [u.text for u in doc.units if u.locator == "/Author"] == ["Someone"]


def test_encrypted_with_user_password_raises_encrypted():
    enc = Rc4R2(user="secret", owner="owner-secret")
    data = make_pdf([text_at(20, 250, "Secret text")], encrypt=enc)
    # The file is a genuine encrypted PDF: with the password pdfminer reads it.
    assert "Secret text" in extract_text(io.BytesIO(data), password="secret")
    with pytest.raises(LoadError) as err:
        load_pdf(data, "locked.pdf")
    assert err.value.code == "encrypted"
    assert "password" in err.value.message


def test_scanned_pdf_without_text_needs_ocr():
    data = make_pdf([b"q 300 0 0 300 0 0 cm /Im1 Do Q\n"])
    with pytest.raises(LoadError) as err:
        load_pdf(data, "scan.pdf")
    assert err.value.code == "format_tables_ocr"
    assert err.value.message == "scanned PDF with no text layer: needs OCR (format_tables_ocr)"


def test_blank_pdf_is_an_empty_document_not_ocr():
    data = make_pdf([b""])
    doc = load_pdf(data, "blank.pdf")
    assert doc.units == [] and doc.pages[0].text == "" and doc.pages[0].char_count == 0


def test_char_count_counts_real_chars_only():
    data = make_pdf([text_at(20, 250, "ab cd") + text_at(20, 200, "ef")])
    page = load_pdf(data, "count.pdf").pages[0]
    assert page.char_count == 7  # a b space c d e f; the newlines pdfminer adds are not chars
    assert page.text == "ab cd\n\nef\n\n"  # two text boxes: line end + box end each


def test_page_text_is_exactly_extract_text():
    data = make_pdf([text_at(20, 250, "Heading line") + text_at(20, 230, "second line, longer")
                     + text_at(150, 100, "Far away box", size=8), text_at(20, 20, "Another page")])
    doc = load_pdf(data, "exact.pdf")
    assert [p.text for p in doc.pages] == pdfminer_page_texts(data, 2)


# Same-size boxes whose pairwise distances tie; found by searching small layouts.
TIED_LAYOUT = [((20, 40), "42"), ((20, 130), "42"), ((60, 40), "42"), ((60, 70), "42"), ((100, 40), "11"),
               ((100, 100), "42"), ((100, 130), "120")]


def test_equal_distance_boxes_have_a_stable_order():
    data = make_pdf([b"".join(text_at(x, y, w) for (x, y), w in TIED_LAYOUT)])
    # pdfminer's own output for this page depends on how the ties fall: different orders, same lines.
    variants = set()
    for seed in range(6):
        with pdfminer_ties(random.Random(seed).random):
            variants.add(pdfminer_page_texts(data, 1)[0])
    assert len(variants) > 1
    assert len({tuple(sorted(v.split("\n"))) for v in variants}) == 1
    # The loader always gives the same one: pdfminer's result with ties in creation order.
    texts = {load_pdf(data, "tied.pdf").pages[0].text for _ in range(5)}
    with creation_order_ties():
        assert texts == set(pdfminer_page_texts(data, 1))


# --- broken input --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("data, needle", [
    (b"", "empty"),
    (b"not a pdf", "no %PDF header"),
    (b"%PDF-1.4\n", "broken PDF"),
    (b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF", "broken PDF"),
])
def test_broken_inputs_are_unparsed(data, needle):
    with pytest.raises(LoadError) as err:
        load_pdf(data, "broken.pdf")
    assert err.value.code == "unparsed"
    assert needle in err.value.message and "\n" not in err.value.message


def _load_or_error(data: bytes):
    try:
        return load_pdf(data, "x.pdf")
    except LoadError as e:
        assert e.code in {"unparsed", "encrypted", "format_tables_ocr"}
        assert "\n" not in e.message
        return e


def test_truncated_generated_pdf():
    data = make_pdf([text_at(20, 250, "Page one text"), text_at(20, 250, "Page two text")])
    for cut in range(0, len(data), 7):
        result = _load_or_error(data[:cut])
        if isinstance(result, Document):
            for unit in result.units:
                if unit.channel is Channel.PDF_TEXT:
                    assert result.pages[unit.page - 1].text[unit.start:unit.end] == unit.text
    # Cut before the trailer: pdfminer's fallback scan finds the objects but no /Root, so nothing loads
    # (extract_text fails the same way).
    with pytest.raises(LoadError) as err:
        load_pdf(data[:data.index(b"xref")], "no-trailer.pdf")
    assert err.value.code == "unparsed" and "/Root" in err.value.message
    # Cut after the trailer but before startxref: the fallback scan recovers the whole document.
    doc = load_pdf(data[:data.index(b"startxref")], "no-startxref.pdf")
    assert [u.text.strip() for u in doc.units] == ["Page one text", "Page two text"]


def test_a_failing_page_is_a_problem_not_a_failure():
    # Page 2's content stream names a filter pdfminer does not know: pdfminer raises on that page (and
    # extract_text on the whole file fails); the loader keeps page 1 and notes page 2.
    data = make_pdf([text_at(20, 250, "Good page"), text_at(20, 250, "Bad page"), text_at(20, 250, "Last page")])
    bad = _stream(text_at(20, 250, "Bad page"))
    data = data.replace(bad, bad.replace(b"<< /Length", b"<< /Filter /NotAFilter /Length"))
    with pytest.raises(Exception):
        extract_text(io.BytesIO(data))
    doc = load_pdf(data, "partly-broken.pdf")
    assert [p.text for p in doc.pages] == ["Good page\n\n", "", "Last page\n\n"]
    assert len(doc.problems) == 1 and doc.problems[0].startswith("page 2: ")
    assert "NotAFilter" in doc.problems[0]
    assert [u.page for u in doc.units] == [1, 3]


def test_every_page_failing_is_unparsed():
    bad = text_at(20, 250, "Bad page")
    data = make_pdf([bad]).replace(_stream(bad), _stream(bad, b"/Filter /NotAFilter"))
    with pytest.raises(LoadError) as err:
        load_pdf(data, "broken.pdf")
    assert err.value.code == "unparsed" and "no page could be read" in err.value.message


_SAMPLE = make_pdf([text_at(20, 250, "Mutated words", "3 Tr") + b"q 300 0 0 300 0 0 cm /Im1 Do Q\n",
                    text_at(20, 250, "More words", "1 1 1 rg")], info={"Author": "A"})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, len(_SAMPLE) - 1), st.binary(min_size=0, max_size=4)), max_size=6))
def test_mutated_pdfs_only_raise_load_error(edits):
    data = bytearray(_SAMPLE)
    for pos, chunk in edits:
        data[pos:pos + max(len(chunk), 1)] = chunk  # an empty chunk deletes a byte
    _load_or_error(bytes(data))


def test_does_not_change_pdfminer_log_level():
    logger = logging.getLogger("pdfminer")
    before = logger.level
    load_pdf(make_pdf([text_at(20, 250, "x")]), "x.pdf")
    with pytest.raises(LoadError):
        load_pdf(b"garbage", "x.pdf")
    assert logger.level == before


# --- real-world files ----------------------------------------------------------------------------------------

def _realdata_files() -> list[Path]:
    return sorted(REALDATA.glob("*.pdf")) if REALDATA.is_dir() else []


# The 30-page SSA case table: its whole load was the suite's longest test (pdfminer's layout of a dense table, as
# much CPU as all the other real PDFs together), and nothing else in the suite reads it page by page. Its first,
# middle and last pages are laid out by the loader's own page reader and compared with pdfminer; the 7-page table
# of the same series (same producer, same layout) is loaded whole and compared page by page like every other file.
HEAVIEST_REAL_PDF = "mx_ssa__Tabla_casos_sospechosos_COVID-19_2020.03.25.pdf"


def _realdata_params() -> list:
    """The real PDFs but the heaviest (test_heaviest_real_pdf_pages_match_pdfminer); the 7-page case table
    marked slow."""
    return [pytest.param(p, marks=pytest.mark.slow(1)) if p.name.startswith("mx_ssa__Tabla_casos") else p
            for p in _realdata_files() if p.name != HEAVIEST_REAL_PDF] or [None]


def realdata(name: str) -> Path:
    if not REALDATA.is_dir():
        pytest.skip(f"{REALDATA} not present")
    path = REALDATA / name
    if not path.exists():
        pytest.skip(f"{path} not present")
    return path


def load_real(path: Path):
    """Document or LoadError for a real file, loaded once per test session (conftest.load_real_pdf)."""
    from conftest import load_real_pdf

    return load_real_pdf(path)


@pytest.mark.parametrize("path", _realdata_params(), ids=lambda p: p.name if p else "absent")
def test_realdata_loads_and_matches_pdfminer(path):
    if path is None:
        pytest.skip(f"{REALDATA} not present")
    result = load_real(path)  # anything but LoadError propagates and fails the test
    if isinstance(result, LoadError):
        assert result.code in {"unparsed", "encrypted", "format_tables_ocr"}
        return
    # extract_text per page costs as much as the load: compare the first, middle and last page of each file;
    # the whole of every file is still loaded and checked for structure.
    check_structure(result, path.read_bytes(), pages=sample_pages(len(result.pages)))


@pytest.mark.slow(2)
def test_heaviest_real_pdf_pages_match_pdfminer():
    """The 30-page table's page tree read whole; pages 1, 15 and 30 laid out as load_pdf lays out each page
    (one resource manager for the document), checked for structure and against extract_text of that page."""
    from pdfminer.pdfinterp import PDFResourceManager

    from scanner.loaders.pdf import _read_page, open_pdf, reading_pdf

    path = realdata(HEAVIEST_REAL_PDF)
    data = path.read_bytes()
    with reading_pdf(data):
        _, page_objs, problems = open_pdf(data, path.name)
        assert (len(page_objs), problems) == (30, [])
        rsrcmgr, laparams = PDFResourceManager(caching=True), LAParams()
        pages = [_read_page(page_objs[n - 1], n, rsrcmgr, laparams) for n in sample_pages(len(page_objs))]
    for page in pages:
        assert page.char_count > 0 and page.text.strip()
        check_runs(page)
        plain = extract_text(io.BytesIO(data), page_numbers=[page.number - 1], laparams=LAParams())[:-1]
        if page.text != plain:
            with creation_order_ties():
                ordered = extract_text(io.BytesIO(data), page_numbers=[page.number - 1], laparams=LAParams())[:-1]
            assert page.text == ordered, f"page {page.number} differs from extract_text (creation-order ties)"
            assert sorted(page.text.split("\n")) == sorted(plain.split("\n")), f"page {page.number}: not a reordering"


def test_ocr_layer_is_invisible_over_full_page_image():
    result = load_real(realdata("ocrmypdf__graph_ocred.pdf"))
    assert isinstance(result, Document)
    page = result.pages[0]
    assert page.has_images and page.image_coverage >= 0.9
    assert page.char_count > 0
    assert {r.render_mode for r in page.runs} == {3}
    assert all(u.attrs["render_mode"] == 3 for u in result.units if u.channel is Channel.PDF_TEXT)


def test_scan_without_text_layer_needs_ocr():
    result = load_real(realdata("ocrmypdf__linn.pdf"))
    assert isinstance(result, LoadError)
    assert result.code == "format_tables_ocr"


def test_author_metadata_unit():
    result = load_real(realdata("mx_ssa__Comunicado_Tecnico_Diario_COVID-19_2020.03.16.pdf"))
    assert isinstance(result, Document)
    authors = [u for u in result.units if u.channel is Channel.PDF_METADATA and u.locator == "/Author"]
    assert len(authors) == 1
    assert bool(authors[0].text.strip()) is True  # not printed: it is a person's name
    assert authors[0].page is None and authors[0].end == len(authors[0].text)


def test_truncated_real_pdf():
    # pdfminer cannot recover this file cut in half (its fallback scan runs into the end of the data), and
    # neither can extract_text: the honest result is "unparsed".
    path = realdata("mx_ssa__Comunicado_Tecnico_Diario_COVID-19_2020.03.16.pdf")
    data = path.read_bytes()[: path.stat().st_size // 2]
    with pytest.raises(Exception):
        extract_text(io.BytesIO(data))
    with pytest.raises(LoadError) as err:
        load_pdf(data, "half.pdf")
    assert err.value.code == "unparsed" and err.value.message.startswith("broken PDF: ")
