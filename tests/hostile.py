"""Broken and hostile files, generated in a temporary folder (the 200 MB one is sparse: it takes no disk).

`make_hostile(folder)` writes them and returns {name: the error code a scan must report for it}; a name whose
code is None must load (with its problems noted) and be scanned like any file.
"""

from __future__ import annotations

import os
import struct
import zlib
from pathlib import Path

from scanner.pdfwriter import assemble
from test_pdf_loader import Rc4R2, make_pdf, text_at

HUGE_MB = 200


def zlib_repeat(chunk: bytes, times: int) -> bytes:
    """A valid zlib stream of `chunk` repeated `times` times, compressed once: one full-flushed block repeated
    (blocks after a full flush are independent), an empty final block and the Adler-32 of the whole."""
    c = zlib.compressobj(9)
    first = c.compress(chunk) + c.flush(zlib.Z_FULL_FLUSH)
    block = c.compress(chunk) + c.flush(zlib.Z_FULL_FLUSH)
    adler = 1
    for _ in range(times):
        adler = zlib.adler32(chunk, adler)
    return first + block * (times - 1) + b"\x03\x00" + struct.pack(">I", adler)


def zlib_bomb(megabytes: int) -> bytes:
    """A valid zlib stream of `megabytes` MB of zeros, about 1 KB per MB."""
    return zlib_repeat(b"\0" * (1 << 20), megabytes)


def bomb_pdf(gigabytes: int = 4) -> bytes:
    """A one-page PDF whose content stream, FlateDecode twice, unpacks to `gigabytes` GB (10 KB on disk)."""
    stream = zlib.compress(zlib_bomb(gigabytes << 10), 9)
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 300] /Contents 4 0 R >>",
               b"<< /Length %d /Filter [/FlateDecode /FlateDecode] >>\nstream\n" % len(stream) + stream + b"\nendstream"]
    return assemble(objects)


def broken_xref_pdf(recoverable: bool) -> bytes:
    """A broken cross-reference table. Recoverable: the table is not a table at all, so pdfminer falls back
    to scanning the file for objects and finds them all. Not recoverable: a well-formed table whose every
    offset points past the end of the file, which pdfminer believes."""
    data = make_pdf([text_at(20, 250, "Recovered text")])
    head, _, tail = data.partition(b"xref\n")
    table, _, rest = tail.partition(b"trailer")
    if recoverable:
        return head + b"xref\nthis is not a cross-reference table\n" + b"trailer" + rest
    lines = table.split(b"\n")
    garbled = b"\n".join(lines[:2] + [b"%010d 00000 n " % 999999 for _ in lines[2:-1]] + [b""])
    return head + b"xref\n" + garbled + b"trailer" + rest


def make_hostile(folder: Path) -> dict[str, str | None]:
    folder.mkdir(parents=True, exist_ok=True)
    expected: dict[str, str | None] = {}

    def write(name: str, data: bytes, code: str | None) -> None:
        (folder / name).write_bytes(data)
        expected[name] = code

    pdf = make_pdf([text_at(20, 250, "Page one text"), text_at(20, 250, "Page two text")])
    write("truncated.pdf", pdf[:pdf.index(b"xref")], "unparsed")
    write("encrypted.pdf", make_pdf([text_at(20, 250, "Secret")], encrypt=Rc4R2(user="pw", owner="o")), "encrypted")
    write("broken-xref.pdf", broken_xref_pdf(recoverable=False), "unparsed")
    write("broken-xref-recovered.pdf", broken_xref_pdf(recoverable=True), None)
    write("bomb.pdf", bomb_pdf(4), "too_large")
    write("bomb-284k.pdf", multi_bomb_pdf(), "too_large")
    write("deep.html", b"<div>" * 100_000 + b"deep text" + b"</div>" * 100_000, None)
    write("deep.json", b"[" * 100_000 + b"]" * 100_000, None)
    write("deep-object.json", b'{"a":' * 100_000 + b'"x"' + b"}" * 100_000, None)
    write("invalid-utf8.html", b"<p>caf\xe9 \xff\xfe \xc3\x28 fin</p>", None)
    write("invalid-utf8.json", b'{"texto": "caf\xc3 \xff"}', None)
    write("empty.html", b"", "empty")
    with open(folder / "huge.html", "wb") as fh:          # sparse: no block is written
        fh.truncate(HUGE_MB << 20)
    expected["huge.html"] = "too_large"
    (folder / "x.html").mkdir()                            # a directory named like a file: walked, not read
    (folder / "x.html" / "inside.txt").write_text("texto dentro de un directorio x.html\n")
    expected["x.html/inside.txt"] = None
    os.symlink("loop-b.html", folder / "loop-a.html")
    os.symlink("loop-a.html", folder / "loop-b.html")
    expected["loop-a.html"] = expected["loop-b.html"] = "unreadable"
    os.mkfifo(folder / "fifo.html")                        # reading it would wait forever
    expected["fifo.html"] = "not_a_file"
    return expected


