"""Serper: POST https://google.serper.dev/search (and /news) (research §4.4; no official spec, so read loosely).

- results: `organic[{title,link,snippet,position,date?}]` (/news: `news[]`); rank is `position` when given.
- dates: `date` is Google's display string ("3 days ago", "Mar 3, 2025", "hace 2 días"), resolved against the
  capture time.
- cost: top-level `credits` when present.
- errors: `{"message": "…", "statusCode": N}`; an exhausted balance ("Not enough credits") is the budget.
- a batch request (a list of queries) answers with a list; only one query per fixture is read.
"""

from __future__ import annotations

import re

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
    search_response,
)

NAME = "serper"
HOSTS = frozenset({"google.serper.dev"})

_NO_CREDITS = re.compile(r"not enough credits|insufficient credits|out of credits|no credits", re.I)


def describe(ctx: Context) -> Call:
    ex = ctx.ex
    req = ex.request_body
    if isinstance(req, list):
        ctx.problems.append(f"batch request of {len(req)} queries; only the first is read")
        req = req[0] if req and isinstance(req[0], dict) else {}
    if isinstance(ex.body, list):  # the batch's answer: keep the first query's, as for the request
        ex.body = ex.body[0] if ex.body else {}
    query = req.get("q") if isinstance(req, dict) and isinstance(req.get("q"), str) else ex.params.get("q")
    if query is None:
        params = ex.json_body.get("searchParameters")
        query = params.get("q") if isinstance(params, dict) and isinstance(params.get("q"), str) else None
    return Call("search", query, None)


def error_verdict(ctx: Context, default: Verdict) -> Verdict:
    return BUDGET if _NO_CREDITS.search(error_message(ctx.ex.body) or "") else default


def read_ok(ctx: Context, call: Call) -> NormalisedResponse:
    body = ctx.ex.json_body
    if "organic" not in body and "news" not in body:
        message = error_message(ctx.ex.body)
        if message and "searchParameters" not in body:
            return failed_call(ctx, call, BUDGET if _NO_CREDITS.search(message) else CLIENT, message)
    key = "news" if ctx.ex.path.rstrip("/").endswith("/news") or "organic" not in body else "organic"
    items = body.get(key) if isinstance(body.get(key), list) else []
    results = ctx.results(items, _result)
    credits = number(body.get("credits"))
    return search_response(ctx, call, results, cost_units={"credits": credits} if credits is not None else {})


def _result(ctx: Context, index: int, item: dict):
    position = item.get("position")
    rank = position if isinstance(position, int) and not isinstance(position, bool) and position >= 1 else index
    return ctx.result(rank, item.get("link"), item.get("title"), item.get("snippet"), item.get("date"))
