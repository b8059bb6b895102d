"""Secret rules: one YAML file per rule in `scanner/rules/secrets/`, validated by a pydantic model.

A rule says *where* a secret sits by structure — a header name, a query parameter, a JSON key, a JSON
pointer — or *what it looks like* — a value pattern with keywords for the prefilter and named validators —
or, for the second net, an entropy threshold in a credential-ish context. Any mix of the structural parts
may appear in one rule; every match of every part is a finding of that rule. Loading never executes
anything: the YAML is read with the safe loader, regexes are compiled for RE2 (scanner.rx: linear time on any
text, so a `--rules` pack cannot stall a scan; a pattern RE2 cannot run with its Python meaning is refused),
validator names are checked, and an error is one line naming the file and the rule.

Name matching (header names, query parameters, JSON keys) is case-insensitive and ignores `-`, `_`, `.` and
spaces, so `api_key`, `apiKey`, `API-KEY` and `x-api-key`/`X_Api_Key` are the same name; `*` is a wildcard
(`*-api-key` matches `x-goog-api-key`).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from scanner import rx
from scanner.rulepack import RuleBase, RuleError, load_yaml
from scanner.secret_keywords import NOT_DEFAULT
from scanner.secrets.values import VALIDATORS
from scanner.units import Channel
from scanner.validation import first_errors

BUILTIN_SECRET_RULES = Path(__file__).resolve().parents[1] / "rules" / "secrets"
MAX_PROGRAM_SIZE = 20_000      # RE2 instructions per rule regex (the largest built-in one has 422)
ENTITIES = ("API_KEY", "AUTH_HEADER", "COOKIE", "ACCOUNT_ID")


def normalize_name(name: str) -> str:
    """`X-Api-Key`, `x_api_key`, `apiKey` → `xapikey` / `apikey`: lower case, separators dropped."""
    return re.sub(r"[\s_.\-]+", "", name.lower())


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)   # built on first validation (scanner.packcache)


def _check_regex(v: Optional[str]) -> Optional[str]:
    """The pattern compiles for RE2 with its Python meaning (scanner.rx), within RE2's memory budget."""
    if v is not None:
        try:
            compiled = rx.compile(v)
        except rx.RegexError as exc:
            text = str(exc)
            if text.startswith("invalid regex: "):
                raise ValueError(f"invalid regex {v!r}: {text[len('invalid regex: '):]}") from None
            raise ValueError(f"regex {v!r} refused ({text})") from None
        if compiled.program_size() > MAX_PROGRAM_SIZE:
            raise ValueError(f"regex {v!r} refused (its RE2 program has {compiled.program_size()} instructions, "
                             f"over {MAX_PROGRAM_SIZE})")
    return v


class Entropy(_Strict):
    """The second net: a long, random-looking value under a name that suggests a credential."""

    min_bits_per_char: float = Field(ge=0.0, le=8.0, description="Shannon entropy per character, at least")
    min_length: int = Field(ge=8, description="Shortest value considered")
    max_length: int = Field(default=512, ge=8, description="Longest value considered (bodies are never credentials)")
    charset: str = Field(default=r"[A-Za-z0-9+/=_\-.~:]+", description="The whole value must match this regex")
    channels: list[Channel] = Field(default_factory=lambda: [Channel.HTTP_HEADER_VALUE, Channel.JSON_STRING])
    context: list[str] = Field(min_length=1, description="The (normalised) header name or JSON key must contain one")
    exclude_context: list[str] = Field(default_factory=list, description="…and none of these")

    @field_validator("charset")
    @classmethod
    def _charset(cls, v: str) -> str:
        return _check_regex(v)


