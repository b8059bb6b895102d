"""One run's cache of loaded documents and of their secret and personal-data scans.

No command activates it any more: `scanner.pipeline` loads and scans each file once and hands the document
and its findings to every part of `check` (the scan, the redaction plan, verify's `unredacted` check). It
stays only while `PiiScanner.scan` (scanner/pii) carries its `cached_scan` decorator; remove this module, that
decorator, `SecretScanner.scan`'s and the hook in `scanner.loaders.load_bytes` together.

Within `active()`, a file whose
bytes were already loaded under the same name is not parsed again, and a secret or personal-data scanner with
the same configuration (its `cache_token()`) does not scan the same document twice: spaCy's NER, the slowest
step, runs once per file. Keys are the display name and the sha256 of the bytes, so a file changed between two
reads (a redaction rewriting it) is a new entry. Findings are handed out as copies (callers mark them
suppressed); documents are shared and treated as read-only. Outside `active()` nothing is cached. The cache
stops taking documents past `MAX_TEXT_CHARS` of text, so a huge tree costs no more memory than before.
"""

from __future__ import annotations

import dataclasses
import hashlib
from contextlib import contextmanager
from contextvars import ContextVar

MAX_TEXT_CHARS = 256 * 1024 * 1024

_active: ContextVar["DocCache | None"] = ContextVar("centinela_doccache", default=None)


class DocCache:
    def __init__(self):
        self.docs: dict[tuple[str, str], object] = {}
        self.scans: dict[tuple, list] = {}
        self.chars = 0
        self.hits = {"load": 0, "scan": 0}

    def load(self, data: bytes, display: str, loader):
        from scanner.units import LoadError

        key = (display, hashlib.sha256(data).hexdigest())
        got = self.docs.get(key)
        if got is not None:
            self.hits["load"] += 1
            if isinstance(got, LoadError):
                raise got
            return got
        try:
            doc = loader(data, display)
        except LoadError as exc:
            self.docs[key] = exc
            raise
        doc.meta["cache_key"] = key
        if self.chars + len(doc.text) <= MAX_TEXT_CHARS:
            self.docs[key] = doc
            self.chars += len(doc.text)
        return doc

    def scan(self, scanner, doc, fn) -> list:
        token = scanner.cache_token()
        doc_key = doc.meta.get("cache_key")
        if token is None or doc_key is None or self.docs.get(doc_key) is not doc:
            return fn(doc)
        key = (type(scanner).__name__, token, doc_key)
        got = self.scans.get(key)
        if got is None:
            got = self.scans[key] = fn(doc)
        else:
            self.hits["scan"] += 1
        return [dataclasses.replace(f, extra=dict(f.extra)) for f in got]


def current() -> DocCache | None:
    return _active.get()


@contextmanager
def active():
    """Cache documents and scans for the duration of the block (nested blocks share the outer cache)."""
    if _active.get() is not None:
        yield _active.get()
        return
    cache = DocCache()
    token = _active.set(cache)
    try:
        yield cache
    finally:
        _active.reset(token)


def cached_scan(method):
    """Decorator for a scanner's `scan(self, doc)`: served from the active cache when there is one."""
    def scan(self, doc):
        cache = _active.get()
        if cache is None:
            return method(self, doc)
        return cache.scan(self, doc, lambda d: method(self, d))
    scan.__doc__ = method.__doc__
    scan.__wrapped__ = method
    return scan
