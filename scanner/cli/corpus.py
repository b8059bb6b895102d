"""`centinela corpus check`: the rule packs over the reviewed injection corpus."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from scanner.cli.common import EXIT_FAIL, EXIT_OK, RunError, emit, format_option, output_option, to_json
from scanner.cli.scan import rule_dirs


@click.group()
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
        scanner = Scanner(("injection",), rule_dirs(rules)[0])
        report = check_corpus(directory, scanner)
    except (CorpusError, RuleError) as exc:
        raise RunError(str(exc)) from None
    emit(to_json(report.to_json()) if fmt == "json" else format_text(report), output)
    sys.exit(EXIT_FAIL if report.failed else EXIT_OK)


COMMANDS = [corpus]