class Match(_Strict):
    header_names: list[str] = Field(default_factory=list, description=(
        "Header names (any capitalisation, `*` wildcard): the whole value is the secret — in recorded "
        "exchanges, HAR name/value lists, pair lists, JSON objects under `headers`, and JSON keys of that name"))
    header_lines_in_text: Optional[str] = Field(default=None, description=(
        "Also find `Name: value` lines for these header names in text (curl commands, raw HTTP dumps); the "
        "secret is the longest start of the value that this regex matches (none: no finding). Unset: header "
        "names are matched in structure only"))
    query_params: list[str] = Field(default_factory=list, description=(
        "Query (or fragment, or form-body) parameter names: the parameter's value is the secret, in request "
        "URLs, link attributes, and any text holding a URL"))
    json_keys: list[str] = Field(default_factory=list, description=(
        "JSON keys (snake_case, camelCase and kebab-case are the same key): the string value under the key, "
        "and the value of a `{name: <key>, value: …}` pair"))
    numbers: bool = Field(default=False, description="Also a number under one of `json_keys` (replaced by \"REDACTED\")")
    pointer_patterns: list[str] = Field(default_factory=list, description=(
        "Regexes on a JSON string's pointer (HAR `/cookies/0/value`): the whole value is the secret"))
    value_shape: Optional[str] = Field(default=None, description=(
        "Structural matches (names, parameters, keys, pointers) count only when the value fully matches this"))
    value_pattern: Optional[str] = Field(default=None, description=(
        "A regex for the secret itself, anywhere; the group named `secret` (else the whole match) is the span"))
    keywords: list[str] = Field(default_factory=list, description=(
        "Prefilter for value_pattern: a unit is tried only if its lower-cased text contains one of these"))
    validators: list[str] = Field(default_factory=list, description=(
        f"Named checks every value_pattern match must pass: {', '.join(sorted(VALIDATORS))}"))
    min_entropy: Optional[float] = Field(default=None, ge=0.0, le=8.0,
                                         description="value_pattern matches need this entropy (bits/char)")
    channels: Optional[list[Channel]] = Field(default=None, description=(
        "Channels this rule looks at; default: every text channel except script and style"))
    scan_scripts: bool = Field(default=False, description=(
        "Also look inside <script> (for key formats that are never meant to be public)"))
    entropy: Optional[Entropy] = None

    @field_validator("header_lines_in_text", "value_shape", "value_pattern")
    @classmethod
    def _regexes(cls, v: Optional[str]) -> Optional[str]:
        return _check_regex(v)

    @field_validator("pointer_patterns")
    @classmethod
    def _pointers(cls, v: list[str]) -> list[str]:
        for p in v:
            _check_regex(p)
        return v

    @field_validator("validators")
    @classmethod
    def _known_validators(cls, v: list[str]) -> list[str]:
        for name in v:
            if name not in VALIDATORS:
                raise ValueError(f"unknown validator {name!r} (known: {', '.join(sorted(VALIDATORS))})")
        return v

    @model_validator(mode="after")
    def _something_to_match(self):
        if not (self.header_names or self.query_params or self.json_keys or self.pointer_patterns
                or self.value_pattern or self.entropy):
            raise ValueError("a rule matches something: header_names, query_params, json_keys, pointer_patterns, "
                             "value_pattern or entropy")
        if self.value_pattern and not self.keywords:
            raise ValueError("a value_pattern needs keywords (the prefilter that keeps the scan cheap)")
        if self.keywords and not self.value_pattern:
            raise ValueError("keywords only make sense with a value_pattern")
        if self.header_lines_in_text and not self.header_names:
            raise ValueError("header_lines_in_text needs header_names")
        if self.numbers and not self.json_keys:
            raise ValueError("numbers needs json_keys")
        return self


class SecretRule(RuleBase):
    kind: Literal["secret"] = "secret"
    entity: Literal["API_KEY", "AUTH_HEADER", "COOKIE", "ACCOUNT_ID"]
    match: Match


# --- compiled form --------------------------------------------------------------------------------------

DEFAULT_CHANNELS = frozenset(c for c in Channel if c not in NOT_DEFAULT)   # every channel but these


class NameSet:
    """Normalised names with `*` wildcards; `in` is a set lookup, wildcards one regex."""

    def __init__(self, names: list[str]):
        plain, globs = set(), []
        for n in names:
            key = normalize_name(n)
            if "*" in key:
                globs.append(".*".join(re.escape(p) for p in key.split("*")))
            else:
                plain.add(key)
        self.plain = frozenset(plain)
        self.glob = rx.compile("(?:" + "|".join(globs) + r")\Z") if globs else None
        self.raw = list(names)

    def __bool__(self) -> bool:
        return bool(self.plain or self.glob)

    def __contains__(self, normalized: str) -> bool:
        return normalized in self.plain or (self.glob is not None and self.glob.match(normalized) is not None)


