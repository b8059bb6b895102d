"""Tavily: POST /search and POST /extract (research §4.1).

- search: `results[{url,title,content,score,published_date?}]`; `published_date` only with `topic="news"`.
- extract: `results[{url,raw_content}]` and `failed_results[{url,error}]`; a requested URL in neither list is a
  silent drop.
- cost: `usage.credits` (only with `include_usage`; extract credits are billed per 5 successes, so a 0 is real).
- errors: `{"detail": {"error": "…"}}`; 429 is the rate limit, 432 (plan or key limit) and 433 (pay-as-you-go
  limit) are the budget.
"""

from __future__ import annotations

from scanner.providers.base import NormalisedResponse
from scanner.providers.common import (
    BUDGET,
    Call,
    Context,
    Verdict,
    failed_call,
    number,
    requested_list,
    search_response,
    urls_response,
    CLIENT,
    error_message,
)

NAME = "tavily"
HOSTS = frozenset({"api.tavily.com"})


def describe(ctx: Context) -> Call:
    ex = ctx.ex
    req = ex.json_request
    if ex.bare:
        op = "extract" if "failed_results" in ex.json_body else "search"
    else:
        op = ex.path.strip("/").split("/")[-1] or "search"
    query = req.get("query") if isinstance(req.get("query"), str) else None
    if query is None and isinstance(ex.json_body.get("query"), str):
        query = ex.json_body["query"]
    requested = requested_list(req.get("urls"), ctx, "urls") if op == "extract" else None
    return Call(op, query, requested)


def error_verdict(ctx: Context, default: Verdict) -> Verdict:
    return BUDGET if ctx.ex.status in (432, 433) else default


def read_ok(ctx: Context, call: Call) -> NormalisedResponse:
    body = ctx.ex.json_body
    if not isinstance(body.get("results"), list):
        message = error_message(ctx.ex.body)
        if message:
            return failed_call(ctx, call, CLIENT, message)
        ctx.problems.append("response has no results list")
    items = body.get("results") if isinstance(body.get("results"), list) else []
    cost_units = _credits(ctx, body)
    if call.op == "extract":
        results = ctx.results(items, lambda c, rank, it: c.result(rank, it.get("url"), title=it.get("title")))
        failed_items = body.get("failed_results") if isinstance(body.get("failed_results"), list) else []
        failed = [f.get("url") for f in failed_items if isinstance(f, dict)]
        return urls_response(ctx, call, results, failed, cost_units=cost_units)
    results = ctx.results(
        items,
        lambda c, rank, it: c.result(rank, it.get("url"), it.get("title"), it.get("content"), it.get("published_date")),
    )
    return search_response(ctx, call, results, cost_units=cost_units)


def _credits(ctx: Context, body: dict) -> dict:
    usage = body.get("usage")
    credits = number(usage.get("credits")) if isinstance(usage, dict) else None
    if credits is not None:
        return {"credits": credits}
    if ctx.ex.json_request.get("include_usage") is True:
        ctx.problems.append("include_usage was requested but the response has no usage.credits")
    return {}
