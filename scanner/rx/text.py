"""A str as RE2 reads it: one byte per character (scanner.rx.alphabet), encoded once per text.

An ASCII text (the common case: `str.isascii()` is O(1)) is its own encoding. Any other is read through the
alphabet at C speed. The last few long texts are kept (by identity, with the alphabet version they were read
in) per thread, so a tokenizer calling `match(text, pos)` tens of thousands of times on one document, or ten
lexicon groups searching one text, encode it once; short texts are encoded on each call.
"""

from __future__ import annotations

import threading

from scanner.rx.alphabet import ALPHABET

_KEEP = 4
_SHORT = 256
_local = threading.local()
_last: tuple = (None, -1, b"")      # the text encoded last, in any thread (a tuple is replaced at once)


def encoded(text: str) -> bytes:
    global _last
    last = _last
    if last[0] is text and last[1] == ALPHABET.version:
        return last[2]
    if len(text) < _SHORT:
        return ALPHABET.encode(text)
    recent = getattr(_local, "recent", None)
    if recent is None:
        recent = _local.recent = []
    version = ALPHABET.version
    for entry in recent:
        if entry[0] is text and entry[1] == version:
            _last = entry
            return entry[2]
    data = ALPHABET.encode(text)
    _last = entry = (text, version, data)
    recent.insert(0, entry)
    del recent[_KEEP:]
    return data
