"""Jina: the reader r.jina.ai (one URL per call) and search s.jina.ai (research §4.7).

- reader: GET `https://r.jina.ai/<url>` or POST `{url}`; JSON `{code, status, data{title, description, url,
  content, publishedTime?, usage{tokens}}}`, or the plain-text form (`Title:`, `URL Source:`,
  `Published Time:`, `Markdown Content:`) when JSON was not asked for.
- search: GET `https://s.jina.ai/?q=…` (or `/<query>`) or POST `{q}`; `data[{title, url, description,
  content, date?, usage{tokens}}]`, or the text form with `[n] Title:` lines.
- cost: tokens (`data.usage.tokens`; search: `meta.usage.tokens`, else the sum over results).
- errors: `{data: null, code, name, status, message, readableMessage}`; 402 InsufficientBalanceError is the
  budget; 422 means the *target* failed ("Target URL returned error 404"), so that URL is failed.
- partial: not applicable (one URL per reader call).
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

from scanner.providers.base import NormalisedResponse
from scanner.providers.common import (
    BUDGET,
    TARGET,
    Call,
    Context,
    Verdict,
    error_message,
    failed_call,
    number,
    search_response,
    urls_response,
    verdict_for_status,
)

NAME = "jina"
HOSTS = frozenset({"r.jina.ai", "s.jina.ai"})

_TEXT_FIELD = re.compile(r"^(?:\[(\d+)\]\s*)?(Title|URL Source|Description|Published Time|Date):[ \t]*(.*)$", re.M)


def describe(ctx: Context) -> Call:
    ex = ctx.ex
    req = ex.json_request
    if ex.bare:
        data = ex.json_body.get("data")
        return Call("search" if isinstance(data, list) else "reader")
    rest = ex.url.split(ex.host, 1)[1] if ex.url and ex.host in ex.url.lower() else ""
    rest = rest[1:] if rest.startswith("/") else rest
    if ex.host == "s.jina.ai":
        query = req.get("q") if isinstance(req.get("q"), str) else ex.params.get("q")
        if query is None:
            path = urlsplit(ex.url or "").path.strip("/")
            query = unquote(path) or None
        return Call("search", query)
    target = req.get("url") if isinstance(req.get("url"), str) else (rest or None)
    if not req.get("url"):
        ctx.endpoint = "/<url>"  # the path is the target URL itself
    return Call("reader", None, [target] if target else None)


def error_verdict(ctx: Context, default: Verdict) -> Verdict:
    name = str(ctx.ex.json_body.get("name") or "")
    if ctx.ex.status == 422:
        return TARGET
    if "InsufficientBalance" in name or "Quota" in name:
        return BUDGET
    return default


def read_ok(ctx: Context, call: Call) -> NormalisedResponse:
    ex = ctx.ex
    body = ex.json_body
    code = number(body.get("code"))
    if body.get("data") is None and isinstance(code, int) and code >= 400:
        # A bare error body (or one relayed with a 200): its own `code` is the HTTP status.
        verdict = TARGET if code == 422 else error_verdict(ctx, verdict_for_status(code))
        if "InsufficientBalance" in str(body.get("name") or ""):
            verdict = BUDGET
        return failed_call(ctx, call, verdict, error_message(body))
    if isinstance(ex.body, str):
        return _read_text(ctx, call, ex.body)
    data = body.get("data")
    if call.op == "search":
        items = data if isinstance(data, list) else []
        results = ctx.results(items, _result)
        return search_response(ctx, call, results, cost_units=_search_tokens(body, items))
    page = data if isinstance(data, dict) else {}
    asked = call.requested[0] if call.requested else None
    result = _result(ctx, 1, page, source_url=asked) if page else None
    usage = page.get("usage") if isinstance(page.get("usage"), dict) else {}
    tokens = number(usage.get("tokens"))
    return urls_response(
        ctx, call, [result] if result else [], [], cost_units={"tokens": tokens} if tokens is not None else {}
    )


def _result(ctx: Context, rank: int, item: dict, source_url: str | None = None):
    published = item.get("publishedTime") or item.get("date")
    return ctx.result(rank, item.get("url"), item.get("title"), item.get("description"), published, source_url)


def _search_tokens(body: dict, items: list) -> dict:
    meta = body.get("meta") if isinstance(body.get("meta"), dict) else {}
    usage = meta.get("usage") if isinstance(meta.get("usage"), dict) else {}
    tokens = number(usage.get("tokens"))
    if tokens is None:
        per_item = [
            number(i["usage"].get("tokens")) for i in items if isinstance(i, dict) and isinstance(i.get("usage"), dict)
        ]
        if per_item and all(t is not None for t in per_item):
            tokens = sum(per_item)
    return {"tokens": tokens} if tokens is not None else {}


def _read_text(ctx: Context, call: Call, text: str) -> NormalisedResponse:
    """The plain-text answer: `Title: …` / `URL Source: …` lines (search: prefixed `[n] `)."""
    head = text.split("Markdown Content:", 1)[0]
    entries: dict[int, dict] = {}
    for m in _TEXT_FIELD.finditer(head):
        index = int(m[1]) if m[1] else 1
        key = {"Title": "title", "URL Source": "url", "Description": "description",
               "Published Time": "publishedTime", "Date": "date"}[m[2]]
        entries.setdefault(index, {}).setdefault(key, m[3].strip())
    items = [entries[i] for i in sorted(entries)]
    if call.op == "search":
        return search_response(ctx, call, ctx.results(items, _result))
    asked = call.requested[0] if call.requested else None
    page = _result(ctx, 1, items[0], source_url=asked) if items else None
    return urls_response(ctx, call, [page] if page else [], [])
