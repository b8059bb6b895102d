"""Secret detection over a loaded `Document`: structure first, then value patterns, then an entropy net.

For each unit the scanner works out, once, what names the unit's value: the header name of a header value
(object form, HAR `{name, value}`, `[name, value]` pairs, JSON objects under `headers`), the JSON key of a
string value (walking up through arrays; the `name` sibling of a `value` string), and the query parameters
of any URL or form body in it. Rules then match by name (the whole value is the secret), by query parameter
(only the parameter's value), by JSON pointer, by value pattern (the token itself) or, last, by entropy in
a credential-ish context. A unit is tried against a value pattern only when its lower-cased text contains
one of the rule's keywords, so most units cost a handful of substring tests.

Span rules (the redactor replaces exactly `text[start:end]` with `REDACTED`):
- header name / JSON key / pointer rules: the whole value (surrounding blanks excluded);
- query parameters: the parameter's value only, so host, path and the other parameters stay;
- value patterns: the token (the group named `secret`, e.g. the token after `Bearer `);
- a number under a sensitive JSON key: the number, replaced by `"REDACTED"` (quoted, so the JSON stays valid).

Values already redacted (`REDACTED`, `Bearer REDACTED`, `tvly-REDACTED`, `***`, `[REDACTED]`, …) are never
findings, so a scan after redaction is clean. Of findings that nest (a `tvly-…` key inside an
`Authorization` header), only the outer one is kept: one finding per redaction.

Scripts: `<script>` bodies are read only by rules that opt in (`scan_scripts: true`): provider key formats
that are never meant to be public (tvly-, sk-, sk-ant-, pplx-, jina_, fc-, GitHub, AWS, Slack, private
keys). Google `AIza…` browser keys, JWTs, Bearer strings and the entropy net stay out of scripts: pages embed
public keys and tokens there by design, and minified code is full of random-looking strings.
"""

from __future__ import annotations

import bisect
import itertools
import re
from pathlib import Path
from urllib.parse import unquote_plus

from scanner import rx
from scanner.doccache import cached_scan
from scanner.evidence import REPLACEMENT_SECRET, unit_finding
from scanner.findings import Finding
from scanner.offsetmap import OffsetMap
from scanner.secret_keywords import TEXT_CHANNELS  # channels where text is read for `Name: value` header lines
from scanner.secrets.rules import BUILTIN_SECRET_RULES, Compiled, load_rules, normalize_name
from scanner.secrets.values import is_placeholder, is_redacted, looks_structural, shannon_bits
from scanner.units import Channel, Document, TextUnit

_NEVER = frozenset({Channel.STYLE})
_KEYS = frozenset({Channel.JSON_KEY, Channel.HTTP_HEADER_NAME})
_NAMED = frozenset({Channel.HTTP_HEADER_VALUE, Channel.JSON_STRING, Channel.JSON_LD, Channel.ATTRIBUTE})
_URL_CHANNELS = frozenset({Channel.HTTP_URL} | ({Channel.LINK} if hasattr(Channel, "LINK") else set()))
_URL = rx.compile(r"(?:https?|wss?|ftp)://[^\s\"'<>\\`]+", re.I)
_FORM = rx.compile(r"[A-Za-z0-9_.\-%\[\]]+=[^&\s]*(?:&[A-Za-z0-9_.\-%\[\]]+=[^&\s]*)*\Z")
_PARAM = rx.compile(r"(?<![^=&;#?/\s])([^=&;#?/\s]+)=([^&;#]*)")   # a name starts where its run starts
_NUMBER_AFTER_KEY = rx.compile(r"(\\?\")[ \t\r\n]*:[ \t\r\n]*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)(?![\w.])")
_INDEX = re.compile(r"\d+\Z")


def _pointer_tokens(locator: str) -> list[str]:
    """The JSON pointer's tokens (after any `container#` or `line N:` prefix), unescaped."""
    pointer = locator.rsplit("#", 1)[-1]
    if pointer.startswith("line "):
        pointer = pointer.split(":", 1)[-1]
    if pointer.startswith("ld+json["):
        pointer = pointer[pointer.find("]") + 1:]
    if not pointer.startswith("/"):
        return []
    if "~" not in pointer:              # the common case, and 100,000 levels of nesting must stay cheap
        return pointer[1:].split("/")
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


