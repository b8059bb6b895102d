"""Behaviour checks of fixture classes 4–7 (spec §2): did an adapter, driven against `centinela serve`,
behave as the spec asks?

The wire is the ground truth: the server's request log (one JSON object per request, `scanner.serve.server`)
says what reached the server and what it answered; the run's call records (README "Run records: behaviour
fields") say what the adapter meant, and are tied to the log by `correlate` (request_id, else call_id,
else time). A record with `sent: false` stands for no request.

- `retry_after`: every retry after a 429 came at least `retry-after` later, and the waits of different
  calls at the same attempt differ (jitter, judged without a unit: `jitter_spread`; n/a below
  JITTER_MIN_SAMPLE retries).
- `breaker`: a breaker with the given policy (`BreakerPolicy`: threshold, open interval, half-open probes)
  replayed over the requests: nothing is sent while it must be open.
- `timeout`: the client closed the connection the timeout fixture held open, sent nothing more on it, and
  sent no further request for the aborted call (a second cancel sends nothing).
- `partial`: a call served a partial answer says `partial: true` with exactly the URLs the answer lacked.
- `error_classes`: a call served a 429 or 5xx says `rate_limited` / `server_error` with `retryable: true`;
  one whose request was held says `timeout`.

Requests of one call: those carrying the same `X-Centinela-Call` header, else those with the same match key.
A failing check's `reason` is its first failure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from pathlib import Path

from scanner import jsonsafe

PASS, FAIL, NA = "pass", "fail", "n/a"
HELD = ("held", "client_closed", "server_stopped")
# Jitter (README "Behaviour checks"): the waits of different calls retried at the same attempt must spread by
# at least this fraction of their median (`jitter_spread`), judged only from this many retries on.
JITTER_MIN_SPREAD = 0.1
JITTER_MIN_SAMPLE = 8
ORDER_KEPT_MAX = 0.8    # concurrent calls that retry in the order they were refused this closely did not jitter
TOLERANCE_MS = 1.0     # server timestamps: a retry measured 1 ms short of retry-after is clock noise


class BehaviourError(Exception):
    """The log cannot be read (exit code 2): one line naming the file and line."""


@dataclass
class CheckResult:
    """`reason`: why the check failed (its first failure), None unless it failed. `details`: the failures
    first, in the order found, then what was seen."""
    name: str
    provider: str | None
    status: str
    details: list[str] = field(default_factory=list)
    reason: str | None = None
    _failures: int = field(default=0, repr=False)

    def fail(self, detail: str) -> None:
        if self.reason is None:
            self.reason = detail
        self.status = FAIL
        self.details.insert(self._failures, detail)
        self._failures += 1

    def to_json(self) -> dict:
        return {"name": self.name, "provider": self.provider, "status": self.status, "reason": self.reason,
                "details": self.details}


# --- input ----------------------------------------------------------------------------------------------

def read_log(path: Path) -> list[dict]:
    entries = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise BehaviourError(f"{path}: cannot read the request log: {getattr(exc, 'strerror', None) or exc}") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = jsonsafe.loads(line)
        except ValueError as exc:
            raise BehaviourError(f"{path}:{number}: not a JSON object: {exc}") from None
        if not isinstance(entry, dict) or not {"id", "ts_start", "ts_end", "status"} <= entry.keys():
            raise BehaviourError(f"{path}:{number}: not a request log entry (needs id, ts_start, ts_end, status)")
        try:
            _time(entry["ts_start"]), _time(entry["ts_end"])
        except (TypeError, ValueError, AttributeError, OverflowError):
            raise BehaviourError(f"{path}:{number}: ts_start and ts_end must be ISO 8601 date-times") from None
        if not all(isinstance(entry.get(k), (str, type(None))) for k in ("provider", "call", "key")):
            raise BehaviourError(f"{path}:{number}: provider, call and key must be strings")
        entries.append(entry)
    return entries


def _time(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


@dataclass
class _Req:
    id: str
    provider: str | None
    call: str | None
    status: object
    t0: float
    t1: float
    raw: dict

    @property
    def code(self) -> int | None:
        return self.status if isinstance(self.status, int) and not isinstance(self.status, bool) else None

    @property
    def held(self) -> bool:
        return self.status in HELD


def _requests(log, provider: str | None) -> list[_Req]:
    out = []
    for e in log:
        if e.get("control") or e.get("provider") is None:
            continue
        if provider is not None and e.get("provider") != provider:
            continue
        out.append(_Req(e["id"], e.get("provider"), e.get("call") or e.get("key"), e.get("status"),
                        _time(e["ts_start"]), _time(e["ts_end"]), e))
    return sorted(out, key=lambda r: (r.t0, r.id))


def _calls(call_records) -> list[dict]:
    """Call records as dicts, from run records (with `calls`), Call models or plain dicts."""
    out: list[dict] = []
    for item in call_records or ():
        data = item.model_dump() if hasattr(item, "model_dump") else dict(item)
        if isinstance(data.get("calls"), list):
            for call in data["calls"]:
                call = call.model_dump() if hasattr(call, "model_dump") else dict(call)
                call.setdefault("provider", data.get("provider"))
                call.setdefault("case", data.get("case"))
                out.append(call)
        else:
            out.append(data)
    return out


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def _retry_after_seconds(req: _Req) -> float | None:
    value = req.raw.get("retry_after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        pass
    try:
        when = parsedate_to_datetime(str(value))
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, when.timestamp() - req.t1)


def _failed_before(same_call: list[_Req], req: _Req) -> int:
    """How many failed requests of the call came right before this one: its attempt number minus one, also
    when calls are told apart only by their key and a later call repeats an earlier one's request."""
    count = 0
    for n in reversed([n for n in same_call if n.t0 < req.t0]):
        if n.code is not None and n.code < 500 and n.code != 429:
            break
        count += 1
    return count


