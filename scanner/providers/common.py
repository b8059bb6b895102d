"""What every adapter does the same way: classify a status, read `retry-after`, build results, and reconcile
the URLs asked for with the URLs returned."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Iterable
from urllib.parse import urlsplit, urlunsplit

from scanner.providers.base import NormalisedResponse, NormalisedResult
from scanner.providers.dates import parse_published
from scanner.providers.envelope import Exchange, host_of, iso_utc, parse_instant


@dataclass(frozen=True)
class Verdict:
    outcome: str
    error_class: str | None = None
    retryable: bool | None = None
    fallback_cause: str | None = None


OK = Verdict("ok", None, None, None)
NO_RESULT = Verdict("ok", "no_result", False, "no_result")
RATE_LIMITED = Verdict("rate_limited", "rate_limit", True, "error")
BUDGET = Verdict("error", "budget", False, "budget")
SERVER = Verdict("server_error", "server", True, "error")
TIMEOUT = Verdict("timeout", "timeout", True, "error")
AUTH = Verdict("error", "auth", False, "error")
# The provider worked but the pages it was asked for failed (a 404 target, a crawl timeout): said with an
# HTTP error (Jina 422), or inside a 200 whose per-URL signals fail every requested page.
TARGET = Verdict("error", "target", False, "error")
ALL_TARGETS_FAILED = Verdict("ok", "target", False, "error")
CLIENT = Verdict("error", "client", False, "error")
NETWORK = Verdict("error", "network", True, "error")


def verdict_for_status(status: int | None) -> Verdict:
    """The default reading of an HTTP status; adapters override where a provider says more (budget codes)."""
    if status is None:
        return OK
    if 200 <= status < 300:
        return OK
    if status == 429:
        return RATE_LIMITED
    if status == 402:
        return BUDGET
    if status == 408:  # the provider's own time limit on the call (Firecrawl search); a 504 is a server error
        return TIMEOUT
    if status >= 500:
        return SERVER
    if status in (401, 403):
        return AUTH
    return CLIENT


def verdict_for_transport(error: dict) -> Verdict:
    kind = str(error.get("type") or "").lower()
    return TIMEOUT if "timeout" in kind or "timed_out" in kind else NETWORK


class Context:
    """One exchange being read: its capture instant and the problems noticed on the way."""

    def __init__(self, provider: str, ex: Exchange, captured_at: datetime | None):
        self.provider = provider
        self.ex = ex
        self.captured_at = captured_at
        self.problems: list[str] = list(ex.problems)
        self.retry_after_hint: float | None = None  # a provider-specific wait, used when there is no retry-after
        self.endpoint: str | None = None if ex.bare else endpoint_of(ex.url)

    def result(
        self,
        rank: int,
        url: Any,
        title: Any = None,
        snippet: Any = None,
        published: Any = None,
        source_url: Any = None,
    ) -> NormalisedResult | None:
        if not isinstance(url, str) or not url.strip():
            self.problems.append(f"result #{rank} has no URL; skipped")
            return None
        url = url.strip()
        host = host_of(url)
        if not host:
            self.problems.append(f"result #{rank} URL {url!r} has no host")
        parsed = parse_published(published, self.captured_at)
        if parsed.problem:
            self.problems.append(f"result #{rank}: {parsed.problem}")
        return NormalisedResult(
            rank=rank,
            url=url,
            host=host,
            title=_text(title),
            snippet=_text(snippet),
            published_at=parsed.value,
            published_at_raw=published if isinstance(published, str) and published.strip() else None,
            published_at_precision=parsed.precision,
            source_url=source_url if isinstance(source_url, str) and source_url.strip() != url else None,
        )

    def results(self, items: Iterable[dict], make) -> list[NormalisedResult]:
        """Results from provider items; `make(ctx, rank, item)` returns a NormalisedResult or None."""
        out: list[NormalisedResult] = []
        for i, item in enumerate(items, start=1):
            if not isinstance(item, dict):
                self.problems.append(f"result #{i} is not an object; skipped")
                continue
            r = make(self, i, item)
            if r is not None:
                out.append(r)
        return out

    def response(self, op: str, verdict: Verdict, **fields) -> NormalisedResponse:
        ex = self.ex
        retry_after = retry_after_seconds(ex.headers, self.problems)
        if retry_after is None:
            retry_after = self.retry_after_hint
        fields.setdefault("query", None)
        return NormalisedResponse(
            provider=self.provider,
            op=op,
            endpoint=self.endpoint,
            status=ex.status,
            outcome=verdict.outcome,
            error_class=verdict.error_class,
            retryable=verdict.retryable,
            retry_after_s=retry_after,
            fallback_cause=verdict.fallback_cause,
            captured_at=iso_utc(self.captured_at) if self.captured_at else None,
            problems=self.problems,
            **fields,
        )


def endpoint_of(url: str | None) -> str | None:
    if not url:
        return None
    return urlsplit(url).path or "/"


def retry_after_seconds(headers: dict[str, str], problems: list[str]) -> float | None:
    """`retry-after` in seconds: a number, or an HTTP date against the response's own `date` header."""
    value = headers.get("retry-after")
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        if seconds < 0:
            problems.append(f"retry-after {value!r} is negative")
            return None
        return seconds
    when = parse_instant(text)
    if when is None:
        problems.append(f"retry-after {value!r} is neither seconds nor an HTTP date")
        return None
    now = parse_instant(headers.get("date", ""))
    if now is None:
        problems.append(f"retry-after {value!r} is a date but the response has no date header to count from")
        return None
    return max(0.0, (when - now).total_seconds())


