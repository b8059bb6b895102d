"""What the reviewer page needs from a document, taken while the scan has it loaded.

The page must be a pure function of the scan result (no output reopens a file), so for each document with an
injection finding the scan keeps a small, JSON-like *view*:

- `person`: the text a person sees — visible channels not hidden by CSS or by a PDF's invisible layers, in
  document order, paragraphs where the page breaks lines — with a placeholder where flagged hidden text sits;
- `model`: what a model reading the page's text units gets — every unit with its channel (comments,
  attributes, CSS-hidden text, JSON-LD, noscript, PDF hidden layers and metadata, JSON strings…), scripts,
  stylesheets, links, HTTP headers and JSON keys left out (counted) unless a finding sits there;
- for each injection finding, whether `centinela contain` fences it or drops its channel.

Segments covered by an injection finding carry that finding's key (`finding_key`). Secrets and personal data
are masked *here*, before anything leaves the loaded document: every span of a secret or personal-data finding
becomes its finding's masked evidence, and so does every other occurrence of the datum in any unit (as written
in the file or decoded), so the view never holds the datum. Finding texts shown on the page (evidence, message,
explanation fields) that contain a datum get a masked copy in `scrubbed`.

Long documents are cut to the units around the findings (`VIEW_CHARS` per view); a cut is marked, never silent.
"""

from __future__ import annotations

import bisect
import re

from scanner.untrusted import VISIBLE_CHANNELS, render_untrusted, unit_range
from scanner.evidence import datum_variants
from scanner.findings import Finding
from scanner.injection.engine import _separator
from scanner.injection.predicates import css_hidden, pdf_invisible
from scanner.units import Channel, Document, TextUnit

try:        # linear time whatever the number of data to look for (Python's re tries each alternative in turn)
    import re2  # type: ignore
except ImportError:  # pragma: no cover - google-re2 is a runtime dependency
    re2 = None

SENSITIVE_KINDS = ("secret", "pii")
# Units a model-bound text extraction does not hand over as page text (shown only when a finding sits there).
MODEL_SKIPPED = frozenset({Channel.SCRIPT, Channel.STYLE, Channel.LINK, Channel.HTTP_HEADER_NAME,
                           Channel.HTTP_HEADER_VALUE, Channel.HTTP_URL, Channel.JSON_KEY})
# Units that are values of their own (one row each, labelled with their locator), never joined with neighbours.
STANDALONE = frozenset({Channel.JSON_STRING, Channel.JSON_KEY, Channel.ATTRIBUTE, Channel.COMMENT, Channel.JSON_LD,
                        Channel.PDF_METADATA, Channel.HTTP_HEADER_VALUE, Channel.HTTP_HEADER_NAME, Channel.HTTP_URL,
                        Channel.LINK})
# Units whose line breaks mean something (a browser collapses HTML whitespace; a PDF page or a JSON string keeps it).
KEEPS_LINES = frozenset({Channel.JSON_STRING, Channel.PDF_TEXT, Channel.PLAIN_TEXT, Channel.PDF_METADATA,
                         Channel.COMMENT, Channel.JSON_LD, Channel.SCRIPT, Channel.STYLE})

VIEW_CHARS = 16_000      # text kept per view; past it, rows far from any finding are left out (and counted)
ROW_CHARS = 1_200        # a row without a finding keeps its first ROW_CHARS characters
CONTEXT_CHARS = 600      # plain text kept on each side of a flagged span inside its row
MARK_CHARS = 4_000       # a flagged span longer than this keeps its head and tail
_REQUEST = re.compile(r"(?:^|/)request(?:/|$)")   # a recorded exchange's request: not the page


def finding_key(f: Finding) -> str:
    """Ties a finding of the scan result to the segments of its document's view."""
    return "|".join((f.rule_id, str(f.page or 0), str(f.start), str(f.end), f.container or ""))


