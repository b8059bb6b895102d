"""Load any fixture file into a `Document` of text units, choosing the loader by extension, then by content."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from scanner.budget import too_large_message
from scanner.units import Document, LoadError

HTML_EXT = (".html", ".htm", ".xhtml", ".shtml")
JSON_EXT = (".json", ".jsonl", ".ndjson", ".har", ".jsonld")
TEXT_EXT = (".txt", ".md", ".markdown", ".text", ".csv")
PDF_EXT = (".pdf",)
YAML_EXT = (".yaml", ".yml")     # scanned when they are cassettes (is_scannable)
SCANNABLE_EXT = HTML_EXT + JSON_EXT + TEXT_EXT + PDF_EXT


def sniff_kind(name: str, data: bytes) -> str:
    lower = name.lower()
    if lower.endswith(PDF_EXT) or data.startswith(b"%PDF"):
        return "pdf"
    if lower.endswith(HTML_EXT):
        return "html"
    if lower.endswith(JSON_EXT):
        return "json"
    if lower.endswith(TEXT_EXT):
        return "text"
    if lower.endswith(YAML_EXT):
        return "yaml"
    head = data[:2048].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if head.startswith((b"{", b"[")):
        return "json"
    if head.startswith((b"<!doctype html", b"<html")) or b"<body" in head or b"<head" in head:
        return "html"
    if b"\x00" in data[:8192]:
        return "binary"
    return "text"


def load_bytes(data: bytes, path: str) -> Document:
    """Load file content; raises LoadError (never anything else) for a file that cannot be read as its kind.
    Within `scanner.doccache.active()`, the same bytes under the same name are loaded once."""
    from scanner import doccache

    cache = doccache.current()
    if cache is not None:
        return cache.load(data, path, _load_bytes)
    return _load_bytes(data, path)


def _load_bytes(data: bytes, path: str) -> Document:
    # Each loader is imported on first use: a scan of HTML pages never imports pdfminer or the YAML reader.
    kind = sniff_kind(path, data)
    try:
        if kind == "pdf":
            from scanner.loaders.pdf import load_pdf
            return load_pdf(data, path)
        if kind == "html":
            from scanner.loaders.html import load_html
            return load_html(data, path)
        if kind == "json":
            from scanner.loaders.jsondoc import load_json
            return load_json(data, path)
        if kind == "yaml":
            from scanner.loaders.yamldoc import load_yaml
            return load_yaml(data, path)
        if kind == "binary":
            raise LoadError(path, "binary file of unknown type: not scanned")
        from scanner.loaders.text import load_text
        return load_text(data, path)
    except LoadError:
        raise
    except RecursionError:
        raise LoadError(path, f"{kind} nested too deeply to load") from None
    except MemoryError:
        raise LoadError(path, f"{kind} too large to load in the memory allowed (--max-memory-mb)", code="memory") from None
    except Exception as exc:  # a loader bug must not stop a scan of other files; fail closed on this one
        raise LoadError(path, f"could not load {kind}: {type(exc).__name__}: {exc}") from None


def is_scannable(path: Path) -> bool:
    """A file a folder scan takes: a known extension, or a YAML file that is a recorded cassette (other YAML,
    a golden set or a rule pack, is not fixture content)."""
    suffix = path.suffix.lower()
    if suffix in SCANNABLE_EXT:
        return True
    if suffix not in YAML_EXT:
        return False
    from scanner.loaders.yamldoc import SNIFF_BYTES, looks_like_cassette

    try:
        with open(path, "rb") as fh:
            return looks_like_cassette(fh.read(SNIFF_BYTES))
    except OSError:
        return False


def check_file(path: Path, display: str, max_bytes: int | None = None) -> int:
    """The size of a regular file that may be read; LoadError for anything else, before a byte is read: gone
    (`missing`), a directory, FIFO, device or socket (`not_a_file`: reading a FIFO would wait forever), a
    symlink loop or no permission (`unreadable`), over `max_bytes` (`too_large`)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise LoadError(display, "file not found (deleted or a dangling symlink)", code="missing") from None
    except OSError as exc:
        raise LoadError(display, f"cannot read: {exc.strerror or exc}", code="unreadable") from None
    if stat.S_ISDIR(st.st_mode):
        raise LoadError(display, "is a directory", code="not_a_file")
    if not stat.S_ISREG(st.st_mode):
        raise LoadError(display, "not a regular file (FIFO, device or socket): not read", code="not_a_file")
    if max_bytes is not None and st.st_size > max_bytes:
        raise LoadError(display, too_large_message(st.st_size, max_bytes / (1024 * 1024)), code="too_large")
    return st.st_size


def load_path(path: Path, display: str | None = None, max_bytes: int | None = None) -> Document:
    display = display or str(path)
    return load_bytes(read_file(path, display, max_bytes), display)


def read_file(path: Path, display: str, max_bytes: int | None = None) -> bytes:
    """The bytes of a file that may be read (`check_file`), at most `max_bytes`; LoadError otherwise."""
    check_file(path, display, max_bytes)
    try:
        with open(path, "rb") as fh:
            data = fh.read() if max_bytes is None else fh.read(max_bytes + 1)
    except FileNotFoundError:
        raise LoadError(display, "file not found (deleted or a dangling symlink)", code="missing") from None
    except OSError as exc:
        raise LoadError(display, f"cannot read: {exc.strerror or exc}", code="unreadable") from None
    if max_bytes is not None and len(data) > max_bytes:   # it grew after the check
        raise LoadError(display, too_large_message(len(data), max_bytes / (1024 * 1024)), code="too_large")
    return data


def iter_files(paths: list[Path]):
    """Files under the given paths in a stable order (sorted, depth-first); symlinked directories not followed."""
    for root in paths:
        if root.is_dir():
            for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                for name in sorted(filenames):
                    yield Path(dirpath) / name
        else:
            yield root
