"""Text folding: every way centinela folds text before comparing it, in one place, each named for what it keeps.

| fold | what it does | who uses it | offsets |
|---|---|---|---|
| `fold_accents` | lower case, Spanish accents and ñ/ü/ç removed, no-break space → space | personal-data context words, owner cues, names (scanner.pii) | same length: an index in the folded text is one in the original |
"""

from __future__ import annotations

_ACCENTS = str.maketrans("ÁÉÍÓÚÜÑÀÈÌÒÙáéíóúüñàèìòùâêîôûç\u00a0",
                         "AEIOUUNAEIOUaeiouunaeiouaeiouc ")


def fold_accents(text: str) -> str:
    """Lower case without Spanish accents, with the same length as `text` (so offsets carry over)."""
    out = text.translate(_ACCENTS).lower()
    if len(out) != len(text):  # a character whose lower case is longer (İ): keep it as is
        out = "".join(c.translate(_ACCENTS).lower() if len(c.lower()) == 1 else c for c in text)
    return out
