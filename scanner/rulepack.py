"""Rule packs: one rule per YAML file, validated by a pydantic model, each carrying its own examples.

A reviewer adds a rule by writing a YAML file (see `scanner/rules/injection/*.yaml` and the JSON Schema in
`schemas/rule.schema.json`); logic that needs code is a named predicate in `scanner/injection/predicates.py`
that the YAML refers to, and the phrase lexicon the signals are built from is `lexicon.yaml` beside the rules.
Loading never executes anything: YAML is read with the safe loader and every name is checked.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Literal, Optional

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from scanner.units import Channel
from scanner.validation import first_errors
from scanner.yamlsafe import RULE_FILE_BYTES, read_yaml

BUILTIN_RULES = Path(__file__).resolve().parent / "rules"
RULE_ID = re.compile(r"^[A-Z]{2,5}\d{3}$")
LEXICON_FLAGS = re.M            # lexicon patterns run on normalised text, line anchors per line


class RuleError(Exception):
    """A rule pack that cannot be used: the message names the file and the problem."""


class _Strict(BaseModel):
    # Schemas built on first validation: a scan whose packs come from scanner.packcache builds none.
    model_config = ConfigDict(extra="forbid", defer_build=True)


class Help(_Strict):
    what: str = Field(description="What it detects")
    why: str = Field(description="Why it matters")
    example: str = Field(description="An example of what it flags")
    fix: str = Field(description="What to do")


class PdfRunSpec(_Strict):
    text: str
    x: float = 72
    y: float = 720
    size: float = 12
    render_mode: int = 0
    fill: list[float] = Field(default_factory=lambda: [0.0, 0.0, 0.0])
    alpha: Optional[float] = None


class PdfPageSpec(_Strict):
    image: bool = Field(default=False, description="Draw an image over the whole page (the shape of a scan)")
    runs: list[PdfRunSpec]


class Example(_Strict):
    file: str = Field(description="A file name; its extension chooses the loader (.html, .json, .txt, .md, .pdf)")
    content: str = ""
    pdf: Optional[list[PdfPageSpec]] = Field(default=None, description="For a .pdf example: its pages, written by scanner.pdfwriter")
    note: str = ""

    def to_bytes(self) -> bytes:
        if self.pdf is None:
            return self.content.encode("utf-8")
        from scanner.pdfwriter import TextRun, make_pdf

        pages = [[TextRun(r.text, r.x, r.y, r.size, r.render_mode, tuple(r.fill), r.alpha) for r in page.runs]
                 for page in self.pdf]
        return make_pdf(pages, image_pages={i for i, page in enumerate(self.pdf) if page.image})


class Examples(_Strict):
    positive: list[Example] = Field(min_length=2)
    negative: list[Example] = Field(min_length=2)


class ModelSpec(_Strict):
    """A learned rule: the model file and the channel-aware decision (see scanner/injection/learned.py)."""
    file: str = Field(description="The model file, relative to the rule's YAML")
    thresholds: dict[str, float] = Field(
        description="Probability a window must reach, per channel group (comment, css_hidden, attribute, meta, "
                    "json_ld, noscript, template, svg_text, pdf_hidden, visible) and `default` for the others")
    gate: list[str] = Field(default_factory=list, description="Groups where a window also needs a gate cue")
    gate_cues: list[str] = Field(default_factory=list, description="Structural cues that open the gate")
    group_gate_cues: dict[str, list[str]] = Field(
        default_factory=dict, description="Per gated group, the cues that open its gate instead of `gate_cues`")
    cued_thresholds: dict[str, float] = Field(
        default_factory=dict, description="Per hidden channel group, the lower probability a window must reach when "
                                          "it holds one of `cued_by` (it addresses or instructs an AI reader, or "
                                          "tells the reader what to output)")
    cued_by: list[str] = Field(default_factory=list, description="The cues that make `cued_thresholds` apply")
    request_thresholds: dict[str, float] = Field(
        default_factory=dict, description="Per hidden channel group, the lower probability a window must reach when "
                                          "it holds a reader request (a lexicon group of `request_by`: it tells the "
                                          "reader how to reply, asks for its prompt or secrets, or speaks to it as an "
                                          "AI); see scanner/injection/reader_request.py")
    request_by: list[str] = Field(default_factory=list,
                                  description="The lexicon groups that make `request_thresholds` apply")

    @field_validator("thresholds")
    @classmethod
    def _thresholds(cls, v: dict[str, float]) -> dict[str, float]:
        from scanner.injection.learned import GROUPS

        if "default" not in v:
            raise ValueError("thresholds need a `default`")
        for group, t in v.items():
            if group != "default" and group not in GROUPS:
                raise ValueError(f"unknown channel group {group!r} (known: {', '.join(GROUPS)})")
            if not 0.0 < t < 1.0:
                raise ValueError(f"threshold of {group} must lie strictly between 0 and 1")
        return v

    @model_validator(mode="after")
    def _names(self):
        from scanner.injection.features import CUE_NAMES
        from scanner.injection.learned import GROUPS

        for g in self.gate:
            if g not in GROUPS:
                raise ValueError(f"gate: unknown channel group {g!r}")
        for c in self.gate_cues:
            if c not in CUE_NAMES:
                raise ValueError(f"gate_cues: unknown cue {c!r} (known: {', '.join(CUE_NAMES)})")
        for g, cues in self.group_gate_cues.items():
            if g not in self.gate:
                raise ValueError(f"group_gate_cues: {g!r} is not a gated group")
            for c in cues:
                if c not in CUE_NAMES:
                    raise ValueError(f"group_gate_cues: unknown cue {c!r} (known: {', '.join(CUE_NAMES)})")
        for c in self.cued_by:
            if c not in CUE_NAMES:
                raise ValueError(f"cued_by: unknown cue {c!r} (known: {', '.join(CUE_NAMES)})")
        for g, t in self.cued_thresholds.items():
            if g not in GROUPS:
                raise ValueError(f"cued_thresholds: unknown channel group {g!r} (known: {', '.join(GROUPS)})")
            if not 0.0 < t < 1.0:
                raise ValueError(f"cued threshold of {g} must lie strictly between 0 and 1")
        if self.cued_thresholds and not self.cued_by:
            raise ValueError("cued_thresholds need `cued_by`: the cues that make them apply")
        for g, t in self.request_thresholds.items():
            if g not in GROUPS:
                raise ValueError(f"request_thresholds: unknown channel group {g!r} (known: {', '.join(GROUPS)})")
            if not 0.0 < t < 1.0:
                raise ValueError(f"request threshold of {g} must lie strictly between 0 and 1")
        if self.request_thresholds and not self.request_by:
            raise ValueError("request_thresholds need `request_by`: the lexicon groups that make them apply")
        return self

    def cues_of_gate(self) -> dict[str, frozenset]:
        """Each gated group's cues."""
        return {g: frozenset(self.group_gate_cues.get(g, self.gate_cues)) for g in self.gate}

    def resolved_file(self, rule_source: str) -> str:
        base = Path(rule_source).parent if rule_source else BUILTIN_RULES / "injection"
        return str((base / self.file).resolve())


