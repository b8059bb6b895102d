"""Secrets and personal data out of the strings an output carries that no scan ever looked at.

The scan masks what it finds *inside* files. Two kinds of strings reach outputs without that:

* **Paths.** A file named after a person (`_shared/html/juan.perez.lopez@gmail.com.html`) or holding a key
  (`tvly-…json`) puts the datum into every line, JSON entry, SARIF URI (percent-encoded: `%40`) and report
  that names the file. `scrub_path(path)` masks it, segment by segment: each segment is read percent-decoded,
  with and without its extension, and an email address (any), a phone number, a CURP, a personal RFC, an NSS,
  a CLABE, an INE key, or a secret of a known format becomes its masked form (`jua…@gmail.com.html`,
  `55…78.json`, `REDACTED.json` for a secret), the same way in every output. A segment holding nothing keeps
  its exact spelling (no decoding).
* **Run records and request logs.** A result URL with `api_key=tvly-…`, an error message quoting a key, a
  claim's text: `scrub_text(text)` runs the secret rules (query parameters, key formats, header lines) and the
  personal-data recognizers (without NER) over it, and replaces what `redact` would remove: a secret by
  `REDACTED` (`…&api_key=REDACTED`), a personal datum by its masked form (`jua…@gmail.com`). A string that
  looks like a URL is read as one (every credential-looking parameter counts). `scrub_data(obj)` does it to
  every string (keys too) of a JSON-like structure: the scorer's report, verify-run's result, the review file.

Both are pure and idempotent (a masked form is not a datum again), and cheap on clean text: a string runs the
detectors only when a gate says it could hold something (an `=`, an `@`, a run of digits, a key prefix…), first
one linear-time RE2 pass, then exact tests; results are cached per string, and `scrub_data` gates all the
distinct strings of a structure in one RE2 scan. On `make bench-score`'s report (10,000 cases: 519,155 strings,
102,523 distinct) the scrub takes 0.25–0.30 s; `score()` end to end with and without it, alternated five times
in one run on a loaded machine, took a median 17.20 s and 17.33 s (within the noise). The detectors load on
first need.
"""

from __future__ import annotations

import bisect
import re
import threading
from functools import lru_cache
from typing import Any
from urllib.parse import unquote

from scanner import secret_keywords
from scanner.evidence import REPLACEMENT_EMAIL, REPLACEMENT_PHONE, REPLACEMENT_SECRET, mask

# Could a personal datum be in there? An at-sign (also `%40`) or its spellings; else the shapes: six digits in
# a row (a CURP, an RFC, an INE key hold six), ten with short separators, a line break included (a national
# phone, as PDF text wraps it; an NSS has eleven digits, a CLABE eighteen) or seven after `+`/`00` (an
# international one). ISO dates and times are taken out first (a timestamp has fourteen digits and is no
# phone). In a URL the recognizers take no phone (numbers in URLs are ids: `scanner.pii.scanner`), so there
# only six in a row or an eleven-digit run count.
_OBFUSCATED_AT = re.compile(r"[\[({]\s*(?:at|arroba)\s*[\])}]|\sarroba\s", re.I)
_PII_SHAPE = re.compile(r"\d{6}|\d(?:\D{0,3}\d){9}|(?:\+|(?<!\w)00)[ (]?\d(?:\D{0,3}\d){6}")
_PII_SHAPE_URL = re.compile(r"\d{6}|\d(?:[ \-]?\d){10}")
_ISO_TIME = re.compile(r"\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)?")
_SPACE = re.compile(r"\s")
_PARAMETER = re.compile(r"[^\s=&?]=[^\s&]")
_SCHEMES = ("http://", "https://", "ws://", "wss://", "ftp://")
# Entities masked in a path segment. A file name has no context to say a number is a company's line, so any
# phone counts; a company's RFC and a role mailbox's owner are public, a role mailbox is still an address.
_PATH_ENTITIES = frozenset({"EMAIL_ADDRESS", "PHONE_NUMBER", "MX_CURP", "MX_RFC_PERSONA_FISICA", "MX_NSS",
                            "MX_CLABE", "MX_INE_CLAVE"})
_ONE_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,5}\Z")
# A word of a message is read as a path when it has a separator or ends with a file extension we know.
_FILE_EXTENSION = re.compile(r"\.(?:html?|xhtml|shtml|json|jsonl|ndjson|har|txt|md|markdown|pdf|ya?ml|xml|csv|gz)\Z",
                             re.I)
_PLACEHOLDERS = frozenset({REPLACEMENT_EMAIL, REPLACEMENT_PHONE})


