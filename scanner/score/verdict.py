"""The verdict of the hard gates on a report, one place for every command that gives it (`score`, `gates`,
`check`): whether the judged provider passes (`scanner.score.gates.judge`), the one-line verdict, and the
contract's exit code for it (0: passes, 1: fails; a report that cannot be judged raises `ReportError`)."""

from __future__ import annotations

from dataclasses import dataclass

from scanner.score.gates import judge


@dataclass(frozen=True)
class GateOutcome:
    passes: bool
    verdict: str

    @property
    def exit_code(self) -> int:
        return 0 if self.passes else 1


def gate_outcome(report: dict, provider: str | None = None) -> GateOutcome:
    """The gates' outcome for `provider` (default: the report's top-ranked); ReportError when the report
    cannot be judged or does not hold `provider`."""
    passes, verdict = judge(report, provider)
    return GateOutcome(passes, verdict)