class Match(_Strict):
    channels: list[Channel] = Field(min_length=1, description="Channels the rule looks at")
    require: list[str] = Field(default_factory=list, description="Named predicates that must all hold for the unit")
    exclude: list[str] = Field(default_factory=list, description="Named predicates any of which excludes the unit")
    decode: Optional[Literal["unicode_tags", "zero_width", "base64", "reading"]] = Field(
        default=None, description="Decode hidden content first and judge the decoded text; `reading`: the "
                                  "de-obfuscated reading of each window the learned rule reads (letters spaced or "
                                  "dotted apart, leetspeak, cut words, text written backwards…)")
    signal: Optional[str] = Field(default=None, description="A signal of the lexicon the (decoded) text must show")
    visible_signal: Optional[str] = Field(
        default=None, description="decode: reading only — the signal a text judged visible must show (`signal` is "
                                  "then the hidden channels'); `signal` when unset")
    model: Optional[ModelSpec] = Field(default=None, description="A learned rule: judged by a model, not a signal")
    span: Literal["unit", "sentence"] = Field(
        default="unit", description="unit: the finding covers the whole unit; sentence: the sentences with the evidence")
    scope: Literal["unit", "block"] = Field(
        default="unit", description="block: judge consecutive units of the rule's channels together (text split by "
                                    "inline markup, a heading and its paragraph), so «<b>Nota para el asistente:</b> …» is one text")

    @model_validator(mode="after")
    def _signal_or_model(self):
        if (self.signal is None) == (self.model is None):
            raise ValueError("a rule has either a lexicon `signal` or a `model`")
        if self.visible_signal is not None and self.decode != "reading":
            raise ValueError("`visible_signal` belongs to a rule that judges the reading (`decode: reading`)")
        return self


