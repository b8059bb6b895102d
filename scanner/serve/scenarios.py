"""Scenarios: which requests get a recorded error (429, 5xx, a connection that never answers) instead of
their answer.

A schedule, `[PROVIDER:]OP:STEP,STEP,…`, is consumed one step per request whose path (without the leading
`/`) matches the glob OP (`search`, `v2/*`, `*`) — separately for each provider. A step is `ok` (the real
answer) or the name of one of the provider's scenario fixtures (`429`, `5xx`, `timeout`, `502`,
`503-empty`, `errors/503-empty`…); `STEPxN` repeats a step N times, and a trailing `*` on the last step
repeats it forever (`search:5xx*`). When a schedule runs out the requests get their real answers again.
The first schedule that matches a request decides it; a request header `X-Centinela-Scenario: STEP` decides
that one request instead, without consuming any schedule.

Bounds (a schedule comes from the command line or from any client of the control endpoint): a repeated step
is kept as (step, count), never expanded, and counts at most MAX_REPEAT; a schedule holds at most MAX_STEPS
steps in all, is at most MAX_SCHEDULE_CHARS long, and at most MAX_SCHEDULES schedules are set at once. Past
any of them the schedule is refused (ServeError: a usage error on the command line, a 400 on the endpoint).
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field

from scanner.serve.catalog import Catalog, ServeError

OK = "ok"
_STEP = re.compile(r"^(?P<name>[A-Za-z0-9_./-]+?)(?:x(?P<count>\d+))?(?P<forever>\*)?$")
MAX_REPEAT = 1_000_000
MAX_STEPS = 1_000_000
MAX_SCHEDULE_CHARS = 4096
MAX_SCHEDULES = 256


@dataclass
class Schedule:
    text: str
    op: str
    runs: list[tuple[str, int]]                                 # (step, how many requests in a row get it)
    forever: bool = False
    provider: str | None = None
    positions: dict[str, tuple[int, int]] = field(default_factory=dict)   # provider → (run, used of it)

    @property
    def steps(self) -> list[str]:
        """The schedule written out step by step (at most MAX_STEPS)."""
        return [name for name, count in self.runs for _ in range(count)]

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.runs]

    def applies(self, provider: str, op: str) -> bool:
        return (self.provider is None or self.provider == provider) and fnmatch.fnmatchcase(op, self.op)

    def take(self, provider: str) -> str | None:
        """The step for the next request of this provider, or None once the schedule is spent."""
        run, used = self.positions.get(provider, (0, 0))
        if run >= len(self.runs):
            return self.runs[-1][0] if self.forever and self.runs else None
        name, count = self.runs[run]
        self.positions[provider] = (run, used + 1) if used + 1 < count else (run + 1, 0)
        return name


def parse_schedule(text: str) -> Schedule:
    if len(text) > MAX_SCHEDULE_CHARS:
        raise ServeError(f"--scenario {text[:40]!r}…: longer than {MAX_SCHEDULE_CHARS} characters")
    parts = text.strip().split(":")
    if len(parts) == 2:
        provider, op, steps_text = None, parts[0], parts[1]
    elif len(parts) == 3:
        provider, op, steps_text = parts
    else:
        raise ServeError(f"--scenario {text!r}: expected [PROVIDER:]OP:STEP,STEP,… (e.g. search:429,429,ok)")
    op = op.strip().lstrip("/") or "*"
    runs: list[tuple[str, int]] = []
    total = 0
    forever = False
    tokens = [t.strip() for t in steps_text.split(",")]
    if not any(tokens):
        raise ServeError(f"--scenario {text!r}: no steps")
    for i, token in enumerate(tokens):
        m = _STEP.match(token)
        if not m:
            raise ServeError(f"--scenario {text!r}: cannot read step {token!r}")
        if m["forever"]:
            if i != len(tokens) - 1:
                raise ServeError(f"--scenario {text!r}: only the last step can repeat forever ('*')")
            forever = True
        count_text = (m["count"] or "1").lstrip("0") or "0"
        count = int(count_text) if len(count_text) <= len(str(MAX_REPEAT)) else MAX_REPEAT + 1
        if count < 1:
            raise ServeError(f"--scenario {text!r}: step {token!r} repeats zero times")
        if count > MAX_REPEAT:
            raise ServeError(f"--scenario {text!r}: step {token[:40]!r} repeats more than {MAX_REPEAT:,} times "
                             f"(end the schedule with '*' to repeat a step forever)")
        total += count
        if total > MAX_STEPS:
            raise ServeError(f"--scenario {text!r}: more than {MAX_STEPS:,} steps in all")
        runs.append((m["name"], count))
    return Schedule(text=text, op=op, runs=runs, forever=forever, provider=provider.strip() if provider else None)


class Scenarios:
    def __init__(self, schedules: list[Schedule] | None = None):
        self.schedules = list(schedules or [])

    @classmethod
    def parse(cls, texts) -> "Scenarios":
        texts = list(texts or ())
        if len(texts) > MAX_SCHEDULES:
            raise ServeError(f"{len(texts)} schedules: at most {MAX_SCHEDULES} at once")
        return cls([parse_schedule(t) for t in texts])

    def validate(self, catalogs: dict[str, Catalog]) -> None:
        """Every step names a scenario fixture of every provider the schedule applies to."""
        for s in self.schedules:
            if s.provider is not None and s.provider not in catalogs:
                raise ServeError(f"--scenario {s.text!r}: provider {s.provider!r} is not served "
                                 f"(served: {', '.join(sorted(catalogs))})")
            for provider, catalog in catalogs.items():
                if s.provider not in (None, provider):
                    continue
                for step in s.names:
                    if step != OK and step not in catalog.scenarios:
                        raise ServeError(f"--scenario {s.text!r}: {provider} has no scenario fixture {step!r} "
                                         f"(available: {', '.join(catalog.scenario_names()) or 'none'})")

    def step_for(self, provider: str, op: str) -> tuple[str | None, str | None]:
        """(step, the schedule's text) for the next request, or (None, None) when no schedule applies."""
        for s in self.schedules:
            if s.applies(provider, op):
                step = s.take(provider)
                if step is not None:
                    return step, s.text
                return None, None
        return None, None
