"""Date expressions in a question ("last week", "in March", "3 days ago") as an inclusive range of days.

Everything is resolved against a reference moment `as_of`, whose own (local) date is "today". Questions are about
the past, so a range never ends after today: a range reaching into the future is clipped to today, and one that
starts after today ("in 2030") is not a date expression at all. Pure: no I/O, standard library only.
"""

from __future__ import annotations

import calendar
import datetime
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

_Span = tuple[datetime.date, datetime.date]


@dataclass(frozen=True)
class DateRange:
    """An inclusive range of days a question refers to."""

    start: datetime.date
    """First day, inclusive."""
    end: datetime.date
    """Last day, inclusive; never after the `as_of` date the range was resolved against."""
    phrase: str
    """The words in the question that gave it, as written (with a leading preposition if any), e.g. "last week"."""

    def contains(self, day: datetime.date) -> bool:
        """Whether `day` falls inside the range."""
        return self.start <= day <= self.end

    def distance(self, day: datetime.date) -> int:
        """0 for a day inside the range, else the number of days to its nearest edge."""
        if day < self.start:
            return (self.start - day).days
        if day > self.end:
            return (day - self.end).days
        return 0


@dataclass(frozen=True)
class _Ctx:
    today: datetime.date
    as_of: datetime.datetime
    lenient: bool = False  # the second half of "between X and Y" needs no preposition to count as a date


@dataclass(frozen=True)
class _Found:
    pos: int
    stop: int
    span: _Span
    pre: str


_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# Spelled out rather than taken from `calendar.month_name`, which follows the process locale.
_MONTH_NAMES = (
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
)  # fmt: skip
_MONTHS = {name: i for i, name in enumerate(_MONTH_NAMES, 1)}
_MONTHS |= {name[:3]: i for i, name in enumerate(_MONTH_NAMES, 1)} | {"sept": 9}
# Words that make an ambiguous token ("may", "jan", "2025", "the 8th") read as a date.
_CONTEXT = frozenset({"in", "on", "during", "since", "of", "from", "between"})

_PRE = r"(?:(?P<pre>since|in|on|during|over|within|from|between|for|of)\s+)?"
_NUM = rf"(?P<n>\d{{1,4}}|{'|'.join(_WORDS)}|(?:a\s+)?couple(?:\s+of)?|(?:a\s+)?few|an?)"
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_ORD = r"(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(?P<y>\d{4}))?"
_JOIN = re.compile(r"\s*-\s*|\s+(?:and|to|until|till|through)\s+", re.IGNORECASE)


def _day(day: datetime.date) -> _Span:
    return day, day


def _month(year: int, month: int) -> _Span:
    return datetime.date(year, month, 1), datetime.date(year, month, calendar.monthrange(year, month)[1])


def _year(year: int) -> _Span:
    return datetime.date(year, 1, 1), datetime.date(year, 12, 31)


def _shift(year: int, month: int, delta: int) -> tuple[int, int]:
    """(year, month) moved by `delta` months."""
    years, index = divmod(year * 12 + month - 1 + delta, 12)
    return years, index + 1


def _num(word: str) -> int:
    word = word.lower()
    if word.isdigit():
        return int(word)
    if word in _WORDS:
        return _WORDS[word]
    return 2 if "couple" in word else 3 if "few" in word else 1


def _has_context(m: re.Match[str], c: _Ctx) -> bool:
    return c.lenient or (m["pre"] or "").lower() in _CONTEXT


def _latest(today: datetime.date, month: int, day: int) -> datetime.date:
    """The most recent `month`/`day` on or before today (eight years back covers 29 February)."""
    for year in range(today.year, today.year - 9, -1):
        if day <= calendar.monthrange(year, month)[1] and (found := datetime.date(year, month, day)) <= today:
            return found
    raise ValueError(f"no {month}/{day} on or before {today}")


def _relative(m: re.Match[str], c: _Ctx) -> _Span:
    words = " ".join(m["w"].lower().split())
    back = 2 if words.startswith("the day") else 1 if words in ("yesterday", "last night") else 0
    return _day(c.today - datetime.timedelta(days=back))


