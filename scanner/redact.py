"""`redact --check | --write`: plan and apply the spec's redaction rules (§3), keeping `manifest.json` true.

The plan comes from the secret and personal-data findings that carry a replacement: the datum's exact span in
the decoded text is replaced inside its original quoting (`REDACTED`, `redacted@example.test`,
`+52-000-000-0000`). Writing is all-or-nothing per file and crash-safe across files:

1. every new file content is computed and checked first (JSON still parses, HTML still loads, a rescan finds
   nothing left to redact);
2. a journal (`.centinela-redact.journal` in the fixture root) records old and new digests;
3. each file is replaced atomically, then the manifest atomically, then the journal is removed.

A run that finds a journal finishes what the interrupted one started, so the manifest always ends consistent
with the files. A file that cannot be rewritten exactly (a PDF, undecodable bytes) is reported, never touched.

Bodies over 512 KB are truncated to their first relevant block plus 2 KB of context (`truncated: true`).
Expected observations whose span no longer returns the same text are named (`spans_invalidated`): the spec
says they are re-captured, never adjusted by hand.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from scanner.atomic import atomic_write_bytes, atomic_write_text, remove_stale_temps
from scanner.findings import Finding
from scanner.fixtures.tree import LARGE_BODY_BYTES, MANIFEST, unsafe_reason
from scanner.loaders import load_bytes
from scanner.loaders.recorded import body_document
from scanner.pii.registry import low_entropy_entities
from scanner.redact_edits import BodyPlan, apply_edits, length_edits, map_back, plan_edits, same_recording
from scanner.redact_journal import (  # noqa: F401  (JOURNAL, finish_journal, RedactError: part of this API)
    JOURNAL, PROVENANCE_KEY_ENV, RedactError, finish_journal, original_digest, provenance_key, sha,
)
from scanner.redact_truncate import invalidated_spans, truncation_point, truncation_tail
from scanner.scrub import mask_paths
from scanner.units import Document, LoadError



@dataclass
class Redaction:
    start: int
    end: int
    entity: str
    replacement: str
    rule_id: str

    def to_json(self) -> dict:
        return {"start": self.start, "end": self.end, "entity": self.entity, "replacement": self.replacement}


@dataclass
class FilePlan:
    path: str                      # relative to the fixture root when inside one, else as given
    file: Path
    root: Path | None = None
    redactions: list[Redaction] = field(default_factory=list)
    truncate: bool = False
    truncate_at: int | None = None
    spans_invalidated: list[str] = field(default_factory=list)
    unredactable: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    reported: int = 0              # findings kept on purpose (role mailboxes, company RFCs…)
    new_text: str | None = None
    doc: Document | None = None
    bodies: list[BodyPlan] = field(default_factory=list)   # encoded bodies: decoded, redacted, encoded back

    @property
    def changes(self) -> bool:
        return bool(self.redactions or self.truncate or any(b.redactions for b in self.bodies))

    def all_redactions(self) -> list[tuple[Redaction, BodyPlan | None]]:
        """Every redaction with the encoded body it lies in (None: in the file text), in file order."""
        out = [(r, None) for r in self.redactions] + [(r, b) for b in self.bodies for r in b.redactions]
        return sorted(out, key=lambda rb: (rb[1].region.start if rb[1] else rb[0].start, rb[0].start))

    def to_json(self) -> dict:
        reds = []
        for r, body in self.all_redactions():
            if body is None:
                reds.append(r.to_json())
                continue
            region = body.region
            encoding = region.body.transfer if not region.body.yaml_binary else "yaml-binary"
            reds.append({"start": region.start, "end": region.end, "entity": r.entity, "replacement": r.replacement,
                         "body": {"container": region.container, "start": r.start, "end": r.end,
                                  "encoding": encoding + (f"+{region.compression}" if region.compression else "")}})
        out = {"path": self.path, "redactions": reds, "truncate": self.truncate,
               "spans_invalidated": self.spans_invalidated}
        if self.truncate_at is not None:
            out["truncate_at"] = self.truncate_at
        if self.unredactable:
            out["unredactable"] = self.unredactable
        if self.warnings:
            out["warnings"] = self.warnings
        out["kept"] = self.reported
        return out


@dataclass
class RedactPlan:
    files: list[FilePlan] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)
    written: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        """The contract's plan. A path holding a secret or personal datum is masked (`scanner.scrub`)."""
        out = {"files": [f.to_json() for f in self.files if f.changes or f.unredactable or f.spans_invalidated]}
        if self.errors:
            out["errors"] = self.errors
        if self.written:
            out["written"] = self.written
        return mask_paths(out, frozenset({"path", "written", "spans_invalidated"}))

    @property
    def pending(self) -> bool:
        return any(f.changes for f in self.files)

    @property
    def fails(self) -> bool:
        return bool(self.errors) or any(f.unredactable or f.spans_invalidated for f in self.files)