class RuleBase(_Strict):
    """What every rule of every pack carries: identity, severity, help, its own examples."""

    id: str
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    severity: Literal["error", "warning", "note"]
    precision: Literal["very-high", "high", "medium", "low"]
    security_severity: float = Field(ge=0.0, le=10.0, description="GitHub code scanning security-severity")
    tags: list[str] = Field(default_factory=list)
    message: str
    help: Help
    examples: Examples
    source: str = Field(default="", exclude=True)

    @field_validator("id")
    @classmethod
    def _id_shape(cls, v: str) -> str:
        if not RULE_ID.match(v):
            raise ValueError("rule ids look like INJ001 or SEC001: letters then three digits")
        return v


class Rule(RuleBase):
    kind: Literal["injection", "pii", "secret"]
    vector: Optional[str] = Field(default=None, pattern=r"^[a-z][a-z0-9_]*$")
    match: Match

    @model_validator(mode="after")
    def _injection_has_vector(self):
        if self.kind == "injection" and not self.vector:
            raise ValueError("an injection rule names its vector")
        return self


class PatternGroup(_Strict):
    description: str
    patterns: list[str] = Field(min_length=1)
    positive: list[str] = Field(min_length=2, description="Texts in which the group must match")
    negative: list[str] = Field(min_length=2, description="Texts in which it must not")


class DerivedGroup(_Strict):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)
    from_: str = Field(alias="from", description="The group whose matches are filtered")
    where: Literal["sentence_initial_unquoted", "unquoted"] = Field(
        description="sentence_initial_unquoted: keep matches that open a sentence or clause and are not quoted; "
                    "unquoted: keep matches not inside quotation marks")


class Mentions(_Strict):
    """When a match of an instruction group is a mention, not a use: an attack quoted by a text about attacks, a
    role turn of an example dialogue or API request (scanner/injection/signals.py, `CompiledLexicon.mentioned`)."""
    description: str
    groups: list[str] = Field(min_length=1, description="Groups whose matches are dropped where they are mentioned")
    quote_cues: list[str] = Field(min_length=1, description=(
        "Words that introduce a quotation (`reads`, `such as`, `frases como`): a match inside quotation marks "
        "opened at most two words after one of them is a mention"))
    example_cues: list[str] = Field(min_length=1, description=(
        "Words that announce an example (`example`, `ejemplo`): with a user turn near it, a match after one of "
        "them (within the window) is a role turn of an example dialogue"))
    turn_groups: list[str] = Field(min_length=1, description=(
        "Those of `groups` that mark a role's turn (a system message, «Assistant:»): only their matches can be "
        "an example dialogue's"))
    user_turns: list[str] = Field(min_length=1, description="A user's turn of a dialogue (`User:`, `\"role\": \"user\"`)")
    message_roles: list[str] = Field(min_length=1, description=(
        "A turn group's match holding one of these is a message of an API request (`\"role\": \"system\"`)"))
    instruction_groups: list[str] = Field(min_length=1, description=(
        "Groups that make a message an instruction: a message of `message_roles` followed by a user's message "
        "with none of these after it (within the window) is an API request's, not an injected one"))
    mentioned: list[str] = Field(min_length=2, description="Texts on which hidden_instruction must not hold")
    used: list[str] = Field(min_length=2, description="Texts on which it must still hold")


