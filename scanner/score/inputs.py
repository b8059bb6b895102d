"""Everything `score` reads: the golden set, families, judgments and manifest of the tree, and the run.

Nothing here raises for a bad file inside the tree or the run: it becomes a problem of the report (one line
naming the file), and the file is left out. Only a root or run directory that cannot be read at all is a
`ScoreInputError` (exit code 2).
"""

from __future__ import annotations

import errno
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from scanner.yamlsafe import read_yaml
from pydantic import TypeAdapter, ValidationError

from scanner.fixtures.models import GoldenCase, Invoice, Judgment, RunInfo, RunRecord
from scanner.fixtures.tree import ManifestFile, first_error, golden_yaml, read_golden, read_manifest

NOT_PROVIDER_DIRS = {"invoices"}
_JUDGMENTS_OF_CASE = TypeAdapter(dict[str, Judgment])


class ScoreInputError(Exception):
    pass


@dataclass
class Problem:
    path: str
    message: str

    def to_json(self) -> dict:
        return {"path": self.path, "message": self.message}


@dataclass
class TreeInputs:
    root: Path
    cases: dict[str, GoldenCase] = field(default_factory=dict)
    families: dict[str, list[str]] = field(default_factory=dict)
    judgments: dict[str, dict[str, Judgment]] = field(default_factory=dict)
    manifest: ManifestFile | None = None
    problems: list[Problem] = field(default_factory=list)
    _by_provider_case: dict | None = field(default=None, repr=False)

    @property
    def entries(self) -> dict:
        return self.manifest.entries if self.manifest else {}

    def provider_files(self, provider: str, case: str) -> list[str]:
        """The manifest's files under `<provider>/` for a case, sorted (the index is built once)."""
        if self._by_provider_case is None:
            index: dict[tuple[str, str], list[str]] = {}
            for rel, e in self.entries.items():
                if e.case and "/" in rel:
                    index.setdefault((rel.split("/", 1)[0], e.case), []).append(rel)
            self._by_provider_case = {k: sorted(v) for k, v in index.items()}
        return self._by_provider_case.get((provider, case), [])


@dataclass
class RunInputs:
    path: Path
    info: RunInfo
    records: dict[str, dict[str, RunRecord]] = field(default_factory=dict)   # provider -> case -> record
    record_paths: dict[tuple[str, str], str] = field(default_factory=dict)   # (provider, case) -> run-relative path
    invoices: dict[str, Invoice] = field(default_factory=dict)
    invoice_errors: dict[str, str] = field(default_factory=dict)             # provider -> why its invoice is unusable
    problems: list[Problem] = field(default_factory=list)


def _yaml(path: Path, problems: list[Problem], label: str):
    if not path.is_file():
        problems.append(Problem(label, "not found"))
        return None
    try:
        return read_yaml(path, cache=True)
    except OSError as exc:
        problems.append(Problem(label, f"cannot read: {exc.strerror or exc}"))
        return None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        problems.append(Problem(label, f"not valid YAML: {str(exc).splitlines()[0]}"))
        return None


def judgments_yaml(root: Path) -> tuple[object, list[Problem]]:
    """golden/judgments.yaml parsed (None when unusable) and the problems met reading it."""
    problems: list[Problem] = []
    return _yaml(root / "golden" / "judgments.yaml", problems, "golden/judgments.yaml"), problems


