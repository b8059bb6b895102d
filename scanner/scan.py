"""The detectors of a scan: which kinds run, with which rule packs, and which of their findings are reported.

`Scanner` holds the loaded detectors (injection lexicon and learned model, secret rules, personal-data
recognizers) and runs them on a loaded `Document`. It never reads a file: `scanner.pipeline` loads each file
once and hands the document here, then to every output.
"""

from __future__ import annotations

from scanner.findings import Finding
from scanner.loaders import HTML_EXT
from scanner.loaders.html import decode_html
from scanner.units import Document
from scanner.yamlsafe import gc_paused

ALL_KINDS = ("injection", "secret", "pii")
# Below this size the injection rules read a page about as fast as the prefilter judges it (and the first one
# would build the prefilter): a pre-commit hook's small fixtures go straight to the rules.
GATE_MIN_CHARS = 16_384


def reportable(f: Finding) -> bool:
    """Contract: of EMAIL_ADDRESS only EMAIL_PERSONAL is a finding; a company's own phone is not personal data
    (each personal-data rule's `policy.report`, scanner/rules/pii/)."""
    if f.kind != "pii":
        return True
    from scanner.pii.registry import reportable as pii_reportable

    return pii_reportable(f)


class Scanner:
    def __init__(self, kinds=ALL_KINDS, rule_dirs: tuple | None = None, prefilter: bool = True,
                 secret_rule_dirs: tuple = (), review: bool = False):
        # Each detector is imported only when its kind runs: start-up time of the CLI, and a `--kinds injection`
        # scan (the pre-commit hook) never imports the personal-data stack (spaCy, Presidio).
        self.kinds = tuple(kinds)
        self.review = None          # with review=True each flagged document keeps its view for the reviewer page
        if review:
            from scanner.review.capture import ReviewCapture

            self.review = ReviewCapture(self.kinds)
        self.injection = None
        self.prefilter = None
        # Only the built-in pack's phrases are known to the prefilter. An injection-only scan asks it before
        # loading a page (`clean_page`: a clean page is never loaded); other kinds need every page loaded, and
        # there it decides whether the injection rules read a loaded page (`_injection_gate`, built on the
        # first HTML page).
        self._gate_allowed = bool(prefilter and not rule_dirs)
        self._gate = None
        if "injection" in self.kinds:
            from scanner.injection.engine import InjectionScanner

            self.injection = InjectionScanner(rule_dirs)
            if self._gate_allowed and self.kinds == ("injection",):
                self.prefilter = self._injection_gate()

        self.secrets = None
        self.pii = None
        if "secret" in self.kinds:
            from scanner.secrets.detect import SecretScanner

            self.secrets = SecretScanner(extra_rule_dirs=tuple(secret_rule_dirs))
        if "pii" in self.kinds:
            from scanner.pii import PiiScanner

            self.pii = PiiScanner()

    def _injection_gate(self):
        """The prefilter of this scanner's injection rules (None when it is off or cannot be built)."""
        if self._gate is None and self._gate_allowed and self.injection is not None:
            from scanner.injection.prefilter import Prefilter
            from scanner.injection.signals import GATE_EXEMPT

            pf = Prefilter(self.injection.lexicon.lexicon, GATE_EXEMPT, tuple(self.injection.learned),
                           tuple(self.injection.reading))
            self._gate = pf if pf.enabled else False
        return self._gate or None

    def _may_hold_injection(self, doc: Document) -> bool:
        """False only for a loaded HTML page whose source the prefilter shows no injection rule can fire on:
        the same page and the same judgement as `clean_page` (doc.text is `decode_html` of the file's bytes)."""
        if doc.kind != "html" or len(doc.text) < GATE_MIN_CHARS or not doc.path.lower().endswith(HTML_EXT):
            return True
        gate = self._injection_gate()
        return gate is None or gate.may_hold_injection(doc.text)

    def clean_page(self, display: str, data: bytes):
        """The decoded text (`DecodedText`) of an HTML page the prefilter shows cannot hold an injection, so it
        needs no full load; None when it must be loaded and scanned."""
        if self.prefilter is None or not display.lower().endswith(HTML_EXT):
            return None
        decoded = decode_html(data)
        return None if self.prefilter.may_hold_injection(decoded.text) else decoded

    def pack_rules(self) -> list:
        """The YAML-pack rules this scanner runs (injection, then secret rules): their ids, names and help."""
        rules = []
        if self.injection is not None:
            rules += list(self.injection.rules)
        if self.secrets is not None:
            rules += list(self.secrets.rules)
        return rules

    def rule_ids(self) -> set[str]:
        """The id of every rule this scanner runs, the personal-data recognizers' included."""
        ids = {r.id for r in self.pack_rules()}
        if self.pii is not None:
            from scanner.pii.scanner import RULES as PII_RULES      # loaded already: self.pii is one of its scanners

            ids |= {rule_id for rule_id, _ in PII_RULES.values()}
        return ids

    def redaction_detectors(self) -> list:
        """The detectors whose findings `redact` acts on (secrets, personal data) of this scanner."""
        return [d for d in (self.secrets, self.pii) if d is not None]

    def detect(self, doc: Document) -> list[Finding]:
        """Every finding of every detector on `doc`, sorted by place: what the scan reports (`reportable`) and
        what it keeps on purpose (role mailboxes, company phones) alike."""
        # The cyclic collector is paused for the document's detectors (scanner.yamlsafe.gc_paused): they build
        # many small containers and no cycles worth collecting mid-document, and each collection would walk the
        # whole loaded document (its elements and units) again — measured, 7 % of a full scan of the real pages.
        # Whatever cycles a detector leaves are collected once the collector runs again, after the document.
        with gc_paused():
            findings: list[Finding] = []
            if self.injection is not None and (self.prefilter is not None or self._may_hold_injection(doc)):
                findings.extend(self.injection.scan(doc))
            for detector in (self.secrets, self.pii):
                if detector is not None:
                    findings.extend(detector.scan(doc))
            findings.sort(key=Finding.sort_key)
        return findings

    def scan_document(self, doc: Document) -> list[Finding]:
        """The findings of `doc` a scan reports."""
        return [f for f in self.detect(doc) if reportable(f)]