class _Context:
    """What names each unit's value, and which units hold a gate keyword, worked out once per document."""

    def __init__(self, doc: Document, gate_hits: set[int]):
        self.header_names: dict[str, str] = {}     # locator of a header-name unit → the name
        self.pair_names: dict[str, str] = {}       # locator of a `name` string → its text (for `value` siblings)
        self.gate_hits = gate_hits                 # ids of the units holding a gate keyword (SecretScanner._gate_hits)
        for u in doc.units:
            if u.channel is Channel.HTTP_HEADER_NAME:
                self.header_names[u.locator] = u.text
            elif u.channel is Channel.JSON_STRING and u.attrs.get("key") == "name":
                self.pair_names[u.locator] = u.text

    def name_of(self, unit: TextUnit) -> tuple[str, str, str] | None:
        """(kind, name, parent) for a value unit: kind is `header`, `key` or `pair`, parent the enclosing
        object's key (`organization` for `{"organization": {"id": …}}`); None when nothing names it."""
        ch = unit.channel
        loc = unit.locator
        if ch is Channel.HTTP_HEADER_VALUE:
            header = unit.attrs.get("header")
            if header is not None:                    # the recording reader named it (nock's flat rawHeaders)
                return "header", header, ""
            names = self.header_names
            if loc.endswith("/value") and loc[:-6] + "/name" in names:
                return "header", names[loc[:-6] + "/name"], ""
            if loc.endswith("/1") and loc[:-2] + "/0" in names:
                return "header", names[loc[:-2] + "/0"], ""
            if loc in names:
                return "header", names[loc], ""
            parent = loc.rsplit("/", 1)[0]
            if parent in names:                       # `"set-cookie": ["a=…", "b=…"]`
                return "header", names[parent], ""
            tokens = _pointer_tokens(loc)
            while tokens and _INDEX.match(tokens[-1]):
                tokens.pop()
            return ("header", tokens[-1], "") if tokens else None
        if ch is Channel.JSON_STRING or (ch is Channel.JSON_LD and not unit.attrs.get("is_key")):
            key = unit.attrs.get("key")
            tokens = _pointer_tokens(loc)
            if key is None:
                while tokens and _INDEX.match(tokens[-1]):
                    tokens.pop()
                if not tokens:
                    return None
                key = tokens[-1]
                tokens = tokens[:-1]
            else:
                tokens = tokens[:-1]
            if key.lower() == "value" and loc.endswith("/value"):
                sibling = self.pair_names.get(loc[:-6] + "/name")
                if sibling is not None:
                    while tokens and _INDEX.match(tokens[-1]):
                        tokens.pop()
                    in_headers = bool(tokens) and tokens[-1].lower() in ("headers", "header")
                    return ("header" if in_headers else "pair"), sibling, ""
            while tokens and _INDEX.match(tokens[-1]):
                tokens.pop()
            if tokens and tokens[-1].lower() in ("headers", "header"):
                return "header", key, ""
            return "key", key, (tokens[-1] if tokens else "")
        if ch is Channel.ATTRIBUTE and unit.element is not None:
            attrs = unit.element.attrs
            if loc.endswith("@value") and attrs.get("name"):
                # <input type="hidden" name="api_key" value="…">: the field's name names the value.
                return "pair", attrs["name"], ""
            if loc == "meta@content":
                # <meta name="api-key" content="…">, <meta http-equiv="Set-Cookie" content="…">
                name = attrs.get("name") or attrs.get("http-equiv") or attrs.get("property")
                if name:
                    return "pair", name, ""
        return None


def _url_params(unit: TextUnit) -> list[tuple[str, int, int, str]]:
    """(normalised name, value start, value end, raw name) of every query/fragment/form parameter in the unit."""
    text = unit.text
    if "=" not in text:
        return []
    spans: list[tuple[int, int]] = []
    if unit.channel in _URL_CHANNELS:
        spans.append((0, len(text)))
    elif "://" in text:
        for m in _URL.finditer(text):
            end = m.end()
            while end > m.start() and text[end - 1] in ".,;:!?)]}'\"":
                end -= 1
            spans.append((m.start(), end))
    elif unit.channel is Channel.JSON_STRING and _FORM.match(text):
        return list(_params(text, 0, len(text), whole=True))
    out: list[tuple[str, int, int, str]] = []
    for a, b in spans:
        out.extend(_params(text, a, b))
    return out


def _params(text: str, start: int, end: int, whole: bool = False):
    regions = []
    if whole:
        regions.append((start, end))
    else:
        q = text.find("?", start, end)
        h = text.find("#", start, end)
        if q >= 0:
            regions.append((q + 1, h if h > q else end))
        if h >= 0:
            regions.append((h + 1, end))
    for a, b in regions:
        # On the region alone, so a name at its start is a name whatever character precedes the region.
        for m in _PARAM.finditer(text[a:b]):
            raw = m.group(1)
            name = raw[4:] if raw.lower().startswith("amp;") else raw
            try:
                name = unquote_plus(name)
            except Exception:  # noqa: BLE001 - a malformed escape is just a name we do not know
                pass
            yield normalize_name(name), a + m.start(2), a + m.end(2), name


