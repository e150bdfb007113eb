"""Date expressions in questions: pure functions of (text, as_of), so every case runs against a frozen clock."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from companion.recall.dates import DateRange, find_date_range

NOV = datetime(2026, 11, 22, 15, 0)  # a Sunday
FEB = datetime(2026, 2, 10, 9, 0)  # a Tuesday, early in the year: month names roll back to 2025


def d(month: int, day: int, year: int = 2026) -> date:
    return date(year, month, day)


# (question, start, end, phrase) with as_of = NOV.
NOV_CASES = [
    # today and its neighbours
    ("what did I do today", d(11, 22), d(11, 22), "today"),
    ("notes from yesterday", d(11, 21), d(11, 21), "from yesterday"),
    ("the day before yesterday", d(11, 20), d(11, 20), "the day before yesterday"),
    ("plans for tonight", d(11, 22), d(11, 22), "for tonight"),
    ("what I wrote this morning", d(11, 22), d(11, 22), "this morning"),
    ("the dream last night", d(11, 21), d(11, 21), "last night"),
    # N units ago
    ("3 days ago", d(11, 19), d(11, 19), "3 days ago"),
    ("three days ago", d(11, 19), d(11, 19), "three days ago"),
    ("a day ago", d(11, 21), d(11, 21), "a day ago"),
    ("a couple of days ago", d(11, 20), d(11, 20), "a couple of days ago"),
    ("a few days ago", d(11, 19), d(11, 19), "a few days ago"),
    ("a week ago", d(11, 15), d(11, 21), "a week ago"),
    ("2 weeks ago", d(11, 8), d(11, 14), "2 weeks ago"),
    ("two months ago", d(9, 1), d(9, 30), "two months ago"),
    ("a month ago", d(10, 1), d(10, 31), "a month ago"),
    ("twelve months ago", d(11, 1, 2025), d(11, 30, 2025), "twelve months ago"),
    ("a year ago", d(1, 1, 2025), d(12, 31, 2025), "a year ago"),
    ("an hour ago", d(11, 22), d(11, 22), "an hour ago"),
    # calendar weeks, months, years
    ("last week", d(11, 9), d(11, 15), "last week"),
    ("this week", d(11, 16), d(11, 22), "this week"),
    ("last month", d(10, 1), d(10, 31), "last month"),
    ("this month", d(11, 1), d(11, 22), "this month"),
    ("last year", d(1, 1, 2025), d(12, 31, 2025), "last year"),
    ("this year", d(1, 1), d(11, 22), "this year"),
    # rolling windows ending today
    ("what changed in the last 3 days", d(11, 20), d(11, 22), "in the last 3 days"),
    ("over the past two weeks", d(11, 9), d(11, 22), "over the past two weeks"),
    ("the past week", d(11, 16), d(11, 22), "the past week"),
    ("the last few days", d(11, 20), d(11, 22), "the last few days"),
    ("past 2 months", d(9, 23), d(11, 22), "past 2 months"),
    # weekdays (today is Sunday)
    ("on Tuesday", d(11, 17), d(11, 17), "on Tuesday"),
    ("last Tuesday", d(11, 17), d(11, 17), "last Tuesday"),
    ("on Sunday", d(11, 22), d(11, 22), "on Sunday"),
    ("last Sunday", d(11, 15), d(11, 15), "last Sunday"),
    ("Friday's meeting", d(11, 20), d(11, 20), "Friday"),
    # month names
    ("in March", d(3, 1), d(3, 31), "in March"),
    ("last March", d(3, 1), d(3, 31), "last March"),
    ("in November", d(11, 1), d(11, 22), "in November"),
    ("in December", d(12, 1, 2025), d(12, 31, 2025), "in December"),
    ("March 2025", d(3, 1, 2025), d(3, 31, 2025), "March 2025"),
    ("in March 2025", d(3, 1, 2025), d(3, 31, 2025), "in March 2025"),
    ("early March", d(3, 1), d(3, 10), "early March"),
    ("mid-March", d(3, 11), d(3, 20), "mid-March"),
    ("late March", d(3, 21), d(3, 31), "late March"),
    ("late February", d(2, 21), d(2, 28), "late February"),
    ("in Sept", d(9, 1), d(9, 30), "in Sept"),
    ("during Jan", d(1, 1), d(1, 31), "during Jan"),
    ("what happened in May", d(5, 1), d(5, 31), "in May"),
    ("early May", d(5, 1), d(5, 10), "early May"),
    ("May 2025", d(5, 1, 2025), d(5, 31, 2025), "May 2025"),
    # day and month
    ("on 8 May", d(5, 8), d(5, 8), "on 8 May"),
    ("the 8th of May", d(5, 8), d(5, 8), "the 8th of May"),
    ("May 8", d(5, 8), d(5, 8), "May 8"),
    ("May 8th", d(5, 8), d(5, 8), "May 8th"),
    ("8 May 2025", d(5, 8, 2025), d(5, 8, 2025), "8 May 2025"),
    ("May 8, 2025", d(5, 8, 2025), d(5, 8, 2025), "May 8, 2025"),
    ("25 December", d(12, 25, 2025), d(12, 25, 2025), "25 December"),
    ("29 February", d(2, 29, 2024), d(2, 29, 2024), "29 February"),
    ("on the 8th", d(11, 8), d(11, 8), "on the 8th"),
    ("on the 25th", d(10, 25), d(10, 25), "on the 25th"),
    ("on the 31st", d(10, 31), d(10, 31), "on the 31st"),
    # ISO dates and years
    ("the note of 2025-05-08", d(5, 8, 2025), d(5, 8, 2025), "of 2025-05-08"),
    ("2025-05", d(5, 1, 2025), d(5, 31, 2025), "2025-05"),
    ("in 2025", d(1, 1, 2025), d(12, 31, 2025), "in 2025"),
    ("during 2024", d(1, 1, 2024), d(12, 31, 2024), "during 2024"),
    ("the budget of 2023", d(1, 1, 2023), d(12, 31, 2023), "of 2023"),
    # since X: from X's start to today
    ("since last week", d(11, 9), d(11, 22), "since last week"),
    ("since March", d(3, 1), d(11, 22), "since March"),
    ("since 2025", d(1, 1, 2025), d(11, 22), "since 2025"),
    ("since Tuesday", d(11, 17), d(11, 22), "since Tuesday"),
    ("since 3 days ago", d(11, 19), d(11, 22), "since 3 days ago"),
    ("since 8 May", d(5, 8), d(11, 22), "since 8 May"),
    # between X and Y
    ("between March and May", d(3, 1), d(5, 31), "between March and May"),
    ("from 3 May to 8 May", d(5, 3), d(5, 8), "from 3 May to 8 May"),
    ("between 2023 and 2025", d(1, 1, 2023), d(12, 31, 2025), "between 2023 and 2025"),
    # the leftmost expression wins; the phrase is as written
    ("last week and yesterday", d(11, 9), d(11, 15), "last week"),
    ("yesterday, not last week", d(11, 21), d(11, 21), "yesterday"),
    ("What happened IN MARCH?", d(3, 1), d(3, 31), "IN MARCH"),
]

# Early in the year, month names and day-months without a year fall back to last year.
FEB_CASES = [
    ("in March", d(3, 1, 2025), d(3, 31, 2025), "in March"),
    ("last March", d(3, 1, 2025), d(3, 31, 2025), "last March"),
    ("in February", d(2, 1), d(2, 10), "in February"),
    ("last February", d(2, 1, 2025), d(2, 28, 2025), "last February"),
    ("in January", d(1, 1), d(1, 31), "in January"),
    ("late February", d(2, 21, 2025), d(2, 28, 2025), "late February"),
    ("what happened in May", d(5, 1, 2025), d(5, 31, 2025), "in May"),
    ("8 May", d(5, 8, 2025), d(5, 8, 2025), "8 May"),
    ("last month", d(1, 1), d(1, 31), "last month"),
    ("last year", d(1, 1, 2025), d(12, 31, 2025), "last year"),
    ("two months ago", d(12, 1, 2025), d(12, 31, 2025), "two months ago"),
    ("this week", d(2, 9), d(2, 10), "this week"),
    ("last week", d(2, 2), d(2, 8), "last week"),
    ("on Tuesday", d(2, 10), d(2, 10), "on Tuesday"),
    ("last Tuesday", d(2, 3), d(2, 3), "last Tuesday"),
    ("on the 20th", d(1, 20), d(1, 20), "on the 20th"),
    ("since December", d(12, 1, 2025), d(2, 10), "since December"),
]

NOTHING = [
    "",
    "what do I know about chamonix",
    "may I ask about the budget",
    "you may want to check",
    "what have I written recently",
    "anything new lately",
    "the last time we spoke",
    "I have 2025 notes",
    "in 1985",
    "the 3rd item",
    "on 31 February",
    "on 30 February 2024",
    "2025-02-30",
    "2025-13",
    "in 2030",
    "2027-01-01",
    "9999 years ago",
    "on Tuesdays",
]


@pytest.mark.parametrize(("question", "start", "end", "phrase"), NOV_CASES)
def test_expressions_in_november(question: str, start: date, end: date, phrase: str) -> None:
    assert find_date_range(question, NOV) == DateRange(start, end, phrase)


@pytest.mark.parametrize(("question", "start", "end", "phrase"), FEB_CASES)
def test_expressions_in_february_roll_back_a_year(question: str, start: date, end: date, phrase: str) -> None:
    assert find_date_range(question, FEB) == DateRange(start, end, phrase)


@pytest.mark.parametrize("question", NOTHING)
def test_no_date_expression(question: str) -> None:
    assert find_date_range(question, NOV) is None


def test_the_nth_skips_months_without_that_day() -> None:
    # On 5 March the 30th is still ahead and February has none: 30 January.
    assert find_date_range("on the 30th", datetime(2026, 3, 5)) == DateRange(d(1, 30), d(1, 30), "on the 30th")


def test_hours_ago_can_cross_midnight() -> None:
    assert find_date_range("3 hours ago", datetime(2026, 11, 22, 1, 0)) == DateRange(
        d(11, 21), d(11, 21), "3 hours ago"
    )


def test_an_aware_as_of_uses_its_own_local_date() -> None:
    as_of = datetime(2026, 11, 22, 0, 30, tzinfo=timezone(timedelta(hours=2)))  # 21 November in UTC
    assert find_date_range("today", as_of) == DateRange(d(11, 22), d(11, 22), "today")


def test_an_invalid_date_is_ignored_but_a_later_valid_one_is_found() -> None:
    assert find_date_range("on 31 February or on 8 May", NOV) == DateRange(d(5, 8), d(5, 8), "on 8 May")


def test_date_range_contains_and_distance() -> None:
    week = DateRange(d(11, 9), d(11, 15), "last week")
    assert week.contains(d(11, 9)) and week.contains(d(11, 15)) and not week.contains(d(11, 16))
    assert [week.distance(d(11, day)) for day in (6, 9, 12, 15, 19)] == [3, 0, 0, 0, 4]


_WORDS = [
    "in", "on", "since", "between", "and", "to", "from", "the", "last", "this", "past", "a", "few", "couple",
    "of", "early", "mid", "late", "May", "march", "feb", "Tuesday", "week", "weeks", "month", "year", "days",
    "ago", "8th", "31", "29", "2025", "2025-02-30", "0000", "9999", "yesterday", "today", "-", ",",
]  # fmt: skip


@given(
    text=st.one_of(st.text(), st.lists(st.sampled_from(_WORDS), max_size=8).map(" ".join)),
    as_of=st.datetimes(),
)
def test_never_raises_and_ranges_are_ordered_and_in_the_past(text: str, as_of: datetime) -> None:
    found = find_date_range(text, as_of)
    if found is not None:
        assert found.start <= found.end <= as_of.date()
        assert found.phrase and found.phrase in text
