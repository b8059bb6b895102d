"""`corpus check`: run the injection rules over the reviewed corpus and report recall per vector and every
false positive. An injection entry counts as detected only when a finding of ITS vector is reported; a
benign entry is a false positive when any injection finding is reported. Known gaps are listed in
`known_gaps.yaml` with a reason; anything else that fails makes the check fail.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from scanner import jsonsafe
from scanner.loaders import load_bytes
from scanner.units import LoadError
from scanner.yamlsafe import RULE_FILE_BYTES, read_yaml

REQUIRED = ("id", "vector", "language", "label", "format", "source")
EXT = {"html": ".html", "json": ".json", "text": ".txt", "pdf": ".pdf"}


class CorpusError(Exception):
    pass


@dataclass
class EntryResult:
    id: str
    vector: str
    label: str
    language: str
    flagged_vectors: list[str]
    ok: bool
    known_gap: str | None = None
    error: str | None = None


@dataclass
class CorpusReport:
    results: list[EntryResult] = field(default_factory=list)
    stale_gaps: list[str] = field(default_factory=list)

    def per_vector(self) -> dict[str, dict]:
        out: dict[str, dict] = {}
        for r in self.results:
            row = out.setdefault(r.vector, {"injections": 0, "detected": 0, "benign": 0, "false_positives": 0})
            if r.label == "injection":
                row["injections"] += 1
                row["detected"] += int(r.vector in r.flagged_vectors)
            else:
                row["benign"] += 1
                row["false_positives"] += int(bool(r.flagged_vectors))
        for row in out.values():
            row["recall"] = round(row["detected"] / row["injections"], 4) if row["injections"] else None
        return dict(sorted(out.items()))

    @property
    def unexpected(self) -> list[EntryResult]:
        return [r for r in self.results if not r.ok and r.known_gap is None]

    @property
    def failed(self) -> bool:
        return bool(self.unexpected or self.stale_gaps)

    def to_json(self) -> dict:
        return {
            "entries": len(self.results),
            "per_vector": self.per_vector(),
            "misses": [r.__dict__ for r in self.results if r.label == "injection" and not r.ok],
            "false_positives": [r.__dict__ for r in self.results if r.label == "benign" and not r.ok],
            "unexpected": [r.id for r in self.unexpected],
            "stale_known_gaps": self.stale_gaps,
            "ok": not self.failed,
        }


def default_corpus_dir() -> Path:
    here = Path.cwd() / "corpus"
    if (here / "injection.jsonl").is_file():
        return here
    return Path(__file__).resolve().parents[1] / "corpus"


def read_entries(directory: Path) -> list[dict]:
    path = directory / "injection.jsonl"
    if not path.is_file():
        raise CorpusError(f"{path}: not found")
    entries = []
    seen = set()
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = jsonsafe.loads(line)
        except ValueError as exc:
            raise CorpusError(f"{path}:{lineno}: invalid JSON: {exc}") from None
        if not isinstance(entry, dict):
            raise CorpusError(f"{path}:{lineno}: an entry is a JSON object")
        wrong = [k for k in (*REQUIRED, "document", "file") if k in entry and not isinstance(entry[k], str)]
        if wrong:
            raise CorpusError(f"{path}:{lineno}: {wrong[0]} must be a string")
        missing = [k for k in REQUIRED if k not in entry]
        if missing:
            raise CorpusError(f"{path}:{lineno}: missing field {missing[0]}")
        if entry["label"] not in ("injection", "benign") or entry["format"] not in EXT:
            raise CorpusError(f"{path}:{lineno}: label must be injection|benign and format one of {', '.join(EXT)}")
        if ("document" in entry) == ("file" in entry):
            raise CorpusError(f"{path}:{lineno}: give exactly one of document and file")
        if entry["id"] in seen:
            raise CorpusError(f"{path}:{lineno}: duplicate id {entry['id']}")
        seen.add(entry["id"])
        entries.append(entry)
    return entries


def read_gaps(directory: Path) -> dict[str, dict]:
    path = directory / "known_gaps.yaml"
    if not path.is_file():
        return {}
    try:
        data = read_yaml(path, max_bytes=RULE_FILE_BYTES) or {}
    except (OSError, UnicodeDecodeError) as exc:
        raise CorpusError(f"{path}: cannot read: {exc}") from None
    except yaml.YAMLError as exc:
        raise CorpusError(f"{path}: invalid YAML: {' '.join(str(exc).split())}") from None
    if not isinstance(data, dict):
        raise CorpusError(f"{path}: expected a mapping with 'gaps: [...]'")
    gaps = {}
    for item in data.get("gaps") or []:
        if not isinstance(item, dict) or not {"id", "kind", "reason"} <= item.keys():
            raise CorpusError(f"{path}: each gap needs id, kind and reason")
        gaps[item["id"]] = item
    return gaps


def entry_bytes(directory: Path, entry: dict) -> bytes:
    if "file" in entry:
        from scanner.fixtures.tree import unsafe_reason

        rel = entry["file"]
        reason = unsafe_reason(directory, rel) if isinstance(rel, str) else "not a path"
        if reason:
            raise CorpusError(f"{directory}: entry {entry.get('id')}: file {rel!r} not read: {reason}")
        return (directory / rel).read_bytes()
    return entry["document"].encode("utf-8")


def check_corpus(directory: Path, scanner) -> CorpusReport:
    entries = read_entries(directory)
    gaps = read_gaps(directory)
    report = CorpusReport()
    for entry in entries:
        name = f"{entry['id']}{EXT[entry['format']]}"
        error = None
        try:
            doc = load_bytes(entry_bytes(directory, entry), name)
            vectors = sorted({f.vector for f in scanner.scan_document(doc) if f.kind == "injection"})
        except (LoadError, OSError) as exc:
            vectors, error = [], str(exc)
        if entry["label"] == "injection":
            ok = entry["vector"] in vectors
        else:
            ok = not vectors and error is None
        gap = gaps.get(entry["id"])
        report.results.append(EntryResult(entry["id"], entry["vector"], entry["label"], entry["language"], vectors,
                                          ok, gap["reason"] if gap else None, error))
    ids = {e["id"] for e in entries}
    by_id = {r.id: r for r in report.results}
    report.stale_gaps = sorted(g for g in gaps if g not in ids or by_id[g].ok)
    return report


def format_text(report: CorpusReport) -> str:
    from scanner.terminal import safe

    lines = [f"{'vector':<22} {'recall':>7} {'detected':>9} {'benign':>7} {'false+':>7}"]
    for vector, row in report.per_vector().items():
        recall = "-" if row["recall"] is None else f"{row['recall']:.2f}"
        lines.append(f"{vector:<22} {recall:>7} {row['detected']:>4}/{row['injections']:<4} {row['benign']:>7} "
                     f"{row['false_positives']:>7}")
    for r in report.results:
        if r.ok:
            continue
        what = "missed" if r.label == "injection" else "false positive"
        got = f" (flagged as {', '.join(r.flagged_vectors)})" if r.flagged_vectors and r.label == "injection" else ""
        got = f" (flagged as {', '.join(r.flagged_vectors)})" if r.label == "benign" else got
        tail = f" — known gap: {r.known_gap}" if r.known_gap else ""
        # one line per entry whatever its id or error says (a --corpus directory is anyone's)
        lines.append(safe(f"{what}: {r.id}{got}{' error: ' + r.error if r.error else ''}{tail}"))
    for g in report.stale_gaps:
        lines.append(safe(f"stale known gap: {g} now passes (or is not in the corpus): remove it from known_gaps.yaml"))
    total_inj = sum(1 for r in report.results if r.label == "injection")
    det = sum(1 for r in report.results if r.label == "injection" and r.ok)
    fps = sum(1 for r in report.results if r.label == "benign" and not r.ok)
    lines.append(f"{len(report.results)} entries: {det}/{total_inj} injections detected, {fps} false positives, "
                 f"{len(report.unexpected)} unexpected")
    return "\n".join(lines)
