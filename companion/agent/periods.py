"""The sessions of a period an agent asks `recall_recent` for: a period in words ("last week", "yesterday", "in
March", "on 3 November", a day such as 2026-11-03) or as `since` and `until` days, each session with its one-line
exchange, newest first, at most `limit` of them and how many more there were (see `companion.recall.recap`)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from companion.agent import arguments
from companion.errors import AgentInputError
from companion.recall.dates import DateRange, find_date_range
from companion.recall.engine import Recall
from companion.recall.recap import list_period
from companion.recall.scope import Scope
from companion.recall.temporal import TemporalItem, temporal_json
from companion.vault.sessions import local_moment

MOST_SESSIONS = 100
"""Most sessions one call lists (as many notes as a search returns)."""

PERIOD_CHARS = 200
"""Longest period in words."""
EXAMPLES = "'last week', 'yesterday', 'in March', 'on 3 November' or a day such as 2026-11-03"


@dataclass(frozen=True)
class RecentSessions:
    """What `recall_recent` returns: sessions newest first, and of a period how many more it held."""

    sessions: tuple[TemporalItem, ...]
    """The sessions, each with its one-line exchange as `summary`."""
    period: DateRange | None = None
    """The period asked for (`period`, or `since` and `until`), None for the last hours."""
    more: int = 0
    """Sessions of the period past the limit, not listed."""

    def as_json(self) -> dict[str, Any]:
        """JSON form."""
        p = self.period
        return {
            "sessions": [temporal_json(t) for t in self.sessions],
            "period": None if p is None else {"start": str(p.start), "end": str(p.end), "phrase": p.phrase},
            "more": self.more,
        }


def recent(
    engine: Recall,
    hours: float | None,
    limit: int | None,
    period: str | None = None,
    since: str | None = None,
    until: str | None = None,
    as_of: str | None = None,
) -> RecentSessions:
    """`recall_recent`'s answer, every argument checked: the completed sessions of the last `hours`, or when a
    period is given every session of it up to the moment (`as_of`, else now)."""
    if hours is not None and not 0 < hours <= 24 * 3650:
        raise AgentInputError("hours", "must be more than 0 and at most ten years of hours")
    if limit is not None:
        limit = arguments.count("limit", limit, MOST_SESSIONS)
    moment = local_moment(arguments.moment(as_of))
    span = period_range(period, since, until, hours, moment)
    if span is None:
        return RecentSessions(tuple(engine.recall_recent(hours, limit, as_of=moment)))
    return sessions_of(engine, span, moment, limit or engine.settings.recent_limit)


def period_range(
    period: str | None, since: str | None, until: str | None, hours: float | None, moment: dt.datetime
) -> DateRange | None:
    """The days asked for, from `moment`'s point of view; None when neither a period nor days were given (the last
    hours are asked for). Each bad or conflicting argument is an `AgentInputError` naming it."""
    first, last = arguments.day("since", since), arguments.day("until", until)
    given = period is not None and bool(str(period).strip())
    if not given and first is None and last is None:
        return None
    if hours is not None:
        raise AgentInputError("hours", "give hours, or a period (period, or since and until), not both")
    if given:
        if first is not None or last is not None:
            raise AgentInputError("period", "give a period in words, or since and until, not both")
        words = arguments.text("period", period)
        if len(words) > PERIOD_CHARS:
            raise AgentInputError("period", f"is {len(words)} characters long; at most {PERIOD_CHARS}")
        found = find_date_range(words, moment)
        if found is None:
            raise AgentInputError("period", f"{words!r} names no past period; say e.g. {EXAMPLES}")
        return found
    if first is None:
        raise AgentInputError("since", "give the period's first day with since (until alone has no start)")
    today = moment.date()
    if first > today:
        raise AgentInputError("since", f"{first} is after {today}, the moment asked about: no session is there yet")
    if last is not None and last < first:
        raise AgentInputError("until", f"{last} is before since ({first})")
    end = min(last or today, today)
    return DateRange(first, end, f"{first} .. {end}")


def sessions_of(
    engine: Recall, period: DateRange, moment: dt.datetime, limit: int, scope: Scope | None = None
) -> RecentSessions:
    """The sessions of `period` up to `moment` within `scope`, newest first, at most `limit`, with how many more
    there were."""
    spoken = engine.spoken(engine.sessions_since(period.start, moment, scope, until=period.end))
    listing = list_period(spoken, period, engine.vault, limit)
    return RecentSessions(listing.items, period, listing.more)
