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

`centinela/v1`
    Our own key for baselines and allowlists: sha256 over the rule id, the repo-relative POSIX path (as every
    output shows it: a segment that holds a datum masked, `scanner.scrub.scrub_path`) and a digest of the
    finding. It has no line number and no column, so an edit elsewhere in the file leaves it unchanged.

    * Injection (and any kind that is not a datum): sha256 of the normalised matched text. If a secret or
      personal datum found in the same file sits inside that text, it is replaced by its redaction
      replacement first.
    * Secret or personal datum, **with a key**: HMAC-SHA256(key, b"centinela-fp\\0" + datum). The key comes
      from `$CENTINELA_FINGERPRINT_KEY`, else the file named by `$CENTINELA_FINGERPRINT_KEY_FILE`, else
      `$XDG_CONFIG_HOME/centinela/fingerprint.key` (`~/.config/…`): at least 16 characters, never in the
      repository (a key file inside it is refused), the same on every run (a CI secret) so that code
      scanning keeps tracking the alerts. Without the key nobody can test a guess.
    * Secret or personal datum, **without a key**: the datum is left out. The digest is taken over the
      entity, the place inside the file (JSON pointer or element, without any line number), the page and
      the masked evidence (`55…78`), all of which the SARIF result shows anyway, so the value gives nothing
      away, and a brute force over the candidates finds every candidate equally good. The price: two data
      with the same mask at the same place share a fingerprint (the `:n` occurrence suffix of SARIF still
      tells them apart), so a baseline or allowlist entry also matches a different datum of the same shape
      there. Every run that falls back warns once on stderr (`UNKEYED_WARNING`).
    * A PDF finding has no text span: its digest is that of the masked evidence and the page, keyed or not.

    Before this scheme (centinela 0.1.0 baselines with `version: 1` and `keyed: false`), the unkeyed digest was
    sha256(b"centinela-fp\\0" + datum): trying the 10^6 numbers a phone's mask `55…78` allows gives it back
    (3.6 s in pure Python here; the raw-line `primaryLocationLineHash` did in 7 ms, being linear in the
    characters: tests/test_fingerprint_bruteforce.py runs both attacks). `legacy_fingerprint` still computes
    the old value, only to recognise such entries in old baselines and allowlists (they keep working, with a
    warning to rewrite them); it is never written.

`primaryLocationLineHash` of a file with secrets or personal data
    GitHub's window covers 100 characters from the line's start, so a datum on the line, or on the next lines
    the window reaches, would be recoverable from it. `line_hashes` is therefore given the file's text with
    every datum found in it replaced by its redaction replacement (`without_data`, the line breaks inside a
    datum kept so lines stay lines): the hash is the one the line will have once redacted, and no guess of
    the datum reproduces it.
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

KEY_ENV = "CENTINELA_FINGERPRINT_KEY"
KEY_FILE_ENV = "CENTINELA_FINGERPRINT_KEY_FILE"
KEY_FILE_NAME = "fingerprint.key"          # in $XDG_CONFIG_HOME/centinela/ (default ~/.config/centinela/)
MIN_KEY_CHARS = 16
_NO_DATUM_DOMAIN = b"centinela-fp-datum-omitted\0"
_LINE_LOCATOR = re.compile(r"^line \d+:?")
_REDACTED = "REDACTED"

UNKEYED_WARNING = (
    "warning: no fingerprint key ($CENTINELA_FINGERPRINT_KEY, a file named by $CENTINELA_FINGERPRINT_KEY_FILE, "
    "or ~/.config/centinela/fingerprint.key outside the repository): the fingerprints of secret and personal-data "
    "findings (SARIF centinela/v1, baselines, allowlists) leave the datum out, so two data with the same mask at "
    "the same place share one; set a key (a CI secret, the same on every run) to tell them apart")


class FingerprintKeyError(Exception):
    """A key that is given but cannot be used (too short, unreadable, inside the repository)."""