class Compiled:
    """A rule ready to run: regexes compiled, names normalised."""

    def __init__(self, rule: SecretRule):
        m = rule.match
        self.rule = rule
        self.id = rule.id
        self.entity = rule.entity
        self.headers = NameSet(m.header_names)
        self.params = NameSet(m.query_params)
        self.keys = NameSet(m.json_keys)
        self.numbers = m.numbers
        self.pointers = [rx.compile(p) for p in m.pointer_patterns]
        self.shape = rx.compile(m.value_shape) if m.value_shape else None
        self.pattern = rx.compile(m.value_pattern) if m.value_pattern else None
        self.keywords = tuple(k.lower() for k in m.keywords)
        self.validators = [VALIDATORS[v] for v in m.validators]
        self.min_entropy = m.min_entropy
        channels = frozenset(m.channels) if m.channels is not None else DEFAULT_CHANNELS
        if m.scan_scripts:
            channels = channels | {Channel.SCRIPT}
        self.channels = channels
        self.entropy = m.entropy
        if m.entropy is not None:
            self.entropy_channels = frozenset(m.entropy.channels)
            self.entropy_charset = rx.compile(m.entropy.charset)
            self.entropy_context = tuple(normalize_name(c) for c in m.entropy.context)
            self.entropy_exclude = tuple(normalize_name(c) for c in m.entropy.exclude_context)
        self.text_lines = None
        if m.header_lines_in_text:
            names = "|".join(_name_regex(n) for n in m.header_names)
            # `Authorization: Bearer …`, `-H "x-api-key: …"`, `"cookie": "…"` inside a text.
            self.text_lines = rx.compile(
                r"(?<![A-Za-z0-9_-])(?:" + names + r")[\"']?[ \t]*:(?:[ \t]*|[ \t]*\r?\n[ \t]*-[ \t]+)"   # YAML: `Name:\n- value`
                r"[\"']?(?P<secret>[^\s\"'<>][^\r\n\"'<>]*)",
                re.I)
            self.text_shape = rx.compile(m.header_lines_in_text)
            self.text_keywords = tuple(sorted({max(n.lower().split("*"), key=len) for n in m.header_names}))


def rule_regexes(c: "Compiled") -> list[tuple[str, rx.Pattern, str]]:
    """(field, compiled regex, how it is applied: finditer | search | match | fullmatch) of a rule."""
    out = []
    if c.pattern is not None:
        out.append(("value_pattern", c.pattern, "finditer"))
    if c.shape is not None:
        out.append(("value_shape", c.shape, "fullmatch"))
    out += [(f"pointer_patterns[{i}]", p, "search") for i, p in enumerate(c.pointers)]
    if c.entropy is not None:
        out.append(("entropy.charset", c.entropy_charset, "fullmatch"))
    if c.text_lines is not None:
        out.append(("header_names (in text)", c.text_lines, "finditer"))
        out.append(("header_lines_in_text", c.text_shape, "match"))
    for label, names in (("header_names", c.headers), ("query_params", c.params), ("json_keys", c.keys)):
        if names.glob is not None:
            out.append((label, names.glob, "match"))
    return out


def _name_regex(name: str) -> str:
    return "[A-Za-z0-9_-]*".join(re.escape(p) for p in name.split("*"))


def load_rule(path: Path) -> SecretRule:
    data = load_yaml(path)
    if not isinstance(data, dict):
        raise RuleError(f"{path}: a rule file holds one mapping (id, name, entity, match, …)")
    try:
        rule = SecretRule.model_validate(data)
    except ValidationError as exc:
        rid = data.get("id")
        named = f"rule {rid}: " if isinstance(rid, str) and len(rid) <= 16 and rid.isprintable() else ""
        raise RuleError(f"{path}: {named}{first_errors(exc, top='(top)')}") from None
    try:
        Compiled(rule)     # the generated regexes too (header lines in text, name wildcards)
    except rx.RegexError as exc:
        raise RuleError(f"{path}: rule {rule.id}: match: {exc}") from None
    rule.source = str(path)
    return rule


def rule_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.glob("*") if p.suffix in (".yaml", ".yml") and p.is_file())


@lru_cache(maxsize=8)
def load_rules(directories: tuple[Path, ...] = (BUILTIN_SECRET_RULES,)) -> tuple[SecretRule, ...]:
    """Every rule of the given directories, ids unique across them, validated once per content
    (scanner.packcache)."""
    from scanner import packcache

    files = [p for d in directories if d.is_dir() for p in rule_files(d)]
    return packcache.cached("secrets", files, lambda: _load_rules(directories))


def _load_rules(directories: tuple[Path, ...]) -> tuple[SecretRule, ...]:
    rules: list[SecretRule] = []
    seen: dict[str, str] = {}
    for directory in directories:
        if not directory.is_dir():
            raise RuleError(f"{directory}: not a directory")
        for path in rule_files(directory):
            rule = load_rule(path)
            if rule.id in seen:
                raise RuleError(f"{path}: rule id {rule.id} is already used by {seen[rule.id]}")
            seen[rule.id] = str(path)
            rules.append(rule)
    if not rules:
        raise RuleError(f"{', '.join(map(str, directories))}: no secret rules found")
    return tuple(sorted(rules, key=lambda r: r.id))


def rule_json_schema() -> dict:
    """The JSON Schema of a secret rule file (for editors and reviewers)."""
    return SecretRule.model_json_schema()
