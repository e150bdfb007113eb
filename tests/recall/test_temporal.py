"""Temporal recall: recap detection, the recency signal, and recent sessions with a frozen clock."""

from __future__ import annotations

from datetime import datetime

import pytest

from companion.recall.temporal import TemporalItem, is_recap, recap_boost, recent_items, summarise, temporal_recency
from companion.vault.sessions import SessionSummary

NOW = datetime(2026, 3, 10, 15, 0)


def _session(
    date: str, time: str, user: str = "alice", chat: str = "main", user_msg: str = "", answer: str = "", body: str = ""
) -> SessionSummary:
    path = f"ops/sessions/{date}/{time.replace(':', '')}-{user}.md"
    return SessionSummary(date, user, time, user_msg, answer, path, body, chat)


def _carried(*sessions: SessionSummary) -> list[tuple[SessionSummary, str, str]]:
    return [(s, f"Conversations/{s.path.rsplit('/', 1)[-1]}", f"title {s.date} {s.time}") for s in sessions]


def _whens(items: list[TemporalItem]) -> list[str]:
    return [item.when.isoformat(sep=" ") for item in items]


@pytest.mark.parametrize(
    "text",
    [
        "what did we talk about recently?",
        "What did we talk about recently?",
        "recap please",
        "RECAP",
        "remind me what we said last time",
        "catch me up",
        "where did we leave it?",
        "pick up where we left off",
        "what have we been discussing",
        "a summary of our recent chats",
        "in our last conversation you said",
        "what did we discuss?",
        "what have we covered so far",
    ],
)
def test_recap_questions_are_detected(text: str) -> None:
    assert is_recap(text)
    assert recap_boost(text)


@pytest.mark.parametrize(
    "text",
    [
        "what is the chalet budget",
        "talk to me about recipes",
        "recapitulation of the theory",
        "",
        "the last word",
        "what did we decide about the budget",
        "what did the plumber discover",
        "what did you cover in the report?",
        "what did we discuss with the landlord?",
        "what did Maria and I talk about",
        "what did I cover the sofa with?",
    ],
)
def test_other_questions_are_not_recaps(text: str) -> None:
    assert not is_recap(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "what is the chalet budget",
        "recently",
        "recent",
        "yesterday today recently lately this morning just now",
        "RECENTLY, LATELY!",
        "last earlier ago so far",
        "recently" * 5,
    ],
)
def test_temporal_recency_stays_within_zero_and_one(text: str) -> None:
    assert 0.0 <= temporal_recency(text) <= 1.0


def test_temporal_recency_weights_and_cap() -> None:
    assert temporal_recency("what is the chalet budget") == 0.0
    assert temporal_recency("what happened recently") == pytest.approx(0.6)
    assert temporal_recency("Recently") == pytest.approx(0.6)
    assert temporal_recency("the recent notes") == pytest.approx(0.5)
    assert temporal_recency("recent notes from yesterday") == pytest.approx(1.0)  # 0.5 + 0.6, capped
    assert temporal_recency("what did I say this morning") == pytest.approx(0.6)
    assert temporal_recency("unrecently") == 0.0  # whole words only


@pytest.mark.parametrize(
    ("text", "boost"),
    [
        ("the recent notes", False),  # 0.5 is not above the threshold
        ("notes from today", False),
        ("what happened last week", False),  # 0.3
        ("notes from yesterday", True),  # 0.6
        ("the recent ones, a week ago", True),  # 0.5 + 0.3
        ("what is the chalet budget", False),
        ("recap", True),  # a pattern boosts without any recency word
    ],
)
def test_recap_boost_threshold(text: str, boost: bool) -> None:
    assert recap_boost(text) is boost


def test_recent_items_keeps_completed_sessions_of_the_window_newest_first() -> None:
    sessions = _carried(
        _session("2026-03-10", "14:30:00"),  # exactly the timeout before NOW: completed
        _session("2026-03-10", "14:31:00"),  # still within the timeout: in progress
        _session("2026-03-10", "16:00:00"),  # after NOW
        _session("2026-03-09", "09:00:00", user="bob"),
        _session("2026-03-08", "15:00:00"),  # exactly 48 hours before NOW
        _session("2026-03-08", "14:59:59"),  # just outside
        _session("2026-03-10", "noon"),  # unreadable time: placed at the start of its day
    )
    items = recent_items(sessions, NOW)
    assert _whens(items) == [
        "2026-03-10 14:30:00",
        "2026-03-10 00:00:00",
        "2026-03-09 09:00:00",
        "2026-03-08 15:00:00",
    ]
    first = items[0]
    assert (first.path, first.title, first.user_id, first.chat_id) == (
        "Conversations/143000-alice.md",
        "title 2026-03-10 14:30:00",
        "alice",
        "main",
    )
    assert items[2].user_id == "bob"
    assert all(item.summary == "" for item in items)


def test_recent_items_hours_timeout_and_limit() -> None:
    sessions = _carried(*(_session("2026-03-10", f"{hour:02d}:00:00") for hour in range(8, 15)))
    assert _whens(recent_items(sessions, NOW, hours=3)) == [
        "2026-03-10 14:00:00",
        "2026-03-10 13:00:00",
        "2026-03-10 12:00:00",
    ]
    assert len(recent_items(sessions, NOW, hours=3, timeout_minutes=61)) == 2
    assert _whens(recent_items(sessions, NOW, limit=2)) == ["2026-03-10 14:00:00", "2026-03-10 13:00:00"]
    assert recent_items(sessions, NOW, limit=0) == []
    assert len(recent_items(sessions, NOW, limit=100)) == 7
    assert recent_items([], NOW) == []


def test_recent_items_ties_break_on_path_descending() -> None:
    sessions = _carried(_session("2026-03-10", "12:00:00", user="ann"), _session("2026-03-10", "12:00:00", user="zoe"))
    assert [item.user_id for item in recent_items(sessions, NOW)] == ["zoe", "ann"]


def test_recent_items_summaries_only_when_asked() -> None:
    sessions = _carried(_session("2026-03-10", "12:00:00", user_msg="plan the ski trip", answer="booked the chalet"))
    assert recent_items(sessions, NOW)[0].summary == ""
    assert recent_items(sessions, NOW, summaries=True)[0].summary == "plan the ski trip → booked the chalet"


def test_summarise_joins_messages_or_falls_back_to_the_body() -> None:
    assert summarise(_session("2026-03-10", "12:00", user_msg="  hi  ", answer=" hello ")) == "hi → hello"
    assert summarise(_session("2026-03-10", "12:00", user_msg="only the user")) == "only the user"
    assert summarise(_session("2026-03-10", "12:00", answer="only the agent")) == "only the agent"
    assert summarise(_session("2026-03-10", "12:00", body="  line one\n\n line   two  ")) == "line one line two"
    assert summarise(_session("2026-03-10", "12:00")) == ""


def test_summarise_truncates_to_the_width() -> None:
    exact = _session("2026-03-10", "12:00", user_msg="a" * 240)
    assert summarise(exact) == "a" * 240
    long = _session("2026-03-10", "12:00", user_msg="a" * 241)
    assert summarise(long) == "a" * 239 + "…"
    assert len(summarise(long)) == 240
    spaced = _session("2026-03-10", "12:00", user_msg="word " * 100)
    cut = summarise(spaced, width=11)
    assert cut == "word word…"  # the cut does not leave a space before the ellipsis
    assert summarise(_session("2026-03-10", "12:00", user_msg="abcdef"), width=4) == "abc…"