class ReviewCapture:
    """Given to `Scanner(review=...)`: captures the view of each document with an injection finding.

    Masking must not depend on what the scan was asked for: with `--kinds injection` the secret and
    personal-data scanners still run, on the flagged documents only, to mask (their findings are not reported)."""

    def __init__(self, kinds=SENSITIVE_KINDS):
        self.missing = tuple(k for k in SENSITIVE_KINDS if k not in tuple(kinds))
        self._scanners: list | None = None

    def _sensitive_not_scanned(self, doc: Document) -> list[Finding]:
        if not self.missing:
            return []
        if self._scanners is None:
            self._scanners = []
            if "secret" in self.missing:
                from scanner.secrets.detect import SecretScanner

                self._scanners.append(SecretScanner())
            if "pii" in self.missing:
                from scanner.pii import PiiScanner

                self._scanners.append(PiiScanner())
        from scanner.scan import reportable

        return [f for s in self._scanners for f in s.scan(doc) if reportable(f)]

    def capture(self, doc: Document, findings: list[Finding]) -> dict | None:
        if not any(f.kind == "injection" for f in findings):
            return None
        # One file's view must not stop the scan of the others: a failure is said on the page, not raised.
        try:
            sensitive = [f for f in findings if f.kind in SENSITIVE_KINDS] + self._sensitive_not_scanned(doc)
            return capture_view(doc, findings, sensitive)
        except Exception as exc:  # noqa: BLE001 - the page names the failure; the type only (no fixture text)
            return {"error": type(exc).__name__}


# ------------------------------------------------------------------------------------------------ masking

class _SpanIndex:
    """Findings by where they sit, so that a unit finds the ones overlapping it without a scan of them all."""

    def __init__(self, findings: list[Finding]):
        self.by_place: dict[tuple, tuple[list[int], list[Finding], int]] = {}
        groups: dict[tuple, list[Finding]] = {}
        for f in findings:
            if f.end > f.start:
                groups.setdefault(self._place(f.page, f.container), []).append(f)
        for place, group in groups.items():
            group.sort(key=lambda f: (f.start, f.end))
            self.by_place[place] = ([f.start for f in group], group, max(f.end - f.start for f in group))

    @staticmethod
    def _place(page, container) -> tuple:
        # Page offsets are per page (and per embedded PDF); other offsets are into the file.
        return (page, container or "") if page is not None else (None, "")

    def overlapping(self, unit: TextUnit) -> list[Finding]:
        entry = self.by_place.get(self._place(unit.page, unit.container))
        if entry is None:
            return []
        starts, group, longest = entry
        lo = bisect.bisect_left(starts, unit.start - longest)
        hi = bisect.bisect_left(starts, unit.end)
        return [f for f in group[lo:hi] if _overlaps(unit, f)]


class _Masks:
    """Every datum of the document's secret and personal-data findings → the finding's masked evidence."""

    def __init__(self, doc: Document, sensitive: list[Finding]):
        self.index = _SpanIndex(sensitive)
        variants: dict[str, tuple[str, str]] = {}

        def add(raw: str, f: Finding) -> None:
            for variant in datum_variants(raw):
                variants.setdefault(variant, (f.evidence or "REDACTED", f.entity or f.kind))

        for f in sensitive:
            if f.end > f.start:
                add(_source_text(doc, f), f)
        for unit in doc.units:
            for f in self.index.overlapping(unit):
                i, j = _range_in(unit, f)
                if j > i:
                    add(unit.text[i:j], f)
        self.variants = variants
        self.pattern = _literal_pattern(sorted(variants, key=len, reverse=True)) if variants else None
        self._by_fold = {v.casefold(): s for v, s in variants.items()}

    def shown_for(self, found: str) -> tuple[str, str]:
        return self.variants.get(found) or self._by_fold.get(found.casefold()) or ("REDACTED", "datum")

    def ranges(self, unit: TextUnit) -> list[tuple[int, int, str, str]]:
        """(i, j, masked form, entity) of every datum in the unit's text: its findings' spans and repeats."""
        out = []
        for f in self.index.overlapping(unit):
            i, j = _range_in(unit, f)
            if j > i:
                out.append((i, j, f.evidence or "REDACTED", f.entity or f.kind))
        if self.pattern is not None:
            for m in self.pattern.finditer(unit.text):
                out.append((m.start(), m.end(), *self.shown_for(m.group(0))))
        return _union(out)

    def scrub(self, text: str) -> str:
        if self.pattern is None or not text:
            return text
        return self.pattern.sub(lambda m: self.shown_for(m.group(0))[0], text)


