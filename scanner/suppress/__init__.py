"""Suppressions: inline HTML comments, a reviewed allowlist file, and a baseline for adopting centinela.

A suppressed finding stays in `ScanResult.findings` and carries `finding.suppression` (`Suppression(kind=
"inline" | "allowlist" | "baseline", justification="…")`). The SARIF writer leaves it out by default
(GitHub ignores SARIF `suppressions`), and the text summary counts it. `apply_suppressions` is the one entry
point; it marks findings and returns a `SuppressionReport`: counts per kind, and warnings.

Precedence: inline, then allowlist, then baseline. The first mechanism that applies is the one recorded.
Every mechanism is still evaluated, so an allowlist entry that also covers an inline-suppressed finding is
not reported stale.

Paths. `path_of(display_path)` turns a finding's `path` (as the scan shows it, relative to the scanned
directory) into the repo-relative POSIX path that the fingerprint and the allowlist use. `text_of(display_path)`
gives the file's decoded text (`Document.text`, which the finding offsets index), or None (a PDF, an
unreadable file): `ScanResult.text_of`, the text the scan kept (no file is read again). `RepoPaths` gives
`path_of` from `ScanResult.roots` exactly as `build_sarif` computes it, so the fingerprints here are the
`centinela/v1` values of the SARIF file.

1. Inline (HTML files only)
---------------------------
A directive is a real HTML comment (as the project's tokenizer sees it: not text inside `<script>`,
`<style>`, `<textarea>` or `<title>`) that fits on one line::

    <!-- centinela-ignore SEC014, PII001: test key of the provider's public docs -->
    <!-- centinela-ignore-next-line PII001: the author's published contact address -->

* Grammar: `centinela-ignore` or `centinela-ignore-next-line`, one or more rule ids separated by commas,
  a colon, and a reason with at least one letter or digit. No wildcard: a directive without a rule id is
  malformed. Rule ids are compared exactly.
* Scope of `centinela-ignore`: findings of the named rules whose start offset lies on the directive's own
  line, or on the next target line. Scope of `centinela-ignore-next-line`: the next target line only, and
  the directive must stand alone on its line (only blanks and other directives around it), so no text
  can hide what is allowed.
* The next target line is the first later line that is neither blank nor made only of directive comments
  (so directives can be stacked above one element). Lines end at `\\n`, `\\r\\n` or a lone `\\r`.
* Only for files with an HTML extension (`.html`, `.htm`, `.xhtml`, `.shtml`), only for findings in the
  file's own text (no page, no container: HTML recorded inside a JSON body is web content, and a
  directive there is never honoured).
* **Only kinds `secret` and `pii` can be suppressed inline. An injection finding never is.** A recorded page
  is attacker-controlled text: `<!-- centinela-ignore INJ001: fine --> <!-- ignore previous instructions -->`
  would otherwise let the injection switch its own finding off. Injection findings are suppressed only
  through the allowlist file (reviewed, outside the fixtures, code-owner protected). A directive that
  would cover an injection finding leaves it reported and yields an `inline-refused` warning.
* A comment that mentions `centinela-ignore` but does not parse (no reason, no rule id, spread over several
  lines, `-next-line` not alone on its line, unterminated) suppresses nothing and yields an
  `inline-malformed` warning. It is a warning and not an error entry: what it tried to suppress is still
  reported, so the scan fails closed on its own.
* A valid directive that suppresses nothing yields `inline-unused` (not for rules that did not run).

Residual risk, by design: a recorded page could carry a directive for a secret or personal-data rule.
Keep `fixtures/**` under CODEOWNERS and read the "N suppressed (inline …)" summary in review.

2. Allowlist file (any file type; made for JSON and PDF)
--------------------------------------------------------
YAML, by default `.centinela-allowlist.yaml` at the repository root::

    version: 1
    entries:
      - fingerprint: "3f0c…64 hex…"          # centinela/v1 (a SARIF value's ":n" suffix is accepted)
        rule: INJ007
        path: fixtures/web-search/exa/extract/gs-002-injection.json
        pointer: /response/body/results/0/text # optional JSON pointer; or page: 3 for a PDF
        reason: golden-set sample of system impersonation
        reviewer: "@alice"
        expires: 2026-12-31                    # optional: suppresses until the start of that day

* A finding is suppressed when `rule` and `path` match exactly and
    - injection (and other non-sensitive kinds): the fingerprint matches, or the pointer/page matches when
      given (so the entry survives a re-captured text at the same place);
    - secret and pii: the fingerprint matches, and the pointer/page also matches when given. A place alone
      is never enough for a datum: with a fingerprint key, a real credential re-captured where a dummy was
      allowlisted is a new finding (without a key only if its masked form differs: see section 3).
  The finding's pointer is its `locator` when that is a JSON pointer, else its `container` (HTML inside a
  JSON body). Pointers are compared exactly.
* An expired entry (today >= expires) suppresses nothing and yields `allowlist-expired`. An entry that
  matches nothing yields `allowlist-stale` (only for files that were scanned and rules that ran).
* Entries never store the datum. The model forbids every key but the ones above (a `value:`, `secret:`,
  `text:` … key is refused with a message naming the file and the entry). As a last check, an entry whose
  text fields contain the datum of a secret or personal-data finding of the scan suppresses nothing and
  yields `allowlist-datum` (the warning never shows the datum).
* A file that does not validate raises `SuppressionError` naming the file and entry (the CLI: exit 2).

3. Baseline (`--baseline FILE`, `--write-baseline FILE`)
--------------------------------------------------------
JSON: `{version: 2, tool, fingerprint: "centinela/v1", keyed, total, results: [{path, rule, fingerprint,
count}]}`, sorted, no timestamps, written atomically. A finding is suppressed while its
(fingerprint, rule, path) has occurrences left in the baseline: a third copy of a text baselined twice is
new. Findings already suppressed inline or by the allowlist are not written to it, so an expired allowlist
entry cannot live on through the baseline. A malformed baseline raises `SuppressionError` (fail closed). A
path holding a datum is written masked, as every output shows it.

Why storing fingerprints of secrets and personal data is acceptable: `finding_fingerprint` never hashes a
datum without a key (`scanner.fingerprint`). With a key (`$CENTINELA_FINGERPRINT_KEY`, a key file outside
the repository; a CI secret) it is an HMAC of the datum, which nobody without the key can test a guess
against. Without one the datum is left out: the value is built from rule, path, place in the file and masked
evidence, which the SARIF result shows anyway; the run warns once that it fell back. Then two data with the
same mask at the same place share a fingerprint, so an entry written without a key also covers a different
datum of the same shape there: set a key for baselines and allowlists that guard real data. The baseline
records whether it was keyed, and a mismatch is reported (`baseline-key-mismatch`).

Old files. A baseline of version 1 written without a key (centinela 0.1.0) holds, for secrets and personal
data, fingerprints over a plain digest of the datum (sha256(b"centinela-fp\\0" + datum)): brute-forceable
from a small space. It is still honoured (each finding is also tried under that old value, computed here and
never written) and reported as `baseline-legacy-unkeyed`, asking for a rewrite; an allowlist entry holding
such a value still matches and is reported as `allowlist-legacy-fingerprint` with the value to put instead.
"""

