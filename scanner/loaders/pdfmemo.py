"""One run's memo of loaded PDFs, keyed by their bytes: the same PDF under several names is laid out once.

A fixture tree holds the same PDF many times: the file itself, and its body in every provider's recorded
fetch of it (the example tree: a 104-page report four times, 416 of the 425 pages its scan lays out).
pdfminer's layout is the slowest step of a scan, and its result depends on the bytes alone, so within one run
(`scan_paths`; `manifest verify`'s load of every listed file) a PDF already loaded is not laid out again.

- The key is the sha256 of the bytes; the value is the loaded document (or its LoadError's message and code)
  pickled, so every hit hands out a fresh copy that callers may change (a recording's loader stamps each unit
  with its container) without touching the next one. The document's `path` is the caller's.
- Only loads under the default decode budget are memoised (a caller's own budget may stop earlier).
- Bounded: entries past `MAX_ENTRY_BYTES` pickled are not kept, and the oldest go once the memo holds
  `MAX_TOTAL_BYTES`, so a run over a large tree costs no more memory than this. In forked workers
  (`scanner.workers`) each worker has its own copy, counted against its memory cap like any allocation.
- Outside `active()` nothing is memoised: a direct `load_pdf` call behaves as it always did.
"""

from __future__ import annotations

import dataclasses
import hashlib
import pickle
from collections import OrderedDict
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable, Iterator

from scanner.units import Document, LoadError

MAX_ENTRY_BYTES = 8 << 20
MAX_TOTAL_BYTES = 32 << 20

_active: ContextVar["PdfMemo | None"] = ContextVar("centinela_pdfmemo", default=None)


class PdfMemo:
    def __init__(self, max_entry: int = MAX_ENTRY_BYTES, max_total: int = MAX_TOTAL_BYTES):
        self.max_entry, self.max_total = max_entry, max_total
        self._entries: OrderedDict[bytes, bytes] = OrderedDict()
        self.size = 0
        self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    def load(self, data: bytes, path: str, load: Callable[[], Document]) -> Document:
        """`load()`'s document for `data`, named `path`: from the memo when these bytes were loaded before."""
        key = hashlib.sha256(data).digest()
        stored = self._entries.get(key)
        if stored is not None:
            self.hits += 1
            self._entries.move_to_end(key)
            return _restore(pickle.loads(stored), path)
        self.misses += 1
        try:
            doc = load()
        except LoadError as exc:
            self._keep(key, ("error", exc.message, exc.code))
            raise
        self._keep(key, ("document", dataclasses.replace(doc, path="")))
        return doc

    def _keep(self, key: bytes, entry: tuple) -> None:
        blob = pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL)
        if len(blob) > self.max_entry:
            return
        self._entries[key] = blob
        self.size += len(blob)
        while self.size > self.max_total and self._entries:
            _, old = self._entries.popitem(last=False)
            self.size -= len(old)


def _restore(entry: tuple, path: str) -> Document:
    if entry[0] == "error":
        raise LoadError(path, entry[1], entry[2])
    doc = entry[1]
    doc.path = path
    return doc


def current() -> PdfMemo | None:
    return _active.get()


@contextmanager
def active(memo: PdfMemo | None = None) -> Iterator[PdfMemo]:
    """Memoise PDF loads within the block (a run); nested blocks keep the outer memo."""
    outer = _active.get()
    if outer is not None:
        yield outer
        return
    memo = memo if memo is not None else PdfMemo()
    token = _active.set(memo)
    try:
        yield memo
    finally:
        _active.reset(token)
