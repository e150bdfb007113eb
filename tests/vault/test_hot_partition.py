"""`partition_hot` at the policy's edges, as a pure function of a frozen moment."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone

import pytest

from companion.retention import RetentionPolicy
from companion.vault.sessions import SessionSummary, local_moment, partition_hot, window_start

NOW = datetime(2026, 3, 10, 15, 0)
POLICY = RetentionPolicy()


def _session(date: str, time_: str, user: str = "alice", chat: str = "main") -> SessionSummary:
    path = f"ops/sessions/{date}/{time_.replace(':', '')}-{user}-{chat}.md"
    return SessionSummary(date, user, time_, "hello", "hi", path, "", chat)


def _whens(sessions: Sequence[SessionSummary]) -> list[str]:
    return [f"{s.user_id}:{s.chat_id} {s.date} {s.time}" for s in sessions]


SESSIONS = [
    _session("2026-03-10", "14:00:00"),
    _session("2026-03-10", "09:00:00"),
    _session("2026-03-10", "12:00:00", chat="other"),
    _session("2026-03-09", "22:00:00"),
    _session("2026-03-09", "08:00:00", chat="other"),
    _session("2026-03-08", "23:59:59"),  # the day before yesterday
    _session("2026-03-10", "13:00:00", user="bob"),
    _session("2026-03-09", "13:00:00", user="bob"),
    _session("2026-03-10", "16:00:00"),  # after NOW
]


def test_without_a_user_each_session_key_gets_its_own_limit() -> None:
    split = partition_hot(SESSIONS, replace(POLICY, hot_limit=1), NOW)
    assert _whens(split.hot) == [
        "alice:main 2026-03-10 14:00:00",
        "bob:main 2026-03-10 13:00:00",
        "alice:other 2026-03-10 12:00:00",
    ]
    assert _whens(split.pushed_out) == [
        "alice:main 2026-03-10 09:00:00",
        "alice:main 2026-03-09 22:00:00",
        "bob:main 2026-03-09 13:00:00",
        "alice:other 2026-03-09 08:00:00",
    ]


def test_a_session_key_is_user_and_chat_so_an_empty_chat_is_its_own_key() -> None:
    sessions = [_session("2026-03-10", "10:00:00", chat=""), _session("2026-03-10", "11:00:00", chat="main")]
    assert len(partition_hot(sessions, replace(POLICY, hot_limit=1), NOW).hot) == 2


def test_a_user_without_a_chat_pools_the_limit_over_chats() -> None:
    split = partition_hot(SESSIONS, replace(POLICY, hot_limit=3), NOW, user_id="alice")
    assert _whens(split.hot) == [
        "alice:main 2026-03-10 14:00:00",
        "alice:other 2026-03-10 12:00:00",
        "alice:main 2026-03-10 09:00:00",
    ]
    assert _whens(split.pushed_out) == ["alice:main 2026-03-09 22:00:00", "alice:other 2026-03-09 08:00:00"]


def test_a_user_and_a_chat_keep_that_key_only() -> None:
    split = partition_hot(SESSIONS, replace(POLICY, hot_limit=2), NOW, user_id="alice", chat_id="other")
    assert _whens(split.hot) == ["alice:other 2026-03-10 12:00:00", "alice:other 2026-03-09 08:00:00"]
    assert split.pushed_out == ()


def test_chat_id_without_user_filters_by_chat() -> None:
    split = partition_hot(SESSIONS, replace(POLICY, hot_limit=9), NOW, chat_id="other")
    assert {s.chat_id for s in (*split.hot, *split.pushed_out)} == {"other"}


def test_a_zero_day_window_keeps_nothing() -> None:
    split = partition_hot(SESSIONS, replace(POLICY, hot_window_days=0, hot_limit=99), NOW)
    assert split.hot == () and split.pushed_out == ()


def test_a_one_day_window_is_today_only() -> None:
    split = partition_hot(SESSIONS, replace(POLICY, hot_window_days=1, hot_limit=99), NOW, user_id="alice")
    assert {s.date for s in split.hot} == {"2026-03-10"}
    assert len(split.hot) == 3 and split.pushed_out == ()


def test_a_two_day_window_is_today_and_yesterday() -> None:
    split = partition_hot(SESSIONS, replace(POLICY, hot_window_days=2, hot_limit=99), NOW, user_id="alice")
    assert {s.date for s in split.hot} == {"2026-03-10", "2026-03-09"}
    assert len(split.hot) == 5
    # The window counts calendar days, not 24-hour spans: yesterday 00:00 is in, the day before 23:59:59 is not.
    assert window_start(replace(POLICY, hot_window_days=2), NOW).isoformat() == "2026-03-09"
    early = partition_hot([_session("2026-03-09", "00:00:00")], POLICY, datetime(2026, 3, 10, 23, 59))
    assert len(early.hot) == 1


def test_a_three_day_window_reaches_the_day_before_yesterday() -> None:
    split = partition_hot(SESSIONS, replace(POLICY, hot_window_days=3, hot_limit=99), NOW, user_id="alice")
    assert "2026-03-08" in {s.date for s in split.hot}


def test_the_moment_itself_is_included_and_a_second_later_is_not() -> None:
    at = _session("2026-03-10", "15:00:00")
    after = _session("2026-03-10", "15:00:01")
    split = partition_hot([after, at], POLICY, NOW)
    assert split.hot == (at,)
    assert split.pushed_out == ()


def test_an_unreadable_date_is_in_neither_list_and_an_unreadable_time_counts_from_midnight() -> None:
    sessions = [
        _session("2026-03-10", "noon"),
        _session("not a date", "10:00"),
        _session("2026-03-10", "10:00"),
    ]
    split = partition_hot(sessions, replace(POLICY, hot_limit=1), NOW)
    assert _whens(split.hot) == ["alice:main 2026-03-10 10:00"]
    assert [s.time for s in split.pushed_out] == ["noon"]


def test_pushed_out_holds_what_the_limit_left_out_newest_first() -> None:
    sessions = [_session("2026-03-10", f"{hour:02d}:00:00") for hour in (9, 13, 11, 14, 10, 12)]
    split = partition_hot(sessions, replace(POLICY, hot_limit=2), NOW)
    assert [s.time for s in split.hot] == ["14:00:00", "13:00:00"]
    assert [s.time for s in split.pushed_out] == ["12:00:00", "11:00:00", "10:00:00", "09:00:00"]


def test_equal_times_break_ties_on_path() -> None:
    sessions = [_session("2026-03-10", "10:00", chat="b"), _session("2026-03-10", "10:00", chat="a")]
    split = partition_hot(sessions, replace(POLICY, hot_limit=1), NOW, user_id="alice")
    assert [s.chat_id for s in split.hot] == ["a"]
    assert [s.chat_id for s in split.pushed_out] == ["b"]


@pytest.fixture
def plus_three() -> Iterator[None]:
    # A POSIX TZ string needs no tz database: local time is UTC+3, with no daylight saving.
    saved = os.environ.get("TZ")
    os.environ["TZ"] = "XXX-3"
    time.tzset()
    yield
    if saved is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = saved
    time.tzset()


@pytest.mark.usefixtures("plus_three")
def test_local_moment_turns_an_aware_time_into_naive_local_time() -> None:
    assert local_moment(datetime(2026, 3, 10, 12, 0, tzinfo=UTC)) == datetime(2026, 3, 10, 15, 0)
    minus_five = timezone(timedelta(hours=-5))
    assert local_moment(datetime(2026, 3, 10, 22, 30, tzinfo=minus_five)) == datetime(2026, 3, 11, 6, 30)
    assert local_moment(datetime(2026, 3, 10, 12, 0)) == datetime(2026, 3, 10, 12, 0)  # naive stays as is
    assert local_moment(datetime(2026, 3, 10, 12, 0, tzinfo=UTC)).tzinfo is None


def test_local_moment_of_none_is_now() -> None:
    before = datetime.now()
    moment = local_moment(None)
    assert moment.tzinfo is None
    assert before <= moment <= datetime.now()