def url_key(url: str) -> str:
    """Comparison key for matching requested and returned URLs: scheme and host lower-cased, default port,
    fragment and one trailing slash dropped. Query strings stay as written."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return url.strip()
    scheme = parts.scheme.lower()
    netloc = parts.netloc.lower()
    for default in (":80", ":443"):
        if netloc.endswith(default) and {":80": "http", ":443": "https"}[default] == scheme:
            netloc = netloc[: -len(default)]
    path = parts.path[:-1] if parts.path.endswith("/") else parts.path
    return urlunsplit((scheme, netloc, path, parts.query, ""))


@dataclass
class Reconciled:
    requested_urls: list[str] | None
    failed_urls: list[str]
    missing_urls: list[str]
    dropped_urls: list[str]
    partial: bool


def reconcile(
    ctx: Context,
    requested: list[str] | None,
    returned: Iterable[tuple[str, ...]],
    failed: Iterable[str],
    extra_partial: bool = False,
) -> Reconciled:
    """missing = requested − returned (failed ones and silent drops), in request order; partial when the
    provider reported a failure, dropped a URL silently, or gave another signal of its own (`extra_partial`).
    Each returned item is the tuple of URLs it may be known by (the final URL and the one asked for)."""
    failed_list = _unique(u for u in failed if isinstance(u, str) and u)
    returned = [tuple(u for u in names if isinstance(u, str) and u) for names in returned]
    if requested is None:
        return Reconciled(None, failed_list, [], [], bool(failed_list) or extra_partial)
    returned_keys = {url_key(u) for names in returned for u in names}
    failed_keys = {url_key(u) for u in failed_list}
    missing = [u for u in requested if url_key(u) not in returned_keys]
    dropped = [u for u in missing if url_key(u) not in failed_keys]
    for u in dropped:
        ctx.problems.append(f"silent drop: {u} was requested but is neither in the results nor reported failed")
    requested_keys = {url_key(u) for u in requested}
    for names in returned:
        if names and not any(url_key(u) in requested_keys for u in names):
            ctx.problems.append(f"returned URL {names[0]} was not requested")
    return Reconciled(requested, failed_list, missing, dropped, bool(missing) or bool(failed_list) or extra_partial)


def requested_list(value: Any, ctx: Context, what: str) -> list[str] | None:
    """A request's URL list (`urls`, `ids`…); a single string counts as a list of one."""
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        urls = [u for u in value if isinstance(u, str)]
        if len(urls) != len(value):
            ctx.problems.append(f"request {what} holds {len(value) - len(urls)} non-string entries")
        return urls
    ctx.problems.append(f"request {what} is not a list")
    return None


def error_message(body: Any) -> str | None:
    """The human message of an error body in the shapes providers use: {"error": "…"}, {"error": {…}},
    {"detail": {"error": "…"}}, {"detail": "…"}, {"message": "…"}, or a short text body."""
    if isinstance(body, dict):
        for key in ("error", "detail", "message", "readableMessage"):
            value = body.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
            if isinstance(value, dict):
                inner = error_message(value)
                if inner:
                    return inner
        return None
    if isinstance(body, str) and body.strip():
        text = " ".join(body.split())
        return text if len(text) <= 300 else text[:297] + "…"
    return None


def number(value: Any) -> int | float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value


def _text(value: Any) -> str | None:
    if isinstance(value, str):
        value = value.strip()
        return value or None
    return None


def _unique(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for u in items:
        if u not in seen:
            seen.add(u)
            out.append(u)
    return out


@dataclass
class Call:
    """What was asked: the operation, the query (search) and the URLs (extract, contents, batch, reader)."""

    op: str
    query: str | None = None
    requested: list[str] | None = None


def failed_call(
    ctx: Context,
    call: Call,
    verdict: Verdict,
    message: str | None = None,
    failed: list[str] | None = None,
    **fields,
) -> NormalisedResponse:
    """A call that returned nothing: every requested URL is missing; a target failure names them as failed."""
    requested = call.requested
    if failed is None:
        failed = list(requested or []) if verdict.error_class == "target" else []
    return ctx.response(
        call.op,
        verdict,
        query=call.query,
        error_message=message,
        requested_urls=requested,
        failed_urls=failed,
        missing_urls=list(requested or []),
        partial=bool(requested),
        **fields,
    )


def search_response(ctx: Context, call: Call, results: list[NormalisedResult], **fields) -> NormalisedResponse:
    """A search that answered: no results is the `no_result` fallback, not an error."""
    return ctx.response(call.op, OK if results else NO_RESULT, query=call.query, results=results, **fields)


def urls_response(
    ctx: Context,
    call: Call,
    results: list[NormalisedResult],
    failed: Iterable[str],
    extra_partial: bool = False,
    **fields,
) -> NormalisedResponse:
    """An extract-like call that answered: reconcile what was asked with what came back. When nothing came
    back and the provider reported failures, the call is a target failure (fallback `error`)."""
    returned = [(r.url, r.source_url) if r.source_url else (r.url,) for r in results]
    rec = reconcile(ctx, call.requested, returned, failed, extra_partial)
    if results:
        verdict = OK
    elif rec.failed_urls:
        verdict = ALL_TARGETS_FAILED
    else:
        verdict = NO_RESULT
    return ctx.response(
        call.op,
        verdict,
        query=call.query,
        results=results,
        requested_urls=rec.requested_urls,
        failed_urls=rec.failed_urls,
        missing_urls=rec.missing_urls,
        dropped_urls=rec.dropped_urls,
        partial=rec.partial,
        **fields,
    )
