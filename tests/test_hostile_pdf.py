"""PDF decompression bombs through every path pdfminer decodes: nested filters, LZW, RunLength, ASCII filters
before Flate, object and xref streams, fonts, many small streams, forms drawn again and again, and the
284 KB bomb of several streams. Each one stops at its bound: the test checks the error code and that the
decoded-byte counter stayed under the bound, never the time it took."""

from __future__ import annotations

import binascii
import io
import zlib

import pytest
from pdfminer.psparser import LIT

import pdfminer.pdftypes as pdftypes
from hostile import lzw_bomb, multi_bomb_pdf, run_length, zlib_bomb
from scanner.fixtures.classify_pdf import classify_pdf
from scanner.loaders.pdf import (
    DOCUMENT_FLOOR, STREAM_FLOOR, DecodeBudget, StreamTooLarge, bounded_decoding, load_pdf,
)
from scanner.pdfwriter import assemble
from scanner.units import LoadError

MB = 1 << 20
TEXT = b"BT /F1 12 Tf 20 250 Td (Texto visible) Tj ET\n"


def stream(data: bytes, dictionary: bytes = b"") -> bytes:
    return b"<< /Length %d %s >>\nstream\n" % (len(data), dictionary) + data + b"\nendstream"


def pdf(contents: list[bytes], extra: dict[int, bytes] | None = None, resources: bytes = b"") -> bytes:
    """Pages 1..n, one per content stream object given in full; object numbers: 1 catalog, 2 pages,
    3 the font (unless `resources` names fonts), 10+i the pages, 100+i their contents; `extra` objects as
    numbered."""
    n = len(contents)
    objects = {1: b"<< /Type /Catalog /Pages 2 0 R >>",
               2: b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(b"%d 0 R" % (10 + i) for i in range(n)), n),
               3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"}
    fonts = b"" if b"/Font" in resources else b"/Font << /F1 3 0 R >>"
    for i, content in enumerate(contents):
        objects[10 + i] = (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 300] /Contents %d 0 R "
                           b"/Resources << %s %s >> >>" % (100 + i, fonts, resources))
        objects[100 + i] = content
    objects.update(extra or {})
    return assemble(objects)


def refused(data: bytes) -> tuple[LoadError, DecodeBudget]:
    budget = DecodeBudget.for_file(len(data))
    with pytest.raises(LoadError) as err:
        load_pdf(data, "bomb.pdf", budget)
    assert err.value.code == "too_large", err.value.message
    assert err.value.message.startswith("decompression bomb? ")
    assert budget.decoded <= budget.limit and budget.interpreted <= budget.interpret_limit
    return err.value, budget


def test_the_284_kb_bomb_of_several_streams_stops_at_its_first_stream():
    data = multi_bomb_pdf()
    assert 280 * 1024 < len(data) < 290 * 1024
    err, budget = refused(data)
    assert budget.limit == DOCUMENT_FLOOR                      # max(8 MB, 16 × 284 KB)
    assert budget.decoded <= 2 * STREAM_FLOOR                  # not the 1.2 GB + 32 MB + 256 MB it holds
    assert "(100× its size, at least 1 MB)" in err.message


def test_manifest_verify_classifies_under_the_same_bounds():
    data = multi_bomb_pdf()
    with pytest.raises(LoadError) as err:
        classify_pdf(data, "bomb.pdf")
    assert err.value.code == "too_large"


@pytest.mark.parametrize("filters, encoded", [
    (b"[/FlateDecode /FlateDecode]", lambda: zlib.compress(zlib_bomb(1024), 9)),
    (b"/FlateDecode", lambda: zlib_bomb(64)),
    (b"/LZWDecode", lambda: lzw_bomb(64 * MB)),
    (b"[/FlateDecode /RunLengthDecode]", lambda: zlib.compress(run_length(0x20, 64 * MB), 9)),
    (b"[/ASCIIHexDecode /FlateDecode]", lambda: binascii.hexlify(zlib_bomb(64)) + b">"),
    (b"[/ASCII85Decode /FlateDecode]", lambda: __import__("base64").a85encode(zlib_bomb(64)) + b"~>"),
    (b"[/FlateDecode /LZWDecode]", lambda: zlib.compress(lzw_bomb(64 * MB), 9)),
])
def test_every_filter_chain_stops_at_its_bound(filters, encoded):
    refused(pdf([stream(encoded(), b"/Filter " + filters)]))