def alias_bomb_yaml(target_kb: int = 329) -> str:
    """A judgments.yaml of about `target_kb` KB whose last case holds nested aliases: 9 levels of 10 copies
    each (10⁹ judgments once expanded), padded to size with plain judgments. Valid YAML for PyYAML's loaders."""
    lines = ["# judgments with a billion laughs", "_bomb:"]
    lines.append('  l0: &l0 {supports: true, group: "g", verified_published_at: "2026-09-01"}')
    for level in range(1, 10):
        lines.append(f"  l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * 10) + "]")
    lines.append("gs-001:")
    i = 0
    while sum(len(x) + 1 for x in lines) < target_kb * 1024:
        lines.append(f'  "https://www.gob.mx/nota/{i}": {{supports: {"true" if i % 2 else "false"}, group: "g{i % 9}"}}')
        i += 1
    lines.append('  "https://www.gob.mx/bomb": *l9')
    return "\n".join(lines) + "\n"


def lzw_bomb(target_bytes: int, fill: int = 0x20) -> bytes:
    """LZW codes (PDF LZWDecode, early change) that decode to runs of one byte: after each clear code the
    string of every new code is one byte longer than the last (the KwKwK case), so 5.3 KB of codes decode to
    7.4 MB. Cycles are added until the output reaches `target_bytes`."""
    bits, nbits_total = 0, 0
    out = bytearray()

    def emit(code: int, width: int) -> None:
        nonlocal bits, nbits_total
        bits = (bits << width) | code
        nbits_total += width
        while nbits_total >= 8:
            nbits_total -= 8
            out.append((bits >> nbits_total) & 0xFF)
        bits &= (1 << nbits_total) - 1

    produced = 0
    while produced < target_bytes:
        emit(256, 12 if out else 9)                  # clear: the decoder goes back to 9-bit codes
        emit(fill, 9)
        produced += 1
        table, width, length = 258, 9, 1
        while table < 4095 and produced < target_bytes:
            emit(table, width)                       # the code being defined: previous string + its first byte
            length += 1
            produced += length
            table += 1
            width = {511: 10, 1023: 11, 2047: 12}.get(table, width)
    emit(257, 12)                                    # end of data
    if nbits_total:
        out.append((bits << (8 - nbits_total)) & 0xFF)
    return bytes(out)


def run_length(data_byte: int, count: int) -> bytes:
    """RunLengthDecode data: `count` copies of one byte, 128 per 2-byte run."""
    full, rest = divmod(count, 128)
    runs = bytes((129, data_byte)) * full   # 257 - 129 = 128 copies
    if rest:
        runs += bytes((257 - rest, data_byte)) if rest > 1 else bytes((0, data_byte))
    return runs + b"\x80"


def multi_bomb_pdf(target_kb: int = 284) -> bytes:
    """A `target_kb` KB PDF of eight pages whose content streams each expand hugely, most through nested
    filters: six [/FlateDecode /FlateDecode] streams of 200 MB of page content each, one [/FlateDecode
    /RunLengthDecode] of 32 MB, and an /LZWDecode stream that fills the file to size and decodes past 256 MB.
    (A real 284 KB PDF decodes to about 1.3 MB: 4.4× its size, the most of the real PDFs here.)"""
    content = b"1 0 0 1 0 0 cm " + b" " * 1009          # a cheap operator per KB of whitespace
    mb = 1 << 20
    block = (content * (mb // len(content) + 1))[:mb]
    streams = [(b"[/FlateDecode /FlateDecode]", zlib.compress(zlib_repeat(block, 200), 9)) for _ in range(6)]
    streams.append((b"[/FlateDecode /RunLengthDecode]", zlib.compress(run_length(0x20, 32 * mb), 9)))
    room = target_kb * 1024 - sum(len(data) + 64 for _, data in streams) - 1200
    streams.append((b"/LZWDecode", lzw_bomb(600 * mb)[:room]))      # cut short: the decoder stops at the end
    n = len(streams)
    kids = b" ".join(b"%d 0 R" % (3 + i) for i in range(n))
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, n)]
    objects += [b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 300] /Contents %d 0 R >>" % (3 + n + i)
                for i in range(n)]
    objects += [b"<< /Length %d /Filter %s >>\nstream\n" % (len(data), filters) + data + b"\nendstream"
                for filters, data in streams]
    return assemble(objects)
