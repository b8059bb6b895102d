"""Latency percentiles by nearest rank (contract: "the smallest sample with at least p % of samples at or below it").

Nearest rank is Hyndman & Fan type 1 (numpy `method="inverted_cdf"`, HdrHistogram's value at percentile). The
rank is computed in integers, ceil(p·n/100), so no float rounding can move it (0.95·n is not exact in binary).

How many calls make a p95 (spec §4.5: "una p95 sobre 30 llamadas no es una p95"): with n ≥ 100 the estimate is
reported as is; from 60 to 99 it is `low_n` (by order statistics the upper end of its 95 % confidence interval is
the sample maximum); under 60 it is `too_few` and the human reports do not print it at all. report.json keeps
the nearest-rank value in every case, because the contract defines it for any n ≥ 1.
"""

from __future__ import annotations

P95_OK_N = 100
P95_PRINT_N = 60


def nearest_rank(samples: list[float], p: int) -> float | None:
    """The p-th percentile (0 < p ≤ 100) by nearest rank; None for no samples."""
    if not samples:
        return None
    if not 0 < p <= 100:
        raise ValueError("percentile must be in (0, 100]")
    ordered = sorted(samples)
    n = len(ordered)
    rank = -(-p * n // 100)          # ceil(p·n/100) in integers
    return ordered[max(rank, 1) - 1]


def p95_reliability(n: int) -> str:
    if n >= P95_OK_N:
        return "ok"
    if n >= P95_PRINT_N:
        return "low_n"
    return "too_few"


def latency_block(samples: list[float], times: list, artificial: bool) -> dict:
    """`latency_ms.<op>` of report.json: n, p50, p95 (nearest rank), how far the p95 can be trusted, the window."""
    n = len(samples)
    window = None
    if times:
        window = {"from": min(times).isoformat().replace("+00:00", "Z"),
                  "to": max(times).isoformat().replace("+00:00", "Z")}
    return {"n": n, "p50": _num(nearest_rank(samples, 50)), "p95": _num(nearest_rank(samples, 95)),
            "p95_reliability": p95_reliability(n), "window": window, "artificial": artificial}


def _num(v):
    if v is None:
        return None
    return int(v) if float(v).is_integer() else v
