"""A direct page fetch recorded under a provider's folder (`<provider>/fetch/`): the request went to the page's
own host, not to an API. One URL asked for; one page back, or a failure."""

from __future__ import annotations

import html
import re

from scanner.providers.base import NormalisedResponse
from scanner.providers.common import (
    OK,
    Call,
    Context,
    error_message,
    failed_call,
    verdict_for_status,
    verdict_for_transport,
)

_TITLE = re.compile(r"<title\b[^>]*>(.*?)</title\s*>", re.I | re.S)
_HEAD_LIMIT = 65536  # a <title> belongs in the head; no need to look through a whole page


def read(ctx: Context) -> NormalisedResponse:
    ex = ctx.ex
    call = Call("fetch", None, [ex.url] if ex.url else None)
    if ex.transport_error is not None:
        return failed_call(ctx, call, verdict_for_transport(ex.transport_error), str(ex.transport_error.get("type")))
    verdict = verdict_for_status(ex.status)
    if verdict is not OK:
        message = None if "html" in ex.content_type else error_message(ex.body)
        return failed_call(ctx, call, verdict, message, failed=call.requested)
    title = None
    if isinstance(ex.body, str) and ("html" in ex.content_type or ex.body.lstrip()[:15].lower().startswith(("<!doctype", "<html"))):
        m = _TITLE.search(ex.body[:_HEAD_LIMIT])
        if m:
            title = " ".join(html.unescape(m.group(1)).split()) or None
    result = ctx.result(1, ex.url, title=title)
    return ctx.response(
        "fetch",
        OK,
        results=[result] if result else [],
        requested_urls=call.requested,
        partial=False,
    )