def _ago(m: re.Match[str], c: _Ctx) -> _Span:
    n, unit, today = _num(m["n"]), m["unit"].lower(), c.today
    if unit in ("hour", "minute"):
        delta = datetime.timedelta(hours=n) if unit == "hour" else datetime.timedelta(minutes=n)
        return _day((c.as_of - delta).date())
    if unit == "day":
        return _day(today - datetime.timedelta(days=n))
    if unit == "week":
        start = today - datetime.timedelta(weeks=n)
        return start, start + datetime.timedelta(days=6)
    if unit == "month":
        return _month(*_shift(today.year, today.month, -n))
    return _year(today.year - n)


def _rolling(m: re.Match[str], c: _Ctx) -> _Span | None:
    rel, unit, today = m["rel"].lower(), m["unit"].lower(), c.today
    if m["n"] is None and rel != "past" and not (m["the"] and rel == "last"):
        return None  # a bare "last week" is the calendar week, left to `_calendar`
    n = _num(m["n"]) if m["n"] else 1
    if unit in ("day", "week"):
        return today - datetime.timedelta(days=n * (7 if unit == "week" else 1) - 1), today
    year, month = _shift(today.year, today.month, -n * (1 if unit == "month" else 12))
    back = datetime.date(year, month, min(today.day, calendar.monthrange(year, month)[1]))
    return back + datetime.timedelta(days=1), today


def _calendar(m: re.Match[str], c: _Ctx) -> _Span:
    this, unit, today = m["rel"].lower() == "this", m["unit"].lower(), c.today
    if unit == "week":
        monday = today - datetime.timedelta(days=today.weekday())
        return (monday, today) if this else (monday - datetime.timedelta(days=7), monday - datetime.timedelta(days=1))
    if unit == "month":
        return _month(today.year, today.month) if this else _month(*_shift(today.year, today.month, -1))
    return _year(today.year if this else today.year - 1)


def _weekday(m: re.Match[str], c: _Ctx) -> _Span:
    back = (c.today.weekday() - _WEEKDAYS.index(m["wd"].lower())) % 7
    if back == 0 and (m["rel"] or "").lower() in ("last", "past", "previous"):
        back = 7  # "last Tuesday" said on a Tuesday is a week ago; "on Tuesday" is today
    return _day(c.today - datetime.timedelta(days=back))


def _month_name(m: re.Match[str], c: _Ctx) -> _Span | None:
    word, rel, today = m["m"].lower(), (m["rel"] or "").lower(), c.today
    month = _MONTHS[word]
    # "may" is mostly a verb and "jan" a name: those need a preposition, a qualifier or a year to be dates.
    if (word == "may" or word not in _MONTH_NAMES) and not (_has_context(m, c) or m["part"] or rel or m["y"]):
        return None
    if m["y"]:
        year = int(m["y"])
    elif rel == "this":
        year = today.year
    elif rel == "last":  # the most recent one that ended before this month began
        year = today.year if month < today.month else today.year - 1
    else:  # the most recent one that has begun
        year = today.year if month <= today.month else today.year - 1
    part = (m["part"] or "").lower()
    if not part:
        return _month(year, month)
    first = {"early": 1, "mid": 11, "late": 21}[part]
    if not m["y"] and rel != "this" and datetime.date(year, month, first) > today:
        year -= 1  # "late February" on 10 February: last year's, which is over
    start, end = _month(year, month)
    return start.replace(day=first), end if part == "late" else start.replace(day=first + 9)


def _day_month(m: re.Match[str], c: _Ctx) -> _Span | None:
    day, month = int(m["d"]), _MONTHS[m["m"].lower()]
    if not 1 <= day <= 31:
        return None  # "May 35 people": not a day at all, so the month alone may still be meant
    return _day(datetime.date(int(m["y"]), month, day) if m["y"] else _latest(c.today, month, day))


def _nth(m: re.Match[str], c: _Ctx) -> _Span | None:
    day, (year, month) = int(m["d"]), (c.today.year, c.today.month)
    if not _has_context(m, c) or not 1 <= day <= 31:
        return None  # "the 3rd" alone is too often not a date
    for _ in range(12):  # this month, else the most recent month that has that day and has reached it
        if day <= calendar.monthrange(year, month)[1] and (found := datetime.date(year, month, day)) <= c.today:
            return _day(found)
        year, month = _shift(year, month, -1)
    return None


def _iso(m: re.Match[str], c: _Ctx) -> _Span:
    year, month = int(m["y"]), int(m["mo"])
    return _day(datetime.date(year, month, int(m["d"]))) if m["d"] else _month(year, month)


def _bare_year(m: re.Match[str], c: _Ctx) -> _Span | None:
    year = int(m["y"])
    return _year(year) if 1990 <= year <= 2100 and _has_context(m, c) else None


