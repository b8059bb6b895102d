"""Pooled relevance workflow (spec §4.2): what no judgment covers yet, grouped for a reviewer, and the merge back.

`build_pool(root, run_dir)` lists, per case, the URLs any provider of the run returned that
`golden/judgments.yaml` does not judge, grouped by suggested origin group: reprints of one wire story are one
group, recognised by near-duplicate titles or text: a Jaccard similarity ≥ 0.5 of their content-word sets
(titles of at least three words, or the first 60 words of text), each word weighted by its inverse document
frequency among the case's documents — every result of a case repeats the company's name and place, which
say nothing about which story a document tells. An unjudged URL that duplicates a judged one is
suggested into the judged group. Titles and text come from the run's results (`title`, `snippet`, extra
fields) and from the provider's recorded responses for the case, read by the provider adapters.

The review file is YAML in the shape of judgments.yaml, every entry with `supports: null`; a reviewer fills
in `supports` (and checks `group`, `verified_published_at`), and `merge_review` adds the filled entries to
judgments.yaml: atomically, never overwriting a different existing judgment, leaving unfilled ones out.
Relevant hosts missing from a case's `expect.hosts` are listed for review, never added to cases.yaml.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import yaml

from scanner.yamlsafe import DATA_FILE_BYTES, read_text_bounded, read_yaml, safe_load
from pydantic import ValidationError

from scanner.fixtures.models import Judgment
from scanner.score.inputs import read_run, read_tree
from scanner.score.relevance import CaseRelevance, Families, host_of
from scanner.scrub import scrub_data, scrub_text
from scanner.terminal import json_text, safe

DUP_JACCARD = 0.5
_STOP = frozenset("""a al ante con de del el en es la las lo los o para por que se sin su sus un una y
the of and to in for on at by with from as is are an or""".split())


@dataclass
class Candidate:
    url: str
    host: str
    family: str | None
    title: str = ""
    text: str = ""
    providers: set[str] = field(default_factory=set)
    published_at: str | None = None
    group: str = ""
    reason: str = ""


def _words(text: str) -> list[str]:
    folded = unicodedata.normalize("NFKD", text.lower())
    folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
    return [w for w in re.findall(r"[a-z0-9]+", folded) if w not in _STOP and len(w) > 1]


def _jaccard(a: set, b: set, weights: dict[str, float] | None = None) -> float:
    if not a or not b:
        return 0.0
    if weights is None:
        return len(a & b) / len(a | b)
    union = sum(weights.get(w, 1.0) for w in a | b)
    return sum(weights.get(w, 1.0) for w in a & b) / union if union else 0.0


def word_weights(documents: list[tuple[str, str]]) -> dict[str, float]:
    """Inverse document frequency of the words of one case's titles and texts: the company's name, which every
    result of a case repeats, says nothing about which story a document tells."""
    n = len(documents)
    df: dict[str, int] = {}
    for title, text in documents:
        for w in set(_words(title)) | set(_words(text)[:60]):
            df[w] = df.get(w, 0) + 1
    return {w: math.log(1 + n / c) for w, c in df.items()}


def near_duplicate(a_title: str, a_text: str, b_title: str, b_text: str,
                   weights: dict[str, float] | None = None) -> str | None:
    """Why two documents look like one origin (a reprint), or None. Words count by `weights` (IDF within the
    case) when given."""
    ta, tb = set(_words(a_title)), set(_words(b_title))
    sim = _jaccard(ta, tb, weights)
    if len(ta) >= 3 and len(tb) >= 3 and sim >= DUP_JACCARD:
        return f"titles share {sim:.2f} of their (weighted) words"
    xa, xb = set(_words(a_text)[:60]), set(_words(b_text)[:60])
    sim = _jaccard(xa, xb, weights)
    if len(xa) >= 8 and len(xb) >= 8 and sim >= DUP_JACCARD:
        return f"texts share {sim:.2f} of their (weighted) first words"
    return None


def default_group(url: str) -> str:
    """A readable origin-group name from a URL: the host's first label and the last path segment
    (`eleconomista-cofepris-otorga-87-registros…`); the example tree's judgments use the same names."""
    parts = urlsplit(url)
    host = (parts.hostname or "").removeprefix("www.")
    label = host.split(".")[0] or "url"
    segs = [s for s in parts.path.split("/") if s]
    last = re.sub(r"\.(html?|pdf|php)$", "", segs[-1]) if segs else "inicio"
    if parts.query:   # dof.gob.mx/nota_detalle.php?codigo=…: the query names the document
        last += "-" + "-".join(v for kv in parts.query.split("&") for v in kv.split("=")[1:])
    last = re.sub(r"[^a-z0-9]+", "-", last.lower()).strip("-")[:48].strip("-")
    return f"{label}-{last}" if last else label


