"""What happened around a moment: sessions and dated notes before and after a day or a note, nearest first.

An agent looks cheaply before it reads: a search gives compact results, the timeline puts one of them in its time
(what was discussed and noted just before and after it), and only then does the agent read the notes it needs whole.
Sessions come with a one-line summary; notes are placed by their `date` property, else `created`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from companion.vault.dates import note_day
from companion.vault.sessions import local_moment

MOST_AROUND = 50
"""Most entries one side of a timeline (and its anchor day) returns."""


@dataclass(frozen=True)
class Happening:
    """A session or a dated note, placed in time."""

    path: str
    """Vault-relative path (the conversation note for a session that has one)."""
    title: str
    """The note's title, or what the session was about."""
    kind: str
    """`session` or `note`."""
    when: dt.datetime
    """When it happened (naive local time; the end of the day for a note dated by its day only)."""
    timed: bool
    """`when` carries a time of day (sessions, notes dated to the minute)."""
    note_type: str | None = None
    """Frontmatter `type`."""
    summary: str = ""
    """One line of what it was (a session's exchange, a note's first line)."""

    def stamp(self) -> str:
        """`when` as ISO text: to the minute when timed, else the day."""
        return self.when.isoformat(timespec="minutes") if self.timed else self.when.date().isoformat()


@dataclass(frozen=True)
class Anchor:
    """The moment a timeline is drawn around."""

    when: dt.datetime
    """The moment (midnight of the day for a day anchor, the end of it for a note dated by its day)."""
    day_only: bool
    """The whole day is the anchor: everything on it is `at`."""
    path: str | None = None
    """The note the timeline is drawn around, when one was named (it alone is `at`)."""
    source: str = "date"
    """Where `when` came from: `date` (given, or the note's `date` or `created`), `session`, `modified` or `now`."""
    timed: bool = True
    """`when` carries a time of day (false for a day, or a note dated by its day only)."""


@dataclass(frozen=True)
class Placed:
    """One entry of a timeline."""

    position: str
    """`before`, `at` or `after` the anchor."""
    happening: Happening
    """What happened."""


def note_moment(frontmatter: dict[str, Any], title: str = "") -> tuple[dt.datetime, bool] | None:
    """(when, timed) from a note's `date` property, else its `created` one, else a date its title starts with (a
    daily note, `2023-09-30`); None when there is none.

    A note dated by its day only stands at the end of that day: it sums the day up, so what happened that day
    comes before it."""
    for value in (frontmatter.get("date"), frontmatter.get("created"), title[:10]):
        if value is None or note_day(value) is None:
            continue
        text = str(value).strip().replace(" ", "T", 1)
        try:
            moment = dt.datetime.fromisoformat(text)
        except ValueError:
            day = note_day(value)
            assert day is not None
            return dt.datetime.combine(day, dt.time.max), False
        if "T" in text and (moment.hour, moment.minute, moment.second) != (0, 0, 0):
            return local_moment(moment), True
        return dt.datetime.combine(moment.date(), dt.time.max), False
    return None


def place(happenings: Iterable[Happening], anchor: Anchor, before: int, after: int) -> list[Placed]:
    """The `before` latest entries before the anchor, what is at it, and the `after` earliest after it, in time order.

    A named note alone is `at` (the rest of its day falls before or after it by time); for a day, what is on it is
    `at` (at most `before + after` entries of it); for a moment, nothing is."""
    earlier: list[Happening] = []
    on: list[Happening] = []
    later: list[Happening] = []
    for h in happenings:
        if anchor.path is not None:
            if h.path == anchor.path:
                on.append(h)
            elif (h.when, h.path) < (anchor.when, anchor.path):
                earlier.append(h)
            else:
                later.append(h)
        elif anchor.day_only and h.when.date() == anchor.when.date():
            on.append(h)
        elif h.when <= anchor.when:
            earlier.append(h)
        else:
            later.append(h)
    earlier = _in_time(earlier)[-before:] if before else []
    later = _in_time(later)[:after]
    # A busy anchor day is held to the size asked for, its first entries shown.
    return [
        *(Placed("before", h) for h in earlier),
        *(Placed("at", h) for h in _in_time(on)[: max(1, before + after)]),
        *(Placed("after", h) for h in later),
    ]


def _in_time(happenings: Sequence[Happening]) -> list[Happening]:
    return sorted(happenings, key=lambda h: (h.when, h.path))
