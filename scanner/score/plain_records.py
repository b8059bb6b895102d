"""Run records for the scorer without a pydantic model per record, result, claim and call.

`RunRecord.model_validate_json` builds a model instance for every record and every result, claim and call in
it (on `make bench-score`'s run: 50,000 records, 675,000 instances). The scorer only reads their fields, so it
validates each record with a TypedDict schema holding exactly the models' fields, types and constraints
(pydantic-core, in Rust, builds plain dicts: measured 1.38 s instead of 2.37 s of CPU for the 50,000 records on
a loaded machine) and wraps each dict in an object whose class gives the models' defaults — attribute access,
as on the models, for the same values (the same validators run: a latency of 250 is 250.0, a date-time has
pydantic's own tzinfo).

A record this schema refuses goes to the model (`RunRecord.model_validate_json`), which raises the error the
report words, exactly as before — or, should it take the record, gives a model, which the scorer reads the same
way. Only the scorer reads records this way (`read_run(..., plain=True)`): `pool` and `verify-run` read extra
fields (`model_extra`, `model_dump`) and keep the models. tests/test_score_plain_records.py checks that what
the schema takes, the model takes with the same values.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal, Optional

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError, with_config
from typing_extensions import NotRequired, TypedDict

from scanner.fixtures.models import (FALLBACK_CAUSES, MAX_COUNT, CallCostUsd, Count, LatencyMs, RunRecord)

_OPEN = ConfigDict(extra="allow")      # as the models (`_Open`): extra keys are kept, never validated


@with_config(_OPEN)
class _Call(TypedDict):
    op: str
    at: NotRequired[Optional[datetime]]
    latency_ms: NotRequired[Optional[LatencyMs]]
    cost_usd: NotRequired[Optional[CallCostUsd]]
    status: NotRequired[Literal["ok", "rate_limited", "server_error", "timeout", "error"]]
    requested_urls: NotRequired[Optional[Count]]
    returned_urls: NotRequired[Optional[Count]]
    partial: NotRequired[Optional[bool]]
    missing: NotRequired[list[str]]
    call_id: NotRequired[Optional[str]]
    attempt: NotRequired[Optional[Annotated[int, Field(ge=1, le=MAX_COUNT)]]]
    error_class: NotRequired[Optional[str]]
    retryable: NotRequired[Optional[bool]]
    request_id: NotRequired[Optional[str]]
    sent: NotRequired[Optional[bool]]
    answered: NotRequired[Optional[bool]]


@with_config(_OPEN)
class _Result(TypedDict):
    rank: Annotated[int, Field(ge=0, le=MAX_COUNT)]
    url: str
    published_at: NotRequired[Optional[str]]


@with_config(_OPEN)
class _Claim(TypedDict):
    id: str
    claim_type: NotRequired[Optional[str]]
    artifact: NotRequired[Optional[str]]
    span: NotRequired[Optional[str]]
    text: NotRequired[str]
    contradicts_claim_ids: NotRequired[list[str]]


@with_config(_OPEN)
class _Fallback(TypedDict):
    cause: Literal[FALLBACK_CAUSES]


@with_config(_OPEN)
class _Record(TypedDict):
    case: str
    provider: str
    calls: NotRequired[list[_Call]]
    results: NotRequired[list[_Result]]
    claims: NotRequired[list[_Claim]]
    fallback: NotRequired[Optional[_Fallback]]
    outcome: Literal["claims", "honest_no_data"]


_RECORD = TypeAdapter(_Record)


# The objects the scorer reads: a validated dict as `__dict__`, the models' defaults as class attributes (an
# empty tuple for a list default: shared, so never mutable; read like the model's empty list).
class PlainCall:
    at = latency_ms = cost_usd = requested_urls = returned_urls = partial = None
    call_id = attempt = error_class = retryable = request_id = sent = answered = None
    status = "ok"
    missing = ()


class PlainResult:
    published_at = None


class PlainClaim:
    claim_type = artifact = span = None
    text = ""
    contradicts_claim_ids = ()


class PlainFallback:
    pass


class PlainRecord:
    calls = results = claims = ()
    fallback = None


_new = object.__new__


def _wrap(items: list, cls) -> list:
    out = []
    for d in items:
        o = _new(cls)
        o.__dict__ = d
        out.append(o)
    return out


def read_record(data: bytes):
    """A run record from its JSON bytes: a `PlainRecord` (or, for what only the model takes, a `RunRecord`);
    `pydantic.ValidationError` from the model when it is not a run record."""
    try:
        d = _RECORD.validate_json(data)
    except ValidationError:
        return RunRecord.model_validate_json(data)     # its error (or its value), exactly as without this path
    rec = _new(PlainRecord)
    rec.__dict__ = d
    items = d.get("calls")
    if items:
        d["calls"] = _wrap(items, PlainCall)
    items = d.get("results")
    if items:
        d["results"] = _wrap(items, PlainResult)
    items = d.get("claims")
    if items:
        d["claims"] = _wrap(items, PlainClaim)
    fb = d.get("fallback")
    if fb is not None:
        o = _new(PlainFallback)
        o.__dict__ = fb
        d["fallback"] = o
    return rec
