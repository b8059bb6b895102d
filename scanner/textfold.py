"""Text folding: every way centinela folds text before comparing it, in one place, each named for what it keeps.

Each fold means one thing; they differ on purpose, and where two must agree a test says so.

| fold | what it does | who uses it | offsets |
|---|---|---|---|
| `scanner.normalize.normalize` | NFKC, case folding, combining marks and invisible format characters removed, common Cyrillic/Greek look-alikes read as Latin | the injection rules (lexicon, signals) on each unit | `Normalized.span()` maps back to the original |
| `scanner.normalize.fold_text` | exactly `normalize(text).text`, one `str.translate` | where no offset is needed | none |
| `scanner.injection.prefilter.fold_page` | character references and `\\u` escapes decoded, then `fold_text` | the prefilter's page-level search: it must find every phrase the rules would, so it folds with the rules' own table (tests/test_textfold.py) | none |
| `fold_accents` | lower case, Spanish accents and ñ/ü/ç removed, no-break space → space | personal-data context words, owner cues, names (scanner.pii) | same length: an index in the folded text is one in the original |
| `fold_collapsed` | `fold_text`, every run of whitespace one space | whether a text still holds an injection's evidence, whatever its spacing (`contain`, the scorer's containment) | none |
| `fold_words` | NFKD, combining marks removed, lower case, whitespace collapsed | date words of provider responses ("Hace 3 DÍAS" → "hace 3 dias") | none |

(`scanner.rx.charset.fold` is not a text fold: it closes a character set under Python's IGNORECASE rules.)
"""

from __future__ import annotations

import unicodedata

from scanner.normalize import fold_text

_ACCENTS = str.maketrans("ÁÉÍÓÚÜÑÀÈÌÒÙáéíóúüñàèìòùâêîôûç\u00a0",
                         "AEIOUUNAEIOUaeiouunaeiouaeiouc ")


def fold_accents(text: str) -> str:
    """Lower case without Spanish accents, with the same length as `text` (so offsets carry over)."""
    out = text.translate(_ACCENTS).lower()
    if len(out) != len(text):  # a character whose lower case is longer (İ): keep it as is
        out = "".join(c.translate(_ACCENTS).lower() if len(c.lower()) == 1 else c for c in text)
    return out


def fold_words(text: str) -> str:
    """Lower case, accents removed, whitespace collapsed: 'Hace 3 DÍAS' → 'hace 3 dias'."""
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(plain.lower().split())


def fold_collapsed(text: str) -> str:
    """The rules' fold (`scanner.normalize.fold_text`) with every run of whitespace as one space."""
    return " ".join(fold_text(text).split())
