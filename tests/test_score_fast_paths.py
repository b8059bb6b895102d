"""The scorer's fast paths give what the plain computations give: a URL's host (one regular expression for
plain URLs, urlsplit for the rest), and a case's relevance look-up (`CaseRelevance.lookup`)."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scanner.fixtures.models import GoldenCase, Judgment
from scanner.score.relevance import CaseRelevance, Families, as_date, host_of


def reference_host(url: str) -> str:
    try:
        return (urlsplit(url.strip()).hostname or "").lower()
    except ValueError:
        return ""


@pytest.mark.parametrize("url", [
    "https://www.gob.mx/a", "HTTPS://WWW.Gob.MX", "http://news.mx?q=1", "https://x.example.org#f", "https://",
    "https:///path", " https://a.b/c ", "https://user@host.mx/", "https://host.mx:8080/", "https://[::1]/",
    "https://[::1/", "https://ho\tst.mx/", "https://host.mx/pa\nth", "https://hóst.mx/", "https://host.mx/ruta/ñ",
    "mailto:a@b.mx", "//host.mx/x", "host.mx", "", "1http://a.mx/", "h-t.t+p://a.mx/", "https://a_b.mx/",
    "https://a.mx%2F/", "\x00https://a.mx/", "https://a.mx/\x00", "https://A.MX.", "https://a..mx/",
])
def test_host_of_written_urls(url):
    assert host_of(url) == reference_host(url)


@settings(max_examples=400, deadline=None)
@given(st.from_regex(r"\A[ \t]?[A-Za-z0-9+.\-:/@\[\]%?#_ñ\t\n]{0,30}\Z"))
def test_host_of_generated(url):
    assert host_of(url) == reference_host(url)


def test_lookup_agrees_with_the_plain_methods():
    case = GoldenCase(id="c1", category="x", web_role="required",
                      expect={"families": ["gov"], "hosts": ["www.gob.mx"]})
    judged = {
        "https://www.gob.mx/a": Judgment(supports=True, group="g1", verified_published_at="2026-01-02"),
        "https://dof.gob.mx/b": Judgment(supports=True, verified_published_at=as_date("2026-03-04")),
        "https://news.mx/c": Judgment(supports=True, group="g2"),
        "https://www.gob.mx/d": Judgment(supports=False, group="g3", verified_published_at="no date"),
    }
    rel = CaseRelevance(case, judged, Families({"gov": ["gob.mx"], "news": ["news.mx"]}))
    for url in [*judged, "https://unjudged.mx/"]:
        j = rel.judgment(url)
        expected = (j, rel.relevant(url), rel.group(url) if rel.relevant(url) else None, rel.host_for_review(url),
                    as_date(j.verified_published_at) if j is not None else None)
        assert rel.lookup(url) == expected
        assert rel.lookup(url) is rel.lookup(url)
    assert rel.lookup("https://dof.gob.mx/b")[1:4] == (True, "https://dof.gob.mx/b", "dof.gob.mx")