class _Detectors:
    """The secret scanner and the personal-data recognizers, loaded once, on first need."""

    def __init__(self):
        self._lock = threading.Lock()
        self._secrets = None
        self._pii = None
        self._recognizers = None
        self._any = None
        self._keywords = False            # not read yet

    def secrets(self):
        if self._secrets is None:
            with self._lock:
                if self._secrets is None:
                    from scanner.secrets.detect import SecretScanner

                    self._secrets = SecretScanner()
        return self._secrets

    def pii(self):
        if self._pii is None:
            with self._lock:
                if self._pii is None:
                    from scanner.pii import PiiScanner

                    self._pii = PiiScanner(use_ner=False)
        return self._pii

    def recognizers(self):
        if self._recognizers is None:
            self._recognizers = self.pii().recognizers
        return self._recognizers

    def could_hold(self, text: str) -> bool:
        """One linear-time pass (RE2) that every text holding something passes: a `name=value`, a secret
        rule's keyword, `%`, `@`, a spelled-out at-sign, six digits in a row, ten with short separators, a `+`
        or `00` before seven. The exact gates below run only on what passes (a report's plain URLs, ids and
        metric names do not)."""
        gate = self.any_gate()
        return gate is False or gate.search(text) is not None

    def any_gate(self):
        if self._any is None:
            self._any = _any_gate(self.keyword_gate())
        return self._any

    def keyword_gate(self):
        """The secret scanner's prefilter (`SecretScanner._gate`: its rules' keywords), from the keywords read
        off the rule files (scanner.secret_keywords) without building the scanner; None: no keywords."""
        if self._keywords is False:
            words = secret_keywords.keywords()
            if words is None:                # a rule file it cannot read: the scanner's own gate
                self._keywords = self.secrets()._gate
            else:
                from scanner import rx

                self._keywords = rx.compile("|".join(map(re.escape, words))) if words else None
        return self._keywords

    def secret_gate(self, text: str) -> bool:
        """Could a secret rule fire on this text? (`name=value` for parameters, else the rules' own keywords.)"""
        if "=" in text and _PARAMETER.search(text):
            return True
        gate = self.keyword_gate()
        return gate is not None and gate.search(text.lower()) is not None


_DETECTORS = _Detectors()


def _any_gate(keywords):
    """The RE2 pattern of `_Detectors.could_hold`, or False (every text passes) without google-re2."""
    try:
        import re2
    except ImportError:         # pragma: no cover - a dependency; the exact gates still decide
        return False
    digit = r"\p{Nd}"
    parts = [r"[^\s=&?]=[^\s&]", "%", "@", "arroba", r"[\[({]\s*at\s*[\])}]", digit + "{6}",
             digit + rf"(?:\P{{Nd}}{{0,3}}{digit}){{9}}",
             rf"(?:[+]|00)[ (]?{digit}(?:\P{{Nd}}{{0,3}}{digit}){{6}}"]
    if keywords is not None:
        parts.append(keywords.pattern)
    options = re2.Options()
    options.case_sensitive = False
    options.log_errors = False
    return re2.compile("|".join(f"(?:{p})" for p in parts), options)


def _document(text: str, url: bool):
    from scanner.offsetmap import OffsetMap
    from scanner.units import Channel, Document, TextUnit

    doc = Document(path="<output>", kind="text", text=text)
    channel = Channel.HTTP_URL if url else Channel.PLAIN_TEXT
    doc.units.append(TextUnit(text, channel, 0, len(text), OffsetMap.identity(0, len(text)), locator="output"))
    return doc


def _replace(text: str, spans: list[tuple[int, int, str]]) -> str:
    """`text` with each (start, end, replacement) applied; of overlapping spans the earlier, longer wins."""
    out, pos = [], 0
    for start, end, repl in sorted(spans, key=lambda s: (s[0], -(s[1] - s[0]))):
        if start < pos:
            continue
        out.append(text[pos:start])
        out.append(repl)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _pii_mask(datum: str, entity: str | None) -> str:
    decoded = unquote(datum) if "%" in datum else datum
    return mask(decoded, "EMAIL_ADDRESS" if "@" in decoded else entity)


def _secret_spans(text: str, url: bool) -> list[tuple[int, int, str]]:
    if not text or not _DETECTORS.secret_gate(text):
        return []
    return [(f.start, f.end, REPLACEMENT_SECRET) for f in _DETECTORS.secrets().scan(_document(text, url))]


_TOKEN = re.compile(r"\S+")
_EDGE = "\"'()[]{}<>,;:«»"