class Lexicon(_Strict):
    groups: dict[str, PatternGroup]
    derived: dict[str, DerivedGroup] = Field(default_factory=dict)
    mentions: Mentions | None = None
    window: int = Field(default=300, ge=20, description="Max characters between the matches of one conjunction")
    signals: dict[str, list[list[str]]] = Field(
        description="signal -> any of these conjunctions of group names")

    @model_validator(mode="after")
    def _signals_name_groups(self):
        if self.mentions is not None:
            for g in (*self.mentions.groups, *self.mentions.instruction_groups):
                if g not in self.groups:
                    raise ValueError(f"mentions names unknown group {g}")
            if not set(self.mentions.turn_groups) <= set(self.mentions.groups):
                raise ValueError("mentions: every turn group must be one of its groups")
        for name, d in self.derived.items():
            if d.from_ not in self.groups:
                raise ValueError(f"derived group {name} comes from unknown group {d.from_}")
        for name, alternatives in self.signals.items():
            for conj in alternatives:
                for g in conj:
                    if g not in self.groups and g not in self.derived:
                        raise ValueError(f"signal {name} names unknown group {g}")
        return self

    # each group's shortest match, from Python's parser (lookarounds take no width); filled when the pack is built,
    # so it travels in the pack cache (scanner.packcache) and a cold start parses no pattern for it
    _min_width: dict = PrivateAttr(default_factory=dict)

    def min_width(self, names) -> int:
        """The shortest match of any pattern of these groups: no shorter text can match their union."""
        names = tuple(names)
        missing = [n for n in names if n not in self._min_width]
        if missing:
            try:
                from re import _parser as parser
            except ImportError:  # pragma: no cover - Python < 3.11
                import sre_parse as parser  # type: ignore
            for n in missing:
                self._min_width[n] = parser.parse(group_regex(self.groups[n].patterns), LEXICON_FLAGS).getwidth()[0]
        return min(self._min_width[n] for n in names)


MAX_RULE_FILE_BYTES = RULE_FILE_BYTES


def load_yaml(path: Path):
    """A rule file's data: safe YAML (scanner.yamlsafe: no Python objects, no aliases), at most 1 MB."""
    try:
        return read_yaml(path, max_bytes=MAX_RULE_FILE_BYTES)
    except (OSError, UnicodeDecodeError) as exc:
        raise RuleError(f"{path}: cannot read: {exc}") from None
    except yaml.YAMLError as exc:
        raise RuleError(f"{path}: invalid YAML: {' '.join(str(exc).split())}") from None


def _validation_message(path: Path, exc: ValidationError) -> str:
    return f"{path}: {first_errors(exc, top='(top)')}"


def load_lexicon(path: Path) -> Lexicon:
    data = load_yaml(path)
    try:
        lexicon = Lexicon.model_validate(data)
    except ValidationError as exc:
        raise RuleError(_validation_message(path, exc)) from None
    from scanner import rx

    for name, group in lexicon.groups.items():
        try:             # the group as the scanner compiles it (scanner.injection.signals); cached for it
            rx.compile(group_regex(group.patterns), LEXICON_FLAGS)
        except rx.RegexError as group_error:
            for i, pattern in enumerate(group.patterns):
                try:
                    rx.compile(pattern, LEXICON_FLAGS)
                except rx.RegexError as exc:
                    raise RuleError(f"{path}: group {name}: pattern {i + 1}: {exc}") from None
            raise RuleError(f"{path}: group {name}: {group_error}") from None
    return lexicon


def group_regex(patterns) -> str:
    """One regex for a list of lexicon patterns: the first that matches at a position wins."""
    return "|".join(f"(?:{p})" for p in patterns)


def load_rule(path: Path, predicates: set[str], signals: set[str]) -> Rule:
    data = load_yaml(path)
    try:
        rule = Rule.model_validate(data)
    except ValidationError as exc:
        raise RuleError(_validation_message(path, exc)) from None
    for name in rule.match.require + rule.match.exclude:
        if name not in predicates:
            raise RuleError(f"{path}: match: unknown predicate {name!r} (known: {', '.join(sorted(predicates))})")
    if rule.match.signal is not None and rule.match.signal not in signals:
        raise RuleError(f"{path}: match.signal: unknown signal {rule.match.signal!r}")
    if rule.match.visible_signal is not None and rule.match.visible_signal not in signals:
        raise RuleError(f"{path}: match.visible_signal: unknown signal {rule.match.visible_signal!r}")
    rule.source = str(path)
    return rule


