"""A tiny deterministic PDF writer for rule examples and tests: text runs with a render mode, a fill colour,
a size and a position, and optionally a page-covering image (the shape of an OCR'd scan).

Helvetica with WinAnsiEncoding: text is written as cp1252, so Spanish accents work; characters outside
cp1252 are replaced by '?'.
"""

from __future__ import annotations

from dataclasses import dataclass

HEADER = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n"


def assemble(objects, trailer: bytes = b"/Root 1 0 R") -> bytes:
    """A PDF file from its object bodies: numbered 1..n from a list, or as given by a {number: body} dict (a
    missing number is a free xref entry), a classic cross-reference table with real offsets, and a trailer
    with `/Size` and the entries given. The one assembler of every PDF the project writes (this module, the
    example tree, the corpus, the tests)."""
    numbered = dict(enumerate(objects, 1)) if isinstance(objects, (list, tuple)) else dict(objects)
    out = bytearray(HEADER)
    offsets = {}
    for num in sorted(numbered):
        offsets[num] = len(out)
        out += b"%d 0 obj\n" % num + numbered[num] + b"\nendobj\n"
    size = max(numbered, default=0) + 1
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % size
    for num in range(1, size):
        out += (b"%010d 00000 n \n" % offsets[num]) if num in offsets else b"0000000000 65535 f \n"
    out += b"trailer\n<< /Size %d %s >>\nstartxref\n%d\n%%%%EOF\n" % (size, trailer, xref)
    return bytes(out)


@dataclass
class TextRun:
    text: str
    x: float = 72
    y: float = 720
    size: float = 12
    render_mode: int = 0
    fill: tuple[float, ...] = (0, 0, 0)
    alpha: float | None = None


def _escape(text: str) -> bytes:
    raw = text.encode("cp1252", "replace")
    return raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


def make_pdf(pages: list[list[TextRun]], image_pages: set[int] = frozenset(), width: float = 612,
             height: float = 792, cropbox: tuple[float, float, float, float] | None = None) -> bytes:
    """PDF bytes with one page per list of runs; pages whose index is in image_pages get a full-page image."""
    objects: list[bytes] = []

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    catalog = add(b"")          # filled below
    pages_obj = add(b"")
    font = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    image = add(b"<< /Type /XObject /Subtype /Image /Width 1 /Height 1 /ColorSpace /DeviceGray "
                b"/BitsPerComponent 8 /Length 1 >>\nstream\n\x80\nendstream")
    page_ids = []
    for index, runs in enumerate(pages):
        ops = []
        gstates = []
        if index in image_pages:
            ops.append(f"q {width:g} 0 0 {height:g} 0 0 cm /Im1 Do Q".encode())
        for run in runs:
            fill = run.fill
            color = (f"{fill[0]:g} g" if len(fill) == 1 else f"{fill[0]:g} {fill[1]:g} {fill[2]:g} rg").encode()
            gs = b""
            if run.alpha is not None:
                gstates.append(run.alpha)
                gs = f"/GS{len(gstates)} gs ".encode()
            ops.append(b"q " + gs + color + f" BT /F1 {run.size:g} Tf {run.render_mode} Tr {run.x:g} {run.y:g} Td (".encode()
                       + _escape(run.text) + b") Tj ET Q")
        content = b"\n".join(ops)
        stream = add(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
        ext = b"".join(b"/GS%d << /Type /ExtGState /ca %g >> " % (i + 1, a) for i, a in enumerate(gstates))
        resources = (b"<< /Font << /F1 %d 0 R >> /XObject << /Im1 %d 0 R >>" % (font, image)
                     + (b" /ExtGState << " + ext + b">>" if ext else b"") + b" >>")
        crop = b"" if cropbox is None else (b" /CropBox [%g %g %g %g]" % cropbox)
        page_ids.append(add(b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %g %g]%s /Resources %s /Contents %d 0 R >>"
                            % (pages_obj, width, height, crop, resources, stream)))
    objects[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R >>" % pages_obj
    kids = b" ".join(b"%d 0 R" % p for p in page_ids)
    objects[pages_obj - 1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, len(page_ids))
    return assemble(objects, b"/Root %d 0 R" % catalog)
