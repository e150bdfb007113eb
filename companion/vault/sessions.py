"""Sessions: session summaries as typed values instead of raw Markdown strings, and the hot tier.

The agent writes one summary per turn under `ops/sessions/<YYYY-MM-DD>/`; this module turns a parsed note of that
folder into a `SessionSummary`, so no caller parses frontmatter strings by hand again. The hot / not-hot partition
of sessions under a `RetentionPolicy` is a pure function of the clock: per session key (`user_id + chat_id`), the
newest `hot_limit` sessions of the last `hot_window_days` days are hot. Everything else is left to the
warm tier, so the app can show what a policy change pushes out of hot, and recall can leave hot sessions out of the
warm results.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from companion.retention import RetentionPolicy
from companion.vault.dates import session_datetime
from companion.vault.notes import Note

_DATE_FOLDER = re.compile(r"(?:^|/)(\d{4}-\d{2}-\d{2})/[^/]+$")


@dataclass(frozen=True)
class SessionSummary:
    """One turn's summary as typed fields, plus the chat it belongs to."""

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
        """The session key `user_id + chat_id`: `user` alone, or `user:chat` with a chat."""
        return f"{self.user_id}:{self.chat_id}" if self.chat_id else self.user_id

    @cached_property
    def when(self) -> dt.datetime | None:
        """The turn's moment as a naive datetime (as written), or None if unreadable (parsed once: partitions
        sort thousands of sessions by it)."""
        return session_datetime(self.date, self.time)


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


@dataclass(frozen=True)
class HotSplit:
    """Sessions split by the policy."""

    hot: tuple[SessionSummary, ...]
    """The hot tier, newest first."""
    pushed_out: tuple[SessionSummary, ...]
    """Sessions inside the day window that the per-key limit left out, newest first."""


def local_moment(now: dt.datetime | None) -> dt.datetime:
    """`now` as a naive local time, the way agents stamp sessions (the current time when None)."""
    if now is None:
        return dt.datetime.now()
    return now.astimezone().replace(tzinfo=None) if now.tzinfo else now


def window_start(policy: RetentionPolicy, moment: dt.datetime) -> dt.date:
    """First day of the hot window: 2 days means today and yesterday."""
    return moment.date() - dt.timedelta(days=max(policy.hot_window_days - 1, 0))


def partition_hot(
    sessions: Iterable[SessionSummary],
    policy: RetentionPolicy,
    moment: dt.datetime,
    *,
    user_id: str | None = None,
    chat_id: str | None = None,
) -> HotSplit:
    """Split sessions into the hot tier and those the limit pushed out.

    `moment` is naive local time (see `local_moment`); sessions after it have not happened yet and sessions
    before the window are in neither list. With `user_id`, only that user counts; with `chat_id` too, only
    that session key. Without `chat_id` a user's chats share one limit (as in `get_recent_sessions`);
    without `user_id` each key gets its own.
    """
    if policy.hot_window_days == 0:
        return HotSplit((), ())
    first_day = window_start(policy, moment)
    inside = [
        s
        for s in sessions
        if (user_id is None or s.user_id == user_id)
        and (chat_id is None or s.chat_id == chat_id)
        and (when := s.when) is not None
        and first_day <= when.date()
        and when <= moment
    ]
    inside.sort(key=_newest_first)
    taken: dict[str, int] = {}
    hot: list[SessionSummary] = []
    pushed: list[SessionSummary] = []
    for summary in inside:
        key = summary.user_id if user_id is not None and chat_id is None else summary.session_key
        if taken.get(key, 0) < policy.hot_limit:
            taken[key] = taken.get(key, 0) + 1
            hot.append(summary)
        else:
            pushed.append(summary)
    return HotSplit(tuple(hot), tuple(pushed))


def _newest_first(s: SessionSummary) -> tuple[float, str]:
    when = s.when
    return (-(when.timestamp() if when else float("-inf")), s.path)
