"""Provider adapters: recorded responses → NormalisedResponse.

Samples under tests/data/providers/<provider>/ are synthetic, written from the shapes in research §4; the
example tree's Tavily and Exa envelopes are read too. Expected values were worked out by hand from the files.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scanner.providers import (
    PROVIDERS,
    AdapterError,
    NormalisedResponse,
    detect_provider,
    read_fixture,
    read_response,
)
from scanner.providers.dates import parse_published
from scanner.providers.envelope import host_of

from conftest import EXAMPLE_TREE

DATA = Path(__file__).parent / "data" / "providers"


def sample(provider: str, name: str) -> NormalisedResponse:
    return read_fixture(DATA / provider / f"{name}.json")


def by_rank(resp: NormalisedResponse) -> dict[int, tuple]:
    return {r.rank: (r.published_at, r.published_at_precision, r.published_at_raw) for r in resp.results}


# --- dates ------------------------------------------------------------------------------------------------

CAPTURE = datetime(2026, 10, 2, 1, 30, tzinfo=timezone.utc)
END_OF_MARCH = datetime(2026, 3, 31, 12, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    "raw, anchor, value, precision",
    [
        ("3 days ago", CAPTURE, "2026-09-29", "relative"),
        ("2 hours ago", CAPTURE, "2026-10-01", "relative"),  # 01:30 − 2 h crosses midnight
        ("5 hours ago", END_OF_MARCH, "2026-03-31", "relative"),
        ("1 week ago", CAPTURE, "2026-09-25", "relative"),
        ("1 month ago", CAPTURE, "2026-09-02", "relative"),
        ("1 month ago", END_OF_MARCH, "2026-02-28", "relative"),  # 31 March − 1 month, clamped
        ("2 years ago", datetime(2028, 2, 29, tzinfo=timezone.utc), "2026-02-28", "relative"),
        ("an hour ago", CAPTURE, "2026-10-02", "relative"),
        ("a day ago", CAPTURE, "2026-10-01", "relative"),
        ("yesterday", CAPTURE, "2026-10-01", "relative"),
        ("Today", CAPTURE, "2026-10-02", "relative"),
        ("3d ago", CAPTURE, "2026-09-29", "relative"),
        ("hace 3 días", CAPTURE, "2026-09-29", "relative"),
        ("Hace 3 DIAS", CAPTURE, "2026-09-29", "relative"),
        ("hace 2 semanas", END_OF_MARCH, "2026-03-17", "relative"),
        ("hace un mes", END_OF_MARCH, "2026-02-28", "relative"),
        ("hace 1 año", CAPTURE, "2025-10-02", "relative"),
        ("hace 20 min", CAPTURE, "2026-10-02", "relative"),
        ("ayer", END_OF_MARCH, "2026-03-30", "relative"),
        ("anteayer", END_OF_MARCH, "2026-03-29", "relative"),
        ("Mar 3", END_OF_MARCH, "2026-03-03", "relative"),
        ("Dec 24", END_OF_MARCH, "2025-12-24", "relative"),  # no year: the latest one not after capture
        ("3 de marzo", END_OF_MARCH, "2026-03-03", "relative"),
        ("March 3, 2025", None, "2025-03-03", "day"),
        ("Mar 3, 2025", None, "2025-03-03", "day"),
        ("Mar. 3 2025", None, "2025-03-03", "day"),
        ("3 mar 2025", None, "2025-03-03", "day"),
        ("3 de marzo de 2025", None, "2025-03-03", "day"),
        ("martes, 3 de marzo de 2026", None, "2026-03-03", "day"),
        ("29 sept 2026", None, "2026-09-29", "day"),
        ("1 ene. 2026", None, "2026-01-01", "day"),
        ("2025-03-03", None, "2025-03-03", "day"),
        ("25/03/2026", None, "2026-03-25", "day"),
        ("2025-03-03T10:00:00Z", None, "2025-03-03T10:00:00Z", "exact"),
        ("2026-09-29T16:04:00.000Z", None, "2026-09-29T16:04:00Z", "exact"),
        ("2026-09-29T10:04:00-06:00", None, "2026-09-29T10:04:00-06:00", "exact"),
        ("2026-09-30T18:45:00", None, "2026-09-30T18:45:00", "exact"),
        ("Tue, 29 Sep 2026 16:04:00 GMT", None, "2026-09-29T16:04:00Z", "exact"),
    ],
)
def test_dates(raw, anchor, value, precision):
    parsed = parse_published(raw, anchor)
    assert (parsed.value, parsed.precision, parsed.problem) == (value, precision, None)


@pytest.mark.parametrize(
    "raw, anchor, problem",
    [
        ("hace mucho", CAPTURE, "date 'hace mucho' not understood"),
        ("3 days ago", None, "relative date '3 days ago' needs a capture time"),
        ("03/04/2026", None, "date '03/04/2026' is ambiguous (day/month or month/day)"),
        ("February 30, 2026", None, "date 'February 30, 2026' is not a valid calendar date"),
        ("marzo de 2025", None, "date 'marzo de 2025' names a month, not a day"),
        ("3 fortnights ago", CAPTURE, "relative date '3 fortnights ago': unknown unit 'fortnights'"),
    ],
)
def test_dates_not_guessed(raw, anchor, problem):
    parsed = parse_published(raw, anchor)
    assert (parsed.value, parsed.precision, parsed.problem) == (None, None, problem)


# --- Tavily -----------------------------------------------------------------------------------------------

def test_tavily_news_search():
    r = sample("tavily", "search-news")
    assert (r.provider, r.op, r.endpoint, r.status, r.outcome, r.fallback_cause) == ("tavily", "search", "/search", 200, "ok", None)
    assert r.query == "Cementos del Pacífico ampliación planta Manzanillo"
    assert r.cost_units == {"credits": 2} and r.cost_usd is None
    assert r.captured_at == "2026-10-02T14:30:00Z"
    assert [x.host for x in r.results] == ["www.eleconomista.com.mx", "www.colima.gob.mx", "www.milenio.com"]
    assert r.results[2].url == "https://WWW.Milenio.com:443/negocios/cementos-del-pacifico-manzanillo"
    assert by_rank(r) == {
        1: ("2026-09-29T16:04:00Z", "exact", "Tue, 29 Sep 2026 16:04:00 GMT"),
        2: ("2026-09-30", "day", "2026-09-30"),
        3: (None, None, None),
    }
    assert r.results[0].snippet == "La cementera colimense invertirá 85 millones de dólares en un segundo horno."
    assert r.problems == []


def test_tavily_extract_failed_and_silent_drop():
    r = sample("tavily", "extract-silent-drop")
    assert (r.op, r.outcome, r.partial, r.fallback_cause) == ("extract", "ok", True, None)
    assert len(r.requested_urls) == 5
    # The second URL was asked with a trailing slash and came back without: that is a match, not a drop.
    assert [x.url for x in r.results] == [
        "https://www.cementosdelpacifico.com.mx/nosotros",
        "https://www.gob.mx/se/prensa/inversion-cementos-del-pacifico",
    ]
    assert r.failed_urls == ["https://www.jornada.com.mx/notas/2026/09/30/cementos-del-pacifico"]
    assert r.dropped_urls == [
        "https://www.directorioindustrial.com.mx/empresa/cementos-del-pacifico",
        "https://www.excelsior.com.mx/nacional/cementera-colima",
    ]
    assert r.missing_urls == r.failed_urls + r.dropped_urls
    assert r.cost_units == {"credits": 0}
    assert r.problems == [
        "silent drop: https://www.directorioindustrial.com.mx/empresa/cementos-del-pacifico was requested but is "
        "neither in the results nor reported failed",
        "silent drop: https://www.excelsior.com.mx/nacional/cementera-colima was requested but is neither in the "
        "results nor reported failed",
    ]


@pytest.mark.parametrize("code", [432, 433])
def test_tavily_plan_limits_are_budget(code):
    r = sample("tavily", f"{code}-budget")
    assert (r.status, r.outcome, r.error_class, r.retryable, r.fallback_cause) == (code, "error", "budget", False, "budget")
    assert r.error_message.startswith("This request exceeds")


def test_retry_after_as_http_date_counts_from_the_response_date():
    r = sample("tavily", "429-retry-date")
    assert (r.outcome, r.error_class, r.retryable, r.fallback_cause) == ("rate_limited", "rate_limit", True, "error")
    assert r.retry_after_s == 58.0  # 14:20:00 − 14:19:02


def test_retry_after_date_without_a_date_header_is_a_problem():
    env = json.loads((DATA / "tavily" / "429-retry-date.json").read_text(encoding="utf-8"))
    del env["response"]["headers"]["date"]
    r = read_response("tavily", env)
    assert r.retry_after_s is None
    assert r.problems == [
        "retry-after 'Fri, 02 Oct 2026 14:20:00 GMT' is a date but the response has no date header to count from"
    ]


def test_bare_body_needs_no_envelope():
    r = sample("tavily", "bare-search")  # provider from the folder name
    assert (r.provider, r.op, r.status, r.outcome, r.endpoint, r.captured_at) == ("tavily", "search", None, "ok", None, None)
    assert [x.url for x in r.results] == ["https://www.cementosdelpacifico.com.mx/"]


# --- Exa --------------------------------------------------------------------------------------------------

def test_exa_search_cost_and_dates():
    r = sample("exa", "search")
    assert (r.op, r.outcome, r.cost_usd, r.cost_units) == ("search", "ok", 0.008, {})
    assert by_rank(r) == {
        1: ("2026-09-29T16:04:00Z", "exact", "2026-09-29T16:04:00.000Z"),
        2: (None, None, None),
        3: ("2026-09-30", "day", "2026-09-30"),
    }
    # highlight first, else the summary
    assert [x.snippet for x in r.results] == [
        "Invertirá 85 millones de dólares en un segundo horno.",
        "Productora de cemento gris en Colima desde 1987.",
        None,
    ]


def test_exa_contents_error_statuses():
    r = sample("exa", "contents-errors")
    assert (r.op, r.endpoint, r.outcome, r.partial, r.cost_usd) == ("extract", "/contents", "ok", True, 0.002)
    assert r.failed_urls == [
        "https://www.jornada.com.mx/notas/2026/09/30/cementos-del-pacifico",
        "https://www.proceso.com.mx/cementera-colima-2026",
    ]
    assert r.missing_urls == r.failed_urls and r.dropped_urls == []
    # Exa read http://cementosdelpacifico… at its final URL; `id` ties it to the request.
    second = r.results[1]
    assert (second.url, second.source_url) == (
        "https://www.cementosdelpacifico.com.mx/sala-de-prensa/",
        "http://cementosdelpacifico.com.mx/sala-de-prensa",
    )
    assert r.problems == []


def test_exa_402_is_budget():
    r = sample("exa", "402-no-credits")
    assert (r.outcome, r.error_class, r.fallback_cause, r.retryable) == ("error", "budget", "budget", False)
    assert r.results == [] and r.cost_usd is None


# --- Brave ------------------------------------------------------------------------------------------------

def test_brave_ages_resolve_against_the_capture_time():
    r = sample("brave", "search")  # captured Fri, 02 Oct 2026 01:30:00 GMT
    assert (r.op, r.outcome, r.query, r.cost_usd, r.cost_units) == ("search", "ok", "Cementos del Pacífico Manzanillo", None, {})
    assert by_rank(r) == {
        1: ("2026-09-29", "relative", "3 days ago"),
        2: ("2026-10-01", "relative", "2 hours ago"),
        3: ("2026-09-25", "relative", "1 week ago"),
        4: ("2025-03-03", "day", "March 3, 2025"),
        5: ("2026-09-29", "relative", "hace 3 días"),
        6: ("2026-09-30T18:45:00", "exact", "2026-09-30T18:45:00"),  # page_age preferred over age
        7: ("2026-10-01", "relative", "yesterday"),
        8: ("2026-09-02", "relative", "1 month ago"),
        9: (None, None, "hace mucho"),
    }
    assert r.problems == ["result #9: date 'hace mucho' not understood"]


def test_brave_capture_time_argument_overrides_the_date_header():
    r = read_fixture(DATA / "brave" / "search.json", captured_at="2026-10-10T12:00:00Z")
    assert r.captured_at == "2026-10-10T12:00:00Z"
    assert r.results[0].published_at == "2026-10-07"


def test_brave_429_rate_versus_quota():
    rate = sample("brave", "429-rate")
    quota = sample("brave", "429-quota")
    assert (rate.outcome, rate.error_class, rate.retryable, rate.fallback_cause) == ("rate_limited", "rate_limit", True, "error")
    assert (quota.outcome, quota.error_class, quota.retryable, quota.fallback_cause) == ("error", "budget", False, "budget")
    # No retry-after header: the per-second window's reset for the rate, the monthly one for the quota.
    assert (rate.retry_after_s, quota.retry_after_s) == (1.0, 2505540.0)


def test_brave_no_web_section_is_no_result():
    r = sample("brave", "no-results")
    assert (r.outcome, r.error_class, r.fallback_cause, r.results) == ("ok", "no_result", "no_result", [])


# --- SerpAPI ----------------------------------------------------------------------------------------------

def test_serpapi_positions_and_spanish_dates():
    r = sample("serpapi", "search")
    assert r.query == "Cementos del Pacífico"
    assert [x.rank for x in r.results] == [1, 2, 4]  # the provider's position, not the list index
    assert by_rank(r) == {
        1: (None, None, None),
        2: ("2026-09-29", "day", "29 sept 2026"),
        4: ("2026-09-30", "relative", "hace 2 días"),
    }


def test_serpapi_fully_empty_is_no_result_not_error():
    r = sample("serpapi", "fully-empty")
    assert (r.status, r.outcome, r.error_class, r.fallback_cause) == (200, "ok", "no_result", "no_result")
    assert r.error_message == "Google hasn't returned any results for this query."


def test_serpapi_429_out_of_searches_is_budget_hourly_is_rate():
    budget = sample("serpapi", "429-out-of-searches")
    rate = sample("serpapi", "429-hourly")
    assert (budget.outcome, budget.error_class, budget.fallback_cause) == ("error", "budget", "budget")
    assert (rate.outcome, rate.error_class, rate.fallback_cause) == ("rate_limited", "rate_limit", "error")


# --- Serper -----------------------------------------------------------------------------------------------

def test_serper_display_dates_and_credits():
    r = sample("serper", "search")  # captured Tue, 31 Mar 2026 12:00:00 GMT
    assert r.cost_units == {"credits": 1}
    assert by_rank(r) == {
        1: (None, None, None),
        2: ("2026-02-28", "relative", "1 month ago"),
        3: ("2026-03-17", "relative", "hace 2 semanas"),
        4: ("2026-03-30", "relative", "ayer"),
        5: ("2026-03-31", "relative", "5 hours ago"),
        6: ("2026-03-03", "relative", "Mar 3"),
        7: ("2025-12-24", "relative", "Dec 24"),
        8: ("2025-03-03", "day", "3 mar 2025"),
    }


def test_serper_out_of_credits_is_budget():
    r = sample("serper", "400-no-credits")
    assert (r.status, r.outcome, r.error_class, r.fallback_cause) == (400, "error", "budget", "budget")


def test_timeout_envelope():
    r = sample("serper", "timeout")
    assert (r.status, r.outcome, r.error_class, r.retryable, r.fallback_cause) == (None, "timeout", "timeout", True, "error")
    assert (r.captured_at, r.error_message, r.query) == ("2026-03-31T12:02:00Z", "timeout after 15000 ms", "Cementos del Pacífico")


# --- Firecrawl --------------------------------------------------------------------------------------------

def test_firecrawl_search_web_then_news():
    r = sample("firecrawl", "search")
    assert r.cost_units == {"credits": 2}
    assert [(x.rank, x.host) for x in r.results] == [
        (1, "www.cementosdelpacifico.com.mx"), (2, "www.colima.gob.mx"), (3, "www.eleconomista.com.mx"),
    ]
    assert by_rank(r)[3] == ("2026-10-02", "relative", "3 hours ago")  # captured 17:00 UTC
    assert r.results[2].snippet == "85 mdd en un segundo horno."


def test_firecrawl_scrape_final_url_and_published_meta():
    r = sample("firecrawl", "scrape")
    assert (r.op, r.outcome, r.partial, r.missing_urls, r.problems) == ("scrape", "ok", False, [], [])
    page = r.results[0]
    assert page.url == "https://www.eleconomista.com.mx/empresas/Cementos-del-Pacifico-amplia-planta-20260929-0042.html"
    assert page.source_url == "https://www.eleconomista.com.mx/empresas/cementos-del-pacifico-planta"
    assert (page.published_at, page.published_at_precision) == ("2026-09-29T10:04:00-06:00", "exact")


def test_firecrawl_scrape_of_a_404_target_fails_that_url():
    r = sample("firecrawl", "scrape-404")
    url = "https://www.jornada.com.mx/notas/2026/09/30/cementos-del-pacifico"
    assert (r.status, r.outcome, r.error_class, r.fallback_cause) == (200, "ok", "target", "error")
    assert (r.results, r.failed_urls, r.missing_urls, r.partial) == ([], [url], [url], True)


def test_firecrawl_batch_sequence_submit_status_errors():
    r = sample("firecrawl", "batch-sequence")
    assert (r.op, r.outcome, r.partial, r.cost_units) == ("batch", "ok", True, {"credits": 3})
    assert r.captured_at == "2026-10-02T17:11:30Z"  # the status call's
    assert len(r.requested_urls) == 6
    assert [x.url for x in r.results] == [
        "https://www.cementosdelpacifico.com.mx/nosotros",
        "https://www.colima.gob.mx/noticias/cementos-del-pacifico/",
    ]
    assert r.failed_urls == [
        "htp//cementos del pacifico",  # invalidURLs at submit
        "https://www.proceso.com.mx/cementera-colima-2026",  # /errors
        "https://www.linkedin.com/company/cementos-del-pacifico",  # robotsBlocked
        "https://www.jornada.com.mx/notas/2026/09/30/cementos-del-pacifico",  # statusCode 404 in data
    ]
    assert r.missing_urls == [
        "https://www.jornada.com.mx/notas/2026/09/30/cementos-del-pacifico",
        "https://www.proceso.com.mx/cementera-colima-2026",
        "https://www.linkedin.com/company/cementos-del-pacifico",
        "htp//cementos del pacifico",
    ]
    assert r.dropped_urls == []
    assert r.problems == ["batch completed 3 of 5"]


def test_firecrawl_batch_status_alone_is_partial_but_cannot_name_the_missing():
    r = sample("firecrawl", "batch-status")
    assert (r.partial, r.requested_urls, r.missing_urls) == (True, None, [])
    assert r.failed_urls == ["https://www.jornada.com.mx/notas/2026/09/30/cementos-del-pacifico"]
    assert r.problems == [
        "batch completed 3 of 5",
        "requested URLs unknown: the batch submit call is not in this fixture",
    ]


def test_firecrawl_batch_submit_alone_reports_invalid_urls():
    r = sample("firecrawl", "batch-submit")
    assert (r.partial, r.failed_urls, r.missing_urls, r.results) == (
        True, ["htp//cementos del pacifico"], ["htp//cementos del pacifico"], [],
    )


def test_firecrawl_402_is_budget():
    r = sample("firecrawl", "402-credits")
    assert (r.outcome, r.error_class, r.fallback_cause) == ("error", "budget", "budget")
    assert r.error_message.startswith("Insufficient credits")


def test_firecrawl_batch_as_har():
    calls = json.loads((DATA / "firecrawl" / "batch-sequence.json").read_text(encoding="utf-8"))
    entries = []
    for c in calls:
        req, res = c["request"], c["response"]
        entry = {
            "startedDateTime": "2026-10-02T17:00:00.000Z",
            "request": {"method": req["method"], "url": req["url"],
                        "headers": [{"name": k, "value": v} for k, v in req["headers"].items()]},
            "response": {"status": res["status"], "headers": [{"name": k, "value": v} for k, v in res["headers"].items()],
                         "content": {"mimeType": "application/json", "text": json.dumps(res["body"])}},
        }
        if "body" in req:
            entry["request"]["postData"] = {"mimeType": "application/json", "text": json.dumps(req["body"])}
        entries.append(entry)
    har = read_response(None, {"log": {"version": "1.2", "entries": entries}})
    assert har.model_dump(exclude={"captured_at"}) == sample("firecrawl", "batch-sequence").model_dump(exclude={"captured_at"})


# --- Jina -------------------------------------------------------------------------------------------------

def test_jina_reader_json():
    r = sample("jina", "reader")
    assert (r.op, r.endpoint, r.outcome, r.partial, r.cost_units) == ("reader", "/<url>", "ok", False, {"tokens": 1342})
    assert r.requested_urls == ["https://www.eleconomista.com.mx/empresas/cementos-del-pacifico-planta"]
    assert r.results[0].source_url == r.requested_urls[0]
    assert (r.results[0].published_at, r.problems) == ("2026-09-29T16:04:00Z", [])


def test_jina_reader_text_form():
    r = sample("jina", "reader-text")
    page = r.results[0]
    assert (page.title, page.url, page.published_at) == (
        "Colima recibe inversión de Cementos del Pacífico",
        "https://www.colima.gob.mx/noticias/cementos-del-pacifico",
        "2026-09-30T12:00:00-06:00",
    )
    assert (r.partial, r.cost_units, r.problems) == (False, {}, [])


def test_jina_search_tokens():
    r = sample("jina", "search")
    assert (r.op, r.query, r.cost_units) == ("search", "Cementos del Pacífico Manzanillo", {"tokens": 10000})
    assert by_rank(r)[2] == ("2026-09-30", "day", "Sep 30, 2026")


def test_jina_402_budget_and_422_target():
    budget = sample("jina", "402-balance")
    target = sample("jina", "422-target")
    assert (budget.outcome, budget.error_class, budget.fallback_cause, budget.failed_urls) == ("error", "budget", "budget", [])
    assert budget.missing_urls == ["https://www.cementosdelpacifico.com.mx/nosotros"] and budget.partial
    url = "https://www.jornada.com.mx/notas/2026/09/30/cementos-del-pacifico"
    assert (target.outcome, target.error_class, target.fallback_cause) == ("error", "target", "error")
    assert (target.failed_urls, target.missing_urls) == ([url], [url])
    assert target.error_message.endswith("Target URL returned error 404")


def test_503_with_an_empty_body():
    r = sample("jina", "503-empty")
    assert (r.status, r.outcome, r.error_class, r.retryable, r.fallback_cause) == (503, "server_error", "server", True, "error")
    assert (r.error_message, r.results, r.problems) == (None, [], [])


# --- registry, detection, errors --------------------------------------------------------------------------

@pytest.mark.parametrize(
    "url, provider",
    [
        ("https://api.tavily.com/search", "tavily"),
        ("https://api.exa.ai/contents", "exa"),
        ("https://api.search.brave.com/res/v1/web/search?q=x", "brave"),
        ("https://serpapi.com/search.json?q=x", "serpapi"),
        ("https://google.serper.dev/search", "serper"),
        ("https://api.firecrawl.dev/v2/scrape", "firecrawl"),
        ("https://r.jina.ai/https://www.gob.mx/", "jina"),
        ("https://s.jina.ai/?q=x", "jina"),
        ("https://www.gob.mx/cofepris", None),
        ("https://evil.api.tavily.com.example.test/search", None),
    ],
)
def test_detect_provider(url, provider):
    assert detect_provider({"request": {"method": "GET", "url": url}, "response": {"status": 200, "body": ""}}) == provider


def test_registry_and_detection_of_bare_bodies():
    assert sorted(PROVIDERS) == ["brave", "exa", "firecrawl", "jina", "serpapi", "serper", "tavily"]
    assert detect_provider({"results": []}) is None


def test_adapter_errors_are_one_line_naming_the_input(tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text('{"request": ', encoding="utf-8")
    cases = [
        (lambda: read_fixture(bad), f"{bad}: not JSON: "),
        (lambda: read_fixture(tmp_path / "absent.json"), f"{tmp_path / 'absent.json'}: cannot read: "),
        (lambda: read_fixture(b"\xff\xfe{}"), "<bytes>: not UTF-8 text"),
        (lambda: read_fixture(b'{"results": []}'), "<bytes>: cannot tell the provider"),
        (lambda: read_response("bing", {"results": []}), "<response>: unknown provider 'bing' (known: brave, exa, "),
        (lambda: read_response("tavily", {"results": []}, captured_at="last tuesday"),
         "<response>: captured_at 'last tuesday' is not an ISO 8601 or HTTP date"),
        (lambda: read_response("tavily", [json.loads((DATA / "tavily" / "432-budget.json").read_text())] * 2),
         "<response>: 2 recorded calls; only a tavily single call can be read"),
        (lambda: read_fixture(DATA / "exa" / "search.json", provider="tavily"),
         f"{DATA / 'exa' / 'search.json'}: the request went to exa's API (api.exa.ai), not tavily's"),
        (lambda: read_response("firecrawl", [json.loads((DATA / "firecrawl" / "search.json").read_text())] * 2),
         "<response>: https://api.firecrawl.dev/v2/search is not a batch scrape call; only a batch can be a "
         "sequence of calls"),
    ]
    for call, start in cases:
        with pytest.raises(AdapterError) as info:
            call()
        assert str(info.value).startswith(start), str(info.value)
        assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    "url, host",
    [
        ("https://user:pw@WWW.Ejemplo.com.MX:8443/a?b=1", "www.ejemplo.com.mx"),
        ("https://www.Señal.mx/nota", "www.señal.mx"),  # IDNA as given, never converted
        ("https://xn--seal-5qa.mx/nota", "xn--seal-5qa.mx"),
        ("http://[2001:db8::1]:8080/x", "2001:db8::1"),
        ("/relative/path", ""),
    ],
)
def test_host(url, host):
    assert host_of(url) == host


def test_capture_time_prefers_recorded_at_to_the_date_header():
    env = json.loads((DATA / "brave" / "search.json").read_text(encoding="utf-8"))
    env["recorded_at"] = "2026-10-05T09:00:00Z"
    r = read_response("brave", env)
    assert (r.captured_at, r.results[0].published_at) == ("2026-10-05T09:00:00Z", "2026-10-02")


def test_bytes_with_a_provider_and_a_capture_time():
    body = b'{"organic": [{"title": "t", "link": "https://www.gob.mx/x", "date": "2 days ago", "position": 1}]}'
    r = read_fixture(body, provider="serper", captured_at=datetime(2026, 1, 1, 3, 0, tzinfo=timezone.utc))
    assert (r.op, r.captured_at, r.results[0].published_at) == ("search", "2026-01-01T03:00:00Z", "2025-12-30")


def test_every_sample_serialises_to_json_and_back():
    for path in sorted(DATA.glob("*/*.json")):
        r = read_fixture(path)
        assert NormalisedResponse.model_validate_json(r.model_dump_json()) == r, path


# --- the example tree (tavily and exa) --------------------------------------------------------------------

def tree_files(kind: str) -> list[Path]:
    return sorted(p for provider in ("tavily", "exa") for p in (EXAMPLE_TREE / provider / kind).glob("*.json"))


def manifest() -> dict:
    return json.loads((EXAMPLE_TREE / "manifest.json").read_text(encoding="utf-8"))["files"]


def test_tree_capture_times_match_the_manifest():
    files = manifest()
    paths = [p for kind in ("search", "extract", "fetch", "errors") for p in tree_files(kind)]
    assert len(paths) == 73  # 22 search, 3 extract, 4 errors per provider; 7 fetches for tavily, 8 for exa
    for path in paths:
        rel = path.relative_to(EXAMPLE_TREE).as_posix()
        assert read_fixture(path).captured_at == files[rel]["captured_at"], rel


@pytest.mark.parametrize("path", tree_files("search"), ids=lambda p: f"{p.parts[-3]}/{p.name}")
def test_tree_search(path):
    r = read_fixture(path)
    provider = path.parts[-3]
    request = json.loads(path.read_text(encoding="utf-8"))["request"]["body"]
    assert (r.provider, r.op, r.status, r.outcome, r.fallback_cause, r.partial) == (provider, "search", 200, "ok", None, False)
    assert r.query == request["query"]
    assert 1 <= len(r.results) <= request.get("max_results", request.get("numResults"))
    assert [x.rank for x in r.results] == list(range(1, len(r.results) + 1))
    assert all(x.host and x.host == x.host.lower() and x.url.startswith("https://") for x in r.results)
    if provider == "tavily":
        assert (r.cost_units, r.cost_usd) == ({"credits": 1}, None)
    else:
        assert r.cost_usd is not None and r.cost_usd > 0 and r.cost_units == {}
    assert r.problems == []


def test_tree_search_dates():
    r = read_fixture(EXAMPLE_TREE / "exa" / "search" / "gs-001.json")
    assert [(x.rank, x.published_at, x.published_at_precision) for x in r.results] == [
        (1, "2026-09-18", "day"), (2, None, None), (3, "2026-07-14", "day"), (4, "2026-09-24", "day"), (5, "2025-10-02", "day"),
    ]
    dated = [x for p in tree_files("search") if p.parts[-3] == "tavily" for x in read_fixture(p).results if x.published_at_raw]
    assert dated and all(x.published_at is not None for x in dated)


EXTRACT_GS005_REQUESTED = [
    "https://www.acerosdelbajio.com.mx/nosotros/planta-celaya",
    "https://www.elfinanciero.com.mx/bajio/2026/02/24/aceros-del-bajio-amplia-capacidad-de-su-planta-en-celaya/",
    "https://www.eleconomista.com.mx/estados/Aceros-del-Bajio-invertira-120-millones-de-dolares-en-Celaya-20260225-0018.html",
    "https://www.milenio.com/negocios/aceros-del-bajio-invertira-120-mdd-en-celaya",
    "https://www.gob.mx/se/prensa/economia-celebra-inversion-de-aceros-del-bajio-en-guanajuato",
    "https://www.acerosdelbajio.com.mx/sala-de-prensa/2026/ampliacion-planta-celaya",
    "https://expansion.mx/empresas/2025/11/03/acereras-del-bajio-enfrentan-importaciones",
    "https://www.directorioindustrial.com.mx/empresa/aceros-del-bajio",
    "https://www.linkedin.com/posts/aceros-del-bajio_celaya-ampliacion-activity-7301",
    "https://www.eluniversal.com.mx/cartera/el-acero-mexicano-ante-los-aranceles-de-2026/",
]


def test_tree_tavily_extract_partial():
    r = read_fixture(EXAMPLE_TREE / "tavily" / "extract" / "gs-005-partial.json")
    missing = [EXTRACT_GS005_REQUESTED[i] for i in (3, 6, 8, 9)]  # milenio, expansion, linkedin, eluniversal
    assert (r.op, r.outcome, r.partial, len(r.results)) == ("extract", "ok", True, 6)
    assert r.requested_urls == EXTRACT_GS005_REQUESTED
    assert (r.failed_urls, r.missing_urls, r.dropped_urls) == (missing, missing, [])
    assert r.cost_units == {"credits": 1}


def test_tree_exa_contents_partial():
    r = read_fixture(EXAMPLE_TREE / "exa" / "extract" / "gs-005-partial.json")
    missing = [EXTRACT_GS005_REQUESTED[i] for i in (4, 6, 8, 9)]  # gob.mx/se, expansion, linkedin, eluniversal
    assert (r.op, r.outcome, r.partial, len(r.results), r.cost_usd) == ("extract", "ok", True, 6, 0.006)
    assert (r.failed_urls, r.missing_urls, r.dropped_urls) == (missing, missing, [])


@pytest.mark.parametrize("path", [p for p in tree_files("extract") if "partial" not in p.name], ids=lambda p: f"{p.parts[-3]}/{p.name}")
def test_tree_extract_complete(path):
    r = read_fixture(path)
    assert (r.outcome, r.partial, r.missing_urls, r.failed_urls) == ("ok", False, [], [])
    assert [x.url for x in r.results] == r.requested_urls


@pytest.mark.parametrize("path", tree_files("fetch"), ids=lambda p: f"{p.parts[-3]}/{p.name}")
def test_tree_fetch(path):
    r = read_fixture(path)  # the page's own host: the provider comes from the folder
    url = json.loads(path.read_text(encoding="utf-8"))["request"]["url"]
    assert (r.provider, r.op, r.outcome, r.partial, r.requested_urls) == (path.parts[-3], "fetch", "ok", False, [url])
    assert [x.url for x in r.results] == [url]
    assert (r.results[0].title is None) == path.stem.endswith("-pdf")


def test_tree_fetch_title():
    r = read_fixture(EXAMPLE_TREE / "tavily" / "fetch" / "gs-003.json")
    assert r.results[0].title == "Contacto | Aceros del Bajío"


@pytest.mark.parametrize(
    "name, expected",
    [
        ("429.json", ("rate_limited", "rate_limit", True, "error")),
        ("502.json", ("server_error", "server", True, "error")),
        ("503-empty.json", ("server_error", "server", True, "error")),
        ("timeout.json", ("timeout", "timeout", True, "error")),
    ],
)
@pytest.mark.parametrize("provider", ["tavily", "exa"])
def test_tree_errors(provider, name, expected):
    r = read_fixture(EXAMPLE_TREE / provider / "errors" / name)
    assert (r.outcome, r.error_class, r.retryable, r.fallback_cause) == expected
    assert (r.results, r.partial, r.problems) == ([], False, [])
    if name == "429.json":
        assert r.retry_after_s == {"tavily": 12.0, "exa": 1.0}[provider]
    if name == "timeout.json":
        assert (r.status, r.error_message) == (None, "timeout after 30000 ms")


# --- robustness: whatever a body holds, an adapter answers with a response, never a traceback ---------------

_KEYS = ["results", "data", "web", "organic", "organic_results", "statuses", "failed_results", "error", "detail",
         "url", "link", "id", "title", "date", "age", "page_age", "publishedDate", "published_date", "metadata",
         "sourceURL", "statusCode", "total", "completed", "creditsUsed", "invalidURLs", "errors", "robotsBlocked",
         "code", "name", "usage", "credits", "costDollars", "position", "search_metadata", "status", "next", "tag",
         "q", "query", "urls", "ids", "tokens", "total", "meta", "quota_limit", "quota_current", "news", "warning"]
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 600) | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(["", "3 days ago", "hace 2 días", "Mar 3", "2026-13-45", "https://www.gob.mx/x", "x", "error",
                       "success", "Success", "completed", "NO_MORE_CREDITS", "InsufficientBalanceError"]),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.sampled_from(_KEYS), children, max_size=6),
    max_leaves=20,
)
_URLS = {
    "tavily": "https://api.tavily.com/extract", "exa": "https://api.exa.ai/contents",
    "brave": "https://api.search.brave.com/res/v1/web/search?q=x", "serpapi": "https://serpapi.com/search.json?q=x",
    "serper": "https://google.serper.dev/search", "firecrawl": "https://api.firecrawl.dev/v2/batch/scrape/abc",
    "jina": "https://r.jina.ai/https://www.gob.mx/x",
}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    provider=st.sampled_from(sorted(_URLS)),
    status=st.sampled_from([200, 200, 200, 402, 422, 429, 432, 500]),
    request_body=_json,
    body=_json,
    bare=st.booleans(),
)
def test_any_body_gives_a_response(provider, status, request_body, body, bare):
    value = body if bare else {
        "request": {"method": "POST", "url": _URLS[provider], "body": request_body},
        "response": {"status": status, "headers": {"date": "Fri, 02 Oct 2026 14:00:00 GMT"}, "body": body},
    }
    if bare and isinstance(value, list) and value and all(isinstance(v, dict) and "request" in v for v in value):
        return
    r = read_response(provider, value)
    assert r.provider == provider
    assert set(r.missing_urls) <= set(r.requested_urls or [])
