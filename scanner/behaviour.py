"""Behaviour checks of fixture classes 4–7 (spec §2): did an adapter, driven against `centinela serve`,
behave as the spec asks?

They read the server's request log (one JSON object per request, `scanner.serve.server`) and, where the
question is what the adapter *said* rather than what it sent, the run's call records with the behaviour
fields (`request_id`, `status`, `retryable`, `partial`, `missing`; README "Run records: behaviour fields").

- `retry_after`: every retry after a 429 came at least `retry-after` later, and the delays vary (jitter).
- `breaker`: consecutive 5xx stop at the breaker's threshold instead of retrying forever.
- `timeout`: the client closed the connection the timeout fixture held open, sent nothing more on it, and
  sent no further request for the aborted call (a second cancel sends nothing).
- `partial`: a call served a partial answer says `partial: true` with exactly the URLs the answer lacked.
- `error_classes`: a call served a 429 or 5xx says `rate_limited` / `server_error` with `retryable: true`;
  one served the timeout fixture says `timeout`.

Requests of one call: those carrying the same `X-Centinela-Call` header, else those with the same match key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from pathlib import Path

from scanner import jsonsafe

PASS, FAIL, NA = "pass", "fail", "n/a"
HELD = ("held", "client_closed")
DEFAULT_JITTER_MIN_MS = 50.0    # above the scheduling noise of a loaded machine (measured up to 18 ms)
TOLERANCE_MS = 1.0     # server timestamps: a retry measured 1 ms short of retry-after is clock noise


class BehaviourError(Exception):
    """The log cannot be read (exit code 2): one line naming the file and line."""


@dataclass
class CheckResult:
    name: str
    provider: str | None
    status: str
    details: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"name": self.name, "provider": self.provider, "status": self.status, "details": self.details}


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

def check_retry_after(log, provider: str | None = None, *, jitter_min_ms: float = DEFAULT_JITTER_MIN_MS) -> CheckResult:
    """Retries after a 429 waited at least its retry-after, and jitter: the retries at the same attempt of
    different calls spread by at least jitter_min_ms beyond retry-after. (Exponential backoff alone makes a
    call's successive delays differ; only jitter makes different calls' delays differ, which is its point.)"""
    reqs = _requests(log, provider)
    result = CheckResult("retry_after", provider, NA)
    limited = [r for r in reqs if r.code == 429]
    if not limited:
        result.details.append("no 429 was served")
        return result
    by_attempt: dict[int, list[tuple[str, float]]] = {}
    failed = False
    judged = 0
    for r in limited:
        same_call = [n for n in reqs if n.call == r.call]
        retry = next((n for n in same_call if n.t0 > r.t0 and n.id != r.id), None)
        if retry is None:
            result.details.append(f"{r.id}: 429 not retried")
            continue
        judged += 1
        ra = _retry_after_seconds(r)
        wait = retry.t0 - r.t1
        if ra is not None and wait * 1000 + TOLERANCE_MS < ra * 1000:
            failed = True
            result.details.append(f"{retry.id} retried {r.id}'s 429 after {_ms(wait)}; retry-after was {_ms(ra)}")
            continue
        attempt = 1 + _failed_before(same_call, retry)
        by_attempt.setdefault(attempt, []).append((retry.id, wait - (ra or 0.0)))
        result.details.append(f"{retry.id} (attempt {attempt}) retried {r.id}'s 429 after {_ms(wait)}"
                              + (f", retry-after {_ms(ra)}" if ra is not None else ", no retry-after"))
    groups = {a: [x for _, x in xs] for a, xs in by_attempt.items() if len(xs) >= 2}
    if groups:
        attempt, values = max(groups.items(), key=lambda kv: max(kv[1]) - min(kv[1]))
        spread = max(values) - min(values)
        if spread * 1000 < jitter_min_ms:
            failed = True
            result.details.append(f"no jitter: {len(values)} calls retried at attempt {attempt} after retry-after + "
                                  f"{_ms(min(values))} to {_ms(max(values))}, a spread of {_ms(spread)} "
                                  f"< {jitter_min_ms:g} ms (the widest of any attempt)")
        else:
            result.details.append(f"jitter: {len(values)} calls retried at attempt {attempt} spread over "
                                  f"{_ms(spread)} beyond retry-after")
    elif by_attempt:
        result.details.append("jitter not judged: it needs two calls that retried a 429 at the same attempt")
    if failed:
        result.status = FAIL
    elif judged:
        result.status = PASS
    return result


def check_breaker(log, threshold: int = 5, provider: str | None = None, *,
                  half_open_after_ms: float | None = None) -> CheckResult:
    """No run of consecutive 5xx goes past `threshold`. With `half_open_after_ms`, a request that follows
    the run's last failure by at least that long is a half-open probe and does not count."""
    reqs = _requests(log, provider)
    result = CheckResult("breaker", provider, NA)
    if not any(r.code is not None and r.code >= 500 for r in reqs):
        result.details.append("no 5xx was served")
        return result
    runs: list[list[_Req]] = []
    run: list[_Req] = []
    counted = 0
    probes = 0
    over: list[tuple[list[_Req], _Req]] = []
    for r in reqs:
        if r.code is None or r.code == 429:
            continue                   # a held connection or a rate limit neither opens nor closes a breaker
        if r.code < 500:
            if run:
                runs.append(run)
            run, counted = [], 0
            continue
        if counted >= threshold:
            if half_open_after_ms is not None and (r.t0 - run[-1].t1) * 1000 >= half_open_after_ms:
                probes += 1
            else:
                over.append((run, r))
                counted += 1
        else:
            counted += 1
        run.append(r)
    if run:
        runs.append(run)
    longest = max(runs, key=len)
    if over:
        result.status = FAIL
        reported = set()
        for run_of, extra in over:
            if id(run_of) in reported:
                continue
            reported.add(id(run_of))
            extras = [x.id for r, x in over if r is run_of]
            result.details.append(f"{len(run_of)} consecutive 5xx ({run_of[0].id} … {run_of[-1].id}): "
                                  f"{', '.join(extras)} sent after the threshold of {threshold}")
    else:
        result.status = PASS
        result.details.append(f"longest run of consecutive 5xx: {len(longest)} ({longest[0].id} … {longest[-1].id}), "
                              f"threshold {threshold}" + (f"; {probes} half-open probe(s)" if probes else ""))
    return result


