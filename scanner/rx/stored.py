"""The bundled packs' RE2 programs, written ahead: what `rx.compile` would write for them, read from a file.

Translating a pattern (scanner.rx.translate: Python's parser, the tree, the exact character sets, the alphabet)
is most of what building a scanner costs: about 0.8 s of CPU for the injection lexicon, its one-search unions
and the personal-data and secret recognizers, on every cold start (a pre-commit hook pays it for each
commit). `programs.json.gz`, next to this module (gzip-compressed JSON: 2 MB of text, 0.2 MB stored; reading it
costs about 2 ms more than the plain text), holds for every pattern compiled while the bundled packs are
built and the example tree is scanned the pattern's groups, its leading checks and its RE2 program texts, and
the alphabet those programs are written for. `compile()` of one of those patterns (same text, flags, engine and
memory budget) then only hands RE2 the stored text at its first use; any other pattern (a user's `--rules`, a
pattern the file lacks) is translated as before. Nothing is ever decided from the file alone:

- it is read only when its `fingerprint` (a hash of the translator's source files, the Python version, the
  Unicode database and the versions of google-re2 and regex) matches this installation, and only into an
  alphabet nothing has refined yet; a file that is absent, unreadable, of another version or malformed is
  ignored and every pattern is translated from its source, as it would be without it;
- once the alphabet is refined by a pattern the file lacks, a stored pattern is translated from its source on
  its next use (the stored programs are for the alphabet the file installed, and only for it);
- the file is part of the package, like the code and the rule packs, and is regenerated with
  `make rx-programs` (`python -m scanner.rx`); tests/test_rx_stored.py fails when it is stale, and checks
  that the stored patterns match as the translated ones do.

`CENTINELA_RX_STORED=0` turns it off (the generator runs so, and the tests that compare both ways).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
from pathlib import Path

import numpy as np

from scanner.distinfo import version_beside
from scanner.rx.alphabet import ALPHABET

FILE = Path(__file__).with_name("programs.json.gz")
MAX_TEXT = 64 << 20            # the decompressed JSON read at most (the file holds about 2 MB)
ENV = "CENTINELA_RX_STORED"
FORMAT = 1
_SOURCES = ("__init__.py", "alphabet.py", "charset.py", "stored.py", "text.py", "translate.py")

_lock = threading.Lock()
_state: dict = {}             # "entries": {key: entry}, "version": the alphabet version the file installed


def fingerprint() -> str:
    """What the stored programs depend on besides the patterns themselves."""
    import unicodedata

    h = hashlib.sha256()
    here = Path(__file__).parent
    for name in _SOURCES:
        h.update(name.encode() + b"\0" + (here / name).read_bytes() + b"\0")
    versions = [f"{sys.version_info[0]}.{sys.version_info[1]}", unicodedata.unidata_version,
                f"regex={regex_version()}", f"google-re2={re2_version()}"]
    h.update(" ".join(versions).encode())
    return h.hexdigest()


def regex_version() -> str:
    """`regex.__version__`, read from its dist-info when there is one: a cold scan need not import `regex`
    (a Python engine only a pattern the stored programs lack uses) to check the file."""
    version = version_beside("regex")
    if version is not None:
        return version
    import regex

    return regex.__version__


def re2_version() -> str:
    """google-re2's version, as `importlib.metadata.version` gives it ("none" when it is not installed), read
    from the `google_re2-*.dist-info/METADATA` beside the `re2` package when there is exactly one: importing
    importlib.metadata and searching every path entry for it was a tenth of a cold scan's start."""
    version = version_beside("re2", "google_re2")
    if version is not None:
        return version
    from importlib import metadata

    try:
        return metadata.version("google-re2")
    except metadata.PackageNotFoundError:                      # pragma: no cover - a dependency
        return "none"


def _key(pattern: str, flags: int, engine: str, max_mem: int) -> tuple:
    return (pattern, flags, engine, max_mem)


