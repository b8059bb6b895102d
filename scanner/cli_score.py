"""`score`, `gates`: the scorer's subcommands (registered on the `centinela` group by scanner.cli)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import click

from scanner.cli import (
    EXIT_FAIL, EXIT_OK, RunError, cli, emit, format_option, output_option, refuse_inside, refuse_same, to_json, warn,
)
from scanner.terminal import safe
from scanner.score.gates import ALL_GATES, THRESHOLDS

REPORT_MAX_BYTES = 256 << 20


def gate_outcome(report: dict, provider: str | None) -> tuple[int, str]:
    """(exit code, one-line verdict) of `centinela gates` for a report (scanner.score.gates.judge); a report
    that cannot be judged is exit 2."""
    from scanner.score.gates import ReportError, judge

    try:
        passes, verdict = judge(report, provider)
    except ReportError as exc:
        raise RunError(str(exc)) from None
    return (EXIT_OK if passes else EXIT_FAIL), verdict


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _cell(details: dict, gate: str, status: str) -> str:
    d = details.get(gate)
    d = d if isinstance(d, dict) else {}
    if gate == "honest_partial":
        violations = d.get("violations")
        n = len(violations) if isinstance(violations, list) else 0
        return f"{status} ({n} false)" if n else status
    v = d.get("divergence" if gate == "cost_divergence" else "value")
    return f"{status} ({v:.3f})" if _number(v) else status


def format_gates(report: dict) -> str:
    """The gate table. Provider names, gate values and reasons come from a report that a fixture tree (or a
    hand) wrote: each cell and line is made terminal-safe, so none can move the cursor or break the table."""
    providers = report.get("providers") or {}
    names = sorted(providers)
    rows = [["gate", "threshold"] + [safe(n) for n in names]]
    for g in ALL_GATES:
        rows.append([g, THRESHOLDS[g]] + [safe(_cell(providers[p].get("gate_details") or {}, g,
                                                      (providers[p].get("gates") or {}).get(g, "?"))) for p in names])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    ranking = report.get("ranking") or []
    lines.append("ranking: " + (", ".join(f"{i}. {safe(p)}" for i, p in enumerate(ranking, 1)) or "none qualifies"))
    for d in report.get("disqualified") or []:
        lines.append(safe(f"disqualified: {d['provider']}: {'; '.join(d['reasons'])}"))
    return "\n".join(lines)


@cli.command("score")
@click.argument("root", type=click.Path(path_type=Path))
@click.option("--run", "run_dir", required=True, type=click.Path(path_type=Path), help="The run directory (run.json, <provider>/<case>.json).")
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Where report.json, report.md and report.html are written.")
@format_option()
def score_command(root: Path, run_dir: Path, out: Path, fmt: str) -> None:
    """Every metric of spec §4 per provider, per category and aggregate; the gates and ranking of §5."""
    from scanner.score.inputs import ScoreInputError
    from scanner.score.report import score, write_report

    refuse_inside("--out", out, root)
    try:
        result = score(root, run_dir)
    except ScoreInputError as exc:
        raise RunError(str(exc)) from None
    try:
        written = write_report(result.report, out, result.evals)
    except OSError as exc:
        raise RunError(f"{out}: cannot write: {exc.strerror or exc}") from None
    rc, verdict = gate_outcome(result.report, None)
    if fmt == "json":
        emit(to_json({"outputs": [str(p) for p in written], "ranking": result.report["ranking"],
                      "disqualified": result.report["disqualified"], "verdict": verdict, "exit_code": rc}), None)
    else:
        lines = [format_gates(result.report)]
        lines += [safe(f"problem: {p['path']}: {p['message']}") for p in result.report["problems"]]
        lines.append(safe(verdict))
        lines.append(safe("wrote " + ", ".join(str(p) for p in written)))
        emit("\n".join(lines), None)
    sys.exit(rc)


@cli.command("gates")
@click.argument("report_json", type=click.Path(path_type=Path))
@click.option("--provider", default=None, help="Judge this provider (default: the report's top-ranked).")
@format_option()
@output_option
def gates_command(report_json: Path, provider: str | None, fmt: str, output: Path | None) -> None:
    """Print the hard-gate block; exit 1 if the provider fails a gate or no provider passes them all."""
    from scanner.jsonsafe import read_json
    from scanner.score.gates import ReportError, judge

    refuse_same("REPORT_JSON", report_json, "--output", output, "the output would overwrite the report it judges")
    try:
        report = read_json(report_json, max_bytes=REPORT_MAX_BYTES)
    except FileNotFoundError:
        raise RunError(f"{report_json}: not found") from None
    except (OSError, ValueError) as exc:
        raise RunError(f"{report_json}: not a report: {exc}") from None
    try:
        passes, verdict = judge(report, provider)
    except ReportError as exc:
        raise RunError(f"{report_json}: {exc}") from None
    rc = EXIT_OK if passes else EXIT_FAIL
    if fmt == "json":
        block = {p: {"gates": d.get("gates"), "disqualified": d.get("disqualified"),
                     "reasons": d.get("disqualification_reasons", [])} for p, d in sorted(report["providers"].items())}
        emit(to_json({"gates": block, "ranking": report.get("ranking", []), "verdict": verdict, "exit_code": rc}), output)
    else:
        emit(format_gates(report) + "\n" + safe(verdict), output)
    sys.exit(rc)


@cli.command("pool")
@click.argument("root", type=click.Path(path_type=Path))
@click.option("--run", "run_dir", type=click.Path(path_type=Path), help="The run whose unjudged URLs to list.")
@click.option("--merge", "merge_file", type=click.Path(path_type=Path),
              help="Merge a filled-in review file into golden/judgments.yaml instead.")
@click.option("--dry-run", is_flag=True, help="With --merge: say what would be added, write nothing.")
@output_option
def pool_command(root: Path, run_dir: Path | None, merge_file: Path | None, dry_run: bool, output: Path | None) -> None:
    """Write the run's unjudged URLs per case, grouped by suggested origin group, as a review file for
    golden/judgments.yaml (default: standard output); or merge a filled-in review file back with --merge."""
    from scanner.score.inputs import ScoreInputError
    from scanner.score.pool import MergeError, build_pool, merge_review, review_yaml

    if (run_dir is None) == (merge_file is None):
        raise click.UsageError("give either --run RUN_DIR (write a review file) or --merge REVIEW_FILE")
    if dry_run and merge_file is None:
        raise click.UsageError("--dry-run goes with --merge (writing a review file changes nothing in the tree)")
    if output is not None and merge_file is not None:
        raise click.UsageError("--output goes with --run: --merge writes golden/judgments.yaml and prints a summary")
    refuse_inside("--output", output, root)
    if merge_file is not None:
        try:
            res = merge_review(root, merge_file, dry_run=dry_run)
        except MergeError as exc:
            raise RunError(str(exc)) from None
        verb = "would add" if dry_run else "added"
        lines = [f"{verb} {len(res.added)} judgments to {root / 'golden' / 'judgments.yaml'}; "
                 f"{res.unfilled} left unfilled, {res.unchanged} already there"]
        lines += [safe(f"conflict: {c}") for c in res.conflicts]
        emit("\n".join(lines), None)
        sys.exit(EXIT_FAIL if res.conflicts else EXIT_OK)
    try:
        pools, problems, run_id = build_pool(root, run_dir)
    except ScoreInputError as exc:
        raise RunError(str(exc)) from None
    from scanner.scrub import scrub_text

    for p in problems:
        warn(f"problem: {scrub_text(p)}")
    n = sum(len(p.candidates) for p in pools)
    groups = sum(len({c.group for c in p.candidates}) for p in pools)
    hosts = sorted({(p.case, h) for p in pools for h, _ in p.hosts_for_review})
    emit(review_yaml(pools, run_id), output)
    warn(f"{n} unjudged URLs in {groups} suggested groups over {sum(1 for p in pools if p.candidates)} cases; "
         f"{len(hosts)} relevant hosts missing from expect.hosts")
    sys.exit(EXIT_OK)


@cli.command("verify-run")
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
