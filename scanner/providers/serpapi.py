"""SerpAPI: GET /search.json?engine=google&q=… (research §4.5).

- results: `organic_results[{position,link,title,snippet,date?}]`; rank is `position`.
- no hits: HTTP 200, `search_metadata.status` "Success", a top-level `error` ("Google hasn't returned any results
  for this query.") and `search_information.organic_results_state` "Fully empty" → `no_result`, not an error.
- errors: `{"error": "…"}`; 429 is the hourly rate limit *or* "Your account has run out of searches" (budget),
  told apart by the message.
- cost: nothing per response (cached searches are free), so no cost fields.
"""

from __future__ import annotations

import re

from scanner.providers.base import NormalisedResponse
from scanner.providers.common import (
    BUDGET,
    CLIENT,
    NO_RESULT,
    SERVER,
    Call,
    Context,
    Verdict,
    error_message,
    failed_call,
    search_response,
)

NAME = "serpapi"
HOSTS = frozenset({"serpapi.com", "www.serpapi.com"})

_OUT_OF_SEARCHES = re.compile(r"run out of searches|no (?:more )?searches left|searches? (?:quota|limit) (?:reached|exceeded)", re.I)


def describe(ctx: Context) -> Call:
    ex = ctx.ex
    query = ex.params.get("q")
    if query is None:
        params = ex.json_body.get("search_parameters")
        query = params.get("q") if isinstance(params, dict) and isinstance(params.get("q"), str) else None
    return Call("search", query, None)


def error_verdict(ctx: Context, default: Verdict) -> Verdict:
    message = error_message(ctx.ex.body) or ""
    if ctx.ex.status == 429 and _OUT_OF_SEARCHES.search(message):
        return BUDGET
    return default


def read_ok(ctx: Context, call: Call) -> NormalisedResponse:
    body = ctx.ex.json_body
    meta = body.get("search_metadata") if isinstance(body.get("search_metadata"), dict) else {}
    info = body.get("search_information") if isinstance(body.get("search_information"), dict) else {}
    state = str(info.get("organic_results_state") or "")
    status = str(meta.get("status") or "")
    error = body.get("error") if isinstance(body.get("error"), str) else None
    items = body.get("organic_results") if isinstance(body.get("organic_results"), list) else []
    if error and not items:
        if status == "Success" or state.lower() == "fully empty":
            return ctx.response(call.op, NO_RESULT, query=call.query, error_message=error)
        verdict = BUDGET if _OUT_OF_SEARCHES.search(error) else CLIENT
        return failed_call(ctx, call, verdict, error)
    if status in ("Processing", "Queued"):
        return failed_call(ctx, call, SERVER, f"search still {status.lower()}: results not ready")
    if status == "Error":
        return failed_call(ctx, call, CLIENT, error or "search_metadata.status is Error")
    results = ctx.results(items, _result)
    ranks = [r.rank for r in results]
    if len(set(ranks)) != len(ranks):
        ctx.problems.append("organic_results repeat a position")
    return search_response(ctx, call, results, error_message=error)


def _result(ctx: Context, index: int, item: dict):
    position = item.get("position")
    rank = position if isinstance(position, int) and not isinstance(position, bool) and position >= 1 else index
    if rank != position:
        ctx.problems.append(f"organic result #{index} has no usable position; response order used")
    return ctx.result(rank, item.get("link"), item.get("title"), item.get("snippet"), item.get("date"))