def test_runlength_alone_is_held_by_the_document_budget():
    data = pdf([stream(run_length(0x20, 96 * MB), b"/Filter /RunLengthDecode")])      # 64× expansion
    err, budget = refused(data)
    assert "in all" in err.message and budget.decoded <= budget.limit


def _type1_font(num: int, font_file: bytes) -> dict[int, bytes]:
    """A Type 1 font without /Encoding (pdfminer then reads its embedded font file for one) as objects
    num, num+1 (descriptor), num+2 (the font file stream, given encoded with its dictionary entries)."""
    return {num: b"<< /Type /Font /Subtype /Type1 /BaseFont /F%d /FirstChar 32 /LastChar 126 /Widths [] "
                 b"/FontDescriptor %d 0 R >>" % (num, num + 1),
            num + 1: b"<< /Type /FontDescriptor /FontName /F%d /Flags 32 /FontBBox [0 0 1000 1000] /ItalicAngle 0 "
                     b"/Ascent 800 /Descent -200 /CapHeight 700 /StemV 80 /FontFile %d 0 R >>" % (num, num + 2),
            num + 2: font_file}


def test_many_small_streams_are_held_by_the_document_budget():
    extra, names = {}, []
    for i in range(12):                       # twelve font files of 900 KB each (1 KB encoded): decoded, not run
        extra.update(_type1_font(200 + 3 * i, stream(zlib.compress(b"%!PS-AdobeFont-1.0" + b" " * (900 << 10), 9),
                                                     b"/Length1 1000 /Length2 0 /Length3 0 /Filter /FlateDecode")))
        names.append(b"/G%d %d 0 R" % (i, 200 + 3 * i))
    err, budget = refused(pdf([stream(TEXT)], extra, b"/Font << /F1 3 0 R " + b" ".join(names) + b" >>"))
    assert "in all (16× the file's size, at least 8 MB)" in err.message
    assert budget.interpreted < MB


def test_a_form_drawn_again_and_again_is_held_by_the_interpreted_budget():
    form = stream(b"q Q" + b" " * 4093, b"/Type /XObject /Subtype /Form /BBox [0 0 10 10]")  # 4 KB, as is
    content = stream(zlib.compress(b"/Fm1 Do\n" * 3000, 9), b"/Filter /FlateDecode")
    err, budget = refused(pdf([content], {50: form}, b"/XObject << /Fm1 50 0 R >>"))
    assert "to interpret (8× the file's size, at least 1 MB" in err.message and budget.decoded < MB


def test_nested_forms_are_held_by_the_interpreted_budget():
    res = b"/Resources << /XObject << /X %d 0 R >> >>"
    form = b"/Type /XObject /Subtype /Form /BBox [0 0 10 10] "
    extra = {50: stream(b"/X Do " * 100, form + res % 51), 51: stream(b"/X Do " * 100, form + res % 52),
             52: stream(b"0 0 m" + b" " * 1200, form)}
    err, _ = refused(pdf([stream(b"/X Do\n")], extra, b"/XObject << /X 50 0 R >>"))
    assert "to interpret" in err.message


def test_a_font_file_bomb():
    extra = _type1_font(200, stream(zlib.compress(zlib_bomb(1024), 9),
                                    b"/Length1 1000 /Length2 0 /Length3 0 /Filter [/FlateDecode /FlateDecode]"))
    refused(pdf([stream(TEXT)], extra, b"/Font << /F1 200 0 R >>"))


def _with_xref_stream(objects: dict[int, bytes], entries, xref_filter: bytes = b"", xref_data=None) -> bytes:
    """`objects` laid out, then an xref stream (W [1 4 2]) as the only cross-reference section."""
    body = bytearray(b"%PDF-1.5\n%\xe2\xe3\xcf\xd3\n")
    offsets = {}
    for num in sorted(objects):
        offsets[num] = len(body)
        body += b"%d 0 obj\n" % num + objects[num] + b"\nendobj\n"
    xref_num = max(objects) + 1
    rows = bytearray()
    for num in range(xref_num + 1):
        kind, a, b = entries(num, offsets, len(body))
        rows += bytes([kind]) + a.to_bytes(4, "big") + b.to_bytes(2, "big")
    data = xref_data if xref_data is not None else bytes(rows)
    start = len(body)
    body += b"%d 0 obj\n" % xref_num + stream(data, b"/Type /XRef /Size %d /W [1 4 2] /Root 1 0 R %s"
                                                    % (xref_num + 1, xref_filter)) + b"\nendobj\n"
    body += b"startxref\n%d\n%%%%EOF\n" % start
    return bytes(body)