def _trimmed(text: str, i: int = 0, j: int | None = None) -> tuple[int, int]:
    j = len(text) if j is None else j
    while i < j and text[i].isspace():
        i += 1
    while j > i and text[j - 1].isspace():
        j -= 1
    return i, j


class SecretScanner:
    """Runs the secret rules (`scanner/rules/secrets/*.yaml`, or `rule_dir`'s) over documents."""

    def __init__(self, rule_dir: Path | None = None, extra_rule_dirs: tuple = ()):
        dirs = (BUILTIN_SECRET_RULES,) if rule_dir is None else (Path(rule_dir),)
        dirs = dirs + tuple(Path(d) for d in extra_rule_dirs)
        self.rules = load_rules(dirs)
        self._token = ("secret",) + tuple(str(Path(d).resolve()) for d in dirs)
        self.compiled = [Compiled(r) for r in self.rules]
        self.by_id = {c.id: c for c in self.compiled}
        self._structural = [c for c in self.compiled if c.headers or c.keys or c.pointers]
        self._params = [c for c in self.compiled if c.params]
        self._patterns = [c for c in self.compiled if c.pattern is not None]
        self._lines = [c for c in self.compiled if c.text_lines is not None]
        self._entropy = [c for c in self.compiled if c.entropy is not None]
        self._entropy_channels = frozenset(ch for c in self._entropy for ch in c.entropy_channels)
        self._numbers = [c for c in self.compiled if c.numbers]
        # The prefilter: one regex over the lower-cased unit made of every keyword (value patterns) and every
        # header name (header lines in text); a unit it does not match skips both sections. Script units
        # have their own, made of the rules that read scripts.
        self._gate = _keyword_gate(self._patterns, self._lines, lambda ch: ch is not Channel.SCRIPT)
        self._script_gate = _keyword_gate(self._patterns, self._lines, lambda ch: ch is Channel.SCRIPT)

    # ------------------------------------------------------------------------------------------------

    def cache_token(self):
        """Same token, same findings on the same document (scanner.doccache)."""
        return self._token

    @cached_scan
    def scan(self, doc: Document) -> list[Finding]:
        found: list[Finding] = []
        ctx = _Context(doc, self._gate_hits(doc.units))

        def add(unit: TextUnit, i: int, j: int, rule: Compiled, where: str, how: str,
                replacement: str = REPLACEMENT_SECRET) -> None:
            r = rule.rule
            message = f"{r.message} ({where})" if where else r.message
            f = unit_finding(doc, unit, i, j, rule_id=r.id, kind="secret", entity=r.entity, severity=r.severity,
                             message=message, replacement=replacement, matched_by=how)
            found.append(f)

        for unit in doc.units:
            ch = unit.channel
            if ch in _NEVER:
                continue
            if ch in _KEYS or (ch is Channel.JSON_LD and unit.attrs.get("is_key")):
                self._number_value(doc, unit, add)
                continue
            text = unit.text
            if not text or text.isspace():
                continue
            before = len(found)
            self._unit(ctx, unit, add)
            if ch in self._entropy_channels:
                whole = _trimmed(text)
                s, e = unit.source_span(*whole) if whole[1] > whole[0] else (unit.start, unit.start)
                if not any(f.start <= s and f.end >= e for f in found[before:]):
                    self._entropy_net(ctx, unit, add)
        return _outermost(found)

    # ------------------------------------------------------------------------------------------------

    def _gate_hits(self, units: list[TextUnit]) -> set[int]:
        """The ids of the units whose lower-cased text holds a keyword of their channel's gate (scripts have
        their own). One search of each gate over its units' lower-cased texts joined by NUL, where one search a
        unit took 31,863 searches on the real pages: no keyword holds a NUL, so no match crosses one, and a unit
        holding a keyword holds the start of a match (the match before it, if it reached into the unit, started
        in it; if not, the search goes on to a match starting at or before the keyword)."""
        hits: set[int] = set()
        for gate, script in ((self._gate, False), (self._script_gate, True)):
            if gate is None:
                continue
            group = [u for u in units if (u.channel is Channel.SCRIPT) is script and u.channel not in _NEVER
                     and u.text]
            if not group:
                continue
            if "\x00" in gate.pattern:      # a keyword holding a NUL (a `--rules` pack can write one): unit by unit
                hits.update(id(u) for u in group if gate.search(u.text.lower()))
                continue
            texts = [u.text.lower() for u in group]
            starts = list(itertools.accumulate((len(t) + 1 for t in texts[:-1]), initial=0))
            for m in gate.finditer("\x00".join(texts)):
                hits.add(id(group[bisect.bisect_right(starts, m.start()) - 1]))
        return hits

    def _unit(self, ctx: _Context, unit: TextUnit, add) -> None:
        """All rules but the entropy net on one unit."""
        text = unit.text
        ch = unit.channel
        named = ctx.name_of(unit) if ch in _NAMED else None
        if named is not None and self._structural:
            kind, name, parent = named
            whole = _trimmed(text)
            norm = normalize_name(name)
            # `{"organization": {"id": …}}` is an organization_id, `{"api": {"key": …}}` an api_key.
            joined = normalize_name(parent) + norm if parent else None
            value = text[whole[0]:whole[1]]
            pointer = None
            # A JSON key that a json_keys rule names is judged as a key; only a key no such rule names is
            # also compared with header names (`{"Authorization": "Bearer …"}` in any JSON).
            key_rule = kind != "header" and any(norm in r.keys or (joined and joined in r.keys)
                                                for r in self._structural)
            for rule in self._structural:
                if ch not in rule.channels:
                    continue
                hit = None
                if kind == "header" and norm in rule.headers:
                    hit = ("header_name", f"header {name.lower()}")
                elif kind != "header" and (norm in rule.keys or (joined and joined in rule.keys)):
                    hit = ("json_key", f"key {parent + '.' if norm not in rule.keys else ''}{name}")
                elif kind != "header" and not key_rule and norm in rule.headers.plain:
                    hit = ("header_name", f"key {name}")
                elif rule.pointers and ch is Channel.JSON_STRING:
                    pointer = pointer if pointer is not None else unit.locator.rsplit("#", 1)[-1]
                    if any(p.search(pointer) for p in rule.pointers):
                        hit = ("json_pointer", f"at {pointer}")
                if hit is None or is_redacted(value):
                    continue
                if rule.shape is not None and not rule.shape.fullmatch(value):
                    continue
                if rule.validators and not all(v(value) for v in rule.validators):
                    continue
                add(unit, whole[0], whole[1], rule, hit[1], hit[0])
            if kind == "pair":   # HAR queryString / postData params: {"name": "api_key", "value": …}
                for rule in self._params:
                    if ch in rule.channels and norm in rule.params and not is_redacted(value) and (
                            rule.shape is None or rule.shape.fullmatch(value)) and all(v(value) for v in rule.validators):
                        add(unit, whole[0], whole[1], rule, f"parameter {name}", "query_param")
        if self._params and "=" in text:
            params = None
            for rule in self._params:
                if ch not in rule.channels:
                    continue
                if params is None:
                    params = _url_params(unit)
                    if not params:
                        break
                for norm, i, j, raw in params:
                    if norm not in rule.params:
                        continue
                    value = text[i:j]
                    if not value or is_redacted(unquote_plus(value)):
                        continue
                    if rule.shape is not None and not rule.shape.fullmatch(value):
                        continue
                    if rule.validators and not all(v(value) for v in rule.validators):
                        continue
                    add(unit, i, j, rule, f"parameter {raw}", "query_param")
        if id(unit) not in ctx.gate_hits:
            return
        lower = text.lower()
        if self._patterns:
            for rule in self._patterns:
                if ch not in rule.channels:
                    continue
                if not any(k in lower for k in rule.keywords):
                    continue
                group = "secret" if "secret" in rule.pattern.groupindex else 0
                for m in rule.pattern.finditer(text):
                    i, j = m.span(group)
                    if i < 0:
                        continue
                    i, j = _trimmed(text, i, j)
                    value = text[i:j]
                    if not value or is_redacted(value) or is_placeholder(value):
                        continue
                    if rule.validators and not all(v(value) for v in rule.validators):
                        continue
                    if rule.min_entropy is not None and shannon_bits(value) < rule.min_entropy:
                        continue
                    add(unit, i, j, rule, "", "value_pattern")
        if self._lines and ch in TEXT_CHANNELS and ":" in text:
            for rule in self._lines:
                if ch not in rule.channels:
                    continue
                if not any(k in lower for k in rule.text_keywords):
                    continue
                for m in rule.text_lines.finditer(text):
                    i, j = _trimmed(text, *m.span("secret"))
                    shaped = rule.text_shape.match(text, i, j)     # the value is the shape's longest prefix
                    if shaped is None:
                        continue
                    i, j = _trimmed(text, i, shaped.end())
                    value = text[i:j]
                    if not value or is_redacted(value) or is_placeholder(value):
                        continue
                    name = text[m.start():m.start("secret")].split(":")[0].strip(" \t\"'")
                    add(unit, i, j, rule, f"header {name.lower()} in text", "header_line")

    def _entropy_net(self, ctx: _Context, unit: TextUnit, add) -> None:
        if not self._entropy:
            return
        named = ctx.name_of(unit) if unit.channel in (Channel.HTTP_HEADER_VALUE, Channel.JSON_STRING) else None
        if named is None:
            return
        norm = normalize_name(named[1])
        text = unit.text
        i, j = _trimmed(text)
        value = text[i:j]
        for rule in self._entropy:
            ent = rule.entropy
            if unit.channel not in rule.entropy_channels:
                continue
            if not any(c in norm for c in rule.entropy_context) or any(c in norm for c in rule.entropy_exclude):
                continue
            if not (ent.min_length <= len(value) <= ent.max_length) or not rule.entropy_charset.fullmatch(value):
                continue
            if looks_structural(value) or is_redacted(value) or is_placeholder(value):
                continue
            if not (re.search(r"[0-9]", value) and re.search(r"[A-Za-z]", value)):
                continue
            if shannon_bits(value) < ent.min_bits_per_char:
                continue
            add(unit, i, j, rule, f"{named[0]} {named[1]}", "entropy")

    def _number_value(self, doc: Document, key_unit: TextUnit, add) -> None:
        """A number under a sensitive key (`"account_id": 123456`, `"x-account-id": 42`): the loader makes no
        unit for it, so it is found after the key in the file text."""
        if key_unit.page is not None or not key_unit.text:
            return
        norm = normalize_name(key_unit.text)
        if key_unit.channel is Channel.HTTP_HEADER_NAME:
            rules = [r for r in self._structural if norm in r.headers]
        else:
            tokens = _pointer_tokens(key_unit.locator)[:-1]
            while tokens and _INDEX.match(tokens[-1]):
                tokens.pop()
            joined = normalize_name(tokens[-1]) + norm if tokens else None
            rules = [r for r in self._numbers if norm in r.keys or (joined and joined in r.keys)]
            if not rules and not any(norm in r.keys for r in self._structural):
                rules = [r for r in self._structural if norm in r.headers.plain]
        if not rules:
            return
        m = _NUMBER_AFTER_KEY.match(doc.text, key_unit.end)
        if m is None:
            return
        s, e = m.span(2)
        quote = m.group(1)[:-1] + '"'           # `"` in plain JSON, `\"` inside a JSON string body
        number = TextUnit(m.group(2), Channel.JSON_STRING, s, e, OffsetMap.identity(s, e - s),
                          locator=key_unit.locator, container=key_unit.container)
        for rule in rules:
            add(number, 0, e - s, rule, f"key {key_unit.text}", "json_key_number",
                replacement=f"{quote}{REPLACEMENT_SECRET}{quote}")


