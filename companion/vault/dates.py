"""Reading the dates and times notes carry, in one place: a note's day (frontmatter `date`) and a session's moment
(its `date` and `time` as agents write them). The index's date filters, recall's date boost and the hot tier all
read dates through here, so a date means the same everywhere."""

from __future__ import annotations

import datetime as dt
from typing import Any

_TIME_FORMATS = (
    "%H:%M:%S",
    "%H:%M",
    "%H-%M-%S",
    "%H-%M",
    "%H%M%S",
    "%H%M",
    "%I:%M %p",
    "%I:%M:%S %p",
)


def iso_date_text(text: str) -> str:
    """`2026/03/01...` and `2026.03.01...`, as some agents write dates, with ISO dashes; other text as it is."""
    if len(text) >= 10 and text[4] in "/." and text[7] == text[4]:
        return text[:10].replace(text[4], "-") + text[10:]
    return text


def session_datetime(date: str, time: str) -> dt.datetime | None:
    """Combine a `YYYY-MM-DD` date and a time as agents write it; None if either is unreadable."""
    date, time = iso_date_text(date.strip()), time.strip()
    try:
        # A full ISO timestamp in `date` wins; `date` may also be the day alone.
        stamp = dt.datetime.fromisoformat(date)
    except ValueError:
        return None
    if "T" in date or " " in date or not time:
        return stamp.replace(tzinfo=None)
    parsed = _parse_time(time)
    if parsed is None:
        # A day with an unreadable time ("noon-ish") still places the session: at the start of its day.
        return dt.datetime.combine(stamp.date(), dt.time())
    return dt.datetime.combine(stamp.date(), parsed.replace(tzinfo=None))


def _parse_time(text: str) -> dt.time | None:
    try:
        return dt.time.fromisoformat(text)
    except ValueError:
        pass
    for fmt in _TIME_FORMATS:
        try:
            return dt.datetime.strptime(text.upper(), fmt).time()
        except ValueError:
            continue
    return None


def note_day(value: Any) -> dt.date | None:
    """The day of a frontmatter `date` (a date, a timestamp or their ISO text), or None."""
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    text = iso_date_text(str(value or "").strip())[:10]
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        return None