def _recorded_texts(ti, provider: str, case: str) -> dict[str, tuple[str, str, str | None]]:
    """url -> (title, text, published_at) from the provider's recorded responses for the case."""
    from scanner.providers import AdapterError, read_fixture

    out: dict[str, tuple[str, str, str | None]] = {}
    for rel in ti.provider_files(provider, case):
        if rel.split("/")[1:2] == ["errors"]:
            continue
        try:
            resp = read_fixture(ti.root / rel, provider=provider, captured_at=ti.entries[rel].captured_at)
        except (AdapterError, OSError, ValueError):
            continue
        for r in resp.results:
            out.setdefault(r.url, (r.title or "", r.snippet or "", r.published_at))
    return out


@dataclass
class CasePool:
    case: str
    judged_groups: dict[str, str]                       # judged url -> group
    candidates: list[Candidate]
    hosts_for_review: list[tuple[str, str]]             # (host, url)


def build_pool(root: Path, run_dir: Path) -> tuple[list[CasePool], list[str], str]:
    """(pools per case, problems met, the run's id)."""
    ti = read_tree(root)
    ri = read_run(run_dir)
    families = Families(ti.families)
    problems = [f"{p.path}: {p.message}" for p in ti.problems + ri.problems]
    pools: list[CasePool] = []
    for cid in sorted(ti.cases):
        case = ti.cases[cid]
        if case.web_role == "forbidden":
            continue
        judged = ti.judgments.get(cid, {})
        rel = CaseRelevance(case, judged, families)
        cands: dict[str, Candidate] = {}
        seen_texts: dict[str, tuple[str, str]] = {}
        reviews: list[tuple[str, str]] = []
        for provider in sorted(ri.records):
            rec = ri.records[provider].get(cid)
            if rec is None:
                continue
            recorded = _recorded_texts(ti, provider, cid)
            for r in sorted(rec.results, key=lambda r: r.rank):
                url = r.url.strip()
                extra = r.model_extra or {}
                title, text, pub = recorded.get(url, ("", "", None))
                title = str(extra.get("title") or title or "")
                text = str(extra.get("snippet") or extra.get("content") or text or "")
                if url in judged:
                    if url not in seen_texts or not seen_texts[url][0]:
                        seen_texts[url] = (title, text)
                    host = rel.host_for_review(url)
                    if host and (host, url) not in reviews:
                        reviews.append((host, url))
                    continue
                c = cands.get(url)
                if c is None:
                    host = host_of(url)
                    c = cands[url] = Candidate(url, host, families.family_of(host), title, text,
                                               published_at=r.published_at or pub)
                c.providers.add(provider)
                c.title = c.title or title
                c.text = c.text or text
        _suggest_groups(list(cands.values()), judged, seen_texts)
        if cands or reviews:
            pools.append(CasePool(cid, {u: rel.group(u) for u in judged},
                                  sorted(cands.values(), key=lambda c: (c.group, c.url)), reviews))
    return pools, problems, ri.info.id


def _suggest_groups(cands: list[Candidate], judged: dict[str, Judgment], seen: dict[str, tuple[str, str]]) -> None:
    weights = word_weights([(c.title, c.text) for c in cands] + list(seen.values()))
    parent = list(range(len(cands)))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    reasons: dict[int, str] = {}
    for i in range(len(cands)):
        for j in range(i + 1, len(cands)):
            why = near_duplicate(cands[i].title, cands[i].text, cands[j].title, cands[j].text, weights)
            if why:
                parent[find(j)] = find(i)
                reasons.setdefault(j, f"near-duplicate of {cands[i].url}: {why}")
                reasons.setdefault(i, f"near-duplicate of {cands[j].url}: {why}")
    # a cluster that duplicates a judged document joins that judged group
    joined: dict[int, tuple[str, str]] = {}
    for i, c in enumerate(cands):
        for url, (title, text) in sorted(seen.items()):
            why = near_duplicate(c.title, c.text, title, text, weights)
            if why and judged[url].group:
                joined.setdefault(find(i), (judged[url].group, f"near-duplicate of judged {url}: {why}"))
                break
    names: dict[int, str] = {}
    for i, c in enumerate(cands):
        root_i = find(i)
        if root_i in joined:
            c.group, c.reason = joined[root_i][0], joined[root_i][1]
            continue
        if root_i not in names:
            members = sorted(cands[k].url for k in range(len(cands)) if find(k) == root_i)
            names[root_i] = default_group(members[0])
        c.group = names[root_i]
        c.reason = reasons.get(i, "no near-duplicate among the unjudged")


def _q(value) -> str:
    """A YAML double-quoted scalar (JSON's syntax): secrets and personal data out (`scanner.scrub`), and every
    character a terminal could act on as a `\\uXXXX` escape, which YAML reads back as the same character."""
    if value is None:
        return "null"
    return json_text(json.dumps(scrub_text(value) if isinstance(value, str) else value, ensure_ascii=False), yaml=True)


_PLAIN_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*\Z")


def _comment(text: str) -> str:
    """Text for a `#` comment: scrubbed and on one line (a line break would start YAML of its own)."""
    return safe(scrub_text(text))


