"""The scorer's record reader (scanner.score.plain_records) against the model: what its structs take, the
model takes with the same values (types included: 250 read as 250.0, a date-time with pydantic's own tzinfo,
the models' defaults for absent fields); what they refuse, the model words, as without them."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st
from pydantic import ValidationError

from scanner.fixtures.models import Call, Claim, Fallback, Result, RunRecord
from scanner.score.plain_records import PlainRecord, read_record

_FIELDS = {RunRecord: RunRecord.model_fields, Call: Call.model_fields, Result: Result.model_fields,
           Claim: Claim.model_fields, Fallback: Fallback.model_fields}


def same(plain, model, where="record") -> None:
    """Every field of the model, read on both (a list default is an empty tuple on the plain side)."""
    if type(model) in _FIELDS:
        for name in _FIELDS[type(model)]:
            same(getattr(plain, name), getattr(model, name), f"{where}.{name}")
    elif isinstance(model, list):
        assert isinstance(plain, (list, tuple)) and len(plain) == len(model), (where, plain, model)
        for i, (a, b) in enumerate(zip(plain, model)):
            same(a, b, f"{where}[{i}]")
    else:
        assert type(plain) is type(model) and repr(plain) == repr(model), (where, plain, model)


def check(data: bytes) -> bool:
    """True when the schema took the record (and the model agrees, value for value); False when both refuse
    it with the same error; a record only the model takes is read as the model."""
    try:
        model = RunRecord.model_validate_json(data)
    except ValidationError as exc:
        with pytest.raises(ValidationError) as got:
            read_record(data)
        assert str(got.value) == str(exc)
        return False
    got = read_record(data)
    same(got, model)
    return type(got) is PlainRecord


FULL = {"case": "c1", "provider": "p", "outcome": "claims",
        "calls": [{"op": "search", "at": "2026-10-01T10:00:00Z", "latency_ms": 250, "cost_usd": 0.005,
                   "status": "ok", "requested_urls": 10, "returned_urls": 8, "partial": True,
                   "missing": ["https://a/1", "https://a/2"], "call_id": "k", "attempt": 2, "error_class": None,
                   "retryable": False, "request_id": "r-1", "sent": True, "answered": True, "fixture": "x.json"},
                  {"op": "fetch", "at": "2026-10-01T10:00:00.123+02:00", "latency_ms": 12.5}],
        "results": [{"rank": 1, "url": "https://a/1", "published_at": "2026-09-01", "title": "Año"},
                    {"rank": 0, "url": "https://a/2", "published_at": None}],
        "claims": [{"id": "k0", "artifact": "_shared/html/p.html", "span": "offset:1-5", "text": "Dato número",
                    "contradicts_claim_ids": ["k1"], "claim_type": "t"}, {"id": "k1"}],
        "fallback": {"cause": "no_result"}, "extra": {"nested": [1, {"a": None}]}}


def test_an_ordinary_record_is_read_plain_with_the_models_values():
    assert check(json.dumps(FULL).encode())
    assert check(json.dumps(FULL, ensure_ascii=False).encode())
    assert check(json.dumps({"case": "c", "provider": "p", "outcome": "honest_no_data"}).encode())
    rec = read_record(json.dumps(FULL).encode())
    assert rec.calls[0].latency_ms == 250.0 and type(rec.calls[0].latency_ms) is float
    assert rec.calls[1].status == "ok" and list(rec.calls[1].missing) == []
    assert rec.claims[1].text == "" and not rec.claims[1].contradicts_claim_ids and rec.fallback.cause == "no_result"


def _edit(path, value):
    rec = json.loads(json.dumps(FULL))
    *head, last = path
    obj = rec
    for k in head:
        obj = obj[k]
    if value is KeyError:
        del obj[last]
    else:
        obj[last] = value
    return json.dumps(rec).encode()


def _with(extra: bytes) -> bytes:
    """A minimal record with `extra` (JSON members, as bytes) after its required fields."""
    return b'{"case": "c", "provider": "p", "outcome": "claims", ' + extra + b"}"


EDGES = [
    _edit(["calls", 0, "latency_ms"], "250"), _edit(["calls", 0, "latency_ms"], -1),
    _edit(["calls", 0, "latency_ms"], 86_400_001), _edit(["calls", 0, "latency_ms"], 0),
    _edit(["calls", 0, "cost_usd"], True), _edit(["calls", 0, "cost_usd"], 1_000_000),
    _edit(["calls", 0, "partial"], 1), _edit(["calls", 0, "partial"], "true"),
    _edit(["calls", 0, "status"], "weird"), _edit(["calls", 0, "status"], None),
    _edit(["calls", 0, "attempt"], 0), _edit(["calls", 0, "attempt"], "3"),
    _edit(["calls", 0, "returned_urls"], 1_000_001), _edit(["calls", 0, "missing"], None),
    _edit(["calls", 0, "missing"], [1]), _edit(["calls", 0, "at"], "yesterday"),
    _edit(["calls", 0, "at"], 1700000000), _edit(["calls", 0, "at"], None), _edit(["calls", 0, "op"], KeyError),
    _edit(["calls", 0, "sent"], "no"), _edit(["calls", 0], "search"),
    _edit(["results", 0, "rank"], 1.0), _edit(["results", 0, "rank"], 1.5), _edit(["results", 0, "rank"], -1),
    _edit(["results", 0, "rank"], False), _edit(["results", 0, "rank"], 1_000_000), _edit(["results", 0, "url"], None),
    _edit(["results", 0, "published_at"], 20260901), _edit(["results"], None), _edit(["results"], {}),
    _edit(["claims", 0, "text"], None), _edit(["claims", 0, "id"], 7), _edit(["claims", 0, "contradicts_claim_ids"], "k1"),
    _edit(["claims"], []), _edit(["fallback"], {}), _edit(["fallback"], {"cause": "tired"}),
    _edit(["fallback"], "no_result"), _edit(["fallback"], None), _edit(["outcome"], "maybe"), _edit(["case"], KeyError),
    _edit(["provider"], 5),
    b'[1, 2]', b' {"case": "c", "provider": "p", "outcome": "claims"} ',
    b'\xef\xbb\xbf{"case": "c", "provider": "p", "outcome": "claims"}',
    b'{"case": "c", "provider": "p", "outcome": "claims", "calls": [{"op": "s", "latency_ms": NaN}]}',
    b'{"case": "c", "provider": "p", "outcome": "claims", "calls": [{"op": "s", "latency_ms": 1e999}]}',
    b'{"case": "\\ud800", "provider": "p", "outcome": "claims"}',
    b'{"case": "\\ud83d\\ude00", "provider": "p", "outcome": "claims"}',
    b'{"case": "\xed\xa0\x80", "provider": "p", "outcome": "claims"}', b'{"case": "\xff", "provider": "p", "outcome": "claims"}',
    b'{"case": "c", "provider": "p", "outcome": "claims"', b'{"case": "c", "case": "d", "provider": "p", "outcome": "claims"}',
    b'{"case": "c", "provider": "p", "outcome": "claims", "x": ' + b"[" * 300 + b"]" * 300 + b"}",
    # msgspec alone takes nesting the model's parser refuses, and non-UTF-8 bytes in a field it skips
    *(_with(b'"x": ' + b"[" * n + b"]" * n) for n in (149, 150, 199, 200, 201)),
    *(_with(b'"x": ' + b'{"a": ' * n + b"1" + b"}" * n) for n in (149, 199, 200)),
    _with(b'"x": "\xff"'), _with(b'"x": "\xed\xa0\x80"'), _with(b'"x": "\\udc00"'), _with(b'"x": NaN'),
    _with(b'"x": 1e999'), _with(b'"x": 1,'),
    _with(b'"results": [{"rank": 1, "url": "u", "rank": 2}]'), _with(b'"results": [{"rank": 01, "url": "u"}]'),
    _with(b'"results": [{"rank": -0, "url": "u"}]'), _with(b'"results": [{"rank": 1E2, "url": "u"}]'),
    _with(b'"calls": [{"op": "s", "latency_ms": 86400000.0000000001}]'),
    _with(b'"calls": [{"op": "s", "latency_ms": -0.0}]'),
    *(_with(b'"calls": [{"op": "s", "at": "%s"}]' % at) for at in (
        b"2026-10-01T10:00:00.1234567Z", b"2026-10-01 10:00:00", b"2026-10-01", b"2026-10-01T25:00:00Z", b"")),
    b'{"case":"c","provider":"p","outcome":"claims"}\x00', b'\t{"case":"c","provider":"p","outcome":"claims"}\r\n',
]


@pytest.mark.parametrize("data", EDGES)
def test_edges_agree_with_the_model(data):
    check(data)


_PIECES = [b'"', b"\\", b"\\u", b"\\ud800", b"[", b"{", b"}", b",", b":", b"1e400", b"-", b".", b"\xc3", b"\xff", b" ",
           b"null"]


@settings(max_examples=400, deadline=None)
@given(cut=st.integers(0, 10_000), insert=st.binary(max_size=3) | st.sampled_from(_PIECES), drop=st.integers(0, 3))
def test_damaged_records_agree_with_the_model(cut, insert, drop):
    """Bytes inserted into and removed from a full record anywhere: what the fast path takes, the model takes
    with the same values; what it refuses, the model words."""
    data = json.dumps(FULL).encode()
    at = cut % (len(data) + 1)
    check(data[:at] + insert + data[at + drop:])


def test_a_bad_record_gets_the_models_error():
    data = _edit(["results", 0, "rank"], "x")
    with pytest.raises(ValidationError) as got:
        read_record(data)
    assert got.value.title == "RunRecord" and "results.0.rank" in str(got.value)


_scalar = st.one_of(st.none(), st.booleans(), st.integers(-3, 2_000_000), st.floats(), st.text(max_size=5),
                    st.sampled_from(["ok", "error", "claims", "no_result", "2026-10-01T10:00:00Z", "2026-10-01",
                                     "250", "true", "1e3"]))
_value = st.one_of(_scalar, st.lists(_scalar, max_size=3), st.dictionaries(st.sampled_from(["cause", "a"]), _scalar))


def _obj(keys):
    return st.dictionaries(st.sampled_from(keys), _value, max_size=len(keys))


@settings(max_examples=300, deadline=None)
@given(top=_obj(["case", "provider", "outcome", "fallback", "extra"]),
       calls=st.lists(_obj(list(Call.model_fields) + ["fixture"]), max_size=2),
       results=st.lists(_obj(list(Result.model_fields)), max_size=2),
       claims=st.lists(_obj(list(Claim.model_fields)), max_size=2),
       cause=st.sampled_from([None, "no_result", "budget", "x"]))
def test_generated_records_agree_with_the_model(top, calls, results, claims, cause):
    rec = {"case": "c", "provider": "p", "outcome": "claims", **top, "calls": calls, "results": results,
           "claims": claims}
    if cause is not None:
        rec["fallback"] = {"cause": cause}
    check(json.dumps(rec).encode())
    ok = {**rec, "case": "c", "provider": "p", "outcome": "claims"}     # the required fields right: deeper checks
    for c in ok["calls"]:
        c.setdefault("op", "search")
    for r in ok["results"]:
        r.setdefault("rank", 1)
        r.setdefault("url", "u")
    for c in ok["claims"]:
        c.setdefault("id", "k")
    check(json.dumps(ok).encode())


def test_the_structs_have_the_models_fields():
    """A field added to a model must be added to its struct (or the scorer would not see it)."""
    from scanner.score import plain_records as pr

    for model, struct in ((RunRecord, pr.PlainRecord), (Call, pr.PlainCall), (Result, pr.PlainResult),
                          (Claim, pr.PlainClaim), (Fallback, pr.PlainFallback)):
        assert set(struct.__struct_fields__) == set(model.model_fields), model