def _keyword_gate(patterns: list[Compiled], lines: list[Compiled], channel_ok) -> rx.Pattern | None:
    words: set[str] = set()
    for rule in patterns:
        if any(channel_ok(ch) for ch in rule.channels):
            words.update(rule.keywords)
    for rule in lines:
        if any(channel_ok(ch) for ch in rule.channels if ch in TEXT_CHANNELS):
            words.update(rule.text_keywords)
    # A keyword that contains another one adds nothing to the test.
    minimal = sorted(w for w in words if not any(o != w and o in w for o in words))
    return rx.compile("|".join(map(re.escape, minimal))) if minimal else None


def _outermost(findings: list[Finding]) -> list[Finding]:
    """Sorted by start; a finding inside another one's span (same page) is dropped, the outer one stays."""
    ordered = sorted(findings, key=lambda f: (f.page or 0, f.start, -(f.end - f.start), f.rule_id))
    out: list[Finding] = []
    reach: dict = {}
    for f in ordered:
        key = (f.page, f.container if f.page is not None else None)
        prev = reach.get(key)
        if prev is not None and f.start >= prev.start and f.end <= prev.end:
            continue
        if prev is None or f.end > prev.end:
            reach[key] = f
        out.append(f)
    return sorted(out, key=lambda f: (f.start, f.end, f.page or 0, f.rule_id))
