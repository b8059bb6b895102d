"""Publication dates as providers write them, to ISO dates.

Three kinds, told apart by `precision`:
- `exact`: an ISO or HTTP date-time ("2025-03-03T10:00:00Z", "Mon, 03 Mar 2025 10:00:00 GMT");
- `day`: a calendar date ("2025-03-03", "March 3, 2025", "3 mar 2025", "3 de marzo de 2025");
- `relative`: a display string that only means something against the capture time ("3 days ago",
  "hace 2 semanas", "yesterday", "ayer", "5 hours ago", "1 month ago", or "Mar 3" without a year).

The grammar is small and closed, so it is parsed here by hand rather than with a general date guesser: a
string this module does not know gives no date and a problem, never a guess. Relative amounts resolve on the
capture instant's UTC calendar: hours and smaller subtract time, days and weeks subtract days, months and years
subtract calendar months (the day clamped to the month's end: 31 March − 1 month = 28/29 February).
"""

from __future__ import annotations

import re
from calendar import monthrange
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from email.utils import parsedate_to_datetime

from scanner.textfold import fold_words


@dataclass(frozen=True)
class ParsedDate:
    value: str | None  # YYYY-MM-DD or an ISO date-time; None when not understood
    precision: str | None  # exact | day | relative
    problem: str | None = None


MONTHS = {
    # English
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4, "may": 5,
    "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9, "sep": 9, "sept": 9,
    "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
    # Spanish ("mar", "may", "jun", "jul", "sep", "oct", "nov" are shared)
    "enero": 1, "ene": 1, "febrero": 2, "marzo": 3, "abril": 4, "abr": 4, "mayo": 5, "junio": 6, "julio": 7,
    "agosto": 8, "ago": 8, "septiembre": 9, "setiembre": 9, "set": 9, "octubre": 10, "noviembre": 11,
    "diciembre": 12, "dic": 12,
}

# Unit word (accents folded, lower case) → canonical unit.
UNITS = {
    "second": "second", "seconds": "second", "sec": "second", "secs": "second", "s": "second",
    "minute": "minute", "minutes": "minute", "min": "minute", "mins": "minute",
    "hour": "hour", "hours": "hour", "hr": "hour", "hrs": "hour", "h": "hour",
    "day": "day", "days": "day", "d": "day",
    "week": "week", "weeks": "week", "wk": "week", "wks": "week", "w": "week",
    "month": "month", "months": "month", "mo": "month", "mos": "month",
    "year": "year", "years": "year", "yr": "year", "yrs": "year", "y": "year",
    "segundo": "second", "segundos": "second", "seg": "second",
    "minuto": "minute", "minutos": "minute",
    "hora": "hour", "horas": "hour",
    "dia": "day", "dias": "day",
    "semana": "week", "semanas": "week", "sem": "week",
    "mes": "month", "meses": "month",
    "ano": "year", "anos": "year",
}

WORD_NUMBERS = {"a": 1, "an": 1, "one": 1, "un": 1, "una": 1, "uno": 1}

NAMED_DAYS = {
    "today": 0, "hoy": 0, "just now": 0, "now": 0, "ahora": 0, "hace un momento": 0, "hace unos momentos": 0,
    "yesterday": 1, "ayer": 1, "anteayer": 2, "antier": 2, "antes de ayer": 2, "antes de anoche": 2,
}

_NUM = r"(\d{1,4}|an?|one|una?|uno)"
_UNIT = r"([a-z]+)\.?"
_EN_AGO = re.compile(rf"^(?:about\s+|over\s+|almost\s+)?{_NUM}\s*{_UNIT}\s+ago$")
_ES_HACE = re.compile(rf"^hace\s+(?:casi\s+|mas\s+de\s+|unos?\s+)?{_NUM}\s*{_UNIT}$")