def review_yaml(pools: list[CasePool], run_id: str) -> str:
    """The review file. Run records were never scanned, so every URL, title and group in it is scrubbed of
    secrets and personal data first: the file is meant to be merged into the committed judgments.yaml."""
    lines = [f"# centinela pool: URLs of run {_comment(run_id)} that golden/judgments.yaml does not judge yet, grouped by",
             "# suggested origin group (reprints of one story are one group). For each URL set `supports` to true or",
             "# false, check `group` and `verified_published_at`, then: centinela pool ROOT --merge THIS_FILE",
             "# Entries left with supports: null are not merged. Hosts listed under `hosts for review` are relevant",
             "# but missing from the case's expect.hosts: add them to golden/cases.yaml by hand if they belong there.",
             ""]
    for p in pools:
        if p.hosts_for_review:
            lines.append(_comment(f"# {p.case}: hosts for review (relevant, not in expect.hosts): "
                                  + ", ".join(sorted({h for h, _ in p.hosts_for_review}))))
        if not p.candidates:
            continue
        lines.append(f"{p.case if _PLAIN_KEY.match(p.case) else _q(p.case)}:")
        group = None
        for c in p.candidates:
            if c.group != group:
                group = c.group
                lines.append("  " + _comment(f"# group {group}: {c.reason}"))
            note = {"host": c.host, "family": c.family, "providers": sorted(c.providers),
                    "title": c.title[:160] or None, "reported_published_at": c.published_at}
            lines.append(f"  {_q(c.url)}: {{supports: null, group: {_q(c.group)}, verified_published_at: null, "
                         f"review: {json_text(json.dumps(scrub_data(note), ensure_ascii=False), yaml=True)}}}")
    return "\n".join(lines) + "\n"


class MergeError(Exception):
    pass


@dataclass
class MergeResult:
    added: list[tuple[str, str]] = field(default_factory=list)
    unfilled: int = 0
    unchanged: int = 0
    conflicts: list[str] = field(default_factory=list)


def merge_review(root: Path, review_path: Path, dry_run: bool = False) -> MergeResult:
    from scanner.atomic import atomic_write_text

    try:
        review = read_yaml(review_path) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise MergeError(f"{review_path}: cannot read the review file: {str(exc).splitlines()[0]}") from None
    if not isinstance(review, dict):
        raise MergeError(f"{review_path}: must map cases to URLs to judgments")
    jpath = root / "golden" / "judgments.yaml"
    try:
        text = read_text_bounded(jpath, DATA_FILE_BYTES) if jpath.exists() else ""
        current = safe_load(text) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise MergeError(f"{jpath}: cannot read: {str(exc).splitlines()[0]}") from None
    res = MergeResult()
    for case, urls in review.items():
        if not isinstance(urls, dict):
            raise MergeError(f"{review_path}: {case}: must map URLs to judgments")
        for url, entry in urls.items():
            if not isinstance(entry, dict) or entry.get("supports") is None:
                res.unfilled += 1
                continue
            data = {k: entry.get(k) for k in ("supports", "group", "verified_published_at")}
            if data["verified_published_at"] is not None:
                data["verified_published_at"] = str(data["verified_published_at"])
            try:
                Judgment.model_validate(data)
            except ValidationError as exc:
                raise MergeError(f"{review_path}: {case} {url}: {exc.errors()[0]['msg']}") from None
            if not isinstance(data["supports"], bool):
                raise MergeError(f"{review_path}: {case} {url}: supports must be true or false")
            old = (current.get(case) or {}).get(url)
            if old is not None:
                old_norm = {k: (str(old.get(k)) if k == "verified_published_at" and old.get(k) is not None else old.get(k))
                            for k in data}
                if old_norm == data:
                    res.unchanged += 1
                else:
                    res.conflicts.append(f"{case} {url}: already judged differently; left as it is")
                continue
            current.setdefault(case, {})[url] = data
            res.added.append((str(case), str(url)))
    if res.added and not dry_run:
        header = []
        for ln in text.splitlines():
            if not ln.startswith("#"):
                break
            header.append(ln)
        atomic_write_text(jpath, judgments_yaml(current, header))
    return res


def judgments_yaml(judgments: dict, header: list[str] | None = None) -> str:
    lines = list(header or ["# Pooled relevance, reviewed by hand: case → url → supports, origin group, "
                                    "verified publication date."])
    if lines:
        lines.append("")
    for case in sorted(judgments):
        lines.append(f"{case}:")
        for url in sorted(judgments[case] or {}):
            v = judgments[case][url]
            ver = v.get("verified_published_at")
            lines.append(f"  {_q(url)}: {{supports: {'true' if v.get('supports') else 'false'}, "
                         f"group: {_q(v.get('group'))}, verified_published_at: {_q(None if ver is None else str(ver))}}}")
    return "\n".join(lines) + "\n"