def find_root(path: Path) -> Path | None:
    """The nearest folder at or above `path` that holds a manifest.json (the fixture root)."""
    here = path.resolve()
    for folder in ([here] if here.is_dir() else []) + list(here.parents):
        if (folder / MANIFEST).is_file():
            return folder
    return None


@dataclass(frozen=True)
class RedactTarget:
    """Where a file stands for redaction: its path, its name in the plan and its fixture tree (None: no tree)."""

    file: Path
    rel: str                       # relative to the fixture root when inside one, else as given
    root: Path | None


class Redactor:
    """Plans and writes redactions. The detectors are the secret and personal-data scanners of `kinds`, or the
    ones given (`detectors`: a scan's own, so a file is scanned once for its report and its plan)."""

    def __init__(self, kinds=("secret", "pii"), detectors: list | None = None):
        if detectors is not None:
            self.scanners = list(detectors)
            return
        # Imported for the kinds asked only: `redact --kinds secret` never loads the personal-data stack.
        self.scanners = []
        if "secret" in kinds:
            from scanner.secrets.detect import SecretScanner

            self.scanners.append(SecretScanner())
        if "pii" in kinds:
            from scanner.pii import PiiScanner

            self.scanners.append(PiiScanner())

    def findings(self, doc: Document) -> list[Finding]:
        out: list[Finding] = []
        for scanner in self.scanners:
            out.extend(scanner.scan(doc))
        return sorted(out, key=Finding.sort_key)

    # --- planning ---------------------------------------------------------------------------------------

    @staticmethod
    def target_of(path: Path):
        """The file's `RedactTarget`; None for a file redaction never touches (the manifest, the journal, the
        golden set); an error entry for one whose place leads out of its tree (never read)."""
        root = find_root(path.parent)
        if path.name in (MANIFEST, JOURNAL):
            return None
        if root is not None:
            # The file's place in the tree, not where a symlink leads: one leading out is never read or written.
            rel = (path.parent.resolve() / path.name).relative_to(root).as_posix()
            reason = unsafe_reason(root, rel)
            if reason:
                return {"path": rel, "code": "path_outside_root", "message": f"not read: {reason}"}
        else:
            rel = path.as_posix()
        if root is not None and rel.startswith("golden/"):
            return None
        return RedactTarget(path, rel, root)

    @staticmethod
    def plan_unloaded(target: RedactTarget, exc: LoadError):
        """The plan of a file that could not be loaded: an error entry, or (a scan with no text layer holds no
        text to redact: the spec's class-3 case, which scan reports) a plan with a warning."""
        if exc.code == "format_tables_ocr":
            return FilePlan(path=target.rel, file=target.file, root=target.root, warnings=[exc.message])
        return {"path": target.rel, "code": exc.code, "message": exc.message}

    def plan_bytes(self, data: bytes, rel: str, root: Path | None = None, provenance: str = "sha256") -> FilePlan:
        """The plan for content that is not on disk yet (`record` redacts each exchange in memory before
        anything is written): loaded from the bytes, planned as a file of the tree at `rel` is planned.
        Raises RedactError for content that cannot be loaded."""
        try:
            doc = load_bytes(data, rel)
        except LoadError as exc:
            raise RedactError(f"{rel}: {exc.message}") from None
        target = RedactTarget((root / rel) if root else Path(rel), rel, root)
        return self.plan_document(target, doc, self.findings(doc), provenance, size=len(data), fresh=True)

    def redacted_bytes(self, data: bytes, rel: str, root: Path | None = None,
                       provenance: str = "sha256") -> tuple[bytes, FilePlan]:
        """`data` with the plan applied and checked as `write` checks a file before replacing it (it parses,
        reads back as the same recording, and a rescan finds nothing left to redact), and the plan; nothing is
        written. RedactError when it cannot be made clean (a datum in PDF text, a body that cannot be re-encoded,
        a result that does not check)."""
        fp = self.plan_bytes(data, rel, root, provenance)
        if fp.unredactable:
            raise RedactError(fp.unredactable[0])
        if not fp.changes:
            return data, fp
        new = _encode_like(fp.doc, fp.new_text, data)
        problem = self._check_result(fp, new)
        if problem:
            raise RedactError(problem)
        return new, fp

    def plan_document(self, target: RedactTarget, doc: Document, findings: list[Finding],
                      provenance: str = "sha256", size: int | None = None, fresh: bool = False) -> FilePlan:
        """The plan of one loaded file from its secret and personal-data `findings` (this redactor's detectors
        on `doc`, as `findings(doc)` gives them). `size`: the content's size in bytes (default: the file's);
        `fresh` content replaces whatever the manifest says of `rel` (its entry's truncation and provenance
        algorithm are not this content's)."""
        path, rel, root = target.file, target.rel, target.root
        fp = FilePlan(path=rel, file=path, root=root, doc=doc)
        if size is None:
            size = path.stat().st_size
        fp.reported = sum(1 for f in findings if not f.redactable)
        wanted = [f for f in findings if f.redactable]
        if wanted and (doc.kind == "pdf" or any(f.page is not None for f in wanted)):
            fp.unredactable.append(
                f"{len(wanted)} datum(s) in PDF text ({', '.join(sorted({f.entity for f in wanted}))}): a PDF is not "
                "rewritten in place; redact the source document and re-capture")
            wanted = [f for f in wanted if f.page is None and doc.kind != "pdf"]
        if wanted and any("replaced" in p for p in doc.problems):
            fp.unredactable.append("file has undecodable bytes: rewriting it would lose them; fix the encoding first")
            wanted = []
        wanted = self._plan_bodies(fp, doc, wanted, rel)
        fp.redactions = self._to_fixed_point(doc, _non_overlapping(wanted), rel,
                                             lambda text: load_bytes(text.encode("utf-8"), rel), fp.bodies)
        entry = _manifest_entry(root, rel) if root and not fresh else None
        already_truncated = bool(entry and entry.get("truncated"))
        if size > LARGE_BODY_BYTES and not already_truncated and doc.kind != "pdf":
            if doc.kind == "http" and rel.lower().endswith((".yaml", ".yml")):
                # Cutting a body inside a YAML scalar (often gzip inside !!binary) is not done here.
                fp.warnings.append(f"over {LARGE_BODY_BYTES // 1024} KB: a YAML cassette is not truncated by redact; "
                                   "cut its largest body when recording, or mark it truncated by hand")
            else:
                fp.truncate_at = truncation_point(doc, root, rel)
                fp.truncate = fp.truncate_at is not None and fp.truncate_at < len(doc.text)
        if fp.changes:
            fp.new_text = _apply(doc, fp.redactions, fp.truncate_at if fp.truncate else None, fp.bodies)
            if doc.kind == "http" and not fp.truncate:
                fp.new_text = apply_edits(fp.new_text, length_edits(doc.text, fp.new_text, rel))
            fp.spans_invalidated = invalidated_spans(root, rel, fp.new_text) if root else []
            algorithm = (entry or {}).get("sha256_original_algorithm", "sha256") if provenance == "sha256" else "hmac-sha256"
            # redacted values with a small candidate space (the rules' `policy.low_entropy`): a plain digest
            # of the original body gives them back
            low = sorted({r.entity for r, _ in fp.all_redactions() if r.entity in low_entropy_entities()})
            if root is not None and low and algorithm == "sha256":
                fp.warnings.append(
                    f"sha256_original will be a plain digest of a body that differs from the committed one only by "
                    f"{', '.join(low)}: a brute force recovers such values quickly; use --provenance hmac "
                    f"(key in ${PROVENANCE_KEY_ENV})")
        return fp

    def _plan_bodies(self, fp: FilePlan, doc: Document, wanted: list[Finding], rel: str) -> list[Finding]:
        """Plan each encoded body that holds a datum as a document of its own (its units point at the whole
        stored body, so the datum's place is known only in the decoded text); the findings left are the file's."""
        if not doc.regions or not wanted:
            return wanted
        rest = []
        hit: dict[int, list[Finding]] = {}
        for f in wanted:
            i = next((k for k, r in enumerate(doc.regions) if r.start <= f.start and f.end <= r.end), None)
            if i is None:
                rest.append(f)
            else:
                hit.setdefault(i, []).append(f)
        for i in sorted(hit):
            region = doc.regions[i]
            if not region.lossless:
                fp.unredactable.append(f"{region.container}: the body has undecodable bytes: re-encoding it would "
                                       "lose them; fix the encoding first")
                continue
            sub = body_document(region, region.text, rel)
            found = [f for f in self.findings(sub) if f.redactable and f.page is None]
            reds = self._to_fixed_point(sub, _non_overlapping(found), rel,
                                        lambda text, region=region: body_document(region, text, rel))
            fp.bodies.append(BodyPlan(region, reds))
        return rest

    def _to_fixed_point(self, doc: Document, redactions: list[Redaction], rel: str, reload, bodies=(),
                        rounds: int = 4) -> list[Redaction]:
        """Redact, rescan, repeat: a redaction can change what the text around it says (a name beside a now
        redacted phone is a person's contact block), so the plan grows until a rescan of the result finds
        nothing left. Later rounds' spans are mapped back to the original text; a span over an earlier
        replacement is skipped (it is our own placeholder)."""
        if doc.kind == "pdf" or not redactions:
            return redactions
        for _ in range(rounds):
            edits = plan_edits(doc, redactions, bodies)
            text = apply_edits(doc.text, edits)
            try:
                again = reload(text)
            except LoadError:
                return redactions
            extra = []
            for f in self.findings(again):
                if not f.redactable or f.page is not None:
                    continue
                start, end = map_back(f.start, f.end, edits)
                if start is None:
                    continue
                extra.append(Redaction(start, end, f.entity or "", f.replacement, f.rule_id))
            if not extra:
                return redactions
            merged = sorted(redactions + extra, key=lambda r: (r.start, -(r.end - r.start)))
            out: list[Redaction] = []
            for r in merged:
                if out and r.start < out[-1].end:
                    continue
                out.append(r)
            if len(out) == len(redactions):
                return redactions
            redactions = out
        return redactions

    # --- writing ----------------------------------------------------------------------------------------

    def write(self, plan: RedactPlan, provenance: str = "sha256") -> None:
        key = provenance_key(provenance)
        for root in sorted({fp.root for fp in plan.files if fp.root is not None}):
            remove_stale_temps(root)      # temporary files of a killed run: their targets were never touched
        staged: list[tuple[FilePlan, bytes, bytes]] = []
        for fp in plan.files:
            if not fp.changes:
                continue
            original = fp.file.read_bytes()
            new_bytes = _encode_like(fp.doc, fp.new_text, original)
            problem = self._check_result(fp, new_bytes)
            if problem:
                fp.unredactable.append(problem)
                continue
            staged.append((fp, original, new_bytes))
        by_root: dict[Path | None, list] = {}
        for item in staged:
            by_root.setdefault(item[0].root, []).append(item)
        for root, items in by_root.items():
            if root is None:
                for fp, _, new_bytes in items:
                    atomic_write_bytes(fp.file, new_bytes)
                    plan.written.append(fp.path)
                continue
            journal = {fp.path: {"old": sha(original), "new": sha(new_bytes),
                                 "original": original_digest(original, key),
                                 "algorithm": "hmac-sha256" if key else "sha256",
                                 "truncated": fp.truncate}
                       for fp, original, new_bytes in items}
            atomic_write_text(root / JOURNAL, json.dumps(journal, indent=2, sort_keys=True) + "\n")
            for fp, _, new_bytes in items:
                atomic_write_bytes(fp.file, new_bytes)
                plan.written.append(fp.path)
            finish_journal(root)

    def _check_result(self, fp: FilePlan, new_bytes: bytes) -> str | None:
        doc = fp.doc
        if doc.kind in ("json", "http") and not fp.path.lower().endswith((".jsonl", ".ndjson", ".yaml", ".yml")):
            try:
                json.loads(new_bytes.decode(doc.encoding or "utf-8"))
            except ValueError as exc:
                return f"redacted file would not be valid JSON ({exc}); not written"
            except RecursionError:              # fail closed: a file we cannot check is not written
                return "redacted file is nested too deeply to check that it is still JSON; not written"
        if doc.kind == "http":
            problem = same_recording(doc, new_bytes, fp.path)
            if problem:
                return problem
        try:
            again = load_bytes(new_bytes, fp.path)
        except LoadError as exc:
            return f"redacted file would not load ({exc.message}); not written"
        left = [f for f in self.findings(again) if f.redactable and f.page is None]
        if left:
            return (f"a rescan of the redacted file still finds {len(left)} datum(s) "
                    f"({', '.join(sorted({f.entity for f in left}))}); not written")
        return None


