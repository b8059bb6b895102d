"""Provider adapters: a recorded provider response (fixture file) → a `NormalisedResponse`.

    read_fixture(path_or_bytes, provider=None, captured_at=None) -> NormalisedResponse
    read_response(provider, envelope, captured_at=None) -> NormalisedResponse
    detect_provider(envelope) -> str | None

The provider comes from the argument, else from the request's host, else from the fixture tree folder the file
sits in (`<root>/<provider>/fetch/…`: a direct page fetch has the page's own host). The capture instant, which
relative dates ("3 days ago") resolve against, comes from the argument, else the envelope's `recorded_at`,
else the response's `date` header.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from types import ModuleType
from typing import Any

from scanner import jsonsafe
from scanner.exchanges import RecordingError, is_yaml_name, parse_bytes
from scanner.providers import brave, exa, fetch, firecrawl, jina, serpapi, serper, tavily
from scanner.providers.base import AdapterError, NormalisedResponse, NormalisedResult
from scanner.providers.common import (
    Context,
    error_message,
    failed_call,
    verdict_for_status,
    verdict_for_transport,
)
from scanner.providers.envelope import Exchange, exchanges_of, host_of, parse_instant

__all__ = [
    "PROVIDERS",
    "AdapterError",
    "NormalisedResponse",
    "NormalisedResult",
    "detect_provider",
    "read_fixture",
    "read_response",
]

PROVIDERS: dict[str, ModuleType] = {
    m.NAME: m for m in (tavily, exa, brave, serpapi, serper, firecrawl, jina)
}

_BY_HOST = {host: name for name, m in PROVIDERS.items() for host in m.HOSTS}


def detect_provider(envelope: Any) -> str | None:
    """The provider whose API host the (first) recorded request went to, or None."""
    for ex in exchanges_of(envelope):
        if ex.url:
            return _BY_HOST.get(host_of(ex.url))
    return None


def read_fixture(
    path_or_bytes: str | Path | bytes,
    provider: str | None = None,
    captured_at: str | datetime | None = None,
) -> NormalisedResponse:
    if isinstance(path_or_bytes, (bytes, bytearray)):
        label, data = "<bytes>", bytes(path_or_bytes)
    else:
        label = str(path_or_bytes)
        try:
            data = Path(path_or_bytes).read_bytes()
        except OSError as exc:
            raise AdapterError(label, f"cannot read: {exc.strerror or exc}") from None
    if is_yaml_name(label):                     # a VCR.py / pytest-recording cassette
        try:
            value = parse_bytes(data, label).source.value
        except RecordingError as exc:
            raise AdapterError(label, str(exc)) from None
    else:
        try:
            value = jsonsafe.loads(data.decode("utf-8-sig"), finite=False)   # bounded depth: adapters walk it
        except UnicodeDecodeError:
            raise AdapterError(label, "not UTF-8 text") from None
        except ValueError as exc:
            raise AdapterError(label, f"not JSON: {exc}") from None
    if provider is None and not isinstance(path_or_bytes, (bytes, bytearray)):
        provider = detect_provider(value) or _provider_from_folder(Path(path_or_bytes))
    return _read(label, provider, value, captured_at)


def read_response(provider: str | None, envelope: Any, captured_at: str | datetime | None = None) -> NormalisedResponse:
    return _read("<response>", provider, envelope, captured_at)


def _read(label: str, provider: str | None, value: Any, captured_at: str | datetime | None) -> NormalisedResponse:
    provider = provider or detect_provider(value)
    if provider is None:
        raise AdapterError(label, "cannot tell the provider: the request host is not a known API; pass provider=")
    module = PROVIDERS.get(provider)
    if module is None:
        raise AdapterError(label, f"unknown provider {provider!r} (known: {', '.join(sorted(PROVIDERS))})")
    exchanges = exchanges_of(value)
    if not exchanges[0].bare and not any(ex.url for ex in exchanges):
        raise AdapterError(label, "recorded request has no URL")
    for ex in exchanges:
        owner = _BY_HOST.get(ex.host)
        if owner is not None and owner != provider:
            raise AdapterError(label, f"the request went to {owner}'s API ({ex.host}), not {provider}'s")
    if len(exchanges) > 1 and not hasattr(module, "read_sequence"):
        raise AdapterError(label, f"{len(exchanges)} recorded calls; only a {provider} single call can be read")
    contexts = [Context(provider, ex, _capture_instant(label, captured_at, ex)) for ex in exchanges]
    if len(contexts) > 1:
        return module.read_sequence(contexts, label)
    return read_exchange(module, contexts[0])


def read_exchange(module: ModuleType, ctx: Context) -> NormalisedResponse:
    """One call: a direct page fetch, a transport failure, an HTTP error, or the provider's own answer."""
    ex = ctx.ex
    if not ex.bare and ex.host not in module.HOSTS:
        return fetch.read(ctx)
    call = module.describe(ctx)
    if ex.transport_error is not None:
        kind = ex.transport_error.get("type")
        after = ex.transport_error.get("after_ms")
        message = f"{kind} after {after} ms" if after is not None else str(kind)
        return failed_call(ctx, call, verdict_for_transport(ex.transport_error), message)
    if ex.status is not None and not 200 <= ex.status < 300:
        verdict = module.error_verdict(ctx, verdict_for_status(ex.status))
        return failed_call(ctx, call, verdict, error_message(ex.body))
    return module.read_ok(ctx, call)


def _capture_instant(label: str, captured_at: str | datetime | None, ex: Exchange) -> datetime | None:
    if isinstance(captured_at, datetime):
        return parse_instant(captured_at.isoformat())
    if captured_at is not None:
        ts = parse_instant(captured_at)
        if ts is None:
            raise AdapterError(label, f"captured_at {captured_at!r} is not an ISO 8601 or HTTP date")
        return ts
    return parse_instant(ex.recorded_at) or parse_instant(ex.headers.get("date"))


def _provider_from_folder(path: Path) -> str | None:
    """`<provider>/<kind>/file` or `<provider>/file`, as in a fixture tree."""
    for part in path.resolve().parts[-3:-1][::-1]:
        if part in PROVIDERS:
            return part
    return None