THRESHOLDS_FILE = "model-thresholds.yaml"


def rule_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*.y*ml")
                  if p.name not in ("lexicon.yaml", THRESHOLDS_FILE) and p.suffix in (".yaml", ".yml"))


class ThresholdOverrides(_Strict):
    """`model-thresholds.yaml` in an extra rule pack: new thresholds for learned rules, by rule id."""
    rules: dict[str, dict[str, float]]


def _apply_threshold_overrides(path: Path, rules: list[Rule]) -> list[Rule]:
    try:
        overrides = ThresholdOverrides.model_validate(load_yaml(path))
    except ValidationError as exc:
        raise RuleError(_validation_message(path, exc)) from None
    by_id = {r.id: r for r in rules}
    for rule_id, thresholds in overrides.rules.items():
        rule = by_id.get(rule_id)
        if rule is None or rule.match.model is None:
            raise RuleError(f"{path}: {rule_id} is not a learned rule of this scan")
        # `cued.<group>` sets a cued threshold and `request.<group>` a request threshold; a group whose plain
        # threshold the pack sets without its cued (request) one is judged by the pack's threshold alone (its cued
        # and request thresholds are dropped)
        plain = {g: t for g, t in thresholds.items() if not g.startswith(("cued.", "request."))}
        cued_set = {g[len("cued."):]: t for g, t in thresholds.items() if g.startswith("cued.")}
        request_set = {g[len("request."):]: t for g, t in thresholds.items() if g.startswith("request.")}
        merged = {**rule.match.model.thresholds, **plain}
        cued = {g: t for g, t in rule.match.model.cued_thresholds.items() if g not in plain or g in cued_set}
        cued.update(cued_set)
        request = {g: t for g, t in rule.match.model.request_thresholds.items() if g not in plain or g in request_set}
        request.update(request_set)
        try:
            spec = ModelSpec.model_validate({**rule.match.model.model_dump(), "thresholds": merged,
                                             "cued_thresholds": cued, "request_thresholds": request})
        except ValidationError as exc:
            raise RuleError(_validation_message(path, exc)) from None
        new = rule.model_copy(update={"match": rule.match.model_copy(update={"model": spec})})
        new.source = rule.source
        by_id[rule_id] = new
    return [by_id[r.id] for r in rules]


def pack_files(directories) -> list[Path]:
    """Every YAML file under the directories: what a pack's validation reads (scanner.packcache's key)."""
    return [p for d in directories if d.is_dir() for p in sorted(d.rglob("*.y*ml"))
            if p.suffix in (".yaml", ".yml") and p.is_file()]


@lru_cache(maxsize=8)
def load_pack(directories: tuple[Path, ...] = (BUILTIN_RULES / "injection",)):
    """The lexicon and rules of the given directories (the first one's lexicon.yaml is the lexicon), validated
    once per content (scanner.packcache)."""
    from scanner import packcache

    return packcache.cached("injection", pack_files(directories), lambda: _load_pack(directories))


def _load_pack(directories: tuple[Path, ...]):
    from scanner.injection.predicates import PREDICATES

    lexicon_path = directories[0] / "lexicon.yaml"
    lexicon = load_lexicon(lexicon_path)
    lexicon.min_width(lexicon.groups)           # computed here, so it is cached with the pack
    rules: list[Rule] = []
    seen: dict[str, str] = {}
    for directory in directories:
        if not directory.is_dir():
            raise RuleError(f"{directory}: not a directory")
        extra = directory / "lexicon.yaml"
        if directory != directories[0] and extra.exists():
            raise RuleError(f"{extra}: only one lexicon per scan (the built-in one)")
        for path in rule_files(directory):
            rule = load_rule(path, set(PREDICATES), set(lexicon.signals))
            if rule.id in seen:
                raise RuleError(f"{path}: rule id {rule.id} is already used by {seen[rule.id]}")
            seen[rule.id] = str(path)
            rules.append(rule)
    for directory in directories[1:]:
        if (directory / THRESHOLDS_FILE).is_file():
            rules = _apply_threshold_overrides(directory / THRESHOLDS_FILE, rules)
    return lexicon, tuple(rules)
