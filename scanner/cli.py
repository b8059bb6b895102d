"""The `centinela` command line.

Exit codes (contract): 0 ran and nothing fails; 1 ran and found something that fails; 2 could not run as
asked (usage error, unreadable input, missing file) with a one-line message on stderr and no traceback.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path

import click

from scanner import TOOL_NAME, __version__
from scanner.atomic import atomic_write_text
from scanner.budget import DEFAULT_MAX_FILE_MB, DEFAULT_MAX_FILE_SECONDS, DEFAULT_MAX_MEMORY_MB
from scanner.terminal import json_text, safe, safe_text

EXIT_OK, EXIT_FAIL, EXIT_ERROR = 0, 1, 2


class RunError(click.ClickException):
    """Could not run as asked: exit 2 with a one-line message."""

    exit_code = EXIT_ERROR


def format_option(choices=("text", "json")):
    return click.option("--format", "fmt", type=click.Choice(choices), default="text", show_default=True,
                        help="Output format.")


output_option = click.option("--output", "-o", "output", type=click.Path(dir_okay=False, path_type=Path),
                             help="Write the output to FILE (atomically) instead of standard output.")


def emit(text: str, output: Path | None, color: bool | None = None) -> None:
    """Write a command's output to stdout (or atomically to `output`). Every control, escape and bidi
    character left in it is shown as a visible escape (`scanner.terminal`), on a terminal or not; with
    `color`, our own SGR colours pass (the caller sanitised the data before colouring it)."""
    text = safe_text(text, keep_sgr=bool(color))
    if not text.endswith("\n"):
        text += "\n"
    if output is None:
        click.echo(text, nl=False, color=color)
        return
    try:
        atomic_write_text(output, text)
    except OSError as exc:
        raise RunError(f"{output}: cannot write: {exc.strerror or exc}") from None
    warn(f"wrote {output}")


def warn(message: str) -> None:
    """One line on stderr, every untrusted character in it escaped (a line break too: it stays one line)."""
    click.echo(safe(message), err=True)


def to_json(data) -> str:
    """JSON output: readable Spanish, and every character a terminal could act on as a `\\uXXXX` escape."""
    return json_text(json.dumps(data, indent=2, ensure_ascii=False)) + "\n"


# --- contradictory arguments are usage errors (exit 2), never resolved silently ---------------------------

def same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def refuse_same(option_a: str, a: Path | None, option_b: str, b: Path | None, why: str) -> None:
    if a is not None and b is not None and same_file(a, b):
        raise click.UsageError(f"{option_a} and {option_b} name the same file ({a}): {why}")


def refuse_inside(option: str, target: Path | None, root: Path) -> None:
    """An output never lands inside the fixture tree a command reads (it would be an unlisted file of it, or
    overwrite one of its files)."""
    if target is None or not root.is_dir():
        return
    where, base = os.path.realpath(target), os.path.realpath(root)
    if os.path.commonpath([where, base]) == base:
        raise click.UsageError(f"{option} {target} is inside the fixture tree {root}: outputs never go into the "
                               "tree they read; write it elsewhere")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name=TOOL_NAME)
def cli() -> None:
    """Keep recorded web content safe before it reaches a language model or a repo."""


# --- manifest -------------------------------------------------------------------------------------------

@cli.group()
def manifest() -> None:
    """Integrity of a fixture tree: hashes, capture dates, classes, golden-set coverage."""


@manifest.command("verify")
@click.argument("roots", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--changed-files", is_flag=True,
              help="The arguments are changed files, as a pre-commit hook passes them: files outside any fixture "
                   "tree are skipped (and named on stderr) instead of being an error.")
@format_option()
@output_option
def manifest_verify(roots: tuple[Path, ...], changed_files: bool, fmt: str, output: Path | None) -> None:
    """Verify the fixture tree at ROOT against its manifest.json and the spec's catalogue.

    A file inside a tree stands for its tree (each tree is verified once). A path that is neither a directory
    nor a file inside a fixture tree is an error (exit 2), unless --changed-files says the arguments are the
    files of a commit."""
    from scanner.fixtures.tree import TreeError
    from scanner.fixtures.verify import verify_tree
    from scanner.redact import find_root

    trees: list[Path] = []
    skipped: list[Path] = []
    for arg in roots:
        if not arg.is_dir():
            found = find_root(arg.parent) if arg.is_file() or changed_files else None
            if found is None:
                if not changed_files:
                    raise RunError(f"{arg}: not a fixture tree, nor a file inside one (no manifest.json at or "
                                   "above it)" if arg.exists() else f"{arg}: no such directory")
                skipped.append(arg)     # a changed file outside any fixture tree has no manifest to verify against
                continue
            arg = found
        if arg not in trees:
            trees.append(arg)
    for tree in trees:
        refuse_inside("--output", output, tree)
    if skipped:
        click.echo(f"{len(skipped)} changed file(s) outside any fixture tree, not verified: "
                   + ", ".join(str(p) for p in skipped[:5]) + (" …" if len(skipped) > 5 else ""), err=True)
    reports = []
    try:
        for tree in trees:
            reports.append(verify_tree(tree))
    except TreeError as exc:
        raise RunError(str(exc)) from None
    if fmt == "json":
        data = reports[0].to_json() if len(reports) == 1 else {
            "ok": all(r.ok for r in reports), "trees": [r.to_json() for r in reports]}
        emit(to_json(data if reports else {"ok": True, "problems": [], "trees": []}), output)
    else:
        from scanner.scrub import shown, shown_path

        lines = []
        for report in reports:
            lines += [f"{shown_path(p.path)}: {safe(p.code)}: {shown(p.message)}" for p in report.problems]
            lines += [f"{shown_path(p.path)}: warning: {safe(p.code)}: {shown(p.message)}" for p in report.warnings]
            codes = sorted({safe(p.code) for p in report.problems})
            providers = ", ".join(shown_path(p) for p in report.providers) or "none"
            lines.append(f"{shown_path(report.root)}: ok — {report.files_checked} files, providers: {providers}"
                         if report.ok else
                         f"{shown_path(report.root)}: {len(report.problems)} problem{'s' if len(report.problems) != 1 else ''} "
                         f"({', '.join(codes)}) in {report.files_checked} listed files")
        emit("\n".join(lines) or "no fixture tree among the given files", output)
    sys.exit(EXIT_OK if all(r.ok for r in reports) else EXIT_FAIL)


@manifest.command("update")
@click.argument("root", type=click.Path(path_type=Path))
@click.argument("paths", nargs=-1)
@click.option("--captured-at", help="Capture time (ISO 8601) for added files that do not record their own.")
@click.option("--class", "cls", help="Fixture class for the added files (when their place does not say it).")
@click.option("--case", help="Golden case id for the added files (default: the gs-NNN in the file name).")
@click.option("--synthetic", is_flag=True, help="Mark the added files synthetic: true.")
@click.option("--rehash", multiple=True, metavar="PATH",
              help="Accept the current content of this listed file (repeatable). Without it a changed file is reported, never re-blessed.")
@click.option("--forget", multiple=True, metavar="PATH", help="Drop the entry of a listed file that was deleted (repeatable).")
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
@format_option()
@output_option
def manifest_update(root: Path, paths, captured_at, cls, case, synthetic, rehash, forget, dry_run, fmt, output) -> None:
    """Add unlisted files under ROOT (or only PATHS, relative to ROOT) to manifest.json."""
    from scanner.fixtures.tree import TreeError
    from scanner.fixtures.update import update_manifest

    refuse_inside("--output", output, root)
    both = sorted({p.strip("/") for p in rehash} & {p.strip("/") for p in forget})
    if both:
        raise click.UsageError(f"--rehash and --forget both name {both[0]}: accept its content or drop its entry, not both")
    try:
        result = update_manifest(root, list(paths) or None, captured_at=captured_at, cls=cls, case=case,
                                 synthetic=synthetic, rehash=list(rehash), forget=list(forget), dry_run=dry_run)
    except TreeError as exc:
        raise RunError(str(exc)) from None
    if fmt == "json":
        emit(to_json(result.to_json()), output)
    else:
        from scanner.scrub import shown, shown_path as sp

        verb = "would add" if dry_run else "added"
        lines = [f"{verb} {sp(a['path'])} (class {safe(a['class'])}, case {shown(a['case'])}, "
                 f"captured_at {safe(a['captured_at'])})" for a in result.added]
        lines += [f"rehashed {sp(r['path'])}: {r['old']} -> {r['new']}" for r in result.rehashed]
        lines += [f"forgot {sp(p)}" for p in result.forgotten]
        lines += [f"{sp(c['path'])}: changed since it was listed (sha256 {c['actual']}, manifest {c['listed']}); "
                  f"review it, then pass --rehash {sp(c['path'])} to accept it" for c in result.changed]
        lines += [f"{sp(p)}: listed but missing; restore it, or pass --forget {sp(p)}" for p in result.missing]
        lines += [f"{sp(s['path'])}: not added: {shown(s['reason'])}" for s in result.skipped]
        lines += [f"{sp(o['path'])}: path_outside_root: {shown(o['reason'])}: not read" for o in result.outside]
        lines.append(f"{len(result.added)} added, {len(result.rehashed)} rehashed, {len(result.changed)} changed, "
                     f"{len(result.missing)} missing, {len(result.skipped)} skipped"
                     + ("" if result.written or dry_run else " (manifest unchanged)"))
        emit("\n".join(lines), output)
    sys.exit(EXIT_FAIL if result.failed else EXIT_OK)


# --- scan ---------------------------------------------------------------------------------------------

def _kinds(value: str) -> tuple[str, ...]:
    from scanner.scan import ALL_KINDS

    kinds = tuple(k.strip() for k in value.split(",") if k.strip())
    unknown = [k for k in kinds if k not in ALL_KINDS]
    if not kinds or unknown:
        raise click.BadParameter(f"choose from {', '.join(ALL_KINDS)} (got {value!r})", param_hint="--kinds")
    return kinds


def _drop_expected_injections(result, classes: set[str]) -> None:
    """Leave out injection findings in fixtures whose manifest class is expected to carry them."""
    from scanner.fixtures.tree import read_manifest
    from scanner.redact import find_root

    cache: dict = {}
    kept = []
    allowed = 0
    for f in result.findings:
        if f.kind == "injection":
            base = result.roots.get(f.path, Path("."))
            file = (base / f.path).resolve()
            root = find_root(file.parent)
            if root is not None:
                if root not in cache:
                    cache[root] = {rel: e.class_ for rel, e in read_manifest(root).entries.items()}
                if cache[root].get(file.relative_to(root).as_posix()) in classes:
                    allowed += 1
                    continue
        kept.append(f)
    result.findings = kept
    for doc in result.documents:
        doc["injection_vectors"] = sorted({f.vector for f in kept if f.path == doc["path"] and f.kind == "injection"})
    warn(f"{allowed} injection finding(s) in fixtures of class {', '.join(sorted(classes))} left out (expected)")


def _suppress(result, scanner, kinds, repo_root: Path, allowlist_path, baseline_path, write_baseline_path,
              sarif: bool = False):
    """Apply inline directives, the allowlist and the baseline; write a baseline when asked. Returns the
    fingerprint key (give the same one to build_sarif). A bad allowlist, baseline or key: exit 2. When
    fingerprints of secrets or personal data are written or matched without a key, warns once."""
    from scanner.fingerprint import unkeyed_warning_once
    from scanner.suppress import (
        DEFAULT_ALLOWLIST, SourceFiles, SuppressionError, apply_suppressions, fingerprint_key_from_env,
        load_allowlist, load_baseline, write_baseline,
    )

    try:
        key = fingerprint_key_from_env(repo_root=repo_root)
        if allowlist_path is None and (repo_root / DEFAULT_ALLOWLIST).is_file():
            allowlist_path = repo_root / DEFAULT_ALLOWLIST
        allowlist = load_allowlist(allowlist_path, repo_root) if allowlist_path is not None else None
        baseline = load_baseline(baseline_path) if baseline_path is not None else None
    except SuppressionError as exc:
        raise RunError(str(exc)) from None
    active = {m.id for m in scanner.rule_metas()}
    if "pii" in kinds:
        from scanner.pii.scanner import RULES as PII_RULES

        active |= {rule_id for rule_id, _ in PII_RULES.values()}
    files = SourceFiles(repo_root, result.roots)
    report = apply_suppressions(result.findings, path_of=files.path_of, text_of=files.text_of,
                                allowlist=allowlist, baseline=baseline, key=key,
                                scanned=[d["path"] for d in result.documents if "error" not in d],  # read ones only
                                active_rules=active)
    for w in report.warnings:
        warn(str(w))
    if sarif or allowlist is not None or baseline is not None or write_baseline_path is not None:
        message = unkeyed_warning_once(result.findings, key)
        if message:
            warn(f"{TOOL_NAME}: {message}")
    result.suppression = report
    if write_baseline_path is not None:
        try:
            n = write_baseline(result.findings, write_baseline_path, path_of=files.path_of,
                               text_of=files.text_of, key=key)
        except OSError as exc:
            raise RunError(f"{write_baseline_path}: cannot write: {exc.strerror or exc}") from None
        warn(f"wrote {write_baseline_path}: {n} finding(s) baselined")
    return key


def _progress_bar():
    """A progress bar on stderr for long scans, or None: off when stderr is not a terminal, under CI
    (`CI` set) or pre-commit (`PRE_COMMIT` set)."""
    if not sys.stderr.isatty() or os.environ.get("CI") or os.environ.get("PRE_COMMIT"):
        return None

    def wrap(targets):
        if len(targets) < 20:
            yield from targets
            return
        with click.progressbar(targets, label="scanning", file=sys.stderr,
                               item_show_func=lambda t: safe(t.display)[-40:] if t else "") as bar:
            yield from bar
    return wrap


def _repo_root() -> Path:
    """The git work tree around the current directory, else the current directory (SARIF URIs are relative to it)."""
    here = Path.cwd().resolve()
    for folder in [here] + list(here.parents):
        if (folder / ".git").exists():
            return folder
    return here


def _rule_dirs(rules: tuple[Path, ...]) -> tuple[tuple[Path, ...] | None, tuple[Path, ...]]:
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


@cli.command("scan")
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
    from scanner.budget import Budget
    from scanner.rulepack import RuleError
    from scanner.scan import Scanner, format_text

    kind_list = _kinds(kinds)
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
        injection_dirs, secret_dirs = _rule_dirs(rules)
        scanner = Scanner(kind_list, injection_dirs, secret_rule_dirs=secret_dirs, review=fmt == "html")
    except RuleError as exc:  # the injection and secret packs both validate to RuleError: one line, exit 2
        raise RunError(str(exc)) from None
    result = scanner.scan(list(paths), progress=None if no_progress else _progress_bar(), jobs=jobs, budget=budget)
    if allow_classes:
        _drop_expected_injections(result, set(allow_classes))
    repo_root = _repo_root()
    key = _suppress(result, scanner, kind_list, repo_root, allowlist_path, baseline_path, write_baseline_path,
                    sarif=fmt == "sarif")
    result.include_suppressed = include_suppressed
    if fmt == "sarif":
        from scanner.sarif import build_sarif, dumps_sarif

        log = build_sarif(result, scanner.rule_metas(), repo_root=repo_root, category=category,
                          scan_root_for=lambda p: result.roots.get(p), include_suppressed=include_suppressed,
                          fingerprint_key=key)
        emit(dumps_sarif(log), output)
    elif fmt == "html":
        from scanner.review.render import render_review, rule_names

        emit(render_review(result, rule_names(scanner)), output)
    else:
        use_color = color == "always" or (color == "auto" and output is None and sys.stdout.isatty()
                                          and not os.environ.get("NO_COLOR"))
        emit(to_json(result.to_json()) if fmt == "json" else format_text(result, color=use_color), output,
             color=use_color or None)
    sys.exit(EXIT_FAIL if result.fails(fail_on) else EXIT_OK)


# --- redact -------------------------------------------------------------------------------------------

@cli.command("redact")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--check", "check_flag", is_flag=True, help="Print the plan; change nothing (the default).")
@click.option("--write", "write_flag", is_flag=True, help="Apply the plan atomically and update manifest.json.")
@click.option("--provenance", type=click.Choice(["sha256", "hmac"]), default="sha256", show_default=True,
              help="How sha256_original is computed: the spec's plain digest, or HMAC-SHA256 keyed by "
                   "$CENTINELA_PROVENANCE_KEY (never committed).")
@click.option("--kinds", default="secret,pii", show_default=True, help="What to redact: secret, pii or both.")
@format_option()
@output_option
def redact_command(paths, check_flag, write_flag, provenance, kinds, fmt, output) -> None:
    """Plan (--check) or apply (--write) the spec's redaction rules to files and fixture trees."""
    from scanner.redact import RedactError, Redactor, find_root, finish_journal, format_text

    if check_flag and write_flag:
        raise click.UsageError("--check and --write contradict each other: give one (--check plans, --write applies)")
    mode = "write" if write_flag else "check"
    kind_list = tuple(k.strip() for k in kinds.split(",") if k.strip())
    if not kind_list or any(k not in ("secret", "pii") for k in kind_list):
        raise click.BadParameter(f"choose from secret, pii (got {kinds!r})", param_hint="--kinds")
    missing = [p for p in paths if not p.exists()]
    if missing:
        raise RunError(f"{missing[0]}: no such file or directory")
    roots = {r for r in (find_root(p if p.is_dir() else p.parent) for p in paths) if r is not None}
    for root in sorted(roots):
        refuse_inside("--output", output, root)
    for p in paths:
        if p.is_file():
            refuse_same("PATH", p, "--output", output, "the output would overwrite a file it redacts")
    finished = []
    for root in sorted(roots):
        journal = root / ".centinela-redact.journal"
        if journal.exists():
            if mode == "write":
                try:
                    finished += [f"{root}/{rel}" for rel in finish_journal(root)]
                except RedactError as exc:
                    raise RunError(str(exc)) from None
            else:
                warn(f"{root}: an interrupted redaction left {journal.name}: run redact --write to finish it")
    try:
        redactor = Redactor(kind_list)
        plan = redactor.plan(list(paths), provenance)
        if mode == "write":
            redactor.write(plan, provenance)
    except RedactError as exc:
        raise RunError(str(exc)) from None
    if fmt == "json":
        data = plan.to_json()
        if finished:
            from scanner.scrub import scrub_path

            data["finished_from_journal"] = [scrub_path(f) for f in finished]
        emit(to_json(data), output)
    else:
        emit(format_text(plan, wrote=mode == "write"), output)
    left = plan.pending if mode == "check" else any(f.changes and f.path not in plan.written for f in plan.files)
    sys.exit(EXIT_FAIL if (left or plan.fails) else EXIT_OK)