def fingerprint_key(environ=None, repo_root=None) -> bytes | None:
    """The HMAC key for the `centinela/v1` digests of secrets and personal data, or None (see the module
    docstring for where it is looked for). Raises `FingerprintKeyError` for a key given but unusable."""
    import os
    from pathlib import Path

    env = os.environ if environ is None else environ
    value = env.get(KEY_ENV, "")
    if value:
        if len(value) < MIN_KEY_CHARS:
            raise FingerprintKeyError(f"${KEY_ENV} must be at least {MIN_KEY_CHARS} characters (never commit it)")
        return value.encode("utf-8")
    named = env.get(KEY_FILE_ENV, "")
    if named:
        path = Path(named).expanduser()
        if not path.is_file():
            raise FingerprintKeyError(f"${KEY_FILE_ENV}: {named}: no such file")
    else:
        config = Path(env.get("XDG_CONFIG_HOME") or Path(env.get("HOME") or Path.home()) / ".config")
        path = config / "centinela" / KEY_FILE_NAME
        if not path.is_file():
            return None
    if repo_root is not None:
        real, root = os.path.realpath(path), os.path.realpath(repo_root)
        if os.path.commonpath([real, root]) == root:
            raise FingerprintKeyError(f"{path}: the fingerprint key file is inside the repository ({root}), where "
                                      f"it would be committed: keep it outside, or pass it as ${KEY_ENV}")
    try:
        key = path.read_bytes().strip()
    except OSError as exc:
        raise FingerprintKeyError(f"{path}: cannot read the fingerprint key: {exc.strerror or exc}") from None
    if len(key) < MIN_KEY_CHARS:
        raise FingerprintKeyError(f"{path}: the fingerprint key must be at least {MIN_KEY_CHARS} characters")
    return key


_warned_unkeyed = False


def unkeyed_warning_once(findings, key: bytes | None) -> str | None:
    """`UNKEYED_WARNING` the first time in this process that fingerprints of secret or personal-data findings
    are computed without a key; None otherwise (the caller prints it)."""
    global _warned_unkeyed
    if key is not None or _warned_unkeyed or not any(f.kind in SENSITIVE_KINDS for f in findings):
        return None
    _warned_unkeyed = True
    return UNKEYED_WARNING


def normalise_match(text: str) -> str:
    """NFKC, case-folded, whitespace runs collapsed to one space and trimmed.

    A re-captured fixture may be re-indented or re-wrapped; it still holds the same finding.
    """
    return _WS.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def _datum_payload(datum: str) -> bytes:
    return _DATUM_DOMAIN + unicodedata.normalize("NFC", datum.strip()).encode("utf-8")


def datum_digest(datum: str, key: bytes) -> str:
    """HMAC-SHA256(key, b"centinela-fp\\0" + datum): what stands in for a secret or personal datum when there
    is a key. Only stripped, not case-folded: case matters in a credential. There is no unkeyed form."""
    if not key:
        raise ValueError("datum_digest needs a key: without one the datum is left out (datum_free_digest)")
    return hmac.new(key, _datum_payload(datum), hashlib.sha256).hexdigest()


def _place(finding) -> str:
    locator = _LINE_LOCATOR.sub("", finding.locator or "")      # "line 12:" of text and JSON Lines: no line numbers
    container = (finding.extra or {}).get("container") or ""
    return f"{container}#{locator}" if container else locator


def datum_free_digest(finding) -> str:
    """The digest of a secret or personal-data finding without its datum: entity, place in the file (pointer,
    element; no line number), page, masked evidence. What it is made of is all in the SARIF result already."""
    parts = (finding.entity or "", _place(finding), str(finding.page or ""), finding.evidence or "")
    return hashlib.sha256(_NO_DATUM_DOMAIN + "\0".join(parts).encode("utf-8")).hexdigest()


def match_digest(match_text: str) -> str:
    """Digest of a text that is not a datum (an injection's match): sha256 of the normalised text."""
    return hashlib.sha256(normalise_match(match_text).encode("utf-8")).hexdigest()


def fingerprint_from_digest(rule_id: str, path: str, digest: str) -> str:
    """The `centinela/v1` value from an already computed digest. The path is taken as outputs show it
    (`scanner.scrub.scrub_path`): a file named after a person is not hashed with the name in clear."""
    from scanner.scrub import scrub_path

    posix = path.replace("\\", "/")
    while posix.startswith("./"):
        posix = posix[2:]
    payload = "\0".join((FINGERPRINT_KEY, rule_id, scrub_path(posix), digest)).encode("utf-8")
    return hashlib.sha256(payload).hexdigest()