def _literal_pattern(literals: list[str]):
    """One case-insensitive pattern matching any of the literals (longest first)."""
    alternation = "|".join(map(re.escape, literals))
    if re2 is not None:
        options = re2.Options()
        options.case_sensitive = False
        options.max_mem = 256 << 20
        try:
            return re2.compile(alternation, options)
        except Exception:  # too large for RE2's memory budget: the standard engine is slower, never wrong
            pass
    return re.compile(alternation, re.IGNORECASE)


def _source_text(doc: Document, f: Finding) -> str:
    if f.page is None:
        return doc.text[f.start:f.end]
    container = f.container or ""
    for page in doc.pages:
        if page.number == f.page and (getattr(page, "container", "") or "") == container:
            return page.text[f.start:f.end]
    return ""


def _overlaps(unit: TextUnit, f: Finding) -> bool:
    if (f.page or None) != (unit.page or None):
        return False
    if unit.page is not None and (f.container or "") != (unit.container or ""):
        return False
    return f.start < unit.end and unit.start < f.end


def _range_in(unit: TextUnit, f: Finding) -> tuple[int, int]:
    """unit.text[i:j] covered by the finding (i == j when it does not reach the unit)."""
    if not _overlaps(unit, f):
        return 0, 0
    return unit_range(unit, max(f.start, unit.start), min(f.end, unit.end))


def _union(ranges: list[tuple[int, int, str, str]]) -> list[tuple[int, int, str, str]]:
    """Overlapping masked ranges merged (the first one's masked form is kept)."""
    out: list[tuple[int, int, str, str]] = []
    for i, j, shown, entity in sorted(ranges, key=lambda r: (r[0], -r[1])):
        if out and i < out[-1][1]:
            a, b, s, x = out[-1]
            out[-1] = (a, max(b, j), s, x)
        else:
            out.append((i, j, shown, entity))
    return out


# ----------------------------------------------------------------------------------------------- segments

def _segments(text: str, flagged: list[tuple[int, int, str]], masked: list[tuple[int, int, str, str]]) -> list[dict]:
    """The unit's text cut into segments: plain `{"t"}`, flagged `{"t", "k": keys}`, masked `{"m", "x", "k"}`."""
    cuts = {0, len(text)}
    for r in flagged:
        cuts.update(r[:2])
    for r in masked:
        cuts.update(r[:2])
    points = sorted(c for c in cuts if 0 <= c <= len(text))
    segs: list[dict] = []
    last_mask = None
    for a, b in zip(points, points[1:]):
        if a == b:
            continue
        keys = sorted({k for i, j, k in flagged if i <= a and b <= j})
        mask = next((n for n, (i, j, _, _) in enumerate(masked) if i <= a and b <= j), None)
        if mask is not None:
            if mask == last_mask:
                segs[-1]["k"] = sorted(set(segs[-1]["k"]) | set(keys))
            else:
                segs.append({"m": masked[mask][2], "x": masked[mask][3], "k": keys})
            last_mask = mask
            continue
        last_mask = None
        piece = text[a:b]
        if segs and "t" in segs[-1] and segs[-1].get("k", []) == keys:
            segs[-1]["t"] += piece
        else:
            segs.append({"t": piece, "k": keys} if keys else {"t": piece})
    return segs


def _size(seg: dict) -> int:
    return len(seg.get("t") or seg.get("m") or "")


def _head(run: list[dict], n: int) -> tuple[list[dict], list[dict]]:
    """(the first `n` characters of the run, the rest): text may be cut, a masked datum is kept whole or not at all."""
    kept: list[dict] = []
    left = n
    for k, seg in enumerate(run):
        size = _size(seg)
        if size <= left or ("m" in seg and left > 0):
            kept.append(seg)
            left = max(left - size, 0)
            continue
        if left and "t" in seg:
            kept.append({**seg, "t": seg["t"][:left]})
            return kept, [{**seg, "t": seg["t"][left:]}] + run[k + 1:]
        return kept, run[k:]
    return kept, []


def _flip(run: list[dict]) -> list[dict]:
    return [{**s, "t": s["t"][::-1]} if "t" in s else s for s in reversed(run)]


def _tail(run: list[dict], n: int) -> tuple[list[dict], list[dict]]:
    """(the last `n` characters of the run, what comes before them)."""
    kept, rest = _head(_flip(run), n)
    return _flip(kept), _flip(rest)


def _gap(segs: list[dict]) -> list[dict]:
    dropped = sum(map(_size, segs))
    return [{"gap": dropped}] if dropped else []