# --- check --------------------------------------------------------------------------------------------

@cli.command("check")
@click.argument("root", type=click.Path(path_type=Path))
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), default=Path("centinela-out"),
              show_default=True, help="Directory for every output (JSON, SARIF, plan).")
@click.option("--category", default="centinela", show_default=True, help="SARIF category.")
@click.option("--run", "run_dir", type=click.Path(path_type=Path), default=None,
              help="Also cross-check this run against the fixtures (verify-run), score it and apply the gates.")
@format_option()
def check_command(root: Path, out: Path, category: str, run_dir: Path | None, fmt: str) -> None:
    """Everything CI needs: manifest verify, scan (JSON + SARIF) and redact --check on the tree at ROOT; with
    --run, also verify-run, score (report.json/md/html) and the gates."""
    from scanner.check import format_text, run_check
    from scanner.fingerprint import unkeyed_warning_once
    from scanner.fixtures.tree import TreeError
    from scanner.score.gates import ReportError
    from scanner.score.inputs import ScoreInputError
    from scanner.suppress import SuppressionError, fingerprint_key_from_env

    refuse_inside("--out", out, root)
    repo_root = _repo_root()
    try:
        key = fingerprint_key_from_env(repo_root=repo_root)
        report = run_check(root, out, repo_root, category, run_dir, fingerprint_key=key)
    except (TreeError, ScoreInputError, SuppressionError, ReportError) as exc:
        raise RunError(str(exc)) from None
    message = unkeyed_warning_once(report.sensitive_findings, key)
    if message:
        warn(f"{TOOL_NAME}: {message}")
    emit(to_json(report.to_json()) if fmt == "json" else format_text(report) + f"\noutputs in {out}/", None)
    sys.exit(EXIT_OK if report.ok else EXIT_FAIL)