def read_tree(root: Path, parsed=None) -> TreeInputs:
    """The tree's inputs. `parsed`: a `scanner.score.prefetch.Prefetch` of `judgments_yaml(root)` started
    earlier (the scorer parses judgments.yaml, the largest file, in a child while it reads the run and then
    cases.yaml), else it is parsed here. Either way the same data, read in the same order."""
    if not root.is_dir():
        raise ScoreInputError(f"{root}: fixture root is not a directory")
    ti = TreeInputs(root=root)
    gs = read_golden(root, golden_yaml(root))
    for err in gs.errors:
        ti.problems.append(Problem("golden/cases.yaml", err.removeprefix("golden/cases.yaml ").removeprefix(": ")))
    for c in gs.cases:
        if c.id in ti.cases:
            ti.problems.append(Problem("golden/cases.yaml", f"case {c.id} is listed twice; the first is used"))
            continue
        ti.cases[c.id] = c

    fam = _yaml(root / "golden" / "families.yaml", ti.problems, "golden/families.yaml")
    if isinstance(fam, dict):
        for name, sufs in fam.items():
            if isinstance(sufs, list) and all(isinstance(s, str) for s in sufs):
                ti.families[str(name)] = sufs
            else:
                ti.problems.append(Problem("golden/families.yaml", f"family {name}: must be a list of host suffixes"))
    elif fam is not None:
        ti.problems.append(Problem("golden/families.yaml", "must map a family to a list of host suffixes"))

    jud, jud_problems = parsed.result() if parsed is not None else judgments_yaml(root)
    ti.problems.extend(jud_problems)
    if isinstance(jud, dict):
        for case, urls in jud.items():
            if not isinstance(urls, dict):
                ti.problems.append(Problem("golden/judgments.yaml", f"{case}: must map URLs to judgments"))
                continue
            bucket = ti.judgments.setdefault(str(case), {})
            try:                  # one validation per case; the per-URL loop below names a bad URL's error
                whole = _JUDGMENTS_OF_CASE.validate_python(urls)
            except ValidationError:
                whole = None
            if whole is not None and len(whole) == len(urls):
                for url, j in whole.items():
                    bucket[url.strip()] = j
            else:
                for url, j in urls.items():
                    try:
                        bucket[str(url).strip()] = Judgment.model_validate(j)
                    except ValidationError as exc:
                        ti.problems.append(Problem("golden/judgments.yaml", f"{case} {url}: {first_error(exc)}"))
            if str(case) not in ti.cases:
                ti.problems.append(Problem("golden/judgments.yaml", f"{case}: not a case of golden/cases.yaml"))
    elif jud is not None:
        ti.problems.append(Problem("golden/judgments.yaml", "must map cases to URLs to judgments"))

    ti.manifest = read_manifest(root)
    if ti.manifest.error:
        ti.problems.append(Problem("manifest.json", ti.manifest.error))
    return ti


RECORD_MAX_BYTES = 64 << 20      # a run record or an invoice larger than this is a problem, never read


class _Refused(Exception):
    """A run file that is not read: its one-line reason."""


def _inside(root: str, path: str) -> bool:
    real = os.path.realpath(path)
    return os.path.commonpath([real, root]) == root


def _read_inside(root: str, path: str, plain: bool = False) -> bytes:
    """The bytes of a run file, refused when it resolves outside the run directory `root` (resolved; a symlink
    out of it), is not a regular file, or is larger than RECORD_MAX_BYTES. `plain`: the caller saw, in its
    directory listing, that the file is no symlink and that its folder resolves inside `root`, so no path needs
    resolving; the file is then opened without following a symlink, in case one was put there since."""
    if not plain and not _inside(root, path):
        raise _Refused("not read: resolves outside the run directory (symlink)")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) if plain else os.O_RDONLY)
    except OSError as exc:
        if plain and exc.errno == errno.ELOOP:    # became a symlink after the listing: judge it as one
            return _read_inside(root, path)
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _Refused("not read: not a regular file")
        if st.st_size > RECORD_MAX_BYTES:
            raise _Refused(f"not read: {st.st_size:,} bytes, more than a run file may hold "
                           f"({RECORD_MAX_BYTES >> 20} MB)")
        chunks, total = [], 0
        while total <= RECORD_MAX_BYTES:      # a file that grows after fstat is still cut at the limit
            want = min(max(st.st_size + 1, 1 << 16), RECORD_MAX_BYTES + 1 - total)
            chunk = os.read(fd, want)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if len(chunk) < want and total <= st.st_size:
                break                         # a regular file read short of its size is read to its end
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)
    finally:
        os.close(fd)