def check_timeout(log, provider: str | None = None) -> CheckResult:
    """The client aborted every connection the timeout fixture held, and sent nothing more for that call."""
    reqs = _requests(log, provider)
    result = CheckResult("timeout", provider, NA)
    held = [r for r in reqs if r.held and not r.raw.get("on_held_connection")]
    if not held:
        result.details.append("the timeout fixture held no connection")
        return result
    failed = False
    for r in reqs:
        if r.raw.get("on_held_connection"):
            failed = True
            result.details.append(f"{r.id}: sent on connection {r.raw.get('connection')}, which never answered")
    for h in held:
        if h.status == "held":
            failed = True
            result.details.append(f"{h.id}: the connection was still open when the server stopped "
                                  f"({_ms(h.t1 - h.t0)} after the request): the client never aborted it")
        later = [r for r in reqs if r.call == h.call and r.t0 > h.t0 and r.id != h.id
                 and not r.raw.get("on_held_connection")]
        if later:
            failed = True
            result.details.append(f"{', '.join(r.id for r in later)}: sent for the call of {h.id} after it "
                                  f"timed out (aborted at {_ms(h.t1 - h.t0)})")
        elif h.status == "client_closed":
            result.details.append(f"{h.id}: aborted by the client after {_ms(h.t1 - h.t0)}; "
                                  "nothing more sent for its call")
    result.status = FAIL if failed else PASS
    return result


def _correlated(log, call_records, provider: str | None) -> list[tuple[_Req, dict]]:
    by_id = {r.id: r for r in _requests(log, provider)}
    return [(by_id[c["request_id"]], c) for c in _calls(call_records) if c.get("request_id") in by_id]


