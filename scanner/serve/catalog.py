"""A provider's recorded exchanges, loaded and checked once at start-up.

Every file under `<root>/<provider>/` must be a recorded HTTP exchange (README, "Fixture formats"). A
recorded 429, 5xx or timeout is a *scenario* fixture: it is served only when a scenario asks for it (its
request usually repeats a real case's query, so matching it by key would shadow the real answer). Every
other exchange is an *answer*, found by its key (`scanner.serve.matching`). A file that cannot be served,
or two answers the server could not tell apart, stop the start-up with the file named (`ServeError`).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from scanner.fixtures.tree import GOLDEN_DIR, SHARED_DIR, unsafe_reason
from scanner.serve.matching import normalise_path, parse_body, request_key

# Recomputed or meaningless once the body is replayed decoded from the envelope.
DROPPED_RESPONSE_HEADERS = frozenset({"content-length", "transfer-encoding", "connection", "keep-alive",
                                      "content-encoding", "trailer", "upgrade"})


class ServeError(Exception):
    """The server cannot start as asked (exit code 2): one line naming the file or option."""


@dataclass(frozen=True)
class Fixture:
    path: str                    # relative to the tree root, POSIX
    provider: str
    method: str
    host: str
    route: str                   # the recorded URL's path, normalised
    key: str
    kind: str                    # "answer", "429", "5xx" or "timeout"
    status: int | None           # None for a timeout
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    requested_urls: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()   # requested URLs the recorded answer does not return
    after_ms: int | None = None

    @property
    def name(self) -> str:
        """The scenario name: the path inside the provider folder without `.json` (`errors/429`), and
        `#<index>` for one exchange of a file that holds several."""
        path, _, index = self.path.partition("#")
        inner = path.split("/", 1)[1] if "/" in path else path
        inner = inner[:-5] if inner.endswith(".json") else inner
        return f"{inner}#{index}" if index else inner


@dataclass
class Catalog:
    provider: str
    answers: dict[str, list[Fixture]] = field(default_factory=dict)   # key → answers (one per host)
    scenarios: dict[str, Fixture] = field(default_factory=dict)       # name or alias → scenario fixture

    @property
    def keys(self) -> list[str]:
        return sorted(self.answers)

    def scenario_names(self) -> list[str]:
        return sorted(self.scenarios)


def _fail(rel: str, problem: str):
    raise ServeError(f"{rel}: {problem}")


def _headers(rel: str, where: str, obj) -> list[tuple[str, str]]:
    if obj is None:
        return []
    out: list[tuple[str, str]] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            values = v if isinstance(v, list) else [v]
            out += [(str(k), str(x)) for x in values]
        return out
    if isinstance(obj, list):
        for item in obj:
            if isinstance(item, dict) and "name" in item:
                out.append((str(item["name"]), str(item.get("value", ""))))
            elif isinstance(item, (list, tuple)) and len(item) == 2:
                out.append((str(item[0]), str(item[1])))
            else:
                _fail(rel, f"{where}.headers: an entry is neither {{name, value}} nor a [name, value] pair")
        return out
    _fail(rel, f"{where}.headers must be an object or a list")


def _body_bytes(rel: str, response: dict) -> bytes:
    body = response.get("body")
    if response.get("body_encoding") not in (None, "base64"):
        _fail(rel, f"response.body_encoding {response.get('body_encoding')!r} is not supported (only base64)")
    if response.get("body_encoding") == "base64":
        if not isinstance(body, str):
            _fail(rel, "response.body must be a string when body_encoding is base64")
        try:
            return base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            _fail(rel, "response.body is not valid base64")
    if body is None:
        return b""
    if isinstance(body, str):
        return body.encode("utf-8")
    return json.dumps(body, ensure_ascii=False).encode("utf-8")


def _returned_urls(value) -> set[str] | None:
    """URLs an answer returns: items of its top-level `results` or `data` list, by `url`, `id` or
    `metadata.sourceURL` (failures are listed elsewhere: Tavily `failed_results`, Exa `statuses`); None when
    it holds neither list."""
    found: set[str] = set()
    if not isinstance(value, dict):
        return found
    if not any(isinstance(value.get(name), list) for name in ("results", "data")):
        return None
    for name in ("results", "data"):
        items = value.get(name)
        if not isinstance(items, list):
            continue
        for item in items:
            if not isinstance(item, dict):
                continue
            for k in ("url", "id"):
                if isinstance(item.get(k), str):
                    found.add(item[k])
            meta = item.get("metadata")
            if isinstance(meta, dict) and isinstance(meta.get("sourceURL"), str):
                found.add(meta["sourceURL"])
    return found


def _requested_urls(body) -> list[str]:
    if not isinstance(body, dict):
        return []
    for name in ("urls", "ids"):
        if isinstance(body.get(name), list):
            return [u for u in body[name] if isinstance(u, str)]
    return []


def load_fixtures(root: Path, rel: str, provider: str) -> list[Fixture]:
    reason = unsafe_reason(root, rel)
    if reason:
        _fail(rel, f"not served: {reason}")
    try:
        raw = json.loads((root / rel).read_bytes().decode("utf-8-sig"))
    except OSError as exc:
        _fail(rel, f"cannot read: {exc.strerror or exc}")
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        _fail(rel, f"not a recorded HTTP exchange: invalid JSON ({exc})")
    if isinstance(raw, list) and raw and all(isinstance(x, dict) and "request" in x and "response" in x for x in raw):
        # A JSON list of envelopes (a Firecrawl batch: submit, status, errors): one fixture per call, `<path>#<i>`.
        return [_fixture(rel, f"{rel}#{i}", provider, ex) for i, ex in enumerate(raw)]
    return [_fixture(rel, rel, provider, raw)]


def _fixture(rel: str, path: str, provider: str, raw) -> Fixture:
    if not isinstance(raw, dict) or "request" not in raw or "response" not in raw:
        _fail(rel, 'not a recorded HTTP exchange: expected an object with "request" and "response"')
    request = raw["request"]
    if not isinstance(request, dict):
        _fail(rel, "request must be an object")
    method = request.get("method")
    url = request.get("url")
    if not isinstance(method, str) or not method.strip():
        _fail(rel, "request.method is missing")
    if not isinstance(url, str) or not url.strip():
        _fail(rel, "request.url is missing")
    _headers(rel, "request", request.get("headers"))
    parts = urlsplit(url)
    route = normalise_path(parts.path)
    req_body = parse_body(request.get("body"))
    key = request_key(provider, method, parts.path, parts.query, req_body)
    common = dict(path=path, provider=provider, method=method.upper(), host=(parts.hostname or "").lower(),
                  route=route, key=key)
    response = raw["response"]
    if response is None:
        error = raw.get("error")
        if not isinstance(error, dict) or error.get("type") != "timeout":
            _fail(rel, 'response is null but error.type is not "timeout"')
        after = error.get("after_ms")
        if after is not None and (not isinstance(after, (int, float)) or isinstance(after, bool) or after < 0):
            _fail(rel, "error.after_ms must be a non-negative number")
        return Fixture(kind="timeout", status=None, after_ms=None if after is None else int(after), **common)
    if not isinstance(response, dict):
        _fail(rel, "response must be an object or null")
    status = response.get("status")
    if not isinstance(status, int) or isinstance(status, bool) or not 100 <= status <= 599:
        _fail(rel, f"response.status must be an HTTP status code (got {status!r})")
    headers = tuple((n, v) for n, v in _headers(rel, "response", response.get("headers"))
                    if n.lower() not in DROPPED_RESPONSE_HEADERS)
    body = _body_bytes(rel, response)
    kind = "429" if status == 429 else "5xx" if status >= 500 else "answer"
    requested = _requested_urls(req_body)
    missing: tuple[str, ...] = ()
    if requested and kind == "answer":
        returned = _returned_urls(parse_body(body) if response.get("body_encoding") is None else None)
        if returned is None:        # no list of pages in the answer (a Firecrawl batch submit: they come later)
            requested = []
        else:
            missing = tuple(u for u in requested if u not in returned)
    return Fixture(kind=kind, status=status, headers=headers, body=body, requested_urls=tuple(requested),
                   missing=missing, **common)


def provider_files(root: Path, provider: str) -> list[str]:
    base = root / provider
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if not name.startswith("."):
                out.append((Path(dirpath) / name).relative_to(root).as_posix())
    return out


def tree_providers(root: Path) -> list[str]:
    if not root.is_dir():
        raise ServeError(f"{root}: not a directory")
    return sorted(c.name for c in root.iterdir()
                  if c.is_dir() and not c.is_symlink() and not c.name.startswith(".")
                  and c.name not in (SHARED_DIR, GOLDEN_DIR))


def load_catalog(root: Path, provider: str) -> Catalog:
    if not (root / provider).is_dir():
        known = ", ".join(tree_providers(root)) or "none"
        raise ServeError(f"{root / provider}: no such provider folder (providers: {known})")
    catalog = Catalog(provider)
    for fixture in (f for rel in provider_files(root, provider) for f in load_fixtures(root, rel, provider)):
        rel = fixture.path
        if fixture.kind == "answer":
            same = catalog.answers.setdefault(fixture.key, [])
            clash = next((f for f in same if f.host == fixture.host), None)
            if clash is not None:
                _fail(rel, f"records the same request as {clash.path} ({fixture.key[:120]}): "
                           "the server could not tell them apart")
            same.append(fixture)
        else:
            catalog.scenarios[fixture.name] = fixture
            catalog.scenarios.setdefault(fixture.name.rsplit("/", 1)[-1], fixture)   # "503-empty"
            catalog.scenarios.setdefault(fixture.kind, fixture)          # class alias: the first in path order
            if fixture.status is not None:
                catalog.scenarios.setdefault(str(fixture.status), fixture)   # "502", "503"
    return catalog