def read_text(path: Path) -> str:
    """The JSON text of a programs file: gzip-compressed (as written by `main`), or plain JSON. ValueError when
    it does not decompress, is larger than MAX_TEXT once decompressed, or is not UTF-8."""
    import zlib

    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        d = zlib.decompressobj(wbits=31)           # gzip framing
        raw = d.decompress(raw, MAX_TEXT + 1)
        if len(raw) > MAX_TEXT or not d.eof:
            raise ValueError(f"{path.name}: more than {MAX_TEXT} bytes once decompressed, or truncated")
    return raw.decode("utf-8")


def encode(text: str) -> bytes:
    """`text` as the file stores it: gzip, level 9, no name and no time in the header (the same text gives the
    same bytes with the same zlib)."""
    import gzip

    return gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)


def _read(path: Path) -> dict | None:
    """The file's entries and alphabet, or None when it is not for this installation or not well formed."""
    try:
        data = json.loads(read_text(path))
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("fingerprint") != fingerprint():
            return None
        alphabet = data["alphabet"]
        starts, labels, count = alphabet["starts"], alphabet["labels"], alphabet["count"]
        if not (isinstance(count, int) and 1 <= count <= 128 and len(starts) == len(labels) >= 1
                and all(isinstance(x, int) for x in starts + labels) and starts[0] == 0x80
                and all(a < b for a, b in zip(starts, starts[1:])) and all(0 <= x < count for x in labels)
                and sorted(set(labels)) == list(range(count))):
            return None
        entries = {}
        for e in data["patterns"]:
            if not _valid_entry(e):
                return None
            entries[_key(e["pattern"], e["flags"], e["engine"], e["max_mem"])] = e
        return {"entries": entries, "starts": starts, "labels": labels, "count": count}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _valid_program(q) -> bool:
    return q is None or (isinstance(q, dict) and isinstance(q.get("text"), str) and isinstance(q.get("alts"), list)
                         and all(isinstance(a, list) and len(a) == 3 and (a[0] is None or _int(a[0]))
                                 and isinstance(a[1], list) and all(_int(k) for k in a[1])
                                 and isinstance(a[2], list)
                                 and all(isinstance(g, list) and len(g) == 2 and all(_int(k) for k in g) for g in a[2])
                                 for a in q["alts"]))


def _valid_entry(e) -> bool:
    """Every field `rx.Pattern` reads from an entry, of the type it reads."""
    if not (isinstance(e, dict) and isinstance(e.get("pattern"), str) and e.get("engine") in ("re", "regex")
            and all(_int(e.get(k)) for k in ("flags", "max_mem", "gflags", "groups"))
            and isinstance(e.get("uses_prev"), bool) and isinstance(e.get("groupindex"), list)
            and all(isinstance(g, list) and len(g) == 2 and isinstance(g[0], str) and _int(g[1])
                    for g in e["groupindex"])):
        return False
    checks, search, full = e.get("checks"), e.get("search"), e.get("full", 0)
    if not (isinstance(checks, list) and all(
            isinstance(c, dict) and isinstance(c.get("behind"), bool) and isinstance(c.get("negative"), bool)
            and _int(c.get("width")) and isinstance(c.get("text"), str) for c in checks)):
        return False
    return (isinstance(search, list) and len(search) == 2 and all(_valid_program(q) for q in search)
            and (full is None or (isinstance(full, list) and len(full) == 2 and all(_valid_program(q) for q in full))))


def _load() -> dict:
    """The stored entries, installed into the alphabet (once); {} when there are none to use."""
    if "entries" in _state:
        return _state["entries"]
    with _lock, ALPHABET.lock:
        if "entries" in _state:
            return _state["entries"]
        entries: dict = {}
        data = None if os.environ.get(ENV, "1") == "0" else _read(FILE)
        if data is not None and ALPHABET.install(np.array(data["starts"], dtype=np.int64),
                                                 np.array(data["labels"], dtype=np.int64), data["count"]):
            entries = data["entries"]
            _state["version"] = ALPHABET.version
        _state["entries"] = entries
        return entries


