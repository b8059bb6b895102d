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


def zlib_bomb(megabytes: int) -> bytes:
    """A valid zlib stream of `megabytes` MB of zeros, about 1 KB per MB: one full-flushed block of 1 MB of
    zeros repeated (blocks after a full flush are independent), an empty final block and the Adler-32."""
    zeros = b"\0" * (1 << 20)
    c = zlib.compressobj(9)
    first = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
    block = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
    n = megabytes << 20
    return first + block * (megabytes - 1) + b"\x03\x00" + struct.pack(">I", ((n % 65521) << 16) | 1)


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
