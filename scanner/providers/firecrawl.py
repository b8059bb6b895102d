"""Firecrawl v2 (v1 paths read the same way): search, scrape and batch scrape (research §4.6).

- POST /v2/search: `{success, data{web[], news[], images[]}, creditsUsed, warning?}`; web results first, then
  news, ranked in that order. (v1: `data` is the list of web results.)
- POST /v2/scrape: `{success, data{markdown, metadata{title, description, sourceURL (asked), url (final),
  statusCode, error?, <meta tags>}}}`; a target answering ≥ 400, or `metadata.error`, is a failed URL.
- batch, three calls that a fixture may hold alone or together (a JSON list of envelopes, or a HAR file):
  POST /v2/batch/scrape → `{id, invalidURLs[]}`; GET /v2/batch/scrape/{id} → `{status, total, completed,
  creditsUsed, next?, data[]}`; GET /v2/batch/scrape/{id}/errors → `{errors[{url,error}], robotsBlocked[]}`.
  Partial when there are invalid URLs, `completed < total`, a status other than completed, more pages (`next`),
  errors or robots-blocked URLs — even with `status == "completed"`. The requested URLs are only known from
  the submit call; a status call read alone cannot name the missing ones, and says so in `problems`.
- cost: `creditsUsed` (search, batch status); scrape responses carry none.
- errors: 402 budget, 429 rate, 408 timeout (search), 5xx server; bodies `{error}` or `{success:false, code, error}`.
"""

from __future__ import annotations

from scanner.providers.base import AdapterError, NormalisedResponse
from scanner.providers.common import (
    CLIENT,
    OK,
    Call,
    Context,
    Verdict,
    error_message,
    failed_call,
    number,
    reconcile,
    requested_list,
    search_response,
    url_key,
    urls_response,
    verdict_for_status,
    verdict_for_transport,
)

NAME = "firecrawl"
HOSTS = frozenset({"api.firecrawl.dev"})

_PUBLISHED_KEYS = (
    "publishedTime", "published_time", "article:published_time", "og:article:published_time",
    "datePublished", "dc.date", "DC.date", "date",
)


def batch_kind(ctx: Context) -> str | None:
    """submit | status | errors for a batch call, else None."""
    ex = ctx.ex
    if ex.bare:
        body = ex.json_body
        if "invalidURLs" in body or ("id" in body and "url" in body and "data" not in body):
            return "submit"
        if "total" in body and "completed" in body:
            return "status"
        if "robotsBlocked" in body or isinstance(body.get("errors"), list):
            return "errors"
        return None
    parts = ex.path.strip("/").split("/")
    if len(parts) >= 3 and parts[1:3] == ["batch", "scrape"]:
        if len(parts) == 3:
            return "submit"
        return "errors" if parts[-1] == "errors" else "status"
    return None


def describe(ctx: Context) -> Call:
    ex = ctx.ex
    req = ex.json_request
    kind = batch_kind(ctx)
    if kind is not None:
        requested = requested_list(req.get("urls"), ctx, "urls") if kind == "submit" else None
        return Call("batch", None, requested)
    if ex.bare:
        data = ex.json_body.get("data")
        op = "scrape" if isinstance(data, dict) and "metadata" in data and "web" not in data else "search"
    else:
        op = "scrape" if ex.path.rstrip("/").endswith("/scrape") else ex.path.strip("/").split("/")[-1] or "search"
    if op == "scrape":
        return Call("scrape", None, requested_list(req.get("url"), ctx, "url") if "url" in req else None)
    query = req.get("query") if isinstance(req.get("query"), str) else None
    return Call(op, query, None)


def error_verdict(ctx: Context, default: Verdict) -> Verdict:
    return default


def read_ok(ctx: Context, call: Call) -> NormalisedResponse:
    body = ctx.ex.json_body
    if body.get("success") is False:
        return failed_call(ctx, call, CLIENT, error_message(body) or "success: false")
    _warning(ctx, body)
    kind = batch_kind(ctx)
    if kind == "submit":
        return _submit(ctx, call, body)
    if kind is not None:
        return _combine(ctx, call, [ctx], requested=None, invalid=[])
    if call.op == "scrape":
        return _scrape(ctx, call, body)
    data = body.get("data")
    if isinstance(data, dict):
        web = data.get("web") if isinstance(data.get("web"), list) else []
        news = data.get("news") if isinstance(data.get("news"), list) else []
        items = web + news
    else:
        items = data if isinstance(data, list) else []
        if not isinstance(data, list):
            ctx.problems.append("response has no data.web list")
    results = ctx.results(items, _search_result)
    return search_response(ctx, call, results, cost_units=_credits(body))


def read_sequence(contexts: list[Context], label: str) -> NormalisedResponse:
    """A batch recorded as its calls in order: submit, status page(s), errors."""
    kinds = [batch_kind(c) for c in contexts]
    if None in kinds:
        odd = contexts[kinds.index(None)].ex.url or "a bare body"
        raise AdapterError(label, f"{odd} is not a batch scrape call; only a batch can be a sequence of calls")
    submit = next((c for c, k in zip(contexts, kinds) if k == "submit"), None)
    requested, invalid = None, []
    if submit is not None:
        requested = requested_list(submit.ex.json_request.get("urls"), submit, "urls")
        invalid = _invalid(submit.ex.json_body)
    main = next((c for c, k in reversed(list(zip(contexts, kinds))) if k == "status"), contexts[-1])
    for c in contexts:
        if c is not main:
            main.problems.extend(p for p in c.problems if p not in main.problems)
    call = Call("batch", None, requested)
    for c in contexts:
        ex = c.ex
        if ex.transport_error is not None:
            return failed_call(main, call, verdict_for_transport(ex.transport_error), str(ex.transport_error.get("type")))
        if ex.status is not None and not 200 <= ex.status < 300:
            return failed_call(main, call, verdict_for_status(ex.status), error_message(ex.body))
        if ex.json_body.get("success") is False:
            return failed_call(main, call, CLIENT, error_message(ex.body) or "success: false")
        _warning(main, ex.json_body)
    return _combine(main, call, [c for c, k in zip(contexts, kinds) if k != "submit"], requested, invalid)