def entry(pattern: str, flags: int, engine: str, max_mem: int) -> dict | None:
    """The stored entry of a pattern, if the file has it and the alphabet is still the one it installed."""
    entries = _load()
    if not entries or ALPHABET.version != _state.get("version"):
        return None
    return entries.get(_key(pattern, flags, engine, max_mem))


def version() -> int | None:
    """The alphabet version the stored programs are written for (None: nothing was installed)."""
    return _state.get("version")


# --- writing the file -----------------------------------------------------------------------------------

def _text_sets(path: Path) -> bool:
    """A JSON Lines file, or a folder holding only JSON Lines files."""
    if path.is_file():
        return path.suffix == ".jsonl"
    return path.is_dir() and all(c.is_file() and c.suffix == ".jsonl" for c in path.iterdir())


def build_paths(repo: Path) -> list[Path]:
    """What build() scans: the example tree and the corpus's pages and files, in the order a scan of both folders
    takes them, but the corpus's JSON Lines text sets (corpus/*.jsonl: the injection rules' training and
    measurement texts, 3.5 MB, and the folders that hold nothing else: `written/`, `blind/`): they hold no page,
    and scanning them took 10 of the build's 17 s while compiling no pattern the rest had not (checked when this was
    written: the same file, byte for byte, either way)."""
    paths = [repo / "fixtures" / "web-search"] if (repo / "fixtures" / "web-search").is_dir() else []
    corpus = repo / "corpus"
    if corpus.is_dir():
        paths += sorted(p for p in corpus.iterdir() if not _text_sets(p))
    return paths


def build() -> dict:
    """Build the bundled scanners (and scan the example tree, when present) in this process, with nothing
    stored, and return every compiled pattern's programs for the alphabet as it then is."""
    if os.environ.get(ENV) != "0" or _state.get("entries"):
        raise RuntimeError(f"build() runs with {ENV}=0 set before the first compile")
    from scanner import rx
    from scanner.pipeline.run import scan_paths
    from scanner.scan import Scanner

    from scanner.pii.names import title_regexes

    full = Scanner()
    Scanner(kinds=("injection",))
    for recognizer in full.pii.recognizers:      # compiled on first use, by some pages only
        recognizer.context_regex
    title_regexes()
    repo = Path(__file__).resolve().parents[2]
    if paths := build_paths(repo):
        scan_paths(full, paths)
    rx.refresh()
    patterns = []
    for p in sorted(rx._PATTERNS, key=lambda p: repr(p._key)):
        p._full_programs()                        # stored too, read on a pattern's first fullmatch only
        if p._version != ALPHABET.version:      # pragma: no cover - refresh() wrote every one
            raise RuntimeError(f"{p!r} is not written for the current alphabet")
        pattern, flags, engine, max_mem = p._key
        patterns.append({
            "pattern": pattern, "flags": flags, "engine": engine, "max_mem": max_mem,
            "gflags": p.flags, "groups": p.groups, "groupindex": sorted(p.groupindex.items()),
            "uses_prev": p._uses_prev,
            "checks": [{"behind": c.behind, "negative": c.negative, "width": c.width, "text": c.text}
                       for c in p._checks],
            "search": [None if q is None else q.to_json() for q in p._search],
            "full": None if p._full is None else [None if q is None else q.to_json() for q in p._full],
        })
    return {"format": FORMAT, "fingerprint": fingerprint(),
            "alphabet": {"count": ALPHABET.count, "starts": [int(x) for x in ALPHABET.starts],
                         "labels": [int(x) for x in ALPHABET.labels]},
            "patterns": patterns}


def render(data: dict) -> str:
    return json.dumps(data, ensure_ascii=True, separators=(",", ":"), sort_keys=True) + "\n"


def write(out: Path = FILE) -> dict:
    """Build (as `build()`, so with the ENV variable at 0 set before the first compile) and write the programs file at `out`
    atomically; return what was written."""
    from scanner.atomic import atomic_write_bytes

    data = build()
    atomic_write_bytes(out, encode(render(data)))
    return data


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else FILE
    data = write(out)
    print(f"{out}: {len(data['patterns'])} patterns, {data['alphabet']['count']} atoms")