# --- helpers ------------------------------------------------------------------------------------------

def _manifest_entry(root: Path, rel: str) -> dict | None:
    try:
        data = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
        entry = data.get("files", {}).get(rel)
        return entry if isinstance(entry, dict) else None
    except (OSError, ValueError, RecursionError, AttributeError):
        return None


def _non_overlapping(findings: list[Finding]) -> list[Redaction]:
    out: list[Redaction] = []
    for f in sorted(findings, key=lambda f: (f.start, -(f.end - f.start))):
        if out and f.start < out[-1].end:
            continue
        out.append(Redaction(f.start, f.end, f.entity or "", f.replacement, f.rule_id))
    return out


def _apply(doc: Document, redactions: list[Redaction], cut: int | None, bodies=()) -> str:
    text = doc.text
    pieces = []
    pos = 0
    for r in plan_edits(doc, redactions, bodies):
        if cut is not None and r.start >= cut:
            break
        pieces.append(text[pos:r.start])
        pieces.append(r.text)
        pos = r.end
    if cut is None:
        pieces.append(text[pos:])
        return "".join(pieces)
    head = "".join(pieces) + text[pos:max(pos, cut)]
    return head + truncation_tail(doc, cut)


def _encode_like(doc: Document, text: str, original: bytes) -> bytes:
    encoding = doc.encoding or "utf-8"
    data = text.encode(encoding)
    boms = {"utf-8": b"\xef\xbb\xbf", "utf-16-le": b"\xff\xfe", "utf-16-be": b"\xfe\xff"}
    bom = boms.get(encoding)
    if bom and original.startswith(bom):
        data = bom + data
    return data


