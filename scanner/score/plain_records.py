"""Run records for the scorer without a pydantic model per record, result, claim and call.

`RunRecord.model_validate_json` builds a model instance for every record and every result, claim and call in
it (on `make bench-score`'s run: 50,000 records, 675,000 instances). The scorer only reads their fields, so it
decodes each record with msgspec into structs holding exactly the models' fields, types and constraints:
attribute access, as on the models, for the same values (a latency of 250 is 250.0; a date-time is parsed by
pydantic itself, once per distinct string, so it has pydantic's own tzinfo). Measured on the bench's 50,000
records, the garbage collector paused as the scorer runs: 0.20 s, against 0.71 s for the TypedDict schema this
replaces (pydantic-core building dicts, each wrapped in an object) and about 1.4 s for the models.

msgspec is strict where pydantic is lax: a number written as a string, `1.0` for an integer, `1` for a boolean,
a date-time as a Unix time are refused here. Whatever msgspec refuses (or a date-time pydantic refuses) goes to
the model (`RunRecord.model_validate_json`), which raises the error the report words, exactly as before — or,
should it take the record, gives a model, which the scorer reads the same way. So this path may only ever take
less than the model, never more, and must give the model's values for what it takes; the two things msgspec
alone would take (nesting deeper than the model's parser allows, bytes that are not UTF-8 in a skipped field)
are sent to the model too. Fields the models keep as extras are not kept: the scorer reads none (`pool` and
`verify-run` read extras and keep the models: `read_run(..., plain=False)`). tests/test_score_plain_records.py
checks, on edge cases, generated records and records damaged byte by byte, that what this path takes the model
takes with the same values.
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import lru_cache
from typing import Annotated, Literal, Optional

import msgspec
from msgspec import Meta, Struct
from pydantic import TypeAdapter

from scanner.fixtures.models import (FALLBACK_CAUSES, MAX_CALL_COST_USD, MAX_COUNT, MAX_LATENCY_MS, RunRecord)

_Count = Annotated[int, Meta(ge=0, le=MAX_COUNT)]
_Latency = Annotated[float, Meta(ge=0, le=MAX_LATENCY_MS)]
_Cost = Annotated[float, Meta(ge=0, le=MAX_CALL_COST_USD)]


# gc=False: a decoded record holds only strings, numbers and other structs, never a cycle. A list default is an
# empty tuple: shared, so never mutable, and read like the model's empty list.
class PlainCall(Struct, kw_only=True, gc=False):
    op: str
    at: Optional[str] = None                   # replaced by pydantic's datetime once decoded (`_datetime`)
    latency_ms: Optional[_Latency] = None
    cost_usd: Optional[_Cost] = None
    status: Literal["ok", "rate_limited", "server_error", "timeout", "error"] = "ok"
    requested_urls: Optional[_Count] = None
    returned_urls: Optional[_Count] = None
    partial: Optional[bool] = None
    missing: list[str] = ()
    call_id: Optional[str] = None
    attempt: Optional[Annotated[int, Meta(ge=1, le=MAX_COUNT)]] = None
    error_class: Optional[str] = None
    retryable: Optional[bool] = None
    request_id: Optional[str] = None
    sent: Optional[bool] = None
    answered: Optional[bool] = None


class PlainResult(Struct, kw_only=True, gc=False):
    rank: _Count
    url: str
    published_at: Optional[str] = None


class PlainClaim(Struct, kw_only=True, gc=False):
    id: str
    claim_type: Optional[str] = None
    artifact: Optional[str] = None
    span: Optional[str] = None
    text: str = ""
    contradicts_claim_ids: list[str] = ()


class PlainFallback(Struct, kw_only=True, gc=False):
    cause: Literal[FALLBACK_CAUSES]


class PlainRecord(Struct, kw_only=True, gc=False):
    case: str
    provider: str
    calls: list[PlainCall] = ()
    results: list[PlainResult] = ()
    claims: list[PlainClaim] = ()
    fallback: Optional[PlainFallback] = None
    outcome: Literal["claims", "honest_no_data"]


_DECODE = msgspec.json.Decoder(PlainRecord).decode
_DATETIME = TypeAdapter(Optional[datetime])


class _ModelOnly(Exception):
    """A record this path leaves to the model."""


@lru_cache(maxsize=1 << 12)
def _datetime(text: str) -> datetime:
    """The value the model gives the JSON string `text` as a date-time: pydantic parses it (re-encoded as JSON:
    the very path `model_validate_json` takes); a string it refuses sends the record to the model."""
    try:
        return _DATETIME.validate_json(json.dumps(text))
    except ValueError:
        raise _ModelOnly from None


# msgspec takes two things the model refuses, so they go to the model: nesting deeper than pydantic's JSON parser
# allows (about 200 levels; a record with more than 150 brackets and braces in all, strings included, is left
# to it), and bytes that are not UTF-8 in a field msgspec skips (an extra).
_MAX_OPENINGS = 150


def read_record(data: bytes):
    """A run record from its JSON bytes: a `PlainRecord` (or, for what only the model takes, a `RunRecord`);
    `pydantic.ValidationError` from the model when it is not a run record."""
    try:
        if data.count(b"[") + data.count(b"{") > _MAX_OPENINGS:
            raise _ModelOnly
        if not data.isascii():
            data.decode("utf-8")
        rec = _DECODE(data)
        for call in rec.calls:
            if call.at is not None:
                call.at = _datetime(call.at)
    except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError, _ModelOnly):
        return RunRecord.model_validate_json(data)     # its error (or its value), exactly as without this path
    return rec
