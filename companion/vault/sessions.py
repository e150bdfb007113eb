"""Session summaries as typed values (seed 000) instead of raw Markdown strings.

The agent writes one summary per turn under `ops/sessions/<YYYY-MM-DD>/`; this module turns a parsed
note of that folder into a `SessionSummary`, so no caller parses frontmatter strings by hand again.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from companion.vault.notes import Note

_DATE_FOLDER = re.compile(r"(?:^|/)(\d{4}-\d{2}-\d{2})/[^/]+$")
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


@dataclass(frozen=True)
class SessionSummary:
    """One turn's summary, as seed 000 types it, plus the chat it belongs to (seed 001)."""

    date: str
    """The session's day, `YYYY-MM-DD` (from frontmatter, else the folder name)."""
    user_id: str
    """Who the agent was talking to."""
    time: str
    """The time of the turn as written in the note, such as `14:03`."""
    user_msg: str
    """What the user said."""
    sentinel_msg: str
    """What the agent answered."""
    path: str
    """Vault-relative path of the summary note."""
    body: str
    """The Markdown body of the note."""
    chat_id: str = ""
    """The chat within the user's sessions; empty when the agent has a single chat per user."""

    @property
    def session_key(self) -> str:
        """Seed 001's key `user_id + chat_id`: `user` alone, or `user:chat` with a chat."""
        return f"{self.user_id}:{self.chat_id}" if self.chat_id else self.user_id

    @cached_property
    def when(self) -> dt.datetime | None:
        """The turn's moment as a naive datetime (as written), or None if unreadable (parsed once: partitions
        sort thousands of sessions by it)."""
        return session_datetime(self.date, self.time)


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


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return "\n".join(_text(item) for item in value)
    return str(value)


def read_session(path: str, note: Note) -> SessionSummary:
    """A `SessionSummary` from a parsed session note; missing fields are empty strings."""
    fm = note.frontmatter
    date = _text(fm.get("date")).strip()
    if not date:
        folder = _DATE_FOLDER.search(path)
        date = folder.group(1) if folder else ""
    return SessionSummary(
        date=date,
        user_id=_text(fm.get("user_id")),
        time=_text(fm.get("time")),
        user_msg=_text(fm.get("user_msg")),
        sentinel_msg=_text(fm.get("sentinel_msg")),
        path=path,
        body=note.body,
        chat_id=_text(fm.get("chat_id")),
    )