def stable_fingerprint(rule_id: str, path: str, match_text: str) -> str:
    """centinela's line-free fingerprint of a text that is not a datum (an injection's match or evidence)."""
    return fingerprint_from_digest(rule_id, path, match_digest(match_text))


def keyed_fingerprint(rule_id: str, path: str, datum: str, key: bytes) -> str:
    """centinela's fingerprint of a secret or personal datum under a key (HMAC; see the module docstring)."""
    return fingerprint_from_digest(rule_id, path, datum_digest(datum, key))


# --------------------------------------------------------------------------- the data of a file

def replacement_of(finding) -> str:
    """What stands for a finding's datum in texts we hash: its redaction replacement, else `REDACTED`."""
    repl = (finding.extra or {}).get("replacement")
    return repl if isinstance(repl, str) and repl else _REDACTED


def file_data(findings, text_of) -> dict[str, list[tuple[str, str]]]:
    """Per display path, every secret or personal datum its findings point at, in each form it can take in
    the file (`scanner.evidence.datum_variants`), with its replacement: longest first, for `without_data`."""
    from scanner.evidence import datum_variants

    out: dict[str, dict[str, str]] = {}
    for f in findings:
        if f.kind not in SENSITIVE_KINDS or f.page is not None or f.end <= f.start:
            continue
        text = text_of(f.path)
        if text is None or f.end > len(text):
            continue
        bucket = out.setdefault(f.path, {})
        for variant in datum_variants(text[f.start:f.end]):
            bucket.setdefault(variant, replacement_of(f))
    return {p: sorted(d.items(), key=lambda kv: (-len(kv[0]), kv[0])) for p, d in out.items()}


def without_data(text: str, data) -> str:
    """`text` with each (datum, replacement) of `data` replaced; a datum's line breaks are kept after its
    replacement, so the text has the same lines."""
    for datum, repl in data:
        if datum in text:
            breaks = "".join(c for c in datum if c in "\r\n")
            text = text.replace(datum, repl + breaks)
    return text


# --------------------------------------------------------------------------- a finding's fingerprint

def _span(finding, text: str | None) -> str | None:
    if text is not None and finding.page is None and 0 <= finding.start < finding.end <= len(text):
        return text[finding.start:finding.end]
    return None


def finding_fingerprint(finding, path: str, text: str | None = None, *, key: bytes | None = None,
                        data=()) -> str:
    """`centinela/v1` of a `Finding`: the one computation that SARIF, baselines and allowlists share.

    `path` is the repo-relative POSIX path. `text` is the file's decoded text (`Document.text`, which the
    finding's offsets index), or None for a PDF or when the file is not at hand. `data` is the file's
    (datum, replacement) pairs (`file_data`), replaced in an injection's text before it is hashed.

    * Injection: the matched span of the file (`text[start:end]`), normalised; without text, the evidence.
    * Secret or personal data: with a key and the span, `datum_digest` of the span; without a key,
      `datum_free_digest`; without text (a PDF page), the masked evidence (and page) as an injection's text.

    The SARIF writer adds `:<n>`: n is 1 plus the number of earlier findings in the same file with the same
    value, in file order.
    """
    span = _span(finding, text)
    if finding.kind in SENSITIVE_KINDS:
        if span is None:
            return stable_fingerprint(finding.rule_id, path, finding.evidence or "")
        if key is not None:
            return keyed_fingerprint(finding.rule_id, path, span, key)
        return fingerprint_from_digest(finding.rule_id, path, datum_free_digest(finding))
    matched = span if span is not None else (finding.evidence or "")
    return stable_fingerprint(finding.rule_id, path, without_data(matched, data) if data else matched)


def legacy_fingerprint(finding, path: str, text: str | None = None) -> str | None:
    """The unkeyed value centinela 0.1.0 wrote for a secret or personal datum (sha256 over the plain datum
    digest), or None for other findings and for those the scheme has not changed. Only to recognise entries
    of old baselines and allowlists: never written."""
    span = _span(finding, text)
    if finding.kind not in SENSITIVE_KINDS or span is None:
        return None
    posix = path.replace("\\", "/")
    while posix.startswith("./"):
        posix = posix[2:]
    digest = hashlib.sha256(_datum_payload(span)).hexdigest()
    return hashlib.sha256("\0".join((FINGERPRINT_KEY, finding.rule_id, posix, digest)).encode("utf-8")).hexdigest()
