"""Fingerprints of a result: GitHub's `primaryLocationLineHash`, and centinela's own line-free key.

`primaryLocationLineHash`
    GitHub code scanning matches an alert across uploads by this value only. When a SARIF file lacks it,
    the `upload-sarif` action computes it itself. When the file already has a *different* value, the action
    logs "inconsistent fingerprint" and keeps ours. An upload through the REST API gets nothing filled in.
    So we compute it exactly as the action does (github/codeql-action `src/fingerprints.ts`, MIT; this is our
    own implementation of the algorithm that file describes, checked against the vectors of its
    `fingerprints.test.ts`):

    * The file is read as UTF-8 (an invalid byte becomes U+FFFD, a BOM stays) and walked as UTF-16 code
      units. Spaces and tabs are dropped. `\\r\\n` and a lone `\\r` both become `\\n`, and the `\\n` is kept as
      a character of the line it ends. A 0xFFFF sentinel marks the end of the file.
    * A line starts at its first kept unit. For an empty line that unit is its `\\n`; for the empty line
      after a final newline, and for an empty file, it is the sentinel.
    * The hash of a line is the polynomial hash, base 37 and modulo 2**64, of the 100 kept units that start
      at the line (sum of c[s+i] * 37**(99-i)). The window runs on into the following lines. Past the
      sentinel it is padded with zeros.
    * The value is `"<hash in lower-case hex, no leading zeros>:<n>"`. Here n is 1 plus the number of earlier
      lines of the file with the same hash.

    What it guarantees, and what it does not:

    * It is unchanged by anything above the line: an inserted line, a deleted line, and a new line number.
      One exception: if an inserted line has the same hash, the occurrence count after the colon goes up.
    * It is unchanged by spaces and tabs anywhere.
    * It changes when any of the 100 non-blank units from the line's start onwards changes, including the
      text of the *following* lines that the window reaches into.
    * It has no column in it, so two results on one line (a minified fixture) share it. The likely effect is
      that GitHub merges them into one alert.

`stable_fingerprint` (`centinela/v1`)
    Our own key for baselines and allowlists: sha256 over the rule id, the repo-relative POSIX path, and a
    digest of the normalised matched text. It has no line number and no column, so an edit elsewhere in the
    file leaves it unchanged. For secrets and personal data the digest is never taken over the text shown to
    people. It is `sha256(b"centinela-fp\\0" + datum)`, a domain-separated hash of the datum itself, or
    HMAC-SHA256 with a key when the caller has one. Why:

    * The datum itself never lands in a SARIF file or a baseline.
    * The constant prefix makes our digests differ from a plain sha256 of the value. A lookup table of
      sha256 values, or a digest some other tool stored, does not match them, and equal data cannot be
      linked across tools.
    * What it does NOT do: stop someone who knows this scheme from brute-forcing a value from a small space
      (a Mexican phone number, a CURP with a known birth date). Only a secret key stops that. Pass `key=`
      (for example from a CI secret) when the fingerprints are stored where people who must not learn the
      data can read them.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import sys
import unicodedata
from array import array

FINGERPRINT_KEY = "centinela/v1"      # the partialFingerprints key of `stable_fingerprint`
LINE_HASH_KEY = "primaryLocationLineHash"
SENSITIVE_KINDS = ("pii", "secret")        # kinds whose matched text is a datum that must never be shown

_WINDOW = 100
_BASE = 37
_MASK = (1 << 64) - 1
_END_OF_FILE = 0xFFFF
_LF = 0x0A
_BASE_POW_WINDOW = pow(_BASE, _WINDOW, 1 << 64)

_DATUM_DOMAIN = b"centinela-fp\0"
_BREAKS = re.compile(r"\r\n?")
_WS = re.compile(r"\s+")


# --------------------------------------------------------------------------- primaryLocationLineHash

def github_text(data: bytes) -> str:
    """File bytes as the upload action reads them: UTF-8, U+FFFD per invalid sequence, BOM kept."""
    return data.decode("utf-8", errors="replace")


def _utf16_units(text: str) -> array:
    units = array("H")
    units.frombytes(text.encode("utf-16-le", errors="surrogatepass"))
    if sys.byteorder == "big":
        units.byteswap()
    return units


def line_hashes(text: str) -> list[str]:
    """The `primaryLocationLineHash` of every line of `text`; item 0 is line 1.

    Lines end at `\\n`, `\\r\\n` or a lone `\\r`. A text with k line breaks has k + 1 lines; the last one is
    empty when the text ends with a break. Time is linear in the text; memory is 2 bytes per character.
    """
    # Spaces and tabs never count and never end a line, so dropping them first leaves the line structure:
    # a line starts right after each \n (the first at 0), the last one possibly at the end-of-file sentinel.
    units = _utf16_units(_BREAKS.sub("\n", text).replace(" ", "").replace("\t", ""))
    starts = [0]
    starts.extend(i + 1 for i, u in enumerate(units) if u == _LF)
    units.append(_END_OF_FILE)
    units.extend([0] * _WINDOW)

    out: list[str] = []
    seen: dict[int, int] = {}
    h = 0
    k = 0                                   # next line start whose window is still open
    for i, unit in enumerate(units):
        h = h * _BASE + unit
        if i >= _WINDOW:
            h -= units[i - _WINDOW] * _BASE_POW_WINDOW
        h &= _MASK
        if starts[k] == i - (_WINDOW - 1):  # the window [start, start + 100) is complete
            seen[h] = seen.get(h, 0) + 1
            out.append(f"{h:x}:{seen[h]}")
            k += 1
            if k == len(starts):
                break
    return out


def primary_location_line_hash(text: str, line: int) -> str:
    """GitHub's `primaryLocationLineHash` for 1-based `line` of `text` (see the module docstring)."""
    hashes = line_hashes(text)
    if not 1 <= line <= len(hashes):
        raise ValueError(f"line {line} is outside the text (1..{len(hashes)})")
    return hashes[line - 1]


