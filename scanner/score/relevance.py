"""Relevance (contract, Golden set and judgments): which results count, and their origin groups.

A result is relevant when its URL is judged `supports: true` for the case and its host's family is one of the
case's `expect.families`. A host belongs to the family with the longest suffix it ends with, on a label
boundary (`www.gob.mx` ends with `gob.mx`; `notgob.mx` does not). Unjudged URLs count as not relevant and are
listed; a relevant host missing from `expect.hosts` is listed for review, never added.
"""

from __future__ import annotations

import re
from datetime import date
from functools import lru_cache
from urllib.parse import urlsplit

from scanner.fixtures.models import GoldenCase, Judgment


# A URL whose host urlsplit would read with no work to do: a scheme, `//`, a host of letters, digits, dots and
# hyphens (no user, port, brackets or non-ASCII: nothing `hostname` reparses), then nothing urlsplit removes.
_PLAIN_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://([A-Za-z0-9.\-]*)(?:[/?#][^\t\n\r]*)?")


@lru_cache(maxsize=1 << 18)
def host_of(url: str) -> str:
    """`urlsplit(url.strip()).hostname`, lower-cased ("" for none or an invalid URL); a plain URL's host is read
    by one regular expression (tests/test_score_fast_paths.py checks it against urlsplit)."""
    text = url.strip()
    m = _PLAIN_URL.fullmatch(text)
    if m is not None:
        return m.group(1).lower()
    try:
        return (urlsplit(text).hostname or "").lower()
    except ValueError:
        return ""


class Families:
    def __init__(self, families: dict[str, list[str]]):
        self._suffixes = sorted(((s.lower().strip("."), name) for name, sufs in families.items() for s in sufs or []),
                                key=lambda t: -len(t[0]))
        self.family_of = lru_cache(maxsize=None)(self._family_of)

    def _family_of(self, host: str) -> str | None:
        for suffix, name in self._suffixes:
            if host == suffix or host.endswith("." + suffix):
                return name
        return None


def as_date(value) -> date | None:
    """A date from `YYYY-MM-DD` or an ISO date-time (its own calendar date, as written); None if absent/invalid."""
    if value is None:
        return None
    if isinstance(value, date):
        return value if type(value) is date else value.date()
    return _date_of(str(value))


@lru_cache(maxsize=1 << 16)
def _date_of(value: str) -> date | None:
    text = value.strip()
    if not text:
        return None
    try:
        if len(text) == 10:
            return date.fromisoformat(text)
        from scanner.fixtures.tree import parse_timestamp

        ts = parse_timestamp(text)
        return ts.date() if ts else None
    except ValueError:
        return None


class CaseRelevance:
    """Relevance of URLs for one case."""

    def __init__(self, case: GoldenCase, judged: dict[str, Judgment], families: Families):
        self.case = case
        self.judged = judged
        self.families = families
        self.wanted = set(case.expect.families)
        self.expected_hosts = set(case.expect.hosts)
        self._relevant: dict[str, bool] = {}
        self._seen: dict[str, tuple] = {}

    def lookup(self, url: str) -> tuple:
        """(judgment or None, relevant, group or None, host for review or None, the judgment's verified date or
        None) of a URL, computed once per URL: what `judgment`, `relevant`, `group`, `host_for_review` and
        `as_date(judgment.verified_published_at)` give, in one dictionary look-up."""
        got = self._seen.get(url)
        if got is None:
            j = self.judged.get(url)
            verified = as_date(j.verified_published_at) if j is not None else None
            if self.relevant(url):
                got = (j, True, self.group(url), self.host_for_review(url), verified)
            else:
                got = (j, False, None, None, verified)
            self._seen[url] = got
        return got

    def judgment(self, url: str) -> Judgment | None:
        return self.judged.get(url)

    def relevant(self, url: str) -> bool:
        got = self._relevant.get(url)
        if got is None:
            j = self.judged.get(url)
            got = self._relevant[url] = bool(j is not None and j.supports
                                             and self.families.family_of(host_of(url)) in self.wanted)
        return got

    def group(self, url: str) -> str:
        j = self.judged.get(url)
        return (j.group if j is not None and j.group else url)

    def host_for_review(self, url: str) -> str | None:
        """The host of a relevant result that `expect.hosts` does not list yet."""
        if not self.relevant(url):
            return None
        host = host_of(url)
        return host if host not in self.expected_hosts else None
