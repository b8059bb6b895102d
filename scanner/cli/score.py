"""`centinela score`, `gates`, `pool`: the scorer's commands, and the gate table they print."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from scanner.cli.common import (
    EXIT_FAIL, EXIT_OK, RunError, emit, format_option, output_option, refuse_inside, refuse_same, to_json, warn,
)
from scanner.terminal import safe

REPORT_MAX_BYTES = 256 << 20


def judged(report: dict, provider: str | None, source: Path | None = None):
    """The gates' outcome (`scanner.score.verdict.GateOutcome`); a report that cannot be judged is exit 2."""
    # The scorer's modules are imported where they are used, not at the top: `centinela --help` (start-up).
    from scanner.score.gates import ReportError
    from scanner.score.verdict import gate_outcome

    try:
        return gate_outcome(report, provider)
    except ReportError as exc:
        raise RunError(f"{source}: {exc}" if source is not None else str(exc)) from None


def _cell(details: dict, gate: str, status: str) -> str:
    from scanner.score.gates import GATE

    d = details.get(gate)
    return GATE[gate].terminal_cell(d if isinstance(d, dict) else {}, status)


def format_gates(report: dict) -> str:
    """The gate table. Provider names, gate values and reasons come from a report that a fixture tree (or a
    hand) wrote: each cell and line is made terminal-safe, so none can move the cursor or break the table."""
    from scanner.score.gates import ALL_GATES, THRESHOLDS

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


@click.command("score")
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
    outcome = judged(result.report, None)
    rc, verdict = outcome.exit_code, outcome.verdict
    if fmt == "json":
        emit(to_json({"outputs": [str(p) for p in written], "ranking": result.report["ranking"],
                      "disqualified": result.report["disqualified"], "verdict": verdict, "exit_code": rc}), None)
    else:
        lines = [format_gates(result.report)]
        lines += [safe(f"problem: {p['path']}: {p['message']}") for p in result.report["problems"]]
        lines.append(safe(verdict))
        lines.append(safe("wrote " + ", ".join(str(p) for p in written)))
        emit("\n".join(lines), None)
    from scanner import startup

    startup.exiting()
    sys.exit(rc)


@click.command("gates")
@click.argument("report_json", type=click.Path(path_type=Path))
@click.option("--provider", default=None, help="Judge this provider (default: the report's top-ranked).")
@format_option()
@output_option
def gates_command(report_json: Path, provider: str | None, fmt: str, output: Path | None) -> None:
    """Print the hard-gate block; exit 1 if the provider fails a gate or no provider passes them all."""
    from scanner.jsonsafe import read_json

    refuse_same("REPORT_JSON", report_json, "--output", output, "the output would overwrite the report it judges")
    try:
        report = read_json(report_json, max_bytes=REPORT_MAX_BYTES)
    except FileNotFoundError:
        raise RunError(f"{report_json}: not found") from None
    except (OSError, ValueError) as exc:
        raise RunError(f"{report_json}: not a report: {exc}") from None
    outcome = judged(report, provider, report_json)
    rc, verdict = outcome.exit_code, outcome.verdict
    if fmt == "json":
        block = {p: {"gates": d.get("gates"), "disqualified": d.get("disqualified"),
                     "reasons": d.get("disqualification_reasons", [])} for p, d in sorted(report["providers"].items())}
        emit(to_json({"gates": block, "ranking": report.get("ranking", []), "verdict": verdict, "exit_code": rc}), output)
    else:
        emit(format_gates(report) + "\n" + safe(verdict), output)
    sys.exit(rc)


@click.command("pool")
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


COMMANDS = [score_command, gates_command, pool_command]
