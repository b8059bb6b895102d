"""Brave Search API: GET /res/v1/web/search (and /res/v1/news/search) (research §4.3).

- results: `web.results[{url,title,description,age?,page_age?}]` (news: top-level `results[]`); a search with no
  hits omits `web`.
- dates: `page_age` is an ISO date-time and is preferred; otherwise `age`, a display string ("3 days ago",
  "March 3, 2025"), resolved against the capture time.
- cost: nothing per response (billing is per request; the monthly quota is in the headers).
- 429: `error.code` RATE_LIMITED covers both the per-second rate and the monthly quota; `error.meta`
  (`rate_current`/`rate_limit`, `quota_current`/`quota_limit`), a QUOTA code, or a monthly
  `X-RateLimit-Remaining` of 0 tell the budget apart. Without `retry-after`, the wait is the matching window
  of `X-RateLimit-Reset` (per second first, per month last).
"""

from __future__ import annotations

from scanner.providers.base import NormalisedResponse
from scanner.providers.common import (
    BUDGET,
    CLIENT,
    RATE_LIMITED,
    Call,
    Context,
    Verdict,
    error_message,
    failed_call,
    number,
    search_response,
)

NAME = "brave"
HOSTS = frozenset({"api.search.brave.com"})


def describe(ctx: Context) -> Call:
    ex = ctx.ex
    query = ex.params.get("q")
    if query is None:
        q = ex.json_body.get("query")
        query = q.get("original") if isinstance(q, dict) and isinstance(q.get("original"), str) else None
    return Call("search", query, None)


def error_verdict(ctx: Context, default: Verdict) -> Verdict:
    if ctx.ex.status != 429:
        return default
    error = ctx.ex.json_body.get("error")
    error = error if isinstance(error, dict) else {}
    meta = error.get("meta") if isinstance(error.get("meta"), dict) else {}
    code = str(error.get("code") or "").upper()
    quota_limit, quota_current = number(meta.get("quota_limit")), number(meta.get("quota_current"))
    remaining = _windows(ctx.ex.headers.get("x-ratelimit-remaining"))
    resets = _windows(ctx.ex.headers.get("x-ratelimit-reset"))
    budget = (
        "QUOTA" in code
        or (quota_limit is not None and quota_current is not None and quota_current >= quota_limit)
        or (len(remaining) > 1 and remaining[-1] == 0)
    )
    if resets:
        ctx.retry_after_hint = resets[-1] if budget else resets[0]
    return BUDGET if budget else RATE_LIMITED


def read_ok(ctx: Context, call: Call) -> NormalisedResponse:
    body = ctx.ex.json_body
    if body.get("type") == "ErrorResponse" or (not body and ctx.ex.body is not None):
        return failed_call(ctx, call, CLIENT, error_message(ctx.ex.body) or "response is not a search result")
    web = body.get("web")
    if isinstance(web, dict):
        items = web.get("results") if isinstance(web.get("results"), list) else []
    elif isinstance(body.get("results"), list):  # /news/search
        items = body["results"]
    else:
        items = []
    results = ctx.results(items, _result)
    return search_response(ctx, call, results)


def _result(ctx: Context, rank: int, item: dict):
    page_age = item.get("page_age")
    published = page_age if isinstance(page_age, str) and page_age.strip() else item.get("age")
    return ctx.result(rank, item.get("url"), item.get("title"), item.get("description"), published)


def _windows(value: str | None) -> list[float]:
    """Brave's per-window header values: "1, 15000" → [1.0, 15000.0]."""
    if not value:
        return []
    out = []
    for part in value.split(","):
        try:
            out.append(float(part.strip()))
        except ValueError:
            return []
    return out
