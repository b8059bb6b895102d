"""A provider's recorded exchanges, loaded and checked once at start-up.

Every file under `<root>/<provider>/` must be a recording `scanner.exchanges` reads (README, "Fixture formats":
our envelope, HAR, a VCR.py cassette, nock's recorder output); a file of several exchanges (a cassette, a HAR)
is several fixtures, `<path>#<index>`. A recorded 429, 5xx or timeout is a *scenario* fixture: it is served
only when a scenario asks for it (its request usually repeats a real case's query, so matching it by key would
shadow the real answer). Every
other exchange is an *answer*, found by its key (`scanner.serve.matching`). A file that cannot be served,
or two answers the server could not tell apart, stop the start-up with the file named (`ServeError`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from scanner.exchanges import BodyError, Exchange, RecordingError, parse_bytes
from scanner.fixtures.tree import GOLDEN_DIR, SHARED_DIR, unsafe_reason
from scanner.serve.matching import normalise_path, parse_body, request_key

RECORDING_EXT = (".json", ".har", ".yaml", ".yml")
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
        """The scenario name: the path inside the provider folder without its extension (`errors/429`), and
        `#<index>` for one exchange of a file that holds several (`errors/cassette#1`)."""
        path, _, index = self.path.partition("#")
        inner = path.split("/", 1)[1] if "/" in path else path
        for ext in RECORDING_EXT:
            if inner.endswith(ext):
                inner = inner[:-len(ext)]
                break
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
    """The fixtures of one file: one per recorded exchange (ServeError naming the file for anything that
    cannot be served)."""
    reason = unsafe_reason(root, rel)
    if reason:
        _fail(rel, f"not served: {reason}")
    try:
        data = (root / rel).read_bytes()
    except OSError as exc:
        _fail(rel, f"cannot read: {exc.strerror or exc}")
    try:
        parsed = parse_bytes(data, rel)
    except RecordingError as exc:
        _fail(rel, f"not a recorded HTTP exchange: {exc}")
    recording = parsed.recording
    if recording is None or not recording.exchanges:
        _fail(rel, 'not a recorded HTTP exchange: expected our envelope (an object with "request" and '
                   '"response"), a HAR file, a VCR.py cassette or nock recorder output')
    several = len(recording.exchanges) > 1
    return [_fixture(rel, f"{rel}#{ex.index}" if several else rel, provider, ex, several)
            for ex in recording.exchanges]


def load_fixture(root: Path, rel: str, provider: str) -> Fixture:
    """The one fixture of a file that records one exchange."""
    fixtures = load_fixtures(root, rel, provider)
    if len(fixtures) != 1:
        _fail(rel, f"records {len(fixtures)} exchanges, not one")
    return fixtures[0]


_URL_FIELD = {"envelope": "url", "har": "url", "vcr": "uri", "nock": "scope and path"}


def _where(ex: Exchange, several: bool) -> str:
    """How a message names the exchange (`log.entries[2]` in a HAR, `interactions[0]` in a cassette), as a
    prefix of a field name: "" for a lone envelope, whose fields are `request.url`, `response.status`…"""
    if ex.format == "har":
        return f"log.entries[{ex.index}]."
    if ex.format == "vcr":
        return f"interactions[{ex.index}]."
    return f"[{ex.index}]." if several else ""


def _fixture(rel: str, path: str, provider: str, ex: Exchange, several: bool) -> Fixture:
    at = _where(ex, several)
    request = ex.request
    if request is None:
        _fail(rel, f"{at}request must be an object")
    method, url = request.method, request.url
    if not isinstance(method, str) or not method.strip():
        _fail(rel, f"{at}request.method is missing")
    if not isinstance(url, str) or not url.strip():
        _fail(rel, f"{at}request.{_URL_FIELD[ex.format]} is missing")
    _check_headers(rel, f"{at}request", request)
    if ex.problems:
        _fail(rel, f"{at}{ex.problems[0]}" if at else ex.problems[0])
    parts = urlsplit(url)
    route = normalise_path(parts.path)
    try:
        req_body = parse_body(request.body.content())
    except BodyError as exc:
        _fail(rel, f"{at}request body: {exc}")
    key = request_key(provider, method, parts.path, parts.query, req_body)
    common = dict(path=path, provider=provider, method=method.upper(), host=(parts.hostname or "").lower(),
                  route=route, key=key)
    response = ex.response
    if response is None:
        error = ex.error
        if ex.format != "envelope":
            _fail(rel, f"{at.rstrip('.')}: no response was recorded: only our envelope's timeout "
                       '({"response": null, "error": {"type": "timeout"}}) is served without one')
        if not isinstance(error, dict) or error.get("type") != "timeout":
            _fail(rel, f'{at}response is null but error.type is not "timeout"')
        after = error.get("after_ms")
        if after is not None and (not isinstance(after, (int, float)) or isinstance(after, bool) or after < 0):
            _fail(rel, f"{at}error.after_ms must be a non-negative number")
        return Fixture(kind="timeout", status=None, after_ms=None if after is None else int(after), **common)
    status = response.status
    if not isinstance(status, int) or isinstance(status, bool) or not 100 <= status <= 599:
        _fail(rel, f"{at}response.status must be an HTTP status code (got {status!r})")
    _check_headers(rel, f"{at}response", response)
    headers = tuple((h.name, h.value) for h in response.headers if h.name.lower() not in DROPPED_RESPONSE_HEADERS)
    try:
        body = response.body.content() or b""
    except BodyError as exc:
        _fail(rel, f"{at}response.body is {exc}" if "valid" in str(exc) else f"{at}response body: {exc}")
    kind = "429" if status == 429 else "5xx" if status >= 500 else "answer"
    requested = _requested_urls(req_body)
    missing: tuple[str, ...] = ()
    if requested and kind == "answer":
        returned = _returned_urls(parse_body(body))
        if returned is None:        # no list of pages in the answer (a Firecrawl batch submit: they come later)
            requested = []
        else:
            missing = tuple(u for u in requested if u not in returned)
    return Fixture(kind=kind, status=status, headers=headers, body=body, requested_urls=tuple(requested),
                   missing=missing, **common)


def _check_headers(rel: str, where: str, msg) -> None:
    problem = msg.headers_problem
    if problem:
        _fail(rel, f"{where}.headers {problem}" if problem.startswith("must") else f"{where}.headers: {problem}")


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
        if fixture.kind == "answer":
            same = catalog.answers.setdefault(fixture.key, [])
            clash = next((f for f in same if f.host == fixture.host), None)
            if clash is not None:
                _fail(fixture.path, f"records the same request as {clash.path} ({fixture.key[:120]}): "
                           "the server could not tell them apart")
            same.append(fixture)
        else:
            catalog.scenarios[fixture.name] = fixture
            catalog.scenarios.setdefault(fixture.name.rsplit("/", 1)[-1], fixture)   # "503-empty", "cassette#1"
            catalog.scenarios.setdefault(fixture.kind, fixture)          # class alias: the first in path order
            if fixture.status is not None:
                catalog.scenarios.setdefault(str(fixture.status), fixture)   # "502", "503"
    return catalog
