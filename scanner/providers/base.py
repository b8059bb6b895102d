"""What every provider adapter returns: one recorded call, normalised to the same fields.

The vocabulary of `outcome` is the contract's call `status`; `fallback_cause` is the contract's fallback cause
(without `low_confidence`, which only the application can decide). Everything a provider said that does not fit
a field, or that looked wrong, goes to `problems` as one readable line.
"""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

Outcome = Literal["ok", "rate_limited", "server_error", "timeout", "error"]
Precision = Literal["exact", "day", "relative"]
FallbackCause = Literal["no_result", "error", "budget"]


class AdapterError(Exception):
    """Input that cannot be read as a provider response; `str()` is one line naming the file."""

    def __init__(self, path: str, message: str):
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


class NormalisedResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rank: int = Field(ge=1, description="1-based; response order unless the provider gives a position")
    url: str
    host: str = Field(description="lower-case host without port; www. and IDNA kept as given")
    title: Optional[str] = None
    snippet: Optional[str] = None
    published_at: Optional[str] = Field(None, description="YYYY-MM-DD, or a full ISO date-time when given one")
    published_at_raw: Optional[str] = Field(None, description="the date as the provider wrote it")
    published_at_precision: Optional[Precision] = None
    source_url: Optional[str] = Field(
        None, description="the URL as requested, when the provider echoes it and it differs from `url`"
    )


class NormalisedResponse(BaseModel):
    model_config = ConfigDict(extra="forbid")

    provider: str
    op: str = Field(description="search | extract | fetch | scrape | batch | reader | …")
    endpoint: Optional[str] = Field(None, description="the request path, e.g. /search or /v2/batch/scrape/{id}")
    status: Optional[int] = Field(None, description="HTTP status; None for a timeout or a bare body")
    outcome: Outcome
    error_class: Optional[str] = Field(
        None, description="rate_limit | budget | server | timeout | client | auth | no_result"
    )
    error_message: Optional[str] = None
    retryable: Optional[bool] = None
    retry_after_s: Optional[float] = None
    fallback_cause: Optional[FallbackCause] = None
    results: list[NormalisedResult] = Field(default_factory=list)
    requested_urls: Optional[list[str]] = None
    failed_urls: list[str] = Field(default_factory=list, description="the provider's own failure signals")
    missing_urls: list[str] = Field(
        default_factory=list, description="requested but not returned: failed ones and silent drops"
    )
    dropped_urls: list[str] = Field(
        default_factory=list, description="silent drops: requested, neither returned nor reported failed"
    )
    partial: bool = False
    cost_usd: Optional[float] = Field(None, description="only where the provider reports money")
    cost_units: dict[str, int | float] = Field(default_factory=dict)
    captured_at: Optional[str] = None
    query: Optional[str] = None
    problems: list[str] = Field(default_factory=list)