_ISO_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_ISO_DATETIME = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?\s*(Z|[+-]\d{2}:?\d{2})?$", re.I
)
_MONTH_WORD = r"([a-z]{3,10})\.?"
# "March 3, 2025", "Mar. 3 2025", "marzo 3, 2025"
_MDY = re.compile(rf"^{_MONTH_WORD}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})$")
# "3 March 2025", "3 mar 2025", "3 de marzo de 2025", "3-mar-2025", "03 Mar, 2025"
_DMY = re.compile(rf"^(\d{{1,2}})(?:st|nd|rd|th)?(?:\s+de\s+|[\s-]+){_MONTH_WORD}(?:,?\s+de\s+|,?[\s-]+)(\d{{4}})$")
# "Mar 3", "3 mar", "3 de marzo" (no year)
_MD = re.compile(rf"^{_MONTH_WORD}\s+(\d{{1,2}})(?:st|nd|rd|th)?$")
_DM = re.compile(rf"^(\d{{1,2}})(?:\s+de\s+|[\s-]+){_MONTH_WORD}$")
# "March 2025", "marzo de 2025" → month precision is not a day; reported, not guessed.
_MY = re.compile(rf"^{_MONTH_WORD}(?:\s+de)?\s+(\d{{4}})$")
_NUMERIC = re.compile(r"^(\d{1,2})[/.](\d{1,2})[/.](\d{4})$")
_WEEKDAY_PREFIX = re.compile(
    r"^(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun|monday|tuesday|wednesday|thursday|friday|saturday|sunday"
    r"|lun|mar|mie|jue|vie|sab|dom|lunes|martes|miercoles|jueves|viernes|sabado|domingo)\.?,?\s+"
)


def parse_published(raw: object, captured_at: datetime | None) -> ParsedDate:
    """The ISO date (or date-time) a provider's date string stands for, resolved against `captured_at` when
    it is relative. Never raises."""
    if raw is None:
        return ParsedDate(None, None)
    if not isinstance(raw, str):
        return ParsedDate(None, None, f"date {raw!r} is not a string")
    text = raw.strip()
    if not text:
        return ParsedDate(None, None)
    exact = _absolute(text)
    if exact is not None:
        return exact
    folded = fold_words(text)
    relative = _relative(folded, captured_at, text)
    if relative is not None:
        return relative
    return ParsedDate(None, None, f"date {raw!r} not understood")


def _absolute(text: str) -> ParsedDate | None:
    m = _ISO_DATE.match(text)
    if m:
        return _day(int(m[1]), int(m[2]), int(m[3]), text)
    m = _ISO_DATETIME.match(text)
    if m:
        return _iso_datetime(m, text)
    folded = fold_words(text)
    # A weekday may lead ("lunes, 3 de marzo de 2025"); "mar" is both Tuesday and March, so try both readings.
    readings = (folded, _WEEKDAY_PREFIX.sub("", folded))
    for reading in readings:
        for pattern, order in ((_MDY, "mdy"), (_DMY, "dmy")):
            m = pattern.match(reading)
            if not m:
                continue
            month_word, day, year = (m[1], int(m[2]), int(m[3])) if order == "mdy" else (m[2], int(m[1]), int(m[3]))
            if month_word in MONTHS:
                return _day(year, MONTHS[month_word], day, text)
    m = _NUMERIC.match(readings[1])
    if m:
        a, b, year = int(m[1]), int(m[2]), int(m[3])
        if a > 12 >= b:
            return _day(year, b, a, text)
        if b > 12 >= a:
            return _day(year, a, b, text)
        if a == b:
            return _day(year, a, a, text)
        return ParsedDate(None, None, f"date {text!r} is ambiguous (day/month or month/day)")
    m = _MY.match(folded)
    if m and m[1] in MONTHS:
        return ParsedDate(None, None, f"date {text!r} names a month, not a day")
    if "," in text and ":" in text:
        try:
            ts = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        return ParsedDate(_format_datetime(ts), "exact")
    return None


