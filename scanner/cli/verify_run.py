"""`centinela verify-run ROOT --run RUN_DIR`: a run's records against the raw provider fixtures."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from scanner.cli.common import EXIT_FAIL, EXIT_OK, RunError, emit, format_option, output_option, refuse_inside, to_json


@click.command("verify-run")
@click.argument("root", type=click.Path(path_type=Path))
@click.option("--run", "run_dir", required=True, type=click.Path(path_type=Path), help="The run directory.")
@click.option("--log", "log_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Request log of `centinela serve` (default: RUN_DIR/serve-log.jsonl when present): adds the "
                   "behaviour checks (retry-after and jitter, breaker, timeout, partial, error classes).")
@click.option("--breaker-threshold", type=click.IntRange(1), default=5, show_default=True,
              help="Consecutive failures (5xx, timeouts) after which the adapter's circuit breaker must be open "
                   "(pybreaker fail_max; opossum/resilience4j: the calls it needs to trip when all fail).")
@click.option("--half-open-after-ms", type=click.FloatRange(0), default=None,
              help="The breaker's open interval (pybreaker reset_timeout, opossum resetTimeout, resilience4j "
                   "waitDurationInOpenState), in ms: after it, half-open probes may be sent. Default: the "
                   "breaker must stay open for the rest of the test.")
@click.option("--half-open-probes", type=click.IntRange(1), default=1, show_default=True,
              help="Requests a half-open breaker lets through before their outcome is known (pybreaker, opossum: "
                   "1; resilience4j permittedNumberOfCallsInHalfOpenState).")
@click.option("--jitter-min-spread", type=click.FloatRange(0), default=None,
              help="Least spread of the waits of calls retried at the same attempt, as a fraction of their median "
                   "(default 0.1).")
@click.option("--jitter-min-sample", type=click.IntRange(2), default=None,
              help="Retries at one attempt needed to judge jitter (default 8); fewer: n/a.")
@format_option()
@output_option
def verify_run_command(root: Path, run_dir: Path, log_path: Path | None, breaker_threshold: int,
                       half_open_after_ms: float | None, half_open_probes: int, jitter_min_spread: float | None,
                       jitter_min_sample: int | None, fmt: str, output: Path | None) -> None:
    """Cross-check a run's call records against the raw provider fixtures (partial honesty, costs, result lists,
    statuses) and, given the replay server's log, the adapter's behaviour."""
    from scanner.behaviour import BehaviourError
    from scanner.score.inputs import ScoreInputError
    from scanner.score.verify_run import format_text, verify_run

    refuse_inside("--output", output, root)
    try:
        result = verify_run(root, run_dir, log_path, breaker_threshold, half_open_after_ms=half_open_after_ms,
                            half_open_probes=half_open_probes, jitter_min_spread=jitter_min_spread,
                            jitter_min_sample=jitter_min_sample)
    except (ScoreInputError, BehaviourError) as exc:
        raise RunError(str(exc)) from None
    emit(to_json(result) if fmt == "json" else format_text(result), output)
    sys.exit(EXIT_OK if result["ok"] else EXIT_FAIL)


COMMANDS = [verify_run_command]