# --------------------------------------------------------------------------- centinela/v1

def normalise_match(text: str) -> str:
    """NFKC, case-folded, whitespace runs collapsed to one space and trimmed.

    A re-captured fixture may be re-indented or re-wrapped; it still holds the same finding.
    """
    return _WS.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def datum_digest(datum: str, key: bytes | None = None) -> str:
    """The hex digest that stands in for a secret or personal datum (never the datum itself).

    Without a key it is sha256(b"centinela-fp\\0" + datum); with one, HMAC-SHA256(key, that same input). The
    datum is only stripped, not case-folded: case matters in a credential.
    """
    payload = _DATUM_DOMAIN + unicodedata.normalize("NFC", datum.strip()).encode("utf-8")
    if key is not None:
        return hmac.new(key, payload, hashlib.sha256).hexdigest()
    return hashlib.sha256(payload).hexdigest()


def match_digest(match_text: str, *, sensitive: bool = False, key: bytes | None = None) -> str:
    """Digest of a match: `datum_digest` for secrets and personal data, else sha256 of the normalised text."""
    if sensitive:
        return datum_digest(match_text, key)
    return hashlib.sha256(normalise_match(match_text).encode("utf-8")).hexdigest()


def fingerprint_from_digest(rule_id: str, path: str, digest: str) -> str:
    """The `centinela/v1` value from an already computed match digest."""
    posix = path.replace("\\", "/")
    while posix.startswith("./"):
        posix = posix[2:]
    payload = "\0".join((FINGERPRINT_KEY, rule_id, posix, digest)).encode("utf-8")
    return hashlib.sha256(payload).hexdigest()


def stable_fingerprint(rule_id: str, path: str, match_text: str, *, sensitive: bool = False,
                       key: bytes | None = None) -> str:
    """centinela's line-free fingerprint of a finding (see the module docstring).

    `path` is the repo-relative POSIX path. `match_text` is the matched text: for an injection, its evidence.
    For a secret or personal datum it is the datum, and then `sensitive=True` is required, so that only
    `datum_digest(datum)` enters the result. Adding lines elsewhere in the file does not change the value.
    """
    return fingerprint_from_digest(rule_id, path, match_digest(match_text, sensitive=sensitive, key=key))


def finding_fingerprint(finding, path: str, text: str | None = None, *, key: bytes | None = None) -> str:
    """`centinela/v1` of a `Finding`: the one choice of matched text that SARIF and baselines share.

    `path` is the repo-relative POSIX path. `text` is the file's decoded text (`Document.text`, which the
    finding's offsets index), or None for a PDF or when the file is not at hand.

    * Injection: the matched span of the file (`text[start:end]`), normalised. It is more specific than the
      evidence, which is often only the trigger phrase. Without text, the evidence is used.
    * Secret or personal data: `datum_digest` of the span. Without text (a PDF page), the masked evidence is
      used. That is all we have, and two data with the same mask then differ only by occurrence number.

    The SARIF writer adds `:<n>`: n is 1 plus the number of earlier findings in the same file with the same
    value, in file order.
    """
    span = None
    if text is not None and finding.page is None and 0 <= finding.start < finding.end <= len(text):
        span = text[finding.start:finding.end]
    if finding.kind in SENSITIVE_KINDS and span is not None:
        return stable_fingerprint(finding.rule_id, path, span, sensitive=True, key=key)
    return stable_fingerprint(finding.rule_id, path, span if span is not None else (finding.evidence or ""))
