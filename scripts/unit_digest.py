"""Digest of the units every loader produces on a set of files, to prove that a change to the loading path
changes nothing a rule can see.

    python scripts/unit_digest.py --out new.json                 # this checkout's loaders
    python scripts/unit_digest.py --code /tmp/old --out old.json # another checkout's (e.g. `git archive` of main)
    python scripts/unit_digest.py --compare old.json new.json

Per file, a SHA-256 over: the load problems; every element (index, tag, attributes, span, parent, context);
every unit (channel, locator, text, start, end, container, page, attrs, element index); the source span of
every single character of each unit whose text is not a plain slice of the source (character references,
JSON escapes, nested maps) and of a sample of characters of the others, plus the empty spans at both ends;
with `--styles`, the cascaded style of each unit's element. Files: ../shared/realdata/html,
../shared/training/benign-pages, the example tree (fixtures/web-search) and the corpus (its files and its
inline documents), each skipped when absent. Reads them only; writes only `--out`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
SAMPLE_STEP = 61


def sources(repo: Path):
    """(display name, bytes) of every file to digest, in a stable order."""
    roots = [("realdata", SHARED / "realdata" / "html"), ("benign", SHARED / "training" / "benign-pages"),
             ("example", repo / "fixtures" / "web-search"), ("corpus", repo / "corpus" / "files")]
    for label, root in roots:
        if not root.is_dir():
            print(f"{label}: {root} absent, skipped", file=sys.stderr)
            continue
        for p in sorted(root.rglob("*")):
            if p.is_file() and not p.name.startswith("."):
                yield f"{label}/{p.relative_to(root)}", p.name, p.read_bytes()
    corpus = repo / "corpus" / "injection.jsonl"
    if corpus.is_file():
        ext = {"html": ".html", "json": ".json", "text": ".txt", "pdf": ".pdf"}
        for line in corpus.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            entry = json.loads(line)
            if "document" in entry:
                name = f"{entry['id']}{ext.get(entry['format'], '')}"
                yield f"corpus-entry/{name}", name, entry["document"].encode("utf-8")


def records(doc, styles: bool):
    """The canonical lines of one loaded document."""
    yield ["kind", doc.kind, doc.encoding, len(doc.text)]
    for p in doc.problems:
        yield ["problem", p]
    index_of = {}
    for el in doc.elements:
        index_of[id(el)] = el.index
        parent = el.parent.index if el.parent is not None else None
        yield ["el", el.index, el.tag, sorted(el.attrs.items()), el.start, el.end, parent, el.context]
    for u in doc.units:
        el = u.element
        el_index = getattr(el, "index", None) if el is not None else None
        yield ["unit", u.channel.value, u.locator, u.text, u.start, u.end, u.container, u.page,
               repr(sorted(u.attrs.items())), el_index]
        n = len(u.text)
        raw = doc.text[u.start:u.end] if u.page is None else None
        every = raw != u.text or type(u.map).__name__ == "ComposedMap"
        step = 1 if every else SAMPLE_STEP
        spans = [u.source_span(0, 0), u.source_span(n, n), u.source_span(0, n)]
        spans.extend(u.source_span(i, i + 1) for i in range(0, n, step))
        if not every and n:
            spans.append(u.source_span(n - 1, n))
        yield ["spans", [list(s) for s in spans]]
        if styles and el is not None and hasattr(el, "style"):
            yield ["style", sorted(el.style.items())]


def digest_all(repo: Path, styles: bool) -> dict:
    from scanner.loaders import load_bytes
    from scanner.units import LoadError

    out: dict[str, dict] = {}
    for display, name, data in sources(repo):
        h = hashlib.sha256()
        try:
            doc = load_bytes(data, name)
        except LoadError as exc:
            h.update(json.dumps(["error", exc.code, exc.message]).encode())
            out[display] = {"sha256": h.hexdigest(), "units": 0}
            continue
        for rec in records(doc, styles):
            h.update(json.dumps(rec, ensure_ascii=False).encode("utf-8", "surrogatepass"))
            h.update(b"\n")
        out[display] = {"sha256": h.hexdigest(), "units": len(doc.units)}
    return out


def compare(old_path: Path, new_path: Path) -> int:
    old = json.loads(old_path.read_text())
    new = json.loads(new_path.read_text())
    a, b = old["files"], new["files"]
    missing = sorted(set(a) - set(b))
    added = sorted(set(b) - set(a))
    differ = sorted(k for k in set(a) & set(b) if a[k]["sha256"] != b[k]["sha256"])
    units = sum(v["units"] for v in a.values())
    print(f"{len(a)} files, {units} units in {old_path}; {len(b)} files in {new_path}")
    for label, names in (("only in old", missing), ("only in new", added), ("different", differ)):
        for name in names:
            print(f"  {label}: {name}")
    if missing or added or differ:
        print(f"DIFFERENT: {len(differ)} files differ, {len(missing)} missing, {len(added)} added")
        return 1
    print(f"IDENTICAL: every file's units, offsets, spans{' and styles' if old.get('styles') and new.get('styles') else ''} "
          "are the same")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--code", type=Path, default=REPO, help="checkout whose `scanner` package loads the files")
    parser.add_argument("--out", type=Path, help="where to write the digest (JSON)")
    parser.add_argument("--styles", action="store_true", help="also digest each unit's element style (slower)")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("OLD", "NEW"))
    args = parser.parse_args()
    if args.compare:
        return compare(*args.compare)
    if args.out is None:
        parser.error("--out is required unless --compare is given")
    sys.path.insert(0, str(args.code.resolve()))
    import scanner

    if Path(scanner.__file__).resolve().parent != (args.code.resolve() / "scanner"):
        print(f"error: imported scanner from {scanner.__file__}, not from {args.code}", file=sys.stderr)
        return 2
    t = time.perf_counter()
    files = digest_all(REPO, args.styles)
    total = hashlib.sha256("".join(f"{k}\t{v['sha256']}\n" for k, v in sorted(files.items())).encode()).hexdigest()
    args.out.write_text(json.dumps({"code": str(args.code), "styles": args.styles, "total": total, "files": files},
                                   indent=1, sort_keys=True))
    print(f"{len(files)} files, {sum(v['units'] for v in files.values())} units, total {total[:16]} "
          f"({time.perf_counter() - t:.1f} s) -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