def _iso_datetime(m: re.Match, text: str) -> ParsedDate:
    year, month, day, hour, minute = (int(m[i]) for i in range(1, 6))
    second = int(m[6] or 0)
    tz = None
    if m[8]:
        zone = m[8].upper()
        if zone == "Z":
            tz = timezone.utc
        else:
            sign = -1 if zone[0] == "-" else 1
            digits = zone[1:].replace(":", "")
            tz = timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:])))
    try:
        ts = datetime(year, month, day, hour, minute, second, tzinfo=tz)
    except ValueError:
        return ParsedDate(None, None, f"date {text!r} is not a valid date-time")
    return ParsedDate(_format_datetime(ts), "exact")


def _format_datetime(ts: datetime) -> str:
    if ts.tzinfo is None:
        return ts.strftime("%Y-%m-%dT%H:%M:%S")
    if ts.utcoffset() == timedelta(0):
        return ts.strftime("%Y-%m-%dT%H:%M:%SZ")
    return ts.isoformat(timespec="seconds")


def _day(year: int, month: int, day: int, text: str) -> ParsedDate:
    try:
        return ParsedDate(date(year, month, day).isoformat(), "day")
    except ValueError:
        return ParsedDate(None, None, f"date {text!r} is not a valid calendar date")


def _relative(folded: str, captured_at: datetime | None, text: str) -> ParsedDate | None:
    anchor_needed = f"relative date {text!r} needs a capture time"
    if folded in NAMED_DAYS:
        if captured_at is None:
            return ParsedDate(None, None, anchor_needed)
        return ParsedDate((_utc_day(captured_at) - timedelta(days=NAMED_DAYS[folded])).isoformat(), "relative")
    m = _EN_AGO.match(folded) or _ES_HACE.match(folded)
    if m:
        amount = int(m[1]) if m[1].isdigit() else WORD_NUMBERS[m[1]]
        unit = UNITS.get(m[2])
        if unit is None:
            return ParsedDate(None, None, f"relative date {text!r}: unknown unit {m[2]!r}")
        if captured_at is None:
            return ParsedDate(None, None, anchor_needed)
        return ParsedDate(_subtract(captured_at, amount, unit).isoformat(), "relative")
    for pattern, order in ((_MD, "md"), (_DM, "dm")):
        m = pattern.match(folded)
        if m:
            month_word, day = (m[1], int(m[2])) if order == "md" else (m[2], int(m[1]))
            month = MONTHS.get(month_word)
            if month is None:
                return None
            if captured_at is None:
                return ParsedDate(None, None, f"date {text!r} has no year and there is no capture time")
            return _without_year(month, day, captured_at, text)
    return None


def _utc_day(ts: datetime) -> date:
    if ts.tzinfo is not None:
        ts = ts.astimezone(timezone.utc)
    return ts.date()


def _subtract(captured_at: datetime, amount: int, unit: str) -> date:
    if unit in ("second", "minute", "hour"):
        return _utc_day(captured_at - timedelta(**{unit + "s": amount}))
    day = _utc_day(captured_at)
    if unit == "day":
        return day - timedelta(days=amount)
    if unit == "week":
        return day - timedelta(weeks=amount)
    months = amount if unit == "month" else 12 * amount
    index = day.year * 12 + (day.month - 1) - months
    year, month = divmod(index, 12)
    month += 1
    return date(year, month, min(day.day, monthrange(year, month)[1]))


def _without_year(month: int, day: int, captured_at: datetime, text: str) -> ParsedDate:
    """'Mar 3' on a result page: the latest such date not after the capture day."""
    today = _utc_day(captured_at)
    for year in (today.year, today.year - 1):
        try:
            candidate = date(year, month, day)
        except ValueError:
            continue
        if candidate <= today:
            return ParsedDate(candidate.isoformat(), "relative")
    return ParsedDate(None, None, f"date {text!r} is not a valid calendar date")
