"""Recap questions that name a period list that period's sessions first, newest first, each with its exchange: on
real files, a real manifest and a real embedded store (hashing embedder), the clock frozen with `as_of`."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest

from companion.config import RecallConfig
from companion.recall.dates import find_date_range
from companion.recall.recap import recap_period, topic_of
from companion.recall.results import RecalledContext
from companion.vault.sessions import SessionSummary
from companion.workspace import Workspace
from tests.helpers.files import write
from tests.helpers.recapvault import NOW, TOKEN, Written, expected, indexed_recap_vault, last_monday
from tests.helpers.workspaces import workspace

MONDAY = last_monday(NOW.date())
MEMORY = "Memory/What we talked about.md"


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Workspace, dict[str, Written]]]:
    yield from indexed_recap_vault(tmp_path_factory, "recap")


def paths(context: RecalledContext) -> list[str]:
    return [i.path for i in context.results]


def test_last_week_lists_its_sessions_first_newest_first_above_a_note_that_says_last_week(
    vault: tuple[Workspace, dict[str, Written]],
) -> None:
    ws, sessions = vault
    context = ws.recall().recall("What did we talk about last week?", as_of=NOW)
    week = expected(sessions, MONDAY, MONDAY + dt.timedelta(days=6), NOW)
    assert week == [sessions[n].path for n in ("restic", "apple", "bike", "boiler")]
    assert paths(context)[:4] == week
    assert [i.tier for i in context.results[:4]] == ["temporal"] * 4
    assert MEMORY in paths(context), "the note that says 'last week' is still recalled, after the sessions"
    assert paths(context).index(MEMORY) > 3
    # One entry per session: the conversation note carrying the apple summary stands for it.
    assert sessions["apple"].path.startswith("Conversations/")
    assert not any(p.startswith(f"ops/sessions/{sessions['apple'].when.date()}") for p in paths(context))
    assert context.period is not None and (context.period.start, context.period.end) == (
        MONDAY,
        MONDAY + dt.timedelta(days=6),
    )
    assert context.period_more == 0
    # Each with its one-line exchange, redacted, the imported session's read from its turns.
    said = {t.path: t.summary for t in context.period_sessions}
    for name in ("boiler", "bike", "apple", "restic"):
        s = sessions[name]
        assert said[s.path].endswith(f"→ {s.reply}"), said[s.path]
        assert said[s.path].startswith(s.user.split(TOKEN)[0].strip()), said[s.path]
    assert TOKEN not in " ".join(said.values()) and "[REDACTED:github_token]" in said[sessions["restic"].path]
    assert "Read: backup.sh" not in said[sessions["restic"].path], "a tool call is not the reply"


def test_the_listing_is_bounded_and_says_how_many_more(vault: tuple[Workspace, dict[str, Written]]) -> None:
    ws, sessions = vault
    recall = ws.recall()
    recall.settings = RecallConfig(recent_limit=1)
    context = recall.recall("What did we talk about last week?", as_of=NOW)
    assert [t.path for t in context.period_sessions] == [sessions["restic"].path, sessions["apple"].path]
    assert context.period_more == 2
    assert paths(context)[:2] == [sessions["restic"].path, sessions["apple"].path]


def test_yesterday_lists_yesterday_s_sessions_not_today_s(vault: tuple[Workspace, dict[str, Written]]) -> None:
    ws, sessions = vault
    context = ws.recall().recall("what did we talk about yesterday?", as_of=NOW)
    assert paths(context)[:2] == [sessions["film"].path, sessions["train"].path]
    assert {i.tier for i in context.results[:2]} == {"hot"}, "yesterday is in the hot window"
    assert [t.path for t in context.period_sessions] == [sessions["film"].path, sessions["train"].path]
    assert sessions["weather"].path not in paths(context)[:2]


def test_in_march_asked_in_november_lists_march_s_sessions(vault: tuple[Workspace, dict[str, Written]]) -> None:
    ws, sessions = vault
    context = ws.recall().recall("What did we talk about in March?", as_of=NOW)
    assert paths(context)[:2] == [sessions["easter"].path, sessions["fence"].path]
    assert paths(context).index(MEMORY) > 1
    fence = next(t for t in context.period_sessions if t.path == sessions["fence"].path)
    assert fence.summary == "Which paint for the fence? → Osmo oil, two coats."


def test_a_period_before_the_hot_window_reads_its_own_days_only(
    vault: tuple[Workspace, dict[str, Written]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A recap of March asked in November reads March's summaries, not every summary since March: in a vault of
    years of sessions that is the difference between a few milliseconds and seconds."""
    ws, sessions = vault
    recall = ws.recall()
    asked: list[tuple[dt.date | None, dt.date | None]] = []
    read_sessions = recall.vault.sessions

    def sessions_between(since: dt.date | None = None, until: dt.date | None = None) -> list[SessionSummary]:
        asked.append((since, until))
        return read_sessions(since, until)

    monkeypatch.setattr(recall.vault, "sessions", sessions_between)
    context = recall.recall("What did we talk about in March?", as_of=NOW)
    assert paths(context)[:2] == [sessions["easter"].path, sessions["fence"].path]
    march = next((since, until) for since, until in asked if since is not None and since.month == 3)
    # March's folders and one more: a summary's own date may fall on the day before its folder's name.
    assert march == (dt.date(NOW.year, 3, 1), dt.date(NOW.year, 4, 1))