def _paths_in(text: str) -> str:
    """Path-like words of a message (`a/b.json`, `x@y.mx.html`; not URLs) through `scrub_path`."""
    def one(m) -> str:
        word = m.group()
        core = word.strip(_EDGE)
        if len(core) < 4 or "://" in core or not ("/" in core or "\\" in core or _FILE_EXTENSION.search(core)):
            return word
        masked = scrub_path(core)
        return word if masked == core else word.replace(core, masked, 1)
    return _TOKEN.sub(one, text)


def _pii_gate(text: str, url: bool | None) -> bool:
    """Could the personal-data recognizers find anything in this text? (See `_PII_SHAPE`; `url` None: find
    out whether the text is a URL only if it matters.)"""
    if "@" in text or "%40" in text or _OBFUSCATED_AT.search(text):
        return True
    if url if url is not None else _looks_like_url(text):
        return _PII_SHAPE_URL.search(text) is not None
    if _PII_SHAPE.search(text) is None:
        return False
    return _PII_SHAPE.search(_ISO_TIME.sub(" ", text)) is not None if "-" in text else True


def _looks_like_url(text: str) -> bool:
    """One word that is an absolute URL, or a path with a query string (`/search?q=x&api_key=…`)."""
    if _SPACE.search(text):
        return False
    return text[:8].lower().startswith(_SCHEMES) or "=" in text.partition("?")[2]


@lru_cache(maxsize=1 << 18)
def _scrub_text(text: str, kinds: tuple[str, ...], as_url: bool | None = None) -> str:
    if not _DETECTORS.could_hold(text):
        return text
    probe = unquote(text) if "%" in text else text       # a percent-encoded datum is a datum
    secret = "secret" in kinds and _DETECTORS.secret_gate(probe)
    pii = "pii" in kinds and _pii_gate(probe, as_url)
    if not secret and not pii:
        return text                   # nor can any path-like word of it hold anything
    url = _looks_like_url(text) if as_url is None else as_url
    spans = _secret_spans(text, url) if secret else []
    if pii:
        for f in _DETECTORS.pii().scan(_document(text, url)):
            if f.redactable:       # what `redact` removes; kept data stay
                spans.append((f.start, f.end, _pii_mask(text[f.start:f.end], f.entity)))
    out = _replace(text, spans) if spans else text
    if not url and "pii" in kinds and "secret" in kinds:
        out = _paths_in(out)
    return out


def scrub_text(text: str, kinds: tuple[str, ...] = ("secret", "pii"), *, as_url: bool | None = None) -> str:
    """`text` with every secret replaced by `REDACTED` and every personal datum `redact` would remove by its
    masked form. A text that reads as a URL is scanned as one (`as_url` forces the choice: then every
    `name=value` parameter in it is judged, as in a recorded request URL)."""
    if not isinstance(text, str) or len(text) < 4:
        return text
    return _scrub_text(text, tuple(kinds), as_url)


def _segment_spans(seg: str) -> list[tuple[int, int, str]]:
    pii = _pii_gate(seg, False)
    if not pii and not _DETECTORS.secret_gate(seg):
        return []
    spans = _secret_spans(seg, "=" in seg)
    if pii:
        for rec in _DETECTORS.recognizers():
            entity = rec.supported_entities[0]
            if entity not in _PATH_ENTITIES:
                continue
            for r in rec.analyze(seg, [entity]):
                if seg[r.start:r.end] in _PLACEHOLDERS:
                    continue
                spans.append((r.start, r.end, _pii_mask(seg[r.start:r.end], entity)))
    return spans


@lru_cache(maxsize=1 << 16)
def _scrub_segment(seg: str) -> str:
    decoded = unquote(seg) if "%" in seg else seg
    spans = _segment_spans(decoded)
    stem = decoded
    for _ in range(2):          # `x@gmail.com.html`, `x@gmail.com.json.gz`: the address ends before them
        m = _ONE_EXTENSION.search(stem)
        if m is None or m.start() == 0:
            break
        stem = stem[:m.start()]
        covered = {(s, e) for s, e, _ in spans}
        spans += [s for s in _segment_spans(stem) if (s[0], s[1]) not in covered]
    return _replace(decoded, spans) if spans else seg


def scrub_path(path: str) -> str:
    """`path` with every segment that holds a datum masked (see the module docstring); `/` and `\\` separate
    segments, and are kept as they are."""
    if not isinstance(path, str) or not path:
        return path
    parts = re.split(r"([/\\])", path)
    return "".join(p if p in ("/", "\\") or len(p) < 4 else _scrub_segment(p) for p in parts)


