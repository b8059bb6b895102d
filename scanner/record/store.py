"""A recorded exchange into the fixture tree: redacted in memory, placed where its class belongs, written
atomically, listed in `manifest.json`.

Order, so that no secret or personal datum reaches the disk, a temporary file or a log: the envelope is built in
memory with the request's credentials out (`capture`), the redactor plans and applies the spec's rules to it
and checks the result as `redact --write` checks a file (it parses, reads back as the same recording, a rescan
finds nothing left: `Redactor.redacted_bytes`), and only those bytes are written (`scanner.atomic`: their
temporary file holds the same redacted bytes). An exchange that cannot be made clean is not written at all.

Placement (the nine classes, spec §2): a timeout, a 429 and a 5xx go to `errors/` (`timeout.json`, `429.json`,
`502.json`…); a PDF or HTML page to `fetch/` (`pdf` / `html`); an answer that returns fewer of the URLs asked
for than were asked to `extract/` as `partial`; a search to `search/` as `results`; any other answer to
`extract/`, as `prompt-injection` when the injection rules flag it and `results` otherwise. A page the rules
flag is `prompt-injection` too. The adapter's test may name the case (`X-Centinela-Case: gs-001`) and the class
(`X-Centinela-Class: contradictory`, or results, partial, prompt-injection); without a case header the case
is the golden case whose query the request asks. A file is named by its case, or by a digest of its request
key (the redacted request), with the class's suffix (`-partial`, `-injection`, `-contradictory`, `-pdf`); the
same request recorded again replaces its file, so `serve` never finds two recordings of one request.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from scanner.atomic import atomic_write_bytes, atomic_write_text
from scanner.fixtures.tree import GOLDEN_DIR, LARGE_BODY_BYTES, MANIFEST, SHARED_DIR, read_golden, unsafe_reason
from scanner.record.capture import CaptureRefused, Exchange, captured_at, envelope, envelope_bytes

CASE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
PROVIDER_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
HINT_CLASSES = ("results", "contradictory", "partial", "prompt-injection")
SUFFIX = {"partial": "-partial", "prompt-injection": "-injection", "contradictory": "-contradictory", "pdf": "-pdf"}
DIGEST_CHARS = 12


class RecordError(Exception):
    """`record` cannot run as asked (exit 2): one line naming the option or file."""


@dataclass
class Outcome:
    recorded: bool
    rel: str | None = None
    cls: str | None = None
    case: str | None = None
    truncated: bool = False
    replaced: str | None = None
    reason: str | None = None
    warnings: list[str] = field(default_factory=list)


def check_case(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip()
    if not CASE_ID.match(value) or ".." in value:
        raise ValueError("X-Centinela-Case must be a case id (letters, digits, '.', '_', '-'; at most 64)")
    return value


def check_class(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip().lower()
    if value not in HINT_CLASSES:
        raise ValueError(f"X-Centinela-Class must be one of {', '.join(HINT_CLASSES)} (the others come from the "
                         "answer itself)")
    return value


def _norm(text: str) -> str:
    return " ".join(unicodedata.normalize("NFC", text).casefold().split())


def _asked_query(request) -> str | None:
    """The query a search asks: body `query` or `q`, else the URL's `q` parameter."""
    body = request.get("body")
    if isinstance(body, dict):
        for name in ("query", "q"):
            if isinstance(body.get(name), str):
                return body[name]
    params = dict(parse_qsl(urlsplit(request.get("url") or "").query))
    return params.get("q")


