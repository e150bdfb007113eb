"""The hot / not-hot partition of sessions under a `RetentionPolicy`, as a pure function of the clock.

Hot (seed 000): per session key (`user_id + chat_id`, seed 001), the newest `hot_limit` sessions of the last
`hot_window_days` days. Everything else is left to the warm tier, so the app can show what a policy change
pushes out of hot, and recall can leave hot sessions out of the warm results.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from companion.retention import RetentionPolicy
from companion.vault.sessions import SessionSummary


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
    that session key. Without `chat_id` a user's chats share one limit (the seed's `get_recent_sessions`);
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