def scrub_data(obj: Any, kinds: tuple[str, ...] = ("secret", "pii")) -> Any:
    """A JSON-like structure with `scrub_text` applied to every string, dictionary keys included: a copy when
    anything changed, else `obj` itself.

    Its distinct strings are gated in one pass: joined by line breaks, they go through the RE2 gate of
    `_Detectors.could_hold` once (a match reaching over the breaks only makes both strings suspects), and
    only the strings a match touches are scrubbed one by one. A report of 500,000 strings costs a walk."""
    kinds = tuple(kinds)
    seen: dict[str, None] = {}

    def collect(o) -> None:
        if isinstance(o, str):
            seen[o] = None
        elif isinstance(o, dict):
            for k, v in o.items():
                if isinstance(k, str):
                    seen[k] = None
                collect(v)
        elif isinstance(o, (list, tuple)):
            try:
                seen.update(dict.fromkeys(o))      # a list of strings (and numbers): in one C call
            except TypeError:                      # it holds dictionaries or lists
                for v in o:
                    collect(v)

    collect(obj)
    changed = {}
    for text in _suspects([t for t in seen if isinstance(t, str)]):
        if len(text) >= 4:
            out = _scrub_text(text, kinds, None)
            if out != text:
                changed[text] = out
    if not changed:
        return obj

    def walk(o):
        if isinstance(o, str):
            return changed.get(o, o)
        if isinstance(o, dict):
            return {changed.get(k, k) if isinstance(k, str) else k: walk(v) for k, v in o.items()}
        if isinstance(o, (list, tuple)):
            return [walk(v) for v in o]
        return o
    return walk(obj)


_JOIN = "\n" * 4     # longer than any gap the digit shapes allow: no shape runs from one text into the next


def _suspects(texts: list[str]) -> list[str]:
    """The texts the RE2 gate could match in, found with one scan over all of them joined."""
    gate = _DETECTORS.any_gate()
    if gate is False:
        return texts
    joined = _JOIN.join(texts)
    starts, pos = [], 0
    for t in texts:
        starts.append(pos)
        pos += len(t) + len(_JOIN)
    hit: set[int] = set()
    for m in gate.finditer(joined):
        first = bisect.bisect_right(starts, m.start()) - 1
        last = bisect.bisect_right(starts, max(m.end() - 1, m.start())) - 1
        hit.update(range(first, last + 1))
    return [texts[i] for i in sorted(hit)]


def mask_paths(obj: Any, keys: frozenset[str] = frozenset({"path"})) -> Any:
    """A copy of a JSON-like structure with `scrub_path` applied to the string values (and lists of strings)
    of the given keys; every other value as it is."""
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if k in keys and isinstance(v, str):
                out[k] = scrub_path(v)
            elif k in keys and isinstance(v, list) and all(isinstance(x, str) for x in v):
                out[k] = [scrub_path(x) for x in v]
            else:
                out[k] = mask_paths(v, keys)
        return out
    if isinstance(obj, (list, tuple)):
        return [mask_paths(v, keys) for v in obj]
    return obj


def shown_path(path) -> str:
    """A path as a line of text output shows it: datum masked (`scrub_path`), then terminal-safe."""
    from scanner.terminal import safe

    return safe(scrub_path(str(path)))


def shown(text) -> str:
    """A message as a line of text output shows it: secrets and personal data out (`scrub_text`), then
    terminal-safe."""
    from scanner.terminal import safe

    return safe(scrub_text(str(text)))


def scrub_json(text: str) -> str:
    """JSON text (a request body) with every secret the rules find in it replaced by `REDACTED`, judged as the
    scan judges a JSON file: by key (`"password": …`), by parameter and by format. Text that is not JSON is
    scrubbed as a URL-like text."""
    from scanner.loaders import load_bytes
    from scanner.units import LoadError

    if not isinstance(text, str) or len(text) < 4:
        return text
    try:
        doc = load_bytes(text.encode("utf-8", errors="surrogatepass"), "body.json")
    except (LoadError, UnicodeError):
        return scrub_text(text, ("secret",), as_url=True)
    if doc.text != text:
        return scrub_text(text, ("secret",), as_url=True)
    spans = [(f.start, f.end, REPLACEMENT_SECRET) for f in _DETECTORS.secrets().scan(doc)]
    return _replace(text, spans) if spans else text


def scrub_request(text: str) -> str:
    """A request as the replay server's log names it (`POST /search query="…"`, `GET /p ?a=b`, `… body={…}`):
    every secret out, the `body=` part read as JSON."""
    if not isinstance(text, str):
        return text
    head, sep, body = text.partition(" body=")
    head = scrub_text(head, ("secret",), as_url=True)
    return head + sep + (scrub_json(body) if sep else "")