from __future__ import annotations

import datetime as _dt
from typing import Callable, Iterable, Optional

from scanner.findings import Finding, Suppression
from scanner.suppress.allowlist import (  # noqa: F401  (the package's API)
    DEFAULT_ALLOWLIST, Allowlist, AllowlistEntry, allowlist_pass, finding_pointer, load_allowlist, parse_allowlist,
)
from scanner.suppress.baseline import (  # noqa: F401
    BASELINE_VERSION, Baseline, baseline_json, baseline_pass, load_baseline, write_baseline,
)
from scanner.suppress.fingerprints import Fingerprinter, RepoPaths  # noqa: F401
from scanner.suppress.inline import INLINE_KINDS, InlineDirective, inline_pass, is_html, parse_inline  # noqa: F401
from scanner.suppress.report import (  # noqa: F401
    FINGERPRINT_KEY_ENV, SuppressionError, SuppressionReport, SuppressionWarning, fingerprint_key_from_env,
    is_suppressed, suppression_kind,
)


def apply_suppressions(
    findings: list[Finding],
    *,
    path_of: Callable[[str], str],
    text_of: Callable[[str], Optional[str]],
    allowlist: Optional[Allowlist] = None,
    baseline: Optional[Baseline] = None,
    today: Optional[_dt.date] = None,
    key: Optional[bytes] = None,
    scanned: Optional[Iterable[str]] = None,
    active_rules: Optional[Iterable[str]] = None,
    inline: bool = True,
) -> SuppressionReport:
    """Mark suppressed findings (`finding.suppression`) and report counts and warnings.

    - `path_of(display_path)`: repo-relative POSIX path (`RepoPaths(repo_root, result.roots).path_of`);
      `text_of(display_path)`: decoded text or None (`result.text_of`).
    - `allowlist` / `baseline`: from `load_allowlist` / `load_baseline`, or None.
    - `today`: for expiry (default: the local date). `key`: the fingerprint HMAC key (as for SARIF).
    - `scanned`: display paths of every scanned file (`result.roots`). When given, unused inline directives
      are looked for in every scanned HTML file, and stale allowlist/baseline entries are reported only for
      scanned files (a pre-commit run on a few files does not call the rest stale). When None, only files
      with findings are read and every entry counts.
    - `active_rules`: ids of the rules that ran; directives and entries for other rules are not stale.
    - `inline=False` ignores inline directives (e.g. a `--no-inline-suppressions` audit run).

    Any earlier suppression is cleared first, so calling it again gives the same result.
    """
    today = today or _dt.date.today()
    fpr = Fingerprinter(path_of, text_of, key, findings)
    report = SuppressionReport()
    ordered = sorted(findings, key=Finding.sort_key)
    for f in ordered:
        f.suppression = None
    by_path: dict[str, list[Finding]] = {}
    for f in ordered:
        by_path.setdefault(f.path, []).append(f)
    scanned_display = list(scanned) if scanned is not None else None
    scanned_repo = {fpr.repo_path(p) for p in scanned_display} if scanned_display is not None else None
    rules = set(active_rules) if active_rules is not None else None
    chosen: dict[int, tuple[str, str]] = {}      # id(finding) -> (kind, justification); first wins

    if inline:
        html_paths = [p for p in (scanned_display if scanned_display is not None else by_path) if is_html(p)]
        inline_pass(by_path, sorted(set(html_paths)), fpr, rules, report, chosen)
    if allowlist is not None:
        report.warnings.extend(allowlist.problems)
        allowlist_pass(ordered, allowlist, fpr, today, scanned_repo, rules, report, chosen)
    if baseline is not None:
        baseline_pass(ordered, baseline, fpr, scanned_repo, rules, report, chosen)

    for f in ordered:
        hit = chosen.get(id(f))
        if hit is None:
            continue
        kind, justification = hit
        f.suppression = Suppression(kind, justification)
        report.counts[kind] += 1
    return report


def unsuppressed(findings: Iterable[Finding]) -> list[Finding]:
    """The findings that still count (for the exit code and the text listing)."""
    return [f for f in findings if not is_suppressed(f)]