# --- contain ------------------------------------------------------------------------------------------

@cli.command("contain")
@click.argument("file", type=click.Path(path_type=Path))
@format_option()
@output_option
def contain_command(file: Path, fmt: str, output: Path | None) -> None:
    """Print FILE as a model would receive it: an UntrustedText with hidden channels dropped and flagged
    spans fenced. Exit 1 if any injected payload would still be readable outside a fence."""
    from scanner.contain import payload_escapes, render_untrusted
    from scanner.loaders import load_path
    from scanner.scan import Scanner
    from scanner.units import LoadError

    if not file.exists() or file.is_dir():
        raise RunError(f"{file}: no such file")
    refuse_same("FILE", file, "--output", output, "the output would overwrite its input")
    try:
        doc = load_path(file)
    except LoadError as exc:
        raise RunError(f"{exc.path}: {exc.message} ({exc.code})") from None
    findings = Scanner(("injection",)).scan_document(doc)
    untrusted = render_untrusted(doc, findings)
    escaped = payload_escapes(untrusted, findings)
    if fmt == "json":
        data = untrusted.model_dump()
        data["payload_outside_fences"] = escaped
        emit(to_json(data), output)
    else:
        notes = [f"# {len(untrusted.flags)} flagged span(s): "
                 + ", ".join(f"{f.rule_id} {f.vector} ({'fenced' if f.rendered else 'dropped'})" for f in untrusted.flags)
                 if untrusted.flags else "# no injection found"]
        if untrusted.dropped_channels:
            notes.append("# dropped channels: " + ", ".join(untrusted.dropped_channels))
        emit("\n".join(notes + [untrusted.text]), output)
    sys.exit(EXIT_FAIL if escaped else EXIT_OK)


