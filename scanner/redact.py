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

import hashlib
import hmac
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from scanner import jsonsafe
from scanner.atomic import atomic_write_bytes, atomic_write_text, remove_stale_temps
from scanner.findings import Finding
from scanner.fixtures.tree import LARGE_BODY_BYTES, MANIFEST, SHARED_DIR, unsafe_reason
from scanner.loaders import load_bytes, load_path
from scanner.redact_edits import BodyPlan, apply_edits, length_edits, map_back, plan_edits, same_recording
from scanner.spans import SpanError, apply_span, normalise_ws, parse_span
from scanner.units import Channel, Document, LoadError

from scanner.fixtures.tree import REDACT_JOURNAL as JOURNAL  # noqa: E402
CONTEXT_CHARS = 2048
PROVENANCE_KEY_ENV = "CENTINELA_PROVENANCE_KEY"
# Redacted values with a small candidate space: a plain digest of the original body gives them back.
LOW_ENTROPY = frozenset({"PHONE_NUMBER", "MX_NSS", "MX_CURP", "MX_RFC_PERSONA_FISICA", "MX_CLABE", "MX_INE_CLAVE",
                         "EMAIL_PERSONAL", "PERSON"})


class RedactError(Exception):
    """Cannot run as asked (exit 2)."""


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
        from scanner.scrub import mask_paths

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