# --- the checks -----------------------------------------------------------------------------------------

def jitter_spread(waits: list[float]) -> float:
    """How much delays differ, without a unit: the range of the waits with the shortest and the longest
    `max(1, n // 10)` left out (the outliers a busy machine adds), over the median wait. 0 when every call
    waited the same; about 0.4 for ten waits uniform over [d, 2d], 0.53 for many.

    `waits` in the order their 429s were served. A client that handles concurrent answers one after the other
    starts each delay a little later than the last (its processing queue), which makes equal delays ramp up
    with that order; that ramp is taken out first (Theil–Sen line of wait over rank; robust to outliers), and
    only a rising one: a queue never makes later calls wait less, and taking out a falling line would take out
    the chance correlation of genuinely random waits with their order (with the line taken either way and the
    spread measured from the shortest wait, ten waits uniform over [d, 2d] came out under 0.1 in 1.7 % of
    draws; this way in 0.07 %)."""
    n = len(waits)
    median = _median(waits)
    if n < 2 or median <= 0:
        return 0.0
    slopes = [(waits[j] - waits[i]) / (j - i) for i in range(n) for j in range(i + 1, n)]
    slope = max(0.0, _median(slopes))
    residuals = sorted(w - slope * k for k, w in enumerate(waits))
    trim = max(1, n // 10) if n >= 5 else 0
    return (residuals[n - 1 - trim] - residuals[trim]) / median


def order_kept(served: list[float], retried: list[float]) -> float:
    """Kendall's tau between the order the 429s were served in and the order their retries came in: 1 when
    every call retried in the order it was refused (equal delays: a busy machine delays them together), about 0
    when jitter shuffled them."""
    n = len(served)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    if not pairs:
        return 1.0
    score = sum((1 if (served[i] - served[j]) * (retried[i] - retried[j]) > 0 else -1) for i, j in pairs)
    return score / len(pairs)


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    n = len(ordered)
    if not n:
        return 0.0
    return ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2


def check_retry_after(log, provider: str | None = None, *, jitter_min_spread: float = JITTER_MIN_SPREAD,
                      jitter_min_sample: int = JITTER_MIN_SAMPLE) -> CheckResult:
    """Every retry after a 429 waited at least its retry-after, and jitter: at each attempt where at least
    `jitter_min_sample` calls retried a 429, their waits spread by at least `jitter_min_spread` (see
    `jitter_spread`). Fewer retries than that: the jitter cannot be judged, and the check is n/a unless a
    retry came too soon. (Exponential backoff alone makes one call's successive delays differ; only jitter
    makes different calls' delays at the same attempt differ, which is its point.)"""
    reqs = _requests(log, provider)
    result = CheckResult("retry_after", provider, NA)
    limited = [r for r in reqs if r.code == 429]
    if not limited:
        result.details.append("no 429 was served")
        return result
    by_attempt: dict[int, list[tuple[str, float]]] = {}
    for r in limited:
        same_call = [n for n in reqs if n.call == r.call]
        retry = next((n for n in same_call if n.t0 > r.t0 and n.id != r.id), None)
        if retry is None:
            result.details.append(f"{r.id}: 429 not retried")
            continue
        ra = _retry_after_seconds(r)
        wait = retry.t0 - r.t1
        # the lower bound counts from when the server began the 429 (ts_start): its ts_end is taken once the
        # write returned, which a busy event loop can make later than the client's receipt
        earliest = retry.t0 - r.t0
        if ra is not None and earliest * 1000 + TOLERANCE_MS < ra * 1000:
            result.fail(f"{retry.id} retried {r.id}'s 429 after {_ms(earliest)}; retry-after was {_ms(ra)}")
            continue
        attempt = 1 + _failed_before(same_call, retry)
        by_attempt.setdefault(attempt, []).append((r.t1, retry.t0, wait))    # `limited` is in serving order
        result.details.append(f"{retry.id} (attempt {attempt}) retried {r.id}'s 429 after {_ms(wait)}"
                              + (f", retry-after {_ms(ra)}" if ra is not None else ", no retry-after"))
    judged = {a: xs for a, xs in sorted(by_attempt.items()) if len(xs) >= jitter_min_sample}
    jitter_ok = None
    for attempt, xs in judged.items():
        waits = [w for _, _, w in xs]
        spread = jitter_spread(waits)
        summary = (f"{len(waits)} calls retried at attempt {attempt} after {_ms(min(waits))} to {_ms(max(waits))}, "
                   f"median {_ms(_median(waits))}: spread {spread:.2f}")
        # concurrent calls (refused within less than the shortest wait of each other): jitter also shuffles
        # the order they retry in; equal delays keep it, however much a busy machine stretched them
        concurrent = max(t for t, _, _ in xs) - min(t for t, _, _ in xs) < min(waits)
        tau = order_kept([t for t, _, _ in xs], [t for _, t, _ in xs]) if concurrent else None
        if spread < jitter_min_spread:
            jitter_ok = False
            result.fail(f"no jitter: {summary} < {jitter_min_spread:g} (the waits of different calls barely differ)")
        elif tau is not None and tau >= ORDER_KEPT_MAX:
            jitter_ok = False
            result.fail(f"no jitter: {summary}, but the {len(waits)} concurrent calls retried in the order they were "
                        f"refused (Kendall tau {tau:.2f} ≥ {ORDER_KEPT_MAX:g}): equal delays stretched by a busy machine")
        else:
            jitter_ok = True if jitter_ok is None else jitter_ok
            result.details.append(f"jitter: {summary} ≥ {jitter_min_spread:g}")
    if not judged and by_attempt:
        largest = max(len(xs) for xs in by_attempt.values())
        result.details.append(f"jitter not judged: {largest} call(s) retried a 429 at the same attempt, "
                              f"{jitter_min_sample} needed")
    if result.status != FAIL:
        result.status = PASS if jitter_ok else NA
    return result


@dataclass(frozen=True)
class BreakerPolicy:
    """What a circuit breaker may send, on the wire (README "Behaviour checks", breaker):
    - `threshold`: after this many consecutive 5xx it must be open: a request sent after the response that
      completed them is a violation — unless it is a half-open probe;
    - `half_open_after_ms`: the open interval (pybreaker `reset_timeout`, opossum `resetTimeout`,
      resilience4j `waitDurationInOpenState`); None: the breaker never half-opens during the test;
    - `half_open_probes`: requests a half-open breaker lets through before it knows their outcome
      (pybreaker and opossum 1; resilience4j `permittedNumberOfCallsInHalfOpenState`). A failed probe opens it
      again (a new open interval); probes that all succeed close it.
    Anything but a 5xx (an answer, a 429, a held request) resets the count and closes a half-open breaker:
    libraries differ on whether a rate limit or a timeout is a failure, and a breaker that counts them opens
    sooner, which is never a violation."""
    threshold: int = 5
    half_open_after_ms: float | None = None
    half_open_probes: int = 1


def _failure(r: _Req) -> bool:
    return r.code is not None and r.code >= 500


def check_breaker(log, threshold: int = 5, provider: str | None = None, *,
                  half_open_after_ms: float | None = None, half_open_probes: int = 1) -> CheckResult:
    """Replays a breaker with this policy over the requests in the order the server read them: nothing may be
    sent while it must be open. Requests already in flight when it opened (sent before the response that
    opened it) are not violations."""
    policy = BreakerPolicy(threshold, half_open_after_ms, half_open_probes)
    reqs = _requests(log, provider)
    result = CheckResult("breaker", provider, NA)
    if not any(r.code is not None and r.code >= 500 for r in reqs):
        result.details.append("no 5xx was served")
        return result
    state, failures, run = "closed", 0, []
    opened: _Req | None = None
    probes: list[_Req] = []
    longest: list[_Req] = []
    n_probes = n_opened = 0
    for r in reqs:
        if state == "open":
            since = (r.t0 - opened.t1) * 1000
            if r.t0 <= opened.t1:
                continue                               # in flight when the breaker opened
            if policy.half_open_after_ms is not None and since + TOLERANCE_MS >= policy.half_open_after_ms:
                state, probes = "half_open", []
            else:
                why = (f"half-open after {policy.half_open_after_ms:g} ms" if policy.half_open_after_ms is not None
                       else "it never half-opens unless --half-open-after-ms is given")
                result.fail(f"{r.id} sent {_ms(since / 1000)} after {opened.id} opened the breaker "
                            f"({len(run)} consecutive failures {run[0].id} … {run[-1].id}, threshold "
                            f"{policy.threshold}; {why})")
                continue
        if state == "half_open":
            settled = [p for p in probes if p.t1 <= r.t0]
            if len(probes) >= policy.half_open_probes and not settled:
                result.fail(f"{r.id} sent while the breaker was half-open: {policy.half_open_probes} probe(s) "
                            f"({', '.join(p.id for p in probes)}) were already in flight")
                continue
            if settled:
                failed = [p for p in settled if _failure(p)]
                if failed:                             # a failed probe opens the breaker again
                    state, opened, run = "open", failed[0], [failed[0]]
                    n_opened += 1
                    since = (r.t0 - opened.t1) * 1000
                    if policy.half_open_after_ms is None or since + TOLERANCE_MS < policy.half_open_after_ms:
                        result.fail(f"{r.id} sent {_ms(since / 1000)} after the half-open probe {opened.id} failed "
                                    f"(half-open after {policy.half_open_after_ms:g} ms)")
                        continue
                    state, probes = "half_open", []
                else:
                    state, failures, run = "closed", 0, []
            if state == "half_open":
                probes.append(r)
                n_probes += 1
                continue
        # closed
        if _failure(r):
            failures += 1
            run.append(r)
            if len(run) > len(longest):
                longest = list(run)
            if failures >= policy.threshold:
                state, opened = "open", r
                n_opened += 1
        else:
            failures, run = 0, []
    if result.status != FAIL:
        result.status = PASS
        result.details.append(
            (f"longest run of consecutive failures: {len(longest)} ({longest[0].id} … {longest[-1].id})"
             if longest else "no consecutive failures") + f", threshold {policy.threshold}"
            + (f"; the breaker opened {n_opened} time(s)" if n_opened else "")
            + (f"; {n_probes} half-open probe(s)" if n_probes else ""))
    return result


def check_timeout(log, provider: str | None = None) -> CheckResult:
    """The client aborted every connection the timeout fixture held, and sent nothing more for that call."""
    reqs = _requests(log, provider)
    result = CheckResult("timeout", provider, NA)
    held = [r for r in reqs if r.held and not r.raw.get("on_held_connection")]
    if not held:
        result.details.append("the timeout fixture held no connection")
        return result
    for r in reqs:
        if r.raw.get("on_held_connection"):
            result.fail(f"{r.id}: sent on connection {r.raw.get('connection')}, which never answered")
    for h in held:
        if h.status in ("held", "server_stopped"):
            result.fail(f"{h.id}: the connection was still open when the server stopped "
                        f"({_ms(h.t1 - h.t0)} after the request): the client never aborted it")
        later = [r for r in reqs if r.call == h.call and r.t0 > h.t0 and r.id != h.id
                 and not r.raw.get("on_held_connection")]
        if later:
            result.fail(f"{', '.join(r.id for r in later)}: sent for the call of {h.id} after it "
                        f"timed out (aborted at {_ms(h.t1 - h.t0)})")
        elif h.status == "client_closed":
            result.details.append(f"{h.id}: aborted by the client after {_ms(h.t1 - h.t0)}; "
                                  "nothing more sent for its call")
    if result.status != FAIL:
        result.status = PASS
    return result


# --- call records against the log ------------------------------------------------------------------------

CORRELATE_WINDOW_S = 2.0    # a record's `at` and the server's ts_start of its request, when nothing else ties them


@dataclass
class Attempt:
    """One call record and the request log entry it stands for (None: never sent, or not found), and how
    they were tied: `request_id`, `call_id` (its n-th attempt is the call's n-th request), `order` (the
    record's `at` and the request's arrival), `not_sent` (the record says `sent: false`) or None."""
    record: dict
    entry: dict | None
    how: str | None


def _record_time(record: dict) -> float | None:
    at = record.get("at")
    if at is None:
        return None
    if isinstance(at, datetime):
        return at.timestamp() if at.tzinfo else at.replace(tzinfo=timezone.utc).timestamp()
    try:
        return _time(str(at))
    except ValueError:
        return None


def _op_matches(record: dict, entry: dict) -> bool:
    op = str(record.get("op") or "").strip("/")
    served = str(entry.get("op") or "").strip("/")
    return not op or not served or served == op or served.endswith("/" + op) or op in served.split("/")


def correlate(log, call_records, provider: str | None = None) -> list[Attempt]:
    """Tie each call record to the request it stands for: by `request_id` (the server's
    x-centinela-request-id), else by `call_id` (the X-Centinela-Call header: the call's attempts in order
    against its requests in the order they arrived), else by time (`at` within CORRELATE_WINDOW_S of the
    request's arrival, same provider and operation, nearest first). A record with `sent: false` stands for no
    request at all."""
    entries = [r.raw for r in _requests(log, provider)]
    by_id = {e["id"]: e for e in entries}
    used: set[str] = set()
    out: list[Attempt] = []
    records = [c for c in _calls(call_records) if provider is None or c.get("provider") in (None, provider)]
    pending: list[Attempt] = []
    for rec in records:
        a = Attempt(rec, None, None)
        out.append(a)
        if rec.get("sent") is False:
            a.how = "not_sent"
        elif rec.get("request_id") in by_id and rec["request_id"] not in used:
            a.entry, a.how = by_id[rec["request_id"]], "request_id"
            used.add(rec["request_id"])
        else:
            pending.append(a)
    # call_id: the records of one call, in attempt order, against that call's requests in arrival order
    by_call: dict[str, list[Attempt]] = {}
    for a in pending:
        if a.record.get("call_id"):
            by_call.setdefault(str(a.record["call_id"]), []).append(a)
    for call_id, attempts in by_call.items():
        requests = [e for e in entries if e.get("call") == call_id and e["id"] not in used]
        attempts.sort(key=lambda a: (a.record.get("attempt") or 0))
        for a, e in zip(attempts, requests):
            a.entry, a.how = e, "call_id"
            used.add(e["id"])
    # time: the nearest unused request of the same operation
    for a in pending:
        if a.entry is not None:
            continue
        t = _record_time(a.record)
        if t is None:
            continue
        best = None
        for e in entries:
            if e["id"] in used or not _op_matches(a.record, e):
                continue
            gap = abs(_time(e["ts_start"]) - t)
            if gap <= CORRELATE_WINDOW_S and (best is None or gap < best[0]):
                best = (gap, e)
        if best is not None:
            a.entry, a.how = best[1], "order"
            used.add(best[1]["id"])
    return out


DEADLINE_FRACTION = 0.5   # a give-up this close to the client's deadline is its deadline, not a misread answer


def _gave_up(record: dict) -> bool:
    return record.get("answered") is False or record.get("status") == "timeout"


def client_deadline_ms(attempts: list[Attempt]) -> float | None:
    """The client's deadline as its own records show it: the shortest latency of the attempts that gave up
    on a request the server held (the timeout fixture never answers: only the client's deadline ends those)."""
    waited = [float(a.record["latency_ms"]) for a in attempts
              if a.entry is not None and a.entry.get("status") in HELD and _gave_up(a.record)
              and isinstance(a.record.get("latency_ms"), (int, float)) and not isinstance(a.record["latency_ms"], bool)]
    return min(waited) if waited else None


def gave_up_at_deadline(attempt: Attempt, deadline_ms: float | None) -> bool:
    """A record saying the client gave up (`answered: false`, or status timeout) on a request the server did
    answer is honest when it waited as long as its deadline (at least DEADLINE_FRACTION of the latency its
    timeouts on held requests show): a busy server answered after the client had stopped waiting. Without a
    timeout on a held request to learn the deadline from, it is not (the record contradicts the wire)."""
    latency = attempt.record.get("latency_ms")
    return (attempt.entry is not None and attempt.entry.get("status") not in HELD and _gave_up(attempt.record)
            and deadline_ms is not None and isinstance(latency, (int, float)) and not isinstance(latency, bool)
            and latency >= DEADLINE_FRACTION * deadline_ms)


def served_outcome(entry: dict) -> str:
    """The contract's call status for what the server answered this request."""
    status = entry.get("status")
    if status in HELD:
        return "timeout"
    if isinstance(status, int) and not isinstance(status, bool):
        if status == 429:
            return "rate_limited"
        if status >= 500:
            return "server_error"
        if status >= 400:
            return "error"
        return "ok"
    return "error"


def check_partial(log, call_records=None, provider: str | None = None) -> CheckResult:
    """Calls served a partial answer say partial: true with exactly the missing URLs; full answers do not."""
    result = CheckResult("partial", provider, NA)
    served = [r for r in _requests(log, provider) if r.raw.get("requested_urls")]
    if not served:
        result.details.append("no answer to a list of URLs was served")
        return result
    if call_records is None:
        result.details.append("needs the run's call records to compare")
        return result
    pairs = [(a.entry, a.record) for a in correlate(log, call_records, provider)
             if a.entry is not None and a.entry.get("requested_urls")]
    if not pairs:
        result.details.append("no call record stands for a served answer to a list of URLs "
                              "(give records request_id, call_id or at)")
        return result
    for entry, call in pairs:
        rid = entry["id"]
        lacked = list(entry.get("missing") or [])
        said = list(call.get("missing") or [])
        if lacked:
            if call.get("partial") is not True:
                result.fail(f"{rid}: the answer lacked {len(lacked)} of {entry['requested_urls']} URLs "
                            f"but the call says partial: {json.dumps(call.get('partial'))}")
            elif set(said) != set(lacked):
                extra, absent = sorted(set(said) - set(lacked)), sorted(set(lacked) - set(said))
                result.fail(f"{rid}: missing[] differs from what the answer lacked"
                            + (f"; not lacking: {', '.join(extra)}" if extra else "")
                            + (f"; not listed: {', '.join(absent)}" if absent else ""))
            else:
                result.details.append(f"{rid}: partial: true with the {len(lacked)} missing URLs")
        elif call.get("partial") is True or said:
            result.fail(f"{rid}: the answer returned every URL but the call says partial with "
                        f"{len(said)} missing")
    unmatched = {r.id for r in served} - {e["id"] for e, _ in pairs}
    if unmatched:
        result.details.append(f"not compared (no call record stands for them): {', '.join(sorted(unmatched))}")
    if result.status != FAIL:
        result.status = PASS
    return result


def check_error_classes(log, call_records=None, provider: str | None = None) -> CheckResult:
    """Calls served a 429 or 5xx are rate_limited / server_error and retryable; a held one is a timeout."""
    result = CheckResult("error_classes", provider, NA)
    if call_records is None:
        result.details.append("needs the run's call records to compare")
        return result
    judged = 0
    attempts = correlate(log, call_records, provider)
    deadline = client_deadline_ms(attempts)
    for a in attempts:
        e, call = a.entry, a.record
        if e is None:
            continue
        want = served_outcome(e)
        if want not in ("rate_limited", "server_error", "timeout"):
            continue
        judged += 1
        if gave_up_at_deadline(a, deadline):
            result.details.append(f"{e['id']} ({e.get('status')}): the client gave up at its deadline "
                                  f"({call['latency_ms']:g} ms; its timeouts on held requests: {deadline:g} ms) "
                                  "before the answer came")
            continue
        status, retryable = call.get("status"), call.get("retryable")
        wrong = []
        if status != want:
            wrong.append(f"status {status!r}, expected {want!r}")
        if want != "timeout" and retryable is not True:
            wrong.append(f"retryable {json.dumps(retryable)}, expected true")
        if wrong:
            result.fail(f"{e['id']} ({e.get('status')}; record tied by {a.how}): " + "; ".join(wrong))
    if judged == 0:
        result.details.append("no call record stands for a served error (give records request_id, call_id or at)")
        return result
    if result.status != FAIL:
        result.status = PASS
        result.details.append(f"{judged} call(s) served an error, each classed as expected")
    return result


def behaviour_checks(log_entries, call_records=None, breaker_threshold: int = 5, *,
                     jitter_min_spread: float = JITTER_MIN_SPREAD, jitter_min_sample: int = JITTER_MIN_SAMPLE,
                     half_open_after_ms: float | None = None, half_open_probes: int = 1) -> list[CheckResult]:
    """Every check for every provider in the log, in a fixed order."""
    providers = sorted({e.get("provider") for e in log_entries if e.get("provider") and not e.get("control")})
    results: list[CheckResult] = []
    for p in providers:
        results += [
            check_retry_after(log_entries, p, jitter_min_spread=jitter_min_spread,
                              jitter_min_sample=jitter_min_sample),
            check_breaker(log_entries, breaker_threshold, p, half_open_after_ms=half_open_after_ms,
                          half_open_probes=half_open_probes),
            check_timeout(log_entries, p),
            check_partial(log_entries, call_records, p),
            check_error_classes(log_entries, call_records, p),
        ]
    return results
