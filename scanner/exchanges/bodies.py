"""Body bytes as a recording stores them, and back: base64, hex, chunk lists, and gzip/deflate/brotli.

One policy for base64 everywhere (envelopes, HAR, VCR `!!binary`, Ruby VCR `base64_string`): **strict**. The
text may hold ASCII whitespace (YAML folds `!!binary` into 76-character lines), which is ignored; any other
character outside the base64 alphabet, or wrong padding, makes the body invalid (`BodyError`), never
silently skipped — a lenient decoder drops what it does not know and hands the scanner, the server and the
adapters bytes the recording does not hold. Hex (nock, Polly.js before 6.0) is just as strict.

Compressed bodies (`content-encoding: gzip`, `deflate`, `br`) are recognised by their magic bytes, not by the
header alone: clients differ on whether they store the wire bytes or the decoded ones under the same header
(vcrpy#719). Decompression is bounded (`MAX_DECODED_BYTES`): a small body that unpacks to gigabytes is a
`BodyError` (`too_large`), never a full memory.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import re
import zlib

from scanner import jsonsafe

MAX_DECODED_BYTES = 64 * 1024 * 1024     # a decompressed body larger than this is not decoded

_WS = re.compile(rb"[ \t\r\n]+")
_HEX = re.compile(r"(?:[0-9a-fA-F]{2})*\Z")


class BodyError(ValueError):
    """A stored body that cannot be decoded as it says it is. `code` is a LoadError code."""

    def __init__(self, message: str, code: str = "unparsed"):
        super().__init__(message)
        self.code = code


def b64decode(text: str | bytes) -> bytes:
    """Strict base64 (ASCII whitespace ignored); BodyError otherwise."""
    data = text.encode("ascii", "replace") if isinstance(text, str) else bytes(text)
    try:
        return base64.b64decode(_WS.sub(b"", data), validate=True)
    except (binascii.Error, ValueError):
        raise BodyError("not valid base64") from None


def hexdecode(text: str) -> bytes:
    if not _HEX.match(text):
        raise BodyError("not valid hex")
    return bytes.fromhex(text)


def is_hex(text: str) -> bool:
    return bool(text) and _HEX.match(text) is not None


def chunk_list(text: str) -> list[str] | None:
    """The chunks of a JSON-stringified list of strings (Polly.js `content.text` of an encoded response)."""
    stripped = text.strip()
    if not (stripped.startswith("[") and stripped.endswith("]")):
        return None
    try:
        value = jsonsafe.loads(stripped, finite=False)
    except ValueError:
        return None
    if isinstance(value, list) and value and all(isinstance(c, str) for c in value):
        return value
    return None


# --- transfer encodings: how the stored text spells the bytes ------------------------------------------------

TEXT, BASE64, HEX, BASE64_CHUNKS, HEX_CHUNKS = "text", "base64", "hex", "base64-chunks", "hex-chunks"


def decode_transfer(stored: str | list[str], transfer: str) -> bytes:
    """The bytes a stored body spells (`stored` is the string, or the list of chunk strings)."""
    if transfer == TEXT:
        assert isinstance(stored, str)
        return stored.encode("utf-8", "surrogatepass")
    if transfer in (BASE64, HEX):
        assert isinstance(stored, str)
        return b64decode(stored) if transfer == BASE64 else hexdecode(stored)
    chunks = stored if isinstance(stored, list) else chunk_list(stored)
    if chunks is None:
        raise BodyError("not a list of encoded chunks")
    one = b64decode if transfer == BASE64_CHUNKS else hexdecode
    return b"".join(one(c) for c in chunks)


def encode_transfer(data: bytes, transfer: str) -> str:
    """The stored text for new bytes, in the same transfer encoding (chunk lists become one chunk)."""
    if transfer == TEXT:
        return data.decode("utf-8")
    if transfer == BASE64:
        return base64.b64encode(data).decode("ascii")
    if transfer == HEX:
        return data.hex()
    if transfer == BASE64_CHUNKS:
        return json.dumps([base64.b64encode(data).decode("ascii")])
    if transfer == HEX_CHUNKS:
        return json.dumps([data.hex()])
    raise ValueError(transfer)


# --- content encodings ---------------------------------------------------------------------------------------

def compression_of(data: bytes, content_encoding: str) -> str | None:
    """`gzip`, `deflate` or `br` when the bytes are compressed that way, else None. gzip and zlib are told by
    their magic bytes; brotli has none, so it is believed from the header only when the bytes are not text."""
    declared = content_encoding.strip().lower()
    if data[:2] == b"\x1f\x8b":
        return "gzip"
    if len(data) >= 2 and data[0] == 0x78 and (data[0] << 8 | data[1]) % 31 == 0 and declared in ("deflate", "gzip"):
        return "deflate"
    if declared == "br" and data and not _looks_text(data):
        return "br"
    return None


def _looks_text(data: bytes) -> bool:
    head = data[:512]
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 3:          # a character cut at the 512-byte boundary is still text
            return False
    return not any(b < 9 or 13 < b < 32 for b in head)


def decompress(data: bytes, method: str, limit: int = MAX_DECODED_BYTES) -> bytes:
    """Bounded decompression; BodyError for corrupt data or output over `limit`."""
    try:
        if method == "br":
            return _unbrotli(data, limit)
        wbits = 16 + zlib.MAX_WBITS if method == "gzip" else zlib.MAX_WBITS
        d = zlib.decompressobj(wbits)
        out = d.decompress(data, limit + 1)
        if len(out) > limit or d.unconsumed_tail:
            raise BodyError(f"{method} body unpacks to more than {limit >> 20} MB: not decoded", code="too_large")
        if method == "gzip" and d.unused_data[:2] == b"\x1f\x8b":
            # Concatenated gzip members are one body; read the next ones with what is left of the limit.
            out += decompress(d.unused_data, "gzip", limit - len(out))
        return out
    except zlib.error as exc:
        raise BodyError(f"corrupt {method} body: {exc}") from None


def _unbrotli(data: bytes, limit: int) -> bytes:
    try:
        import brotli
    except ImportError:  # pragma: no cover - a runtime dependency
        raise BodyError("brotli body: the brotli package is not installed") from None
    d = brotli.Decompressor()
    try:
        out = d.process(data, output_buffer_limit=limit + 1)
        while len(out) <= limit and not d.is_finished() and not d.can_accept_more_data():
            out += d.process(b"", output_buffer_limit=limit + 1 - len(out))
    except brotli.error as exc:
        raise BodyError(f"corrupt br body: {exc}") from None
    if len(out) > limit:
        raise BodyError(f"br body unpacks to more than {limit >> 20} MB: not decoded", code="too_large")
    if not d.is_finished():
        raise BodyError("truncated br body")
    return out


def compress(data: bytes, method: str) -> bytes:
    """The bytes compressed the same way (deterministic: gzip with mtime 0)."""
    if method == "gzip":
        return gzip.compress(data, mtime=0)
    if method == "deflate":
        return zlib.compress(data)
    if method == "br":
        import brotli

        return brotli.compress(data)
    raise ValueError(method)
