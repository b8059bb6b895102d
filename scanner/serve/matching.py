"""Which recorded exchange a request asks for: a key built from the method, the path and the fields that
identify a case, by the same rule on the recorded request and on the live one.

Per provider (README, "centinela serve"): Tavily body `query` / `urls` / `url`; Exa body `query` / `urls`
or `ids` (one field: `/contents` accepts either); a list of URLs may be sent as one string (`"urls":
"https://…"` is `["https://…"]`, as the APIs accept and tavily-python sends); Brave and SerpAPI query `q`; Serper body `q`; Firecrawl
body `query` / `url` / `urls`; Jina the path (`/https://…`, the page URL) with its whole query string, and
body `url` / `q`. A provider without a rule, or a recorded request that carries none of its provider's
fields (a direct GET of a page), is matched by method, path, canonical query string and canonical JSON body.
"""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote, urlencode

from scanner import jsonsafe


@dataclass(frozen=True)
class MatchRule:
    body_fields: tuple[str, ...] = ()
    query_fields: tuple[str, ...] = ()
    whole_query: bool = False                   # the path and every query parameter identify the case (Jina)
    aliases: tuple[tuple[str, str], ...] = ()   # (field as sent, field it counts as)
    url_lists: tuple[str, ...] = ()             # fields holding a list of URLs, which a client may send as one string


RULES: dict[str, MatchRule] = {
    "tavily": MatchRule(body_fields=("query", "urls", "url"), url_lists=("urls",)),
    "exa": MatchRule(body_fields=("query", "urls", "ids"), aliases=(("ids", "urls"),), url_lists=("urls", "ids")),
    "brave": MatchRule(query_fields=("q",)),
    "serpapi": MatchRule(query_fields=("q",)),
    "serper": MatchRule(body_fields=("q",)),
    "firecrawl": MatchRule(body_fields=("query", "url", "urls"), url_lists=("urls",)),
    "jina": MatchRule(body_fields=("url", "q"), whole_query=True),
}


def rule_for(provider: str) -> MatchRule | None:
    return RULES.get(provider.lower())


def normalise_path(path: str) -> str:
    path = unquote(path or "/")
    if not path.startswith("/"):
        path = "/" + path
    return path.rstrip("/") or "/"


def parse_body(body) -> object:
    """A body as a value: bytes or str holding JSON become that JSON; other text stays a string; empty is None."""
    if body is None:
        return None
    if isinstance(body, (bytes, bytearray)):
        if not body:
            return None
        body = bytes(body).decode("utf-8", errors="replace")
    if isinstance(body, str):
        if not body.strip():
            return None
        try:
            return jsonsafe.loads(body, finite=False)      # a body too deep to match on is matched as text
        except ValueError:
            return body
    return body


def _norm_value(value):
    if isinstance(value, str):
        return unicodedata.normalize("NFC", value).strip()
    if isinstance(value, list):
        items = [_norm_value(v) for v in value]
        if all(isinstance(v, str) for v in items):
            return sorted(items)        # a list of URLs is a set: the order a client sends them in is not the case
        return items
    return value


def _canonical_json(value) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _canonical_query(pairs: list[tuple[str, str]]) -> str:
    return urlencode(sorted(pairs)) if pairs else ""


def identity(provider: str, path: str, query: str, body) -> str:
    """The part of the key after method and path."""
    pairs = parse_qsl(query or "", keep_blank_values=True)
    value = parse_body(body)
    rule = rule_for(provider)
    parts: list[str] = []
    if rule is not None:
        alias = dict(rule.aliases)
        if rule.whole_query and pairs:
            parts.append("?" + _canonical_query(pairs))
        else:
            got = dict(pairs)
            parts += [f"{name}={_canonical_json(_norm_value(got[name]))}" for name in rule.query_fields if name in got]
        if isinstance(value, dict):
            for name in rule.body_fields:
                if name in value:
                    field_value = value[name]
                    if name in rule.url_lists and isinstance(field_value, str):
                        field_value = [field_value]      # tavily-python's extract("https://…") sends one string
                    parts.append(f"{alias.get(name, name)}={_canonical_json(_norm_value(field_value))}")
        if parts or rule.whole_query:
            return " ".join(parts)
    if pairs:
        parts.append("?" + _canonical_query(pairs))
    if value is not None:
        parts.append("body=" + _canonical_json(value))
    return " ".join(parts)


def request_key(provider: str, method: str, path: str, query: str = "", body=None) -> str:
    ident = identity(provider, path, query, body)
    head = f"{method.upper()} {normalise_path(path)}"
    return f"{head} {ident}" if ident else head