def _rx(core: str) -> re.Pattern[str]:
    return re.compile(rf"\b{_PRE}(?:{core})", re.IGNORECASE)


_Handler = Callable[[re.Match[str], _Ctx], _Span | None]
_PATTERNS: tuple[tuple[re.Pattern[str], _Handler], ...] = (
    (
        _rx(
            r"(?P<w>the\s+day\s+before\s+yesterday|today|tonight|this\s+(?:morning|afternoon|evening)"
            r"|yesterday|last\s+night)\b"
        ),
        _relative,
    ),
    (_rx(rf"{_NUM}\s+(?P<unit>minute|hour|day|week|month|year)s?\s+ago\b"), _ago),
    (
        _rx(rf"(?P<the>(?:the|this)\s+)?(?P<rel>last|past|previous)\s+(?:{_NUM}\s+)?(?P<unit>day|week|month|year)s?\b"),
        _rolling,
    ),
    (_rx(r"(?P<rel>last|this|previous)\s+(?P<unit>week|month|year)\b"), _calendar),
    (_rx(rf"(?:(?P<rel>last|this|past|previous)\s+)?(?P<wd>{'|'.join(_WEEKDAYS)})\b"), _weekday),
    (
        _rx(
            rf"(?:(?P<part>early|mid|late)(?:\s*-\s*|\s+)(?:in\s+)?)?(?:(?P<rel>last|this)\s+)?"
            rf"(?P<m>{_MONTH})\b\.?{_YEAR}\b"
        ),
        _month_name,
    ),
    (_rx(rf"(?:the\s+)?(?P<d>\d{{1,2}}){_ORD}\s+(?:of\s+)?(?P<m>{_MONTH})\b\.?{_YEAR}\b"), _day_month),
    (_rx(rf"(?P<m>{_MONTH})\.?\s+(?:the\s+)?(?P<d>\d{{1,2}}){_ORD}\b{_YEAR}\b"), _day_month),
    (_rx(r"the\s+(?P<d>\d{1,2})(?:st|nd|rd|th)\b"), _nth),
    (_rx(r"(?P<y>\d{4})[-/](?P<mo>\d{1,2})(?:[-/](?P<d>\d{1,2}))?(?!\d)"), _iso),
    (_rx(r"(?P<y>\d{4})\b"), _bare_year),
)


def _candidates(text: str, c: _Ctx, at: int | None = None) -> list[_Found]:
    """Every date expression in `text` (or only those starting exactly at `at`), already clipped to today."""
    found: list[_Found] = []
    dead: list[tuple[int, int]] = []
    for pattern, handler in _PATTERNS:
        matches = pattern.finditer(text) if at is None else filter(None, [pattern.match(text, at)])
        for m in matches:
            try:
                span = handler(m, c)
            except (ValueError, OverflowError):
                # An impossible date ("31 February", year 0) is ignored whole: its "February" is not a date either.
                dead.append(m.span())
                continue
            if span is None or span[0] > c.today:
                continue  # questions are about the past
            pre = (m["pre"] or "").lower()
            end = c.today if pre == "since" else min(span[1], c.today)
            found.append(_Found(m.start(), m.end(), (span[0], end), pre))
    return [f for f in found if not any(lo <= f.pos and f.stop <= hi for lo, hi in dead)]


def find_date_range(text: str, as_of: datetime.datetime) -> DateRange | None:
    """The first (leftmost) date expression in `text` as a range relative to `as_of`, or None if there is none.

    "Today" is `as_of`'s own date (its local date if it is aware). The range's end is clipped to today, since
    questions are about the past; "since X" runs from the start of X to today, and "between X and Y" (or "from X
    to Y") spans both. Never raises on any string.
    """
    ctx = _Ctx(as_of.date(), as_of)
    found = _candidates(text, ctx)
    if not found:
        return None
    best = min(found, key=lambda f: (f.pos, -f.stop))  # leftmost, then longest
    (start, end), stop = best.span, best.stop
    if best.pre in ("between", "from") and (joint := _JOIN.match(text, best.stop)):
        other = _candidates(text, replace(ctx, lenient=True), at=joint.end())
        if other:
            second = max(other, key=lambda f: f.stop)
            start, end, stop = min(start, second.span[0]), max(end, second.span[1]), second.stop
    return DateRange(start, end, text[best.pos : stop])