# --- corpus -------------------------------------------------------------------------------------------

@cli.group()
def corpus() -> None:
    """The reviewed injection corpus."""


@corpus.command("check")
@click.option("--corpus", "corpus_dir", type=click.Path(path_type=Path),
              help="Corpus directory (default: ./corpus, else the one beside the package).")
@click.option("--rules", "rules", multiple=True, type=click.Path(path_type=Path), help="Extra rule directory (repeatable).")
@format_option()
@output_option
def corpus_check(corpus_dir, rules, fmt, output) -> None:
    """Run the rule packs over the corpus: recall per vector and false positives."""
    from scanner.corpus import CorpusError, check_corpus, default_corpus_dir, format_text
    from scanner.rulepack import RuleError
    from scanner.scan import Scanner

    directory = corpus_dir or default_corpus_dir()
    try:
        scanner = Scanner(("injection",), _rule_dirs(rules)[0])
        report = check_corpus(directory, scanner)
    except (CorpusError, RuleError) as exc:
        raise RunError(str(exc)) from None
    emit(to_json(report.to_json()) if fmt == "json" else format_text(report), output)
    sys.exit(EXIT_FAIL if report.failed else EXIT_OK)


# --- units: what the loaders see ------------------------------------------------------------------------

@cli.command("units")
@click.argument("file", type=click.Path(path_type=Path))
@format_option()
@output_option
def units_command(file: Path, fmt: str, output: Path | None) -> None:
    """Print the text units a file loads into: channel, exact position and text (for rule authors)."""
    from scanner.loaders import load_path
    from scanner.units import LoadError

    if not file.exists():
        raise RunError(f"{file}: no such file")
    refuse_same("FILE", file, "--output", output, "the output would overwrite its input")
    try:
        doc = load_path(file)
    except LoadError as exc:
        raise RunError(f"{exc.path}: {exc.message}") from None
    rows = []
    for u in doc.units:
        line, col = doc.line_col(u.start) if u.page is None else (None, None)
        rows.append({"channel": u.channel.value, "locator": u.locator, "start": u.start, "end": u.end,
                     "line": line, "column": col, "page": u.page, "text": u.text})
    if fmt == "json":
        emit(to_json({"path": str(file), "kind": doc.kind, "encoding": doc.encoding,
                      "problems": doc.problems, "units": rows}), output)
    else:
        lines = [f"{file}: {doc.kind}, {len(rows)} units" + (f", encoding {doc.encoding}" if doc.encoding else "")]
        lines += [f"  problem: {p}" for p in doc.problems]
        for r in rows:
            where = f"page {r['page']} {r['start']}-{r['end']}" if r["page"] else f"{r['line']}:{r['column']} [{r['start']}-{r['end']}]"
            snippet = " ".join(r["text"].split())
            lines.append(f"  {where} {r['channel']} {r['locator']}: {snippet[:100]}")
        emit("\n".join(lines), output)