def check_partial(log, call_records=None, provider: str | None = None) -> CheckResult:
    """Calls served a partial answer say partial: true with exactly the missing URLs; full answers do not."""
    result = CheckResult("partial", provider, NA)
    served = [r for r in _requests(log, provider) if r.raw.get("requested_urls")]
    if not served:
        result.details.append("no answer to a list of URLs was served")
        return result
    if call_records is None:
        result.details.append("needs the run's call records (with request_id) to compare")
        return result
    pairs = [(r, c) for r, c in _correlated(log, call_records, provider) if r.raw.get("requested_urls")]
    if not pairs:
        result.details.append("no call record carries the request_id of a served answer to a list of URLs")
        return result
    failed = False
    for r, call in pairs:
        lacked = list(r.raw.get("missing") or [])
        said = list(call.get("missing") or [])
        if lacked:
            if call.get("partial") is not True:
                failed = True
                result.details.append(f"{r.id}: the answer lacked {len(lacked)} of {r.raw['requested_urls']} URLs "
                                      f"but the call says partial: {json.dumps(call.get('partial'))}")
            elif set(said) != set(lacked):
                failed = True
                extra, absent = sorted(set(said) - set(lacked)), sorted(set(lacked) - set(said))
                result.details.append(f"{r.id}: missing[] differs from what the answer lacked"
                                      + (f"; not lacking: {', '.join(extra)}" if extra else "")
                                      + (f"; not listed: {', '.join(absent)}" if absent else ""))
            else:
                result.details.append(f"{r.id}: partial: true with the {len(lacked)} missing URLs")
        elif call.get("partial") is True or said:
            failed = True
            result.details.append(f"{r.id}: the answer returned every URL but the call says partial with "
                                  f"{len(said)} missing")
    unmatched = {r.id for r in served} - {r.id for r, _ in pairs}
    if unmatched:
        result.details.append(f"not compared (no call record with their request_id): {', '.join(sorted(unmatched))}")
    result.status = FAIL if failed else PASS
    return result


def check_error_classes(log, call_records=None, provider: str | None = None) -> CheckResult:
    """Calls served a 429 or 5xx are rate_limited / server_error and retryable; a held one is a timeout."""
    result = CheckResult("error_classes", provider, NA)
    if call_records is None:
        result.details.append("needs the run's call records (with request_id) to compare")
        return result
    failed = False
    judged = 0
    for r, call in _correlated(log, call_records, provider):
        if r.code == 429:
            want = ("rate_limited", True)
        elif r.code is not None and r.code >= 500:
            want = ("server_error", True)
        elif r.held:
            want = ("timeout", None)
        else:
            continue
        judged += 1
        status, retryable = call.get("status"), call.get("retryable")
        wrong = []
        if status != want[0]:
            wrong.append(f"status {status!r}, expected {want[0]!r}")
        if want[1] is not None and retryable is not want[1]:
            wrong.append(f"retryable {json.dumps(retryable)}, expected true")
        if wrong:
            failed = True
            result.details.append(f"{r.id} ({r.status}): " + "; ".join(wrong))
    if judged == 0:
        result.details.append("no call record carries the request_id of a served error")
        return result
    result.status = FAIL if failed else PASS
    if not failed:
        result.details.append(f"{judged} call(s) served an error, each classed as expected")
    return result


def behaviour_checks(log_entries, call_records=None, breaker_threshold: int = 5, *,
                     jitter_min_ms: float = DEFAULT_JITTER_MIN_MS,
                     half_open_after_ms: float | None = None) -> list[CheckResult]:
    """Every check for every provider in the log, in a fixed order."""
    providers = sorted({e.get("provider") for e in log_entries if e.get("provider") and not e.get("control")})
    results: list[CheckResult] = []
    for p in providers:
        results += [
            check_retry_after(log_entries, p, jitter_min_ms=jitter_min_ms),
            check_breaker(log_entries, breaker_threshold, p, half_open_after_ms=half_open_after_ms),
            check_timeout(log_entries, p),
            check_partial(log_entries, call_records, p),
            check_error_classes(log_entries, call_records, p),
        ]
    return results