def test_an_xref_stream_bomb():
    objects = {1: b"<< /Type /Catalog /Pages 2 0 R >>", 2: b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               3: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 300] /Contents 4 0 R >>", 4: stream(TEXT)}

    def entries(num, offsets, xref_at):
        return (1, offsets.get(num, xref_at), 0) if num else (0, 0, 65535)
    refused(_with_xref_stream(objects, entries, b"/Filter [/FlateDecode /FlateDecode]",
                              zlib.compress(zlib_bomb(1024), 9)))


def test_an_object_stream_bomb():
    objects = {1: b"<< /Type /Catalog /Pages 2 0 R >>", 2: b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               4: stream(TEXT),
               5: stream(zlib.compress(zlib_bomb(1024), 9),
                         b"/Type /ObjStm /N 1 /First 4 /Filter [/FlateDecode /FlateDecode]")}

    def entries(num, offsets, xref_at):
        if num == 0:
            return 0, 0, 65535
        if num == 3:
            return 2, 5, 0                    # the page dictionary lives in object stream 5
        return 1, offsets.get(num, xref_at), 0
    refused(_with_xref_stream(objects, entries))


def test_an_inline_image_is_never_decoded():
    image = zlib_bomb(256)                     # 256 MB in 260 KB
    content = TEXT + b"q BI /W 100 /H 100 /BPC 8 /CS /G /F /Fl /L %d ID " % len(image) + image + b"\nEI Q\n"
    data = pdf([stream(content)])
    budget = DecodeBudget.for_file(len(data))
    doc = load_pdf(data, "inline.pdf", budget)
    assert "Texto visible" in doc.pages[0].text and budget.decoded == 0


def test_real_sized_streams_pass_and_are_counted():
    body = TEXT + b" " * (900 << 10)                                       # 900 KB of content, 1 KB compressed
    data = pdf([stream(zlib.compress(body, 9), b"/Filter /FlateDecode")])
    budget = DecodeBudget.for_file(len(data))
    doc = load_pdf(data, "ok.pdf", budget)
    assert doc.pages[0].text.startswith("Texto visible")
    assert budget.decoded == len(body) and budget.interpreted == len(body)


def test_outside_a_budget_pdfminer_decodes_as_it_always_did():
    raw = zlib.compress(b"x" * (3 * MB))
    s = pdftypes.PDFStream({"Filter": LIT("FlateDecode")}, raw)
    assert len(s.get_data()) == 3 * MB                                     # past the 1 MB floor: no bound here
    with bounded_decoding(DecodeBudget(limit=64 * MB)) as budget:
        with pytest.raises(StreamTooLarge):
            pdftypes.PDFStream({"Filter": LIT("FlateDecode")}, raw).get_data()
    assert budget.decoded == STREAM_FLOOR
    originals = pdftypes._centinela_originals
    sample = run_length(ord("a"), 300) + b"junk"
    assert pdftypes.rldecode(sample) == originals["rldecode"](sample) == b"a" * 300
    lzw = lzw_bomb(50_000)
    assert pdftypes.lzwdecode(lzw) == originals["lzwdecode"](lzw)
    with bounded_decoding(DecodeBudget(limit=64 * MB)):
        assert pdftypes.rldecode(sample) == b"a" * 300 and pdftypes.lzwdecode(lzw) == originals["lzwdecode"](lzw)


@pytest.mark.parametrize("damage", ["checksum", "truncated", "none"])
def test_corrupted_flate_is_read_as_pdfminer_reads_it(damage):
    good = zlib.compress(b"contenido " * 5000)
    data = {"checksum": good[:-4] + b"\0\0\0\0", "truncated": good[:-40], "none": good}[damage]
    import pdfminer.pdftypes as module

    def pdfminer_corrupted(d):                                  # pdfminer's decompress_corrupted, verbatim logic
        z = zlib.decompressobj()
        f = io.BytesIO(d)
        out = b""
        buf = f.read(1)
        i = 0
        try:
            while buf:
                out += z.decompress(buf)
                buf = f.read(1)
                i += 1
        except zlib.error:
            if i < len(d) - 3:
                raise
        return out

    try:
        expected = pdfminer_corrupted(data)
    except zlib.error:
        with pytest.raises(zlib.error):
            module.decompress_corrupted(data)
        return
    assert module.decompress_corrupted(data) == expected
    with bounded_decoding(DecodeBudget(limit=64 * MB)):
        assert module.decompress_corrupted(data) == expected