def test_a_period_keeps_a_summary_filed_under_the_next_day_and_its_note_written_the_next_day(
    tmp_path: Path,
) -> None:
    """An agent that names folders by UTC day files a late evening's summary under the next day; a conversation note
    written the next morning may carry the summary of the night before. Both stay in the period they took place in."""
    root = tmp_path / "vault"
    write(root, ".obsidian/app.json", "{}")

    def summary(folder: str, day: str, time: str, user: str) -> str:
        path = f"ops/sessions/{folder}/{time.replace(':', '')}-{user.split()[0].lower()}.md"
        write(
            root,
            path,
            f"---\ndate: {day}\ntime: '{time}'\nuser_id: alice\nchat_id: tg\nuser_msg: {user}\n"
            f"sentinel_msg: Done.\n---\n\n{user}\n",
        )
        return path

    late = summary("2026-04-01", "2026-03-31", "23:30:00", "Lock the shed tonight")
    carried = summary("2026-03-30", "2026-03-30", "22:00:00", "Order the seeds")
    write(
        root,
        "Conversations/2026-03-31 Seeds.md",
        "---\ntype: conversation\ndate: 2026-03-31\ntime: '07:00:00'\n"
        f"user_id: alice\nchat_id: tg\nsession: {carried}\n---\n\n**alice:** Order the seeds\n",
    )
    write(
        root,
        "Conversations/2026-04-01 Shed.md",
        "---\ntype: conversation\ndate: 2026-04-01\ntime: '08:00:00'\n"
        f"user_id: alice\nchat_id: tg\nsession: {late}\n---\n\n**alice:** Lock the shed tonight\n",
    )
    ws = workspace(root, data_dir=tmp_path / "data")
    try:
        ws.indexer().sync()
        context = ws.recall().recall("What did we talk about in March?", as_of=NOW)
        listed = [t.path for t in context.period_sessions]
        assert listed == ["Conversations/2026-04-01 Shed.md", "Conversations/2026-03-31 Seeds.md"], listed
    finally:
        ws.close()


@pytest.mark.parametrize("question", ["what did we talk about on 3 November?", "recap of 3 November"])
def test_on_3_november_lists_that_day(vault: tuple[Workspace, dict[str, Written]], question: str) -> None:
    ws, sessions = vault
    context = ws.recall().recall(question, as_of=NOW)
    assert paths(context)[:2] == [sessions["car"].path, sessions["dentist"].path]


def test_a_replay_lists_only_what_had_happened_by_its_moment(vault: tuple[Workspace, dict[str, Written]]) -> None:
    ws, sessions = vault
    moment = dt.datetime.combine(MONDAY + dt.timedelta(days=2), dt.time(12, 0))  # Wednesday noon of last week
    context = ws.recall().recall("what did we talk about this week?", as_of=moment)
    assert paths(context)[:2] == [sessions["bike"].path, sessions["boiler"].path]
    assert [t.path for t in context.period_sessions] == [sessions["bike"].path, sessions["boiler"].path]


def test_a_recap_with_a_topic_lists_the_period_s_sessions_about_it_first(
    vault: tuple[Workspace, dict[str, Written]],
) -> None:
    ws, sessions = vault
    context = ws.recall().recall("What did we say about the boiler last week?", as_of=NOW)
    # The boiler session first though it is the oldest, then the week's others newest first, then other matches.
    assert paths(context)[:4] == [sessions[n].path for n in ("boiler", "restic", "apple", "bike")]
    assert context.period is not None
    assert "Memory/Boiler.md" in paths(context)[4:]


@pytest.mark.parametrize(
    ("question", "period", "topic"),
    [
        ("What did we talk about last week?", "last week", ()),
        ("what did we talk about on 3 November?", "on 3 November", ()),
        ("yesterday?", "yesterday", ()),
        ("what happened last week", "last week", ()),
        ("What did we say about the boiler last week?", "last week", ("boiler",)),
        ("the boiler pressure yesterday", None, ("boiler", "pressure")),  # a topic with a date: ranked by meaning
        ("what did we talk about recently?", None, ()),  # no period: the recent sessions, as before
        ("boiler pressure in March", None, ("boiler", "pressure")),
        ("what did we discuss last week?", "last week", ()),
        ("What did Maria and I talk about last week?", "last week", ("maria",)),
        ("what did we discuss with the landlord?", None, ("landlord",)),  # a topic, no period: ranked by meaning
    ],
)
def test_which_questions_are_recaps_of_a_period(question: str, period: str | None, topic: tuple[str, ...]) -> None:
    found = recap_period(question, find_date_range(question, NOW))
    assert (found.phrase if found else None) == period
    assert topic_of(question, find_date_range(question, NOW)) == topic
