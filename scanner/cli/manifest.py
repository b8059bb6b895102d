"""`centinela manifest verify | update`: the integrity of a fixture tree."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from scanner.cli.common import EXIT_FAIL, EXIT_OK, RunError, emit, format_option, output_option, refuse_inside, to_json
from scanner.terminal import safe


@click.group()
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


COMMANDS = [manifest]