def read_run(run_dir: Path, plain: bool = False) -> RunInputs:
    """The run's info, records and invoices. `plain`: records as `scanner.score.plain_records` reads them
    (the models' values without a model per record, result, claim and call; a record its schema refuses goes
    to the model, which words the error) — the scorer's way; `pool` and `verify-run` read the models' extras."""
    if not run_dir.is_dir():
        raise ScoreInputError(f"{run_dir}: run directory not found")
    info_path = run_dir / "run.json"
    problems: list[Problem] = []
    try:
        info = RunInfo.model_validate_json(info_path.read_bytes())
    except FileNotFoundError:
        raise ScoreInputError(f"{info_path}: run.json not found") from None
    except ValidationError as exc:
        raise ScoreInputError(f"{info_path}: {first_error(exc)}") from None
    except OSError as exc:
        raise ScoreInputError(f"{info_path}: cannot read: {exc.strerror or exc}") from None
    ri = RunInputs(path=run_dir, info=info, problems=problems)

    if plain:
        from scanner.score.plain_records import read_record
    else:
        read_record = RunRecord.model_validate_json
    root = os.path.realpath(run_dir)
    with os.scandir(run_dir) as it:
        pdirs = sorted((e.name, e.is_symlink()) for e in it if e.is_dir())
    for name, linked in pdirs:
        if name in NOT_PROVIDER_DIRS or name.startswith((".", "_")):
            continue
        bucket: dict[str, RunRecord] = {}
        pdir = os.path.join(run_dir, name)
        pdir_inside = not linked or _inside(root, pdir)
        with os.scandir(pdir) as it:
            files = sorted((e.name, pdir_inside and not e.is_symlink())
                           for e in it if e.name.endswith(".json") and e.is_file())
        for fname, plain_file in files:
            rel = f"{name}/{fname}"
            try:
                data = _read_inside(root, os.path.join(pdir, fname), plain_file)
                rec = read_record(data)
            except _Refused as exc:
                problems.append(Problem(rel, str(exc)))
                continue
            except ValidationError as exc:
                problems.append(Problem(rel, f"not a run record: {first_error(exc)}"))
                continue
            except OSError as exc:
                problems.append(Problem(rel, f"cannot read: {exc.strerror or exc}"))
                continue
            if rec.provider != name:
                problems.append(Problem(rel, f"record says provider {rec.provider!r} but sits under {name}/; "
                                             f"scored as {name}"))
            if rec.case in bucket:
                problems.append(Problem(rel, f"second record for case {rec.case}; the first "
                                             f"({ri.record_paths[(name, rec.case)]}) is used"))
                continue
            bucket[rec.case] = rec
            ri.record_paths[(name, rec.case)] = rel
        ri.records[name] = bucket

    inv_dir = run_dir / "invoices"
    if inv_dir.is_dir():
        for f in sorted(inv_dir.glob("*.json")):
            rel = f.relative_to(run_dir).as_posix()
            try:
                ri.invoices[f.stem] = Invoice.model_validate_json(_read_inside(root, str(f)))
            except (ValidationError, OSError, _Refused) as exc:
                msg = first_error(exc) if isinstance(exc, ValidationError) else str(exc)
                problems.append(Problem(rel, f"not an invoice: {msg}"))
                ri.invoice_errors[f.stem] = f"{rel} is not an invoice: {msg}"
    return ri


def dump_json(data) -> str:
    """report.json, cascade.json: exactly `json.dumps(data, indent=2, ensure_ascii=False)`, then every character a
    terminal could act on as a `\\uXXXX` escape. json's C encoder does not indent and its Python one is slow
    (0.26 s for the bench's 14.7 MB report; a one-pass writer of our own, used before, 0.18 s), so the data is
    encoded compactly by the C encoder — the same keys, strings and numbers json.dumps writes — and indented by
    msgspec's formatter, which copies every token as it is and lays them out as json.dumps does (0.09 s, the
    terminal escaping included). A NaN or an infinity, which JSON has no token for and the
    formatter refuses, is left to json.dumps itself. tests/test_score_dump_json.py compares both."""
    import msgspec

    from scanner.terminal import json_text

    compact = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    try:
        text = msgspec.json.format(compact, indent=2)
    except msgspec.DecodeError:
        text = json.dumps(data, indent=2, ensure_ascii=False)
    return json_text(text) + "\n"