def _trim_row(segs: list[dict]) -> list[dict]:
    """A row cut to what a reviewer needs: the flagged spans with context, or the start of an unflagged row."""
    if not any(s.get("k") for s in segs):
        kept, rest = _head(segs, ROW_CHARS)
        return kept + _gap(rest)
    out: list[dict] = []
    run: list[dict] = []
    first = True

    def flush(last: bool) -> None:
        nonlocal run, first
        if first and not last:
            kept, before = _tail(run, CONTEXT_CHARS)
            out.extend(_gap(before) + kept)
        elif last:
            kept, after = _head(run, CONTEXT_CHARS)
            out.extend(kept + _gap(after))
        else:
            head, rest = _head(run, CONTEXT_CHARS)
            tail, middle = _tail(rest, CONTEXT_CHARS)
            out.extend(head + _gap(middle) + tail)
        run, first = [], False

    for seg in segs:
        if seg.get("k"):                       # flagged text, or a datum inside flagged text: always kept
            flush(False)
            if "t" in seg and len(seg["t"]) > MARK_CHARS:
                half = MARK_CHARS // 2
                out.extend([{**seg, "t": seg["t"][:half]}, {"gap": len(seg["t"]) - 2 * half},
                            {**seg, "t": seg["t"][-half:]}])
            else:
                out.append(seg)
        else:
            run.append(seg)
    flush(True)
    return [s for s in out if not ("t" in s and not s["t"])]


# ---------------------------------------------------------------------------------------------------- rows

def _hidden_reason(unit: TextUnit, doc: Document) -> tuple[bool, str]:
    """(a person sees it, why not) for one unit."""
    if unit.channel not in VISIBLE_CHANNELS:
        return False, ""
    if unit.channel == Channel.PDF_TEXT:
        why = pdf_invisible(unit, doc)
        return not why, why
    if unit.element is not None:
        why = css_hidden(unit, doc)
        return not why, why
    return True, ""


class _Rows:
    """Rows of one view: consecutive units of one channel that the page shows together are one row."""

    def __init__(self, doc: Document):
        self.doc = doc
        self.rows: list[dict] = []
        self.last: TextUnit | None = None

    def add(self, unit: TextUnit, segs: list[dict], seen: bool, why: str) -> None:
        row = self.rows[-1] if self.rows and "seg" in self.rows[-1] else None
        if (row is not None and self.last is not None and unit.channel not in STANDALONE
                and row["ch"] == unit.channel.value and row["why"] == why and row["page"] == unit.page
                and row["_container"] == unit.container):
            sep = _separator(self.doc, self.last, unit)
            if sep != "\n":
                if sep:
                    row["seg"].append({"t": sep})
                row["seg"].extend(segs)
                self.last = unit
                return
        self.rows.append({"ch": unit.channel.value, "loc": unit.locator or "", "why": why, "hid": not seen,
                          "page": unit.page, "pre": unit.channel in KEEPS_LINES, "seg": list(segs),
                          "_container": unit.container})
        self.last = unit

    def placeholder(self, unit: TextUnit, keys: list[str], why: str) -> None:
        prev = self.rows[-1] if self.rows else None
        if prev is not None and "ph" in prev and prev["page"] == unit.page:
            prev["ph"] = sorted(set(prev["ph"]) | set(keys))
            return
        self.rows.append({"ph": keys, "ch": unit.channel.value, "loc": unit.locator or "", "why": why,
                          "page": unit.page})
        self.last = None

    def finish(self) -> list[dict]:
        rows = []
        for row in self.rows:
            row.pop("_container", None)
            if "seg" in row:
                row["seg"] = _trim_row(_merge(row["seg"]))
            rows.append(row)
        return _select(rows)


def _merge(segs: list[dict]) -> list[dict]:
    out: list[dict] = []
    for s in segs:
        if out and "t" in s and "t" in out[-1] and s.get("k", []) == out[-1].get("k", []):
            out[-1] = {**out[-1], "t": out[-1]["t"] + s["t"]}
        else:
            out.append(dict(s))
    return out


def _row_size(row: dict) -> int:
    return sum(_size(s) for s in row.get("seg", ())) + 40


