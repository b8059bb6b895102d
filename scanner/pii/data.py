"""The data the personal-data scanner reads from `scanner/rules/pii/`: role mailboxes, owner cues, name cues.

The rules themselves (PII001…, one YAML record each) are read by `scanner.pii.registry`.

Read once per process with the YAML safe loader; nothing here executes anything from the files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from scanner import rx
from scanner.textfold import fold_accents
from scanner.yamlsafe import RULE_FILE_BYTES, read_yaml

RULES_DIR = Path(__file__).resolve().parent.parent / "rules" / "pii"


class PiiRulesError(Exception):
    """A data file of scanner/rules/pii that cannot be used."""


def _load(name: str) -> dict:
    path = RULES_DIR / name
    try:
        data = read_yaml(path, max_bytes=RULE_FILE_BYTES)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise PiiRulesError(f"{path}: {exc}") from None
    if not isinstance(data, dict):
        raise PiiRulesError(f"{path}: expected a mapping at the top level")
    return data


def _words(data: dict, key: str, where: str) -> list[str]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise PiiRulesError(f"{where}: {key} must be a list of non-empty strings")
    return [v.strip() for v in value]


def word_regex(words: list[str]) -> rx.Pattern:
    """One pattern for a word list, matched on folded text at word boundaries; longest alternative first (RE2).
    Alternatives of one length in a fixed order: the same pattern text in every process (scanner.rx.stored)."""
    alts = sorted({re.escape(fold_accents(w)) for w in words}, key=lambda a: (-len(a), a))
    return rx.compile(r"(?<![a-z0-9])(?:" + "|".join(alts) + r")(?![a-z0-9])")


@dataclass(frozen=True)
class RoleRules:
    roles: frozenset
    qualifiers: frozenset
    glued: re.Pattern                   # a long role with a qualifier or number glued on: redaccionweb, ventas1
    placeholder_locals: frozenset
    placeholder_domains: frozenset
    reserved_tlds: frozenset
    freemail_domains: frozenset
    freemail_role_is_personal: bool

    def is_role(self, local: str, domain: str = "") -> bool:
        """True when the whole local part names a function, not a person (see role_mailboxes.yaml)."""
        local = local.lower().split("+", 1)[0]
        if not local:
            return False
        if self.freemail_role_is_personal and domain.lower() in self.freemail_domains:
            return False
        if local in self.roles or re.sub(r"[._-]+", "", local) in self.roles:
            return True
        has_role = False
        for token in re.split(r"[._-]+", local):
            if not token:
                continue
            if token in self.roles:
                has_role = True
            elif token in self.qualifiers or token.isdigit():
                continue
            elif self.glued.fullmatch(token):
                has_role = True
            else:
                return False
        return has_role

    def is_placeholder(self, local: str, domain: str) -> bool:
        domain = domain.lower().rstrip(".")
        tld = domain.rsplit(".", 1)[-1]
        return local.lower() in self.placeholder_locals and (
            domain in self.placeholder_domains or tld in self.reserved_tlds)


@dataclass(frozen=True)
class ContextRules:
    window: dict
    person_words: re.Pattern
    company_words: re.Pattern
    person_keys: frozenset
    company_keys: frozenset
    organization_types: frozenset
    person_types: frozenset
    titles: list
    company_markers: re.Pattern
    stopwords: frozenset
    name_keys: frozenset
    clabe_bank_codes: frozenset


@lru_cache(maxsize=1)
def role_rules() -> RoleRules:
    where = "role_mailboxes.yaml"
    data = _load(where)
    roles = {w.lower() for w in _words(data, "roles", where)}
    quals = {w.lower() for w in _words(data, "qualifiers", where)}
    long_roles = sorted((r for r in roles if len(r) >= 4 and re.fullmatch(r"[a-z]+", r)), key=len, reverse=True)
    long_quals = sorted((q for q in quals if len(q) >= 2 and re.fullmatch(r"[a-z]+", q)), key=len, reverse=True)
    glued = re.compile("(?:" + "|".join(long_roles) + r")(?:" + "|".join(long_quals) + r"|\d{1,3})+")
    return RoleRules(
        roles=frozenset(roles), qualifiers=frozenset(quals), glued=glued,
        placeholder_locals=frozenset(w.lower() for w in _words(data, "placeholder_local_parts", where)),
        placeholder_domains=frozenset(w.lower() for w in _words(data, "placeholder_domains", where)),
        reserved_tlds=frozenset(w.lower() for w in _words(data, "reserved_tlds", where)),
        freemail_domains=frozenset(w.lower() for w in _words(data, "freemail_domains", where)),
        freemail_role_is_personal=bool(data.get("freemail_role_is_personal", False)),
    )


@lru_cache(maxsize=1)
def context_rules() -> ContextRules:
    where = "context.yaml"
    data = _load(where)
    owner = data.get("phone_owner") or {}
    person = data.get("person") or {}
    if not isinstance(owner, dict) or not isinstance(person, dict):
        raise PiiRulesError(f"{where}: phone_owner and person must be mappings")
    window = {"before": 60, "after": 25, "label": 28, "owner_before": 140, "owner_after": 90, "person_block": 160}
    window.update({k: int(v) for k, v in (data.get("window") or {}).items()})
    return ContextRules(
        window=window,
        person_words=word_regex(_words(owner, "person_words", where)),
        company_words=word_regex(_words(owner, "company_words", where)),
        person_keys=frozenset(fold_accents(k) for k in _words(owner, "person_keys", where)),
        company_keys=frozenset(fold_accents(k) for k in _words(owner, "company_keys", where)),
        organization_types=frozenset(_words(owner, "organization_types", where)),
        person_types=frozenset(_words(owner, "person_types", where)),
        titles=_words(person, "titles", where),
        company_markers=word_regex(_words(person, "company_markers", where)),
        stopwords=frozenset(fold_accents(w) for w in _words(person, "stopwords", where)),
        name_keys=frozenset(fold_accents(w) for w in _words(person, "name_keys", where)),
        clabe_bank_codes=frozenset(_words(data, "clabe_bank_codes", where)),
    )