def _submit(ctx: Context, call: Call, body: dict) -> NormalisedResponse:
    """The submit alone: nothing scraped yet, so only the URLs Firecrawl refused are missing."""
    invalid = _invalid(body)
    ctx.problems.append("batch submit only: the scraped pages are in the status call")
    invalid_keys = {url_key(u) for u in invalid}
    accepted = [(u,) for u in call.requested or [] if url_key(u) not in invalid_keys]
    rec = reconcile(ctx, call.requested, accepted, invalid)
    return ctx.response(
        "batch",
        OK,
        requested_urls=rec.requested_urls,
        failed_urls=rec.failed_urls,
        missing_urls=rec.missing_urls,
        partial=rec.partial,
    )


def _combine(
    ctx: Context, call: Call, parts: list[Context], requested: list[str] | None, invalid: list[str]
) -> NormalisedResponse:
    items: list[dict] = []
    failed: list[str] = list(invalid)
    credits = None
    extra_partial = bool(invalid)
    for part in parts:
        body = part.ex.json_body
        if batch_kind(part) == "errors":
            errors = body.get("errors") if isinstance(body.get("errors"), list) else []
            failed += [e.get("url") for e in errors if isinstance(e, dict) and isinstance(e.get("url"), str)]
            blocked = body.get("robotsBlocked") if isinstance(body.get("robotsBlocked"), list) else []
            failed += [u for u in blocked if isinstance(u, str)]
            extra_partial = extra_partial or bool(errors) or bool(blocked)
            continue
        data = body.get("data") if isinstance(body.get("data"), list) else []
        items += [d for d in data if isinstance(d, dict)]
        credits = number(body.get("creditsUsed")) if number(body.get("creditsUsed")) is not None else credits
        total, completed = number(body.get("total")), number(body.get("completed"))
        status = body.get("status")
        if total is not None and completed is not None and completed < total:
            ctx.problems.append(f"batch completed {completed} of {total}")
            extra_partial = True
        if status not in (None, "completed"):
            ctx.problems.append(f"batch status is {status!r}")
            extra_partial = True
        if body.get("next"):
            ctx.problems.append("batch has more pages (next) that this fixture does not hold")
            extra_partial = True
    results = []
    for item in items:
        meta = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
        source = meta.get("sourceURL") or meta.get("url")
        if _page_failed(meta):
            if isinstance(source, str):
                failed.append(source)
            continue
        r = ctx.result(len(results) + 1, meta.get("url") or source, meta.get("title"), meta.get("description"),
                       _published(meta), source_url=source)
        if r is not None:
            results.append(r)
    if requested is None:
        ctx.problems.append("requested URLs unknown: the batch submit call is not in this fixture")
    return urls_response(ctx, Call("batch", None, requested), results, failed, extra_partial=extra_partial,
                         cost_units={"credits": credits} if credits is not None else {})


def _scrape(ctx: Context, call: Call, body: dict) -> NormalisedResponse:
    data = body.get("data") if isinstance(body.get("data"), dict) else {}
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    source = meta.get("sourceURL") if isinstance(meta.get("sourceURL"), str) else None
    asked = source or (call.requested[0] if call.requested else None)
    if _page_failed(meta):
        reason = meta.get("error") or f"target answered {meta.get('statusCode')}"
        return urls_response(ctx, call, [], [asked] if asked else [], error_message=str(reason),
                             cost_units=_credits(meta))
    result = ctx.result(1, meta.get("url") or asked, meta.get("title"), meta.get("description"), _published(meta),
                        source_url=source)
    return urls_response(ctx, call, [result] if result else [], [], cost_units=_credits(meta))


def _search_result(ctx: Context, rank: int, item: dict):
    meta = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
    published = item.get("date") or _published(meta)
    return ctx.result(rank, item.get("url"), item.get("title"), item.get("description") or item.get("snippet"),
                      published)


def _page_failed(meta: dict) -> bool:
    code = number(meta.get("statusCode"))
    return bool(meta.get("error")) or (code is not None and code >= 400)


def _published(meta: dict):
    for key in _PUBLISHED_KEYS:
        value = meta.get(key)
        if isinstance(value, list):
            value = next((v for v in value if isinstance(v, str) and v.strip()), None)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _invalid(body: dict) -> list[str]:
    value = body.get("invalidURLs")
    return [u for u in value if isinstance(u, str)] if isinstance(value, list) else []


def _credits(body: dict) -> dict:
    credits = number(body.get("creditsUsed"))
    return {"credits": credits} if credits is not None else {}


def _warning(ctx: Context, body: dict) -> None:
    warning = body.get("warning")
    if isinstance(warning, str) and warning.strip():
        ctx.problems.append(f"provider warning: {warning.strip()}")
