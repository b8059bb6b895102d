"""Exa: POST /search and POST /contents (research §4.2).

- results: `results[{id,url,title,publishedDate,text,highlights[],summary}]`; `publishedDate` is Exa's estimate.
- /contents: `statuses[{id, status: success|error, error{tag,httpStatusCode}}]`; per-URL failures come with a
  200. `id` is the URL as requested, `url` the one Exa read.
- cost: `costDollars.total` in USD.
- errors: `{requestId, error, tag}`; 402 (NO_MORE_CREDITS, API_KEY_BUDGET_EXCEEDED) is the budget, 429 the rate.
"""

from __future__ import annotations

from scanner.providers.base import NormalisedResponse
from scanner.providers.common import (
    BUDGET,
    CLIENT,
    Call,
    Context,
    Verdict,
    error_message,
    failed_call,
    number,
    requested_list,
    search_response,
    urls_response,
)

NAME = "exa"
HOSTS = frozenset({"api.exa.ai"})

_BUDGET_TAGS = {"NO_MORE_CREDITS", "API_KEY_BUDGET_EXCEEDED", "INSUFFICIENT_CREDITS"}
_OPS = {"search": "search", "contents": "extract", "findsimilar": "search", "answer": "answer"}


def describe(ctx: Context) -> Call:
    ex = ctx.ex
    req = ex.json_request
    if ex.bare:
        op = "extract" if "statuses" in ex.json_body else "search"
    else:
        last = ex.path.strip("/").split("/")[-1]
        op = _OPS.get(last.lower(), last or "search")
    query = req.get("query") if isinstance(req.get("query"), str) else None
    requested = None
    if op == "extract":
        requested = requested_list(req.get("ids", req.get("urls")), ctx, "ids")
    return Call(op, query, requested)


def error_verdict(ctx: Context, default: Verdict) -> Verdict:
    return BUDGET if ctx.ex.status == 402 or _tag(ctx.ex.json_body) in _BUDGET_TAGS else default


def read_ok(ctx: Context, call: Call) -> NormalisedResponse:
    body = ctx.ex.json_body
    if not isinstance(body.get("results"), list):
        message = error_message(ctx.ex.body)
        if message:
            return failed_call(ctx, call, BUDGET if _tag(body) in _BUDGET_TAGS else CLIENT, message)
        ctx.problems.append("response has no results list")
    items = body.get("results") if isinstance(body.get("results"), list) else []
    results = ctx.results(items, _result)
    fields = {"cost_usd": _cost(ctx, body)}
    if call.op != "extract":
        return search_response(ctx, call, results, **fields)
    statuses = body.get("statuses") if isinstance(body.get("statuses"), list) else []
    if not statuses:
        ctx.problems.append("contents response has no statuses list")
    failed = [
        s["id"] for s in statuses if isinstance(s, dict) and s.get("status") == "error" and isinstance(s.get("id"), str)
    ]
    failed_keys = set(failed)
    for r in results:
        if (r.source_url or r.url) in failed_keys:
            ctx.problems.append(f"{r.source_url or r.url} is both a result and reported failed")
    return urls_response(ctx, call, results, failed, **fields)


def _tag(body: dict) -> str | None:
    tag = body.get("tag")
    return tag if isinstance(tag, str) else None


def _result(ctx: Context, rank: int, item: dict):
    highlights = item.get("highlights")
    snippet = highlights[0] if isinstance(highlights, list) and highlights and isinstance(highlights[0], str) else None
    snippet = snippet or item.get("summary")
    return ctx.result(
        rank,
        item.get("url") or item.get("id"),
        item.get("title"),
        snippet,
        item.get("publishedDate"),
        source_url=item.get("id") if isinstance(item.get("id"), str) and "://" in item["id"] else None,
    )


def _cost(ctx: Context, body: dict) -> float | None:
    cost = body.get("costDollars")
    total = number(cost.get("total")) if isinstance(cost, dict) else None
    if total is None:
        ctx.problems.append("response has no costDollars.total")
        return None
    return float(total)
