"""`centinela scan PATH...`: injection, secrets and personal data in files and folders."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from scanner.budget import DEFAULT_MAX_FILE_MB, DEFAULT_MAX_FILE_SECONDS, DEFAULT_MAX_MEMORY_MB, Budget
from scanner.cli.common import (
    EXIT_FAIL, EXIT_OK, RunError, emit, format_option, output_option, progress_bar, refuse_same, repo_root,
    to_json, unkeyed_warning, warn,
)


def parse_kinds(value: str) -> tuple[str, ...]:
    from scanner.scan import ALL_KINDS      # here, not at the top: it loads the HTML loader and RE2 (start-up)

    kinds = tuple(k.strip() for k in value.split(",") if k.strip())
    unknown = [k for k in kinds if k not in ALL_KINDS]
    if not kinds or unknown:
        raise click.BadParameter(f"choose from {', '.join(ALL_KINDS)} (got {value!r})", param_hint="--kinds")
    return kinds


def rule_dirs(rules: tuple[Path, ...]) -> tuple[tuple[Path, ...] | None, tuple[Path, ...]]:
    """(injection rule dirs, secret rule dirs) for --rules: YAML files directly in DIR (or in DIR/injection)
    are injection rules; DIR/secrets holds secret rules."""
    if not rules:
        return None, ()
    from scanner.rulepack import BUILTIN_RULES

    injection: list[Path] = []
    secrets: list[Path] = []
    for directory in rules:
        if not directory.is_dir():
            raise RunError(f"{directory}: --rules needs a directory of rule YAML files")
        if (directory / "secrets").is_dir():
            secrets.append((directory / "secrets").resolve())
        if (directory / "injection").is_dir():
            injection.append((directory / "injection").resolve())
        if any(directory.glob("*.yaml")) or any(directory.glob("*.yml")):
            injection.append(directory.resolve())
    inj = ((BUILTIN_RULES / "injection",) + tuple(injection)) if injection else None
    return inj, tuple(secrets)


def load_suppressions(root: Path, allowlist_path: Path | None, baseline_path: Path | None):
    """The run's reviewed exceptions (`scanner.pipeline.policy.Suppressions`); a bad key, allowlist or
    baseline is exit 2."""
    from scanner.pipeline.policy import Suppressions
    from scanner.suppress import SuppressionError

    try:
        return Suppressions.load(root, allowlist_path, baseline_path)
    except SuppressionError as exc:
        raise RunError(str(exc)) from None


@click.command("scan")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@format_option(("text", "json", "sarif", "html"))
@output_option
@click.option("--category", default="centinela", show_default=True,
              help="SARIF automationDetails category (one per analysis uploaded to code scanning).")
@click.option("--kinds", default="injection,secret,pii", show_default=True, help="Comma-separated kinds to scan for.")
@click.option("--rules", "rules", multiple=True, type=click.Path(path_type=Path),
              help="An extra directory of rule YAML files (repeatable), validated like the built-in ones.")
@click.option("--fail-on", type=click.Choice(["error", "warning", "note"]), default="warning", show_default=True,
              help="Lowest finding severity that makes the exit code 1.")
@click.option("--allow-class", "allow_classes", multiple=True, metavar="CLASS",
              help="Injection findings in fixtures of this manifest class are expected (e.g. prompt-injection): "
                   "they are left out of the results and counted.")
@click.option("--no-progress", is_flag=True, help="No progress bar (it is off anyway when stderr is not a terminal, "
              "under CI or under pre-commit).")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
              help="Colour the text output (auto: on a terminal, unless NO_COLOR is set).")
@click.option("--allowlist", "allowlist_path", type=click.Path(dir_okay=False, path_type=Path),
              help="YAML file of reviewed exceptions keyed by fingerprint (default: .centinela-allowlist.yaml "
                   "at the repository root, when present).")
@click.option("--baseline", "baseline_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Leave out findings recorded in this baseline (from --write-baseline): adopt centinela on an "
                   "existing tree and fail only on new findings.")
@click.option("--write-baseline", "write_baseline_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the current findings (fingerprint, rule, path only; never the datum) as a baseline.")
@click.option("--include-suppressed", is_flag=True,
              help="Also output suppressed findings (JSON: with a 'suppressed' field; SARIF: with suppressions).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
              help="Scan files in N worker processes; the output is the same, in the same order, as with 1.")
@click.option("--max-file-seconds", type=click.FloatRange(min=0), default=DEFAULT_MAX_FILE_SECONDS,
              show_default=True, help="Wall time one file may take; past it the file is an error (timeout). 0: no limit.")
@click.option("--max-file-mb", type=click.FloatRange(min=0), default=DEFAULT_MAX_FILE_MB, show_default=True,
              help="Larger files are not read: an error (too_large). 0: no limit.")
@click.option("--max-memory-mb", type=click.FloatRange(min=0), default=DEFAULT_MAX_MEMORY_MB, show_default=True,
              help="Memory one file may take on top of the loaded scanner; past it the file is an error (memory). 0: no limit.")
def scan_command(paths, fmt, output, category, kinds, rules, fail_on, allow_classes, no_progress, color,
                 allowlist_path, baseline_path, write_baseline_path, include_suppressed, jobs, max_file_seconds,
                 max_file_mb, max_memory_mb) -> None:
    """Scan files and folders for hidden prompt injection, secrets and personal data.

    Each file runs within its budgets (time, size, memory) in worker processes, so no single file can stall
    a CI job; a file over a budget is reported as an error and the scan goes on."""
    from scanner.startup import frozen_startup

    # The garbage collector paused while the scan imports and builds its detectors, and what they built frozen
    # for the run (scanner.startup).
    with frozen_startup() as ready:
        _scan(ready, paths, fmt, output, category, kinds, rules, fail_on, allow_classes, no_progress, color,
              allowlist_path, baseline_path, write_baseline_path, include_suppressed, jobs, max_file_seconds,
              max_file_mb, max_memory_mb)


def _scan(ready, paths, fmt, output, category, kinds, rules, fail_on, allow_classes, no_progress, color,
          allowlist_path, baseline_path, write_baseline_path, include_suppressed, jobs, max_file_seconds,
          max_file_mb, max_memory_mb) -> None:
    # Imported here, not at the top: `centinela --help` and the other commands do not load the scanner.
    from scanner.pipeline.policy import drop_expected_injections
    from scanner.pipeline.run import scan_paths
    from scanner.rulepack import RuleError
    from scanner.scan import Scanner

    kind_list = parse_kinds(kinds)
    refuse_same("--baseline", baseline_path, "--write-baseline", write_baseline_path,
                "a baseline rewritten from the findings it suppresses accepts every new finding; "
                "refresh it with --write-baseline alone")
    for opt, path in (("--baseline", baseline_path), ("--allowlist", allowlist_path)):
        refuse_same(opt, path, "--write-baseline", write_baseline_path, "it would overwrite its own input")
        refuse_same(opt, path, "--output", output, "it would overwrite its own input")
    refuse_same("--write-baseline", write_baseline_path, "--output", output, "one file cannot hold both")
    for p in paths:
        if p.is_file():
            refuse_same("PATH", p, "--output", output, "the output would overwrite a file it scans")
            refuse_same("PATH", p, "--write-baseline", write_baseline_path, "it would overwrite a file it scans")
    budget = Budget(max_file_seconds, max_file_mb, max_memory_mb)
    missing = [p for p in paths if not os.path.lexists(p)]   # a dangling or looping symlink is a per-file error
    if missing:
        raise RunError(f"{missing[0]}: no such file or directory")
    try:
        injection_dirs, secret_dirs = rule_dirs(rules)
        scanner = Scanner(kind_list, injection_dirs, secret_rule_dirs=secret_dirs, review=fmt == "html")
    except RuleError as exc:  # the injection and secret packs both validate to RuleError: one line, exit 2
        raise RunError(str(exc)) from None
    ready()
    result = scan_paths(scanner, list(paths), progress=None if no_progress else progress_bar(), jobs=jobs,
                        budget=budget)
    if allow_classes:
        allowed = drop_expected_injections(result, set(allow_classes))
        warn(f"{allowed} injection finding(s) in fixtures of class {', '.join(sorted(set(allow_classes)))} left out "
             "(expected)")
    suppressions = load_suppressions(repo_root(), allowlist_path, baseline_path)
    report = suppressions.apply(result, scanner)
    for w in report.warnings:
        warn(str(w))
    if fmt == "sarif" or suppressions.reviewed or write_baseline_path is not None:
        unkeyed_warning(result.findings, suppressions.key)
    if write_baseline_path is not None:
        try:
            n = suppressions.write_baseline(result, write_baseline_path)
        except OSError as exc:
            raise RunError(f"{write_baseline_path}: cannot write: {exc.strerror or exc}") from None
        warn(f"wrote {write_baseline_path}: {n} finding(s) baselined")
    result.include_suppressed = include_suppressed
    emit_result(result, scanner, fmt, output, color, category, suppressions)
    from scanner.startup import exit_process

    exit_process(EXIT_FAIL if result.fails(fail_on) else EXIT_OK)


def emit_result(result, scanner, fmt: str, output: Path | None, color: str, category: str, suppressions) -> None:
    if fmt == "sarif":
        from scanner.sarif import build_sarif, dumps_sarif, rule_metas

        log = build_sarif(result, rule_metas(scanner), repo_root=suppressions.repo_root, category=category,
                          scan_root_for=lambda p: result.roots.get(p), include_suppressed=result.include_suppressed,
                          fingerprint_key=suppressions.key)
        emit(dumps_sarif(log), output)
    elif fmt == "html":
        from scanner.review.render import render_review, rule_names

        emit(render_review(result, rule_names(scanner)), output)
    else:
        from scanner.scan_text import format_text

        use_color = color == "always" or (color == "auto" and output is None and sys.stdout.isatty()
                                          and not os.environ.get("NO_COLOR"))
        emit(to_json(result.to_json()) if fmt == "json" else format_text(result, color=use_color), output,
             color=use_color or None)


COMMANDS = [scan_command]