# --- serve: replay a provider's recorded exchanges on loopback -------------------------------------------

def _check_scenarios(ctx, param, value):
    """The --scenario schedules parse within their bounds, or it is a usage error (exit 2)."""
    from scanner.serve.catalog import ServeError
    from scanner.serve.scenarios import Scenarios

    try:
        Scenarios.parse(value)
    except ServeError as exc:
        raise click.BadParameter(str(exc).removeprefix("--scenario "), param_hint="--scenario") from None
    return value


@cli.command("serve")
@click.argument("root", type=click.Path(path_type=Path))
@click.option("--provider", "-p", help="Serve this provider at the root of the base URL (default: every provider "
              "of the tree, each under /<provider>/).")
@click.option("--port", type=int, default=0, show_default=True, help="TCP port; 0 picks a free one.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Loopback address to listen on (nothing else "
              "is accepted).")
@click.option("--log", "log_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="JSONL request log (default: centinela-out/serve.jsonl).")
@click.option("--scenario", "scenarios", multiple=True, metavar="[PROVIDER:]OP:STEPS", callback=_check_scenarios,
              help="Schedule of recorded errors, e.g. 'search:429,429,ok' or 'search:5xx*' (repeatable).")
@click.option("--retry-after", "retry_after", type=click.FloatRange(0, 86400), default=None, metavar="SECONDS",
              help="Rewrite the retry-after header of served 429s to SECONDS (e.g. 0.05 in tests).")
@click.option("--idle-timeout", "idle_timeout", type=click.FloatRange(0, 86400), default=60.0, show_default=True,
              metavar="SECONDS", help="Close a connection that sends no complete request (or reads nothing) for "
              "SECONDS; 0: never. A connection held by the timeout fixture is never closed.")
def serve_command(root, provider, port, host, log_path, scenarios, retry_after, idle_timeout) -> None:
    """Replay the recorded fixtures under ROOT over HTTP on loopback for adapter tests (429, 5xx, a connection
    that never answers, partial answers); every request goes to a JSONL log."""
    from scanner.serve.catalog import ServeError
    from scanner.serve.command import DEFAULT_LOG, build_server, run

    refuse_inside("--log", log_path or DEFAULT_LOG, root)
    try:
        server = build_server(root, provider, host=host, port=port, log_path=log_path or DEFAULT_LOG,
                              scenarios=scenarios, retry_after=retry_after, idle_timeout=idle_timeout)
        run(server)
    except ServeError as exc:
        raise RunError(str(exc)) from None


class _SafeLogFormatter(logging.Formatter):
    """A library's log line (pdfminer quotes a PDF's objects) on stderr: one line, every escape visible."""

    def format(self, record: logging.LogRecord) -> str:
        return safe(super().format(record))


def _safe_logging() -> None:
    root = logging.getLogger()
    if not root.handlers:            # otherwise logging's last-resort handler would print records raw
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(_SafeLogFormatter(f"{TOOL_NAME}: %(name)s: %(levelname)s: %(message)s"))
        root.addHandler(handler)


def main(argv=None) -> None:
    """Entry point: every failure to run is exit 2 with one line on stderr, never a traceback."""
    from scanner import netlock

    netlock.install(allow_loopback=True)  # loopback only: the replay server; nothing else is ever reached
    _safe_logging()
    try:
        rc = cli.main(args=argv, prog_name=TOOL_NAME, standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:  # pragma: no cover - click >= 8.2
        click.echo(exc.ctx.get_help(), err=True)
        sys.exit(EXIT_ERROR)
    except click.UsageError as exc:
        cmd = exc.ctx.command_path if exc.ctx else TOOL_NAME
        warn(f"{cmd}: error: {exc.format_message()} (see {cmd} --help)")
        sys.exit(EXIT_ERROR)
    except click.ClickException as exc:
        warn(f"{TOOL_NAME}: error: {exc.format_message()}")
        sys.exit(EXIT_ERROR)
    except click.exceptions.Abort:
        click.echo(f"{TOOL_NAME}: aborted", err=True)
        sys.exit(EXIT_ERROR)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo(f"{TOOL_NAME}: interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(EXIT_OK)
    except netlock.NetworkBlocked as exc:
        warn(f"{TOOL_NAME}: error: {exc}")
        sys.exit(EXIT_ERROR)
    except Exception as exc:  # a bug must still honour the contract: one line, exit 2
        warn(f"{TOOL_NAME}: internal error: {type(exc).__name__}: {exc}")
        sys.exit(EXIT_ERROR)
    sys.exit(rc if isinstance(rc, int) else EXIT_OK)


# The scorer's subcommands live in their own module and register themselves on `cli`.
from scanner import cli_score  # noqa: E402,F401
