"""`centinela check ROOT`: everything CI needs in one go (`scanner.pipeline.check_tree`)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from scanner.cli.common import EXIT_FAIL, EXIT_OK, RunError, emit, format_option, refuse_inside, repo_root, \
    to_json, unkeyed_warning, warn
from scanner.cli.scan import load_suppressions


@click.command("check")
@click.argument("root", type=click.Path(path_type=Path))
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), default=Path("centinela-out"),
              show_default=True, help="Directory for every output (JSON, SARIF, plan).")
@click.option("--category", default="centinela", show_default=True, help="SARIF category.")
@click.option("--run", "run_dir", type=click.Path(path_type=Path), default=None,
              help="Also cross-check this run against the fixtures (verify-run), score it and apply the gates.")
@click.option("--allowlist", "allowlist_path", type=click.Path(dir_okay=False, path_type=Path),
              help="YAML file of reviewed exceptions keyed by fingerprint, as for scan (default: "
                   ".centinela-allowlist.yaml at the repository root, when present).")
@click.option("--baseline", "baseline_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Leave out of the scan part the findings recorded in this baseline (from scan --write-baseline).")
@format_option()
def check_command(root: Path, out: Path, category: str, run_dir: Path | None, allowlist_path: Path | None,
                  baseline_path: Path | None, fmt: str) -> None:
    """Everything CI needs: manifest verify, scan (JSON + SARIF) and redact --check on the tree at ROOT; with
    --run, also verify-run, score (report.json/md/html) and the gates."""
    # Imported here, not at the top: `centinela --help` and the other commands do not load the scanner.
    from scanner.fixtures.tree import TreeError
    from scanner.pipeline.check_tree import check_tree, format_text
    from scanner.score.gates import ReportError
    from scanner.score.inputs import ScoreInputError

    refuse_inside("--out", out, root)
    suppressions = load_suppressions(repo_root(), allowlist_path, baseline_path)
    try:
        report = check_tree(root, out, suppressions, category, run_dir)
    except (TreeError, ScoreInputError, ReportError) as exc:
        raise RunError(str(exc)) from None
    for w in report.suppression.warnings:
        warn(str(w))
    unkeyed_warning(report.sensitive_findings, suppressions.key)
    emit(to_json(report.to_json()) if fmt == "json" else format_text(report) + f"\noutputs in {out}/", None)
    sys.exit(EXIT_OK if report.ok else EXIT_FAIL)


COMMANDS = [check_command]
