"""`centinela verify-run`: a run's call records against the raw provider fixtures they replayed.

For every call the run recorded, the recorded provider response is found — the call's `fixture` field (a
path relative to the fixture root; an optional extension of the contract's call record), else the one file of
the provider's folder for the call's operation and the record's case — and read by the provider adapter. Then:

- `honest_partial`: a call recorded `partial: false` (or with no flag) whose raw response shows failed or
  silently dropped URLs fails; a `partial: true` call must list exactly the URLs the raw response lacks;
- `results`: every URL of the run's result list must come from the raw response of one of its search calls
  (a URL the provider never returned is fabricated); a different order is noted;
- `cost`: where the provider reports money (Exa `costDollars.total`), the call's `cost_usd` must equal it
  (to 1e-9 USD); where it reports credits, they are shown beside the recorded cost;
- `status`: the call's `status` must be the outcome the raw response shows (a recorded 429 is `rate_limited`).

Given the request log of `centinela serve` (`--log FILE`, or `RUN_DIR/serve-log.jsonl` when present), the
behaviour checks of fixture classes 4–7 run too (`scanner.behaviour`): retries after a 429 honour
`retry-after` with jitter, consecutive 5xx stop at the breaker's threshold, a timed-out call sends nothing
more, partial answers are reported honestly, and served errors are classed as the spec asks.

A check with nothing to look at is `n/a`. Exit 1 when any check fails.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from scanner.score.inputs import read_run, read_tree

OP_FOLDERS = {"search": ("search",), "extract": ("extract",), "contents": ("extract",), "fetch": ("fetch",),
              "scrape": ("fetch", "extract"), "crawl": ("extract", "fetch")}
CHECKS = ("honest_partial", "results", "cost", "status")
COST_TOLERANCE = 1e-9


@dataclass
class ProviderCheck:
    checks: dict[str, str] = field(default_factory=lambda: {c: "n/a" for c in CHECKS})
    findings: list[dict] = field(default_factory=list)
    notes: list[dict] = field(default_factory=list)
    calls_checked: int = 0
    calls_unmatched: int = 0
    calls_not_sent: int = 0       # sent: false — the breaker was open, a budget cap… (nothing to compare)
    calls_unanswered: int = 0     # answered: false and no request of the serve log ties to it

    def mark(self, check: str, ok: bool, **finding) -> None:
        if ok:
            if self.checks[check] == "n/a":
                self.checks[check] = "pass"
        else:
            self.checks[check] = "fail"
            self.findings.append({"check": check, **finding})

    def to_json(self) -> dict:
        return {"checks": self.checks, "calls_checked": self.calls_checked,
                "calls_unmatched": self.calls_unmatched, "calls_not_sent": self.calls_not_sent,
                "calls_unanswered": self.calls_unanswered, "findings": self.findings, "notes": self.notes}


def _fixture_for(call, provider: str, case: str, ti) -> tuple[str | None, str | None]:
    """(fixture path, or None with why)."""
    named = (call.model_extra or {}).get("fixture")
    if named:
        return (named, None) if named in ti.entries else (None, f"fixture {named} is not in the manifest")
    folders = OP_FOLDERS.get(call.op, (call.op,))
    found = [rel for rel in ti.provider_files(provider, case) if rel.count("/") >= 2 and rel.split("/")[1] in folders]
    if len(found) == 1:
        return found[0], None
    if not found:
        return None, f"no recorded {call.op} response for {case} under {provider}/"
    return None, f"{len(found)} recorded {call.op} responses for {case} ({', '.join(found)}); name one in the call's `fixture`"


DEFAULT_LOG = "serve-log.jsonl"


def _flag(call, name: str):
    if name in type(call).model_fields:
        return getattr(call, name)
    return (call.model_extra or {}).get(name)


def _ties(log: list[dict] | None, ri) -> dict:
    """(provider, case, call number) → the `scanner.behaviour.Attempt` that ties the call to the request log."""
    if log is None:
        return {}
    from scanner.behaviour import correlate

    ties = {}
    for provider in sorted(ri.records):
        calls = []
        for case, rec in sorted(ri.records[provider].items()):
            for i, call in enumerate(rec.calls, 1):
                calls.append({**call.model_dump(), "provider": provider, "case": case, "_key": (provider, case, i)})
        for attempt in correlate(log, calls, provider):
            ties[attempt.record["_key"]] = attempt
    return ties


def verify_run(root: Path, run_dir: Path, log_path: Path | None = None, breaker_threshold: int = 5, *,
               half_open_after_ms: float | None = None, half_open_probes: int = 1,
               jitter_min_spread: float | None = None, jitter_min_sample: int | None = None) -> dict:
    from scanner.behaviour import (
        JITTER_MIN_SAMPLE, JITTER_MIN_SPREAD, behaviour_checks, client_deadline_ms, gave_up_at_deadline, read_log,
        served_outcome,
    )
    from scanner.fixtures.tree import unsafe_reason
    from scanner.providers import AdapterError, read_fixture

    ti = read_tree(root)
    ri = read_run(run_dir)
    if log_path is None and (run_dir / DEFAULT_LOG).is_file():
        log_path = run_dir / DEFAULT_LOG
    log = read_log(log_path) if log_path is not None else None
    ties = _ties(log, ri)
    deadlines = {p: client_deadline_ms([a for k, a in ties.items() if k[0] == p]) for p in ri.records}
    entries = ti.entries
    out: dict[str, ProviderCheck] = {}
    cache: dict[str, object] = {}

    def response_of(rel: str):
        if rel not in cache:
            try:
                cache[rel] = read_fixture(root / rel, provider=provider, captured_at=entries[rel].captured_at
                                          if rel in entries else None)
            except (AdapterError, OSError) as exc:
                cache[rel] = exc
        return cache[rel]

    for provider in sorted(ri.records):
        pc = out[provider] = ProviderCheck()
        for case in sorted(ri.records[provider]):
            rec = ri.records[provider][case]
            where = ri.record_paths[(provider, case)]
            raw_urls: set[str] = set()
            raw_order: list[str] = []
            for i, call in enumerate(rec.calls, 1):
                ctx = {"record": where, "call": i, "op": call.op}
                tie = ties.get((provider, case, i))
                if _flag(call, "sent") is False:
                    pc.calls_not_sent += 1
                    pc.mark("status", call.status != "ok", message="the call says it was never sent (sent: false) "
                                                                   "but its status is 'ok'", **ctx)
                    continue
                if tie is not None and tie.entry is not None:
                    entry = tie.entry
                    served = served_outcome(entry)
                    # one call of a file that records several (`<path>#<i>`, a Firecrawl batch): the file is the call
                    rel = (entry.get("fixture") or "").partition("#")[0] or None
                    ctx["request"] = entry["id"]
                    if gave_up_at_deadline(tie, deadlines.get(provider)):
                        # the client stopped waiting at its deadline; the busy server answered later
                        pc.calls_checked += 1
                        pc.calls_unanswered += 1
                        pc.mark("status", call.status in ("timeout", "error"), **ctx,
                                message=f"the call gave up at its deadline but its status is {call.status!r}")
                        continue
                    if served == "timeout" or not rel:
                        pc.calls_checked += 1
                        said_ok = call.status == served or (served == "timeout" and call.status == "error"
                                                            and _flag(call, "answered") is False)
                        pc.mark("status", said_ok, message=f"recorded status {call.status!r}, but the server "
                                f"answered {entry['id']} with {entry.get('status')!r} ({served!r}; tied by {tie.how})",
                                **ctx)
                        continue
                    named = _flag(call, "fixture")
                    if named and named != rel:
                        pc.notes.append({**ctx, "message": f"the call names fixture {named}, but the server "
                                                           f"answered {entry['id']} with {rel}"})
                    how = f"served for {entry['id']} (tied by {tie.how})"
                else:
                    if _flag(call, "answered") is False:
                        pc.calls_unanswered += 1
                        pc.mark("status", call.status in ("timeout", "error"),
                                message=f"the call got no response (answered: false) but its status is "
                                        f"{call.status!r}", **ctx)
                        continue
                    if call.status != "ok" and not _flag(call, "fixture"):
                        pc.calls_unmatched += 1
                        pc.notes.append({**ctx, "message": f"a {call.status} attempt is judged against what the server "
                                         "answered it: " + ("no request of the serve log ties to it (give the "
                                                            "record request_id, call_id or at)" if log is not None
                                                            else "needs the serve log (--log)")})
                        continue
                    rel, why = _fixture_for(call, provider, case, ti)
                    if rel is None:
                        pc.calls_unmatched += 1
                        pc.notes.append({**ctx, "message": why})
                        continue
                    how = "the call's fixture" if _flag(call, "fixture") else "the case's recorded response"
                bad = unsafe_reason(root, rel)
                if bad:
                    pc.mark("results", False, message=f"fixture {rel}: {bad}", **ctx)
                    continue
                resp = response_of(rel)
                if isinstance(resp, Exception):
                    pc.notes.append({**ctx, "message": f"{rel}: {resp}"})
                    pc.calls_unmatched += 1
                    continue
                pc.calls_checked += 1
                _check_call(pc, where, i, call, rel, resp, how, extra=ctx)
                if call.op == "search" and resp.outcome == "ok":
                    for r in resp.results:
                        if r.url not in raw_urls:
                            raw_urls.add(r.url)
                            raw_order.append(r.url)
            if rec.results and any(c.op == "search" for c in rec.calls) and raw_order:
                ours = [r.url.strip() for r in sorted(rec.results, key=lambda r: r.rank)]
                fabricated = [u for u in ours if u not in raw_urls]
                pc.mark("results", not fabricated, record=where,
                        message=f"{len(fabricated)} result URLs the provider never returned: {', '.join(fabricated[:3])}")
                kept = [u for u in raw_order if u in set(ours)]
                if not fabricated and [u for u in ours if u in raw_urls] != kept:
                    pc.notes.append({"record": where, "message": "results are in a different order than the provider's"})
    behaviour = []
    if log is not None:
        records = [rec for p in sorted(ri.records) for _, rec in sorted(ri.records[p].items())]
        behaviour = [r.to_json() for r in behaviour_checks(
            log, records, breaker_threshold, half_open_after_ms=half_open_after_ms, half_open_probes=half_open_probes,
            jitter_min_spread=JITTER_MIN_SPREAD if jitter_min_spread is None else jitter_min_spread,
            jitter_min_sample=JITTER_MIN_SAMPLE if jitter_min_sample is None else jitter_min_sample)]
    ok = all("fail" not in pc.checks.values() for pc in out.values()) and all(b["status"] != "fail" for b in behaviour)
    from scanner.scrub import scrub_data

    # Messages quote run records (URLs, statuses, costs): secrets and personal data out, as in the score report.
    return scrub_data({"ok": ok,
                       "providers": {p: pc.to_json() for p, pc in out.items()},
                       "behaviour": {"log": str(log_path) if log_path else None, "checks": behaviour},
                       "problems": [p.to_json() for p in ti.problems + ri.problems]})


def _check_call(pc: ProviderCheck, where: str, i: int, call, rel: str, resp, how: str = "", extra=None) -> None:
    ctx = {**(extra or {"record": where, "call": i, "op": call.op}), "fixture": rel}
    pc.mark("status", call.status == resp.outcome,
            message=f"recorded status {call.status!r}, but the response is {resp.outcome!r}"
                    + (f" ({how})" if how else ""), **ctx)
    if resp.outcome != "ok":
        return
    if resp.requested_urls:
        raw_missing = sorted(set(resp.missing_urls))
        if raw_missing:
            if call.partial is not True:
                said = "partial: false" if call.partial is False else "no partial flag"
                pc.mark("honest_partial", False, message=f"{said}, but the response lacks {len(raw_missing)} of "
                                                         f"{len(resp.requested_urls)} URLs", **ctx)
            else:
                listed = sorted({m.strip() for m in call.missing})
                pc.mark("honest_partial", listed == raw_missing,
                        message=f"missing[] lists {len(listed)} URLs; the response lacks {len(raw_missing)}"
                                + (f" (not listed: {', '.join(sorted(set(raw_missing) - set(listed))[:3])})"
                                   if set(raw_missing) - set(listed) else ""), **ctx)
        else:
            pc.mark("honest_partial", call.partial is not True,
                    message="partial: true, but the response returned every URL asked for", **ctx)
    if resp.cost_usd is not None:
        recorded = call.cost_usd
        pc.mark("cost", recorded is not None and abs(recorded - resp.cost_usd) <= COST_TOLERANCE,
                message=f"recorded cost {recorded!r} USD, the response reports {resp.cost_usd!r} USD", **ctx)
    elif resp.cost_units:
        pc.notes.append({**ctx, "message": f"the response reports {resp.cost_units}; recorded cost {call.cost_usd!r} USD"})


def format_text(result: dict) -> str:
    """The text of `verify_run`'s (already scrubbed) result; each line made terminal-safe as a whole, so a
    provider name or record path with a line break or an escape stays on its one line, inert."""
    from scanner.terminal import safe

    lines = []
    for p, d in result["providers"].items():
        checks = ", ".join(f"{k} {v}" for k, v in d["checks"].items())
        counts = f"{d['calls_checked']} calls checked, {d['calls_unmatched']} unmatched"
        counts += f", {d['calls_not_sent']} not sent" if d.get("calls_not_sent") else ""
        counts += f", {d['calls_unanswered']} unanswered" if d.get("calls_unanswered") else ""
        lines.append(safe(f"{p}: {checks} ({counts})"))
        for f in d["findings"]:
            lines.append(safe(f"  fail {f['check']}: {f.get('record')}" + (f" call {f['call']}" if f.get("call") else "")
                              + f": {f['message']}"))
    for b in result.get("behaviour", {}).get("checks", []):
        reason = b.get("reason") or (b["details"][0] if b["details"] else None)
        lines.append(safe(f"behaviour {b['provider']}: {b['name']} {b['status']}"
                          + (f": {reason}" if reason and b["status"] == "fail" else "")))
    for pr in result["problems"]:
        lines.append(safe(f"problem: {pr['path']}: {pr['message']}"))
    lines.append("ok: the run agrees with its fixtures" if result["ok"] else "FAIL: the run disagrees with its fixtures")
    return "\n".join(lines)