def _select(rows: list[dict]) -> list[dict]:
    """All rows when they fit in VIEW_CHARS; else those nearest the findings, the rest counted in `omitted`."""
    if sum(map(_row_size, rows)) <= VIEW_CHARS:
        return rows
    anchors = [n for n, r in enumerate(rows) if "ph" in r or any(s.get("k") for s in r.get("seg", ()))]
    if not anchors:
        anchors = [0]

    def distance(n: int) -> int:
        return min(abs(n - a) for a in anchors)

    keep: set[int] = set(anchors)
    budget = VIEW_CHARS - sum(_row_size(rows[n]) for n in anchors)
    for n in sorted(range(len(rows)), key=lambda n: (distance(n), n)):
        if n in keep:
            continue
        size = _row_size(rows[n])
        if size > budget:
            break
        keep.add(n)
        budget -= size
    out: list[dict] = []
    for n, row in enumerate(rows):
        if n in keep:
            out.append(row)
        elif out and "omitted" in out[-1]:
            out[-1]["omitted"] += 1
        else:
            out.append({"omitted": 1, "page": row.get("page")})
    return out


# -------------------------------------------------------------------------------------------------- views

def capture_view(doc: Document, findings: list[Finding], sensitive: list[Finding]) -> dict | None:
    """The reviewer view of one document (see the module docstring), or None without injection findings."""
    injections = [f for f in findings if f.kind == "injection" and f.path == doc.path]
    if not injections:
        return None
    masks = _Masks(doc, [f for f in sensitive if f.path == doc.path])
    flags = _SpanIndex(injections)
    person, model = _Rows(doc), _Rows(doc)
    skipped: dict[str, int] = {}
    masked = 0
    for unit in doc.units:
        flagged = []
        for f in flags.overlapping(unit):
            i, j = _range_in(unit, f)
            if j > i:
                flagged.append((i, j, finding_key(f)))
        request = doc.kind == "http" and _REQUEST.search(unit.locator or "") is not None
        jsonld_key = unit.channel == Channel.JSON_LD and bool(unit.attrs.get("is_key"))
        if not flagged and (unit.channel in MODEL_SKIPPED or request or jsonld_key):
            name = "recorded request" if request else "json_ld_key" if jsonld_key else unit.channel.value
            skipped[name] = skipped.get(name, 0) + 1
            continue
        ranges = masks.ranges(unit)
        masked += len(ranges)
        segs = _segments(unit.text, flagged, ranges)
        seen, why = _hidden_reason(unit, doc)
        model.add(unit, segs, seen, why)
        if seen:
            person.add(unit, segs, True, "")
        elif flagged:
            person.placeholder(unit, sorted({k for _, _, k in flagged}), why)
    untrusted = render_untrusted(doc, injections)
    contain = {finding_key(f): ("fenced" if flag.rendered else "dropped")
               for f, flag in zip(injections, untrusted.flags)}
    person_rows, model_rows = person.finish(), model.finish()
    scrubbed = {}
    for f in findings:
        # A secret or personal-data finding's texts are masked by contract (scanner.evidence); the others quote
        # the page and may hold a datum.
        if f.path != doc.path or f.kind in SENSITIVE_KINDS:
            continue
        changed = _scrubbed_texts(f, masks)
        if changed:
            scrubbed[finding_key(f)] = changed
    return {"kind": doc.kind, "person": person_rows, "model": model_rows,
            "same": person_rows == model_rows,
            "skipped": dict(sorted(skipped.items())), "contain": contain,
            "contain_dropped_channels": list(untrusted.dropped_channels), "masked": masked, "scrubbed": scrubbed}


def _scrubbed_texts(f: Finding, masks: _Masks) -> dict:
    """Masked copies of the finding's texts shown on the page that hold a datum (evidence, message, extras)."""
    if masks.pattern is None:
        return {}
    out = {}
    for name in ("evidence", "message"):
        value = getattr(f, name) or ""
        clean = masks.scrub(value)
        if clean != value:
            out[name] = clean
    for name, value in f.extra.items():
        clean = _scrub_value(value, masks)
        if clean != value:
            out[f"extra.{name}"] = clean
    return out


def _scrub_value(value, masks: _Masks):
    if isinstance(value, str):
        return masks.scrub(value)
    if isinstance(value, (list, tuple)):
        return [_scrub_value(v, masks) for v in value]
    if isinstance(value, dict):
        return {masks.scrub(str(k)): _scrub_value(v, masks) for k, v in value.items()}
    return value