class Redactor:
    def __init__(self, kinds=("secret", "pii")):
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

    def plan(self, paths: list[Path], provenance: str = "sha256") -> RedactPlan:
        from scanner.scan import collect_targets

        plan = RedactPlan()
        for target in collect_targets(paths):
            file_plan = self.plan_file(target.path, provenance)
            if file_plan is None:
                continue
            if isinstance(file_plan, dict):
                plan.errors.append(file_plan)
                continue
            plan.files.append(file_plan)
        return plan

    def plan_file(self, path: Path, provenance: str = "sha256"):
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
        try:
            doc = load_path(path, rel)
        except LoadError as exc:
            if exc.code == "format_tables_ocr":
                # A scan with no text layer holds no text to redact (the spec's class-3 case); scan reports it.
                return FilePlan(path=rel, file=path, root=root, warnings=[exc.message])
            return {"path": rel, "code": exc.code, "message": exc.message}
        fp = FilePlan(path=rel, file=path, root=root, doc=doc)
        findings = self.findings(doc)
        fp.reported = sum(1 for f in findings if f.extra.get("replacement") is None)
        wanted = [f for f in findings if f.extra.get("replacement") is not None]
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
        entry = _manifest_entry(root, rel) if root else None
        size = path.stat().st_size
        already_truncated = bool(entry and entry.get("truncated"))
        if size > LARGE_BODY_BYTES and not already_truncated and doc.kind != "pdf":
            if doc.kind == "http" and rel.lower().endswith((".yaml", ".yml")):
                # Cutting a body inside a YAML scalar (often gzip inside !!binary) is not done here.
                fp.warnings.append(f"over {LARGE_BODY_BYTES // 1024} KB: a YAML cassette is not truncated by redact; "
                                   "cut its largest body when recording, or mark it truncated by hand")
            else:
                fp.truncate_at = _truncation_point(doc, root, rel)
                fp.truncate = fp.truncate_at is not None and fp.truncate_at < len(doc.text)
        if fp.changes:
            fp.new_text = _apply(doc, fp.redactions, fp.truncate_at if fp.truncate else None, fp.bodies)
            if doc.kind == "http" and not fp.truncate:
                fp.new_text = apply_edits(fp.new_text, length_edits(doc.text, fp.new_text, rel))
            fp.spans_invalidated = _invalidated_spans(root, rel, fp.new_text) if root else []
            algorithm = (entry or {}).get("sha256_original_algorithm", "sha256") if provenance == "sha256" else "hmac-sha256"
            low = sorted({r.entity for r, _ in fp.all_redactions() if r.entity in LOW_ENTROPY})
            if root is not None and low and algorithm == "sha256":
                fp.warnings.append(
                    f"sha256_original will be a plain digest of a body that differs from the committed one only by "
                    f"{', '.join(low)}: a brute force recovers such values quickly; use --provenance hmac "
                    f"(key in ${PROVENANCE_KEY_ENV})")
        return fp

    def _plan_bodies(self, fp: FilePlan, doc: Document, wanted: list[Finding], rel: str) -> list[Finding]:
        """Plan each encoded body that holds a datum as a document of its own (its units point at the whole
        stored body, so the datum's place is known only in the decoded text); the findings left are the file's."""
        from scanner.loaders.recorded import body_document

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
            found = [f for f in self.findings(sub) if f.extra.get("replacement") is not None and f.page is None]
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
                if f.extra.get("replacement") is None or f.page is not None:
                    continue
                start, end = map_back(f.start, f.end, edits)
                if start is None:
                    continue
                extra.append(Redaction(start, end, f.entity or "", f.extra["replacement"], f.rule_id))
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
        key = _provenance_key(provenance)
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
            journal = {fp.path: {"old": _sha(original), "new": _sha(new_bytes),
                                 "original": _original_digest(original, key),
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
        left = [f for f in self.findings(again) if f.extra.get("replacement") is not None and f.page is None]
        if left:
            return (f"a rescan of the redacted file still finds {len(left)} datum(s) "
                    f"({', '.join(sorted({f.entity for f in left}))}); not written")
        return None


def finish_journal(root: Path) -> list[str]:
    """Bring the manifest in line with the files a (possibly interrupted) redaction wrote; remove the journal."""
    path = root / JOURNAL
    if not path.exists():
        return []
    manifest_path = root / MANIFEST
    try:
        journal = jsonsafe.read_json(path)
        manifest = jsonsafe.read_json(manifest_path)
    except (OSError, ValueError) as exc:
        raise RedactError(f"{root}: cannot finish an interrupted redaction: {exc}; restore manifest.json and "
                          f"{JOURNAL} from version control, or remove {JOURNAL} and re-run") from None
    if not isinstance(journal, dict) or not isinstance(manifest, dict) or not isinstance(manifest.get("files", {}), dict):
        raise RedactError(f"{root}: {JOURNAL} or manifest.json is not what a redaction writes: restore them from "
                          f"version control, or remove {JOURNAL} and re-run")
    files = manifest.setdefault("files", {})
    done = []
    for rel, rec in journal.items():
        if unsafe_reason(root, rel) or not isinstance(rec, dict) or not all(
                isinstance(rec.get(k), str) for k in ("new", "original", "algorithm")):
            continue               # a journal entry pointing out of the tree, or edited by hand: never used
        target = root / rel
        if not target.is_file():
            continue
        current = _sha(target.read_bytes())
        if current != rec["new"]:
            continue               # the interrupted run never replaced this file: it is planned again
        entry = files.get(rel)
        if not isinstance(entry, dict):
            continue
        listed_original = entry.get("sha256_original")
        if not listed_original or listed_original == entry.get("sha256"):
            # first redaction of this file: the body before it is the original
            entry["sha256_original"] = rec["original"]
            if rec["algorithm"] != "sha256":
                entry["sha256_original_algorithm"] = rec["algorithm"]
        # else: an earlier redaction already recorded the original; the body before this one is not it
        entry["sha256"] = rec["new"]
        if rec.get("truncated"):
            entry["truncated"] = True
        done.append(rel)
    manifest["files"] = {k: files[k] for k in sorted(files)}
    atomic_write_text(manifest_path, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    path.unlink()
    return done


# --- helpers ------------------------------------------------------------------------------------------

def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _provenance_key(provenance: str) -> bytes | None:
    if provenance == "sha256":
        return None
    value = os.environ.get(PROVENANCE_KEY_ENV, "")
    if len(value) < 16:
        raise RedactError(f"--provenance hmac needs a key of at least 16 characters in ${PROVENANCE_KEY_ENV} "
                          "(never commit it)")
    return value.encode("utf-8")


def _original_digest(original: bytes, key: bytes | None) -> str:
    if key is None:
        return _sha(original)
    return hmac.new(key, original, hashlib.sha256).hexdigest()


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
        out.append(Redaction(f.start, f.end, f.entity or "", f.extra["replacement"], f.rule_id))
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
    return head + _truncation_tail(doc, cut)


def _encode_like(doc: Document, text: str, original: bytes) -> bytes:
    encoding = doc.encoding or "utf-8"
    data = text.encode(encoding)
    boms = {"utf-8": b"\xef\xbb\xbf", "utf-16-le": b"\xff\xfe", "utf-16-be": b"\xfe\xff"}
    bom = boms.get(encoding)
    if bom and original.startswith(bom):
        data = bom + data
    return data


# --- truncation (spec §3: first relevant block + 2 KB of context) ---------------------------------------

def _truncation_point(doc: Document, root: Path | None, rel: str) -> int | None:
    """Where a large body is cut: after the first relevant block plus 2 KB of context.

    The first relevant block is, in order: the span of the earliest expected observation citing this file; the
    first paragraph-sized (≥ 200 characters) visible text; the first visible text at all. In an HTTP envelope the
    cut stays inside the body string so the envelope remains valid JSON.
    """
    block_end = None
    if root is not None:
        spans = [s for s in _observations(root) if s[1] == rel]
        offsets = []
        for _, _, span_text, _ in spans:
            try:
                span = parse_span(span_text)
            except SpanError:
                continue
            if span.kind == "offset":
                offsets.append(span.end)
        if offsets:
            block_end = min(offsets)
    if block_end is None:
        visible = [u for u in doc.units if u.channel in (Channel.VISIBLE_TEXT, Channel.JSON_STRING, Channel.PLAIN_TEXT)]
        long = [u for u in visible if len(u.text.strip()) >= 200]
        unit = long[0] if long else (visible[0] if visible else None)
        block_end = unit.end if unit is not None else 0
    cut = block_end + CONTEXT_CHARS
    body = _body_span(doc)
    if body is not None:
        b_start, b_end = body
        cut = max(min(cut, b_end), b_start)
        cut = _safe_json_cut(doc.text, b_start, cut)
    return cut if cut < len(doc.text) else None


def _body_span(doc: Document) -> tuple[int, int] | None:
    """The span of an HTTP envelope's string body in the file, if the file is one."""
    if doc.kind != "http":
        return None
    from scanner.loaders.json_positions import iter_strings

    for s in iter_strings(doc.text):
        if not s.is_key and s.pointer.endswith(("/response/body", "/content/text")):
            return s.start, s.end
    return None


def _safe_json_cut(text: str, start: int, cut: int) -> int:
    """Move a cut back so it does not split a JSON escape sequence."""
    i = cut
    while i > start:
        back = text.rfind("\\", max(start, i - 6), i)
        if back < 0:
            break
        # an escape starting at `back` spans 2 chars, or 6 for \\uXXXX
        length = 6 if text.startswith("\\u", back) else 2
        if back + length > i:
            i = back
            continue
        break
    return i


def _truncation_tail(doc: Document, cut: int) -> str:
    """What follows the cut: the rest of the envelope after its body string, or nothing."""
    body = _body_span(doc)
    if body is not None and body[0] <= cut <= body[1]:
        return doc.text[body[1]:]
    return ""


# --- expected observations ----------------------------------------------------------------------------

def _observations(root: Path):
    """(file, artifact, span, text) of every observation under _shared/expected/."""
    folder = root / SHARED_DIR / "expected"
    if not folder.is_dir():
        return []
    out = []
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            continue
        for obs in data.get("observations", []) if isinstance(data, dict) else []:
            if isinstance(obs, dict) and {"artifact", "span", "text"} <= obs.keys():
                out.append((f"{path.relative_to(root).as_posix()}#{obs.get('id', '?')}", obs["artifact"],
                            obs["span"], obs["text"]))
    return out


def _invalidated_spans(root: Path, rel: str, new_text: str) -> list[str]:
    out = []
    for ref, artifact, span_text, expected in _observations(root):
        if artifact != rel:
            continue
        try:
            span = parse_span(span_text)
        except SpanError:
            out.append(ref)
            continue
        if span.kind == "page":
            continue
        got = apply_span(span, source_text=new_text)
        if got is None or normalise_ws(got) != normalise_ws(expected):
            out.append(ref)
    return out


def format_text(plan: RedactPlan, wrote: bool) -> str:
    from scanner.scrub import shown, shown_path
    from scanner.terminal import safe

    lines = []
    for fp in plan.files:
        if not (fp.changes or fp.unredactable or fp.spans_invalidated):
            continue
        ents: dict[str, int] = {}
        for r, _ in fp.all_redactions():
            ents[r.entity] = ents.get(r.entity, 0) + 1
        what = ", ".join(f"{n} {e}" for e, n in sorted(ents.items())) or "nothing to replace"
        lines.append(f"{shown_path(fp.path)}: {safe(what)}" + (f"; truncate at {fp.truncate_at}" if fp.truncate else ""))
        for r, body in fp.all_redactions():
            where = (f"{body.region.start}-{body.region.end} {safe(body.region.container)}[{r.start}-{r.end}]"
                     if body is not None else f"{r.start}-{r.end}")
            lines.append(f"  {where} {safe(r.entity)} -> {safe(r.replacement)} ({safe(r.rule_id)})")
        for s in fp.spans_invalidated:
            lines.append(f"  span invalidated: {shown_path(s)} (re-capture the expected file; never adjust the span by hand)")
        for u in fp.unredactable:
            lines.append(f"  not redacted: {shown(u)}")
        for w in fp.warnings:
            lines.append(f"  warning: {shown(w)}")
    for e in plan.errors:
        lines.append(f"{shown_path(e['path'])}: error: {safe(e['code'])}: {shown(e['message'])}")
    n = sum(len(fp.all_redactions()) for fp in plan.files)
    files = sum(1 for fp in plan.files if fp.changes)
    verb = "redacted" if wrote else "to redact"
    if files and not wrote:
        lines.append("run `centinela redact --write` on these paths to apply the plan (it updates manifest.json)")
    lines.append(f"{n} value(s) {verb} in {files} file(s) of {len(plan.files)} checked"
                 + (f"; {len(plan.written)} written" if wrote else "")
                 + (f"; {len(plan.errors)} could not be read" if plan.errors else ""))
    return "\n".join(lines)