class Recorder:
    """Writes the exchanges of one provider under ROOT. Loads the redactor and the injection rules once."""

    def __init__(self, root: Path, provider: str, provenance: str = "sha256"):
        from scanner.injection.engine import InjectionScanner
        from scanner.redact import RedactError, Redactor
        from scanner.redact_journal import provenance_key

        if not PROVIDER_NAME.match(provider or "") or provider in (SHARED_DIR, GOLDEN_DIR):
            raise RecordError(f"--provider {provider!r}: a provider folder name (lower-case letters, digits, '_', '-')")
        if root.exists() and not root.is_dir():
            raise RecordError(f"{root}: not a directory")
        root.mkdir(parents=True, exist_ok=True)
        self.root, self.provider, self.provenance = root, provider, provenance
        reason = unsafe_reason(root, provider)
        if reason:
            raise RecordError(f"{root / provider}: {reason}: not written")
        self._manifest()                                  # unreadable: refuse before anything is recorded
        try:
            self.key = provenance_key(provenance)
        except RedactError as exc:
            raise RecordError(str(exc)) from None
        self.redactor = Redactor()
        self.injection = InjectionScanner()
        self._warm_up()
        self.cases = {_norm(c.query): c.id for c in read_golden(root).cases if c.query}
        self.answers: dict[tuple[str, str], str] = {}     # (request key, host) → file recording that answer
        self._index()

    # --- start-up -----------------------------------------------------------------------------------------

    def _warm_up(self) -> None:
        """Load the detectors' models now, not during the first exchange."""
        from scanner.loaders import load_bytes

        doc = load_bytes(envelope_bytes({"request": {"method": "GET", "url": "https://example.test/"},
                                         "response": {"status": 200, "headers": {}, "body": "warm-up"}}),
                         f"{self.provider}/warm-up.json")
        self.redactor.findings(doc)
        self.injection.scan(doc)

    def _manifest(self) -> dict:
        path = self.root / MANIFEST
        if not path.exists():
            return {"files": {}}
        from scanner import jsonsafe

        try:
            raw = jsonsafe.read_json(path)
        except (OSError, ValueError) as exc:
            raise RecordError(f"{path}: cannot be read ({exc}); fix it before recording") from None
        if not isinstance(raw, dict) or not isinstance(raw.get("files", {}), dict):
            raise RecordError(f'{path}: must be an object with a "files" object; fix it before recording')
        raw.setdefault("files", {})
        return raw

    def _index(self) -> None:
        """The answers already recorded for this provider, by request: recording one again replaces its file."""
        from scanner.serve.catalog import ServeError, load_fixtures, provider_files

        if not (self.root / self.provider).is_dir():
            return
        for rel in provider_files(self.root, self.provider):
            try:
                fixtures = load_fixtures(self.root, rel, self.provider)
            except ServeError:
                continue
            for f in fixtures:
                if f.kind == "answer" and "#" not in f.path:
                    self.answers[(f.key, f.host)] = rel

    # --- one exchange -------------------------------------------------------------------------------------

    def store(self, ex: Exchange, case: str | None = None, cls: str | None = None) -> Outcome:
        """Redact, place, write and list one exchange; an Outcome that says why when it is not recorded.

        One exchange is one run of the PDF memo (scanner.loaders.pdfmemo): a PDF body is loaded to plan its
        redaction, again to check the redacted envelope and again to see whether it is a prompt injection, the
        same bytes each time, laid out once."""
        from scanner.loaders import pdfmemo

        with pdfmemo.active():
            return self._store(ex, case, cls)

    def _store(self, ex: Exchange, case: str | None, cls: str | None) -> Outcome:
        from scanner.exchanges import parse_bytes
        from scanner.redact import RedactError
        from scanner.redact_truncate import invalidated_spans as _invalidated_spans
        from scanner.serve.catalog import ServeError, _fixture

        try:
            value = envelope(ex)
        except CaptureRefused as exc:
            return Outcome(False, reason=str(exc))
        data = envelope_bytes(value)
        response = value.get("response")
        if response is not None and len(data) > LARGE_BODY_BYTES:
            if response.get("body_encoding") == "base64":
                ctype = ex.response_header("content-type") or "unknown type"
                return Outcome(False, reason=f"a {len(ex.response_body):,}-byte {ctype} body is over 512 KB, and a "
                                             "binary body cannot be cut and still be read: relayed, not recorded")
            if not isinstance(response.get("body"), str):
                value = envelope(ex, embed_json=False)     # a string body: the redactor's truncation cuts it
                data = envelope_bytes(value)
        pending = f"{self.provider}/record.json"
        try:
            new, plan = self.redactor.redacted_bytes(data, pending, self.root, self.provenance)
        except RedactError as exc:
            return Outcome(False, reason=f"could not be made clean: {exc}")
        try:
            fixture = _fixture(pending, pending, self.provider, parse_bytes(new, pending).recording.exchanges[0], False)
        except (ServeError, ValueError, AttributeError, IndexError) as exc:
            return Outcome(False, reason=f"serve could not replay it: {exc}")
        recorded = json.loads(new)
        place = self._place(fixture, recorded, new, pending, cls)
        if isinstance(place, str):
            return Outcome(False, reason=place)
        folder, file_cls = place
        if case is None and folder != "errors":
            case = self.cases.get(_norm(_asked_query(recorded["request"]) or ""))
        digest = hashlib.sha256(f"{fixture.key}\n{fixture.host}".encode()).hexdigest()[:DIGEST_CHARS]
        rel, replaced = self._choose(folder, file_cls, fixture, case, digest)
        if rel is None:
            return Outcome(False, reason="no free file name for it (every candidate records another request)")
        reason = unsafe_reason(self.root, rel)
        if reason:
            return Outcome(False, reason=f"{rel}: {reason}: not written")
        outcome = Outcome(True, rel=rel, cls=file_cls, case=case, truncated=plan.truncate, replaced=replaced,
                          warnings=list(plan.warnings))
        if _invalidated_spans(self.root, rel, new.decode("utf-8")):
            outcome.warnings.append(f"{rel} is cited by an expected observation whose span no longer returns its "
                                    "text: re-capture that expected file")
        manifest = self._manifest()
        (self.root / rel).parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(self.root / rel, new)
        entry = {"case": case, "class": file_cls, "captured_at": captured_at(ex),
                 "sha256": hashlib.sha256(new).hexdigest(), "sha256_original": self._original(ex.response_body),
                 "synthetic": False, "truncated": plan.truncate}
        if self.key is not None:
            entry["sha256_original_algorithm"] = "hmac-sha256"
        files = manifest["files"]
        files[rel] = entry
        if replaced:
            files.pop(replaced, None)
        manifest["files"] = {k: files[k] for k in sorted(files)}
        atomic_write_text(self.root / MANIFEST, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
        if replaced:
            (self.root / replaced).unlink(missing_ok=True)
        if fixture.kind == "answer":
            self.answers = {k: v for k, v in self.answers.items() if v != replaced}
            self.answers[(fixture.key, fixture.host)] = rel
        return outcome

    def _original(self, body: bytes) -> str:
        """The digest of the body as the upstream sent it (content-encoding undone), before any redaction:
        plain sha256, or HMAC-SHA256 with --provenance hmac."""
        if self.key is None:
            return hashlib.sha256(body).hexdigest()
        return hmac.new(self.key, body, hashlib.sha256).hexdigest()

    def _flagged(self, data: bytes, rel: str) -> bool:
        from scanner.loaders import load_bytes
        from scanner.scan import reportable

        return any(f.kind == "injection" and reportable(f) for f in self.injection.scan(load_bytes(data, rel)))

    def _place(self, fixture, recorded: dict, data: bytes, rel: str, hint: str | None):
        """(folder, class), or why the exchange is not recorded."""
        if fixture.kind == "timeout":
            return "errors", "timeout"
        if fixture.kind in ("429", "5xx"):
            return "errors", fixture.kind
        if not 200 <= fixture.status < 300:
            return f"a {fixture.status} answer is none of the nine fixture classes: relayed, not recorded"
        headers = recorded["response"].get("headers") or {}
        ctype = str(headers.get("content-type", "")).lower()
        page = "pdf" if "pdf" in ctype else "html" if "html" in ctype else None
        if hint is not None:
            folder = "fetch" if page else "search" if hint in ("results", "contradictory") else "extract"
            return folder, hint
        if page:
            return "fetch", "prompt-injection" if self._flagged(data, rel) else page
        if fixture.missing:
            return "extract", "partial"
        if "search" in fixture.route.rsplit("/", 1)[-1]:
            return "search", "results"
        return "extract", "prompt-injection" if self._flagged(data, rel) else "results"

    def _choose(self, folder: str, cls: str, fixture, case: str | None, digest: str):
        """(file, the file it replaces or None): the first name that is free or already records this request."""
        from scanner.serve.catalog import ServeError, load_fixtures

        if folder == "errors":
            base = "timeout" if fixture.kind == "timeout" else str(fixture.status)
        else:
            base = (case or digest) + SUFFIX.get(cls, "")
        names = [base, f"{base}-{digest}"] if base != digest else [base]
        names += [f"{base}-{digest}-{n}" for n in range(2, 10)]
        previous = self.answers.get((fixture.key, fixture.host)) if fixture.kind == "answer" else None
        for name in names:
            rel = f"{self.provider}/{folder}/{name}.json"
            path = self.root / rel
            if not path.exists() or rel == previous:
                return rel, previous if previous not in (None, rel) else None
            try:
                same = [f for f in load_fixtures(self.root, rel, self.provider)
                        if f.key == fixture.key and f.host == fixture.host]
            except ServeError:
                same = []
            if same:
                return rel, previous if previous not in (None, rel) else None
        return None, None
