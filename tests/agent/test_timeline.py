"""Placing sessions and dated notes around a day, a moment or a note."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from companion.agent.api import AgentApi
from companion.agent.timeline import Anchor, Happening, note_moment, place
from companion.workspace import Workspace
from tests.helpers.agentvault import write_agent_vault
from tests.helpers.files import write
from tests.helpers.workspaces import workspace


def at(day: int, hour: int = 0, *, path: str = "", kind: str = "note") -> Happening:
    when = dt.datetime(2026, 10, day, hour)
    return Happening(path or f"Notes/{day:02d}-{hour:02d}.md", f"{day}/{hour}", kind, when, hour != 0)


def test_a_day_anchor_holds_the_whole_day_with_the_nearest_either_side() -> None:
    happenings = [at(d, h) for d in (1, 2, 3, 5, 6, 7) for h in (0, 9)]
    placed = place(happenings, Anchor(dt.datetime(2026, 10, 5), day_only=True), before=2, after=3)
    assert [(p.position, p.happening.path) for p in placed] == [
        ("before", "Notes/03-00.md"),
        ("before", "Notes/03-09.md"),
        ("at", "Notes/05-00.md"),
        ("at", "Notes/05-09.md"),
        ("after", "Notes/06-00.md"),
        ("after", "Notes/06-09.md"),
        ("after", "Notes/07-00.md"),
    ]


def test_a_note_anchor_is_alone_at_and_its_day_falls_either_side_by_time() -> None:
    mine = at(5, 12, path="Memory/Mine.md")
    happenings = [at(5, 9), mine, at(5, 15), at(4, 9)]
    placed = place(happenings, Anchor(mine.when, False, mine.path), before=5, after=0)
    assert [(p.position, p.happening.path) for p in placed] == [
        ("before", "Notes/04-09.md"),
        ("before", "Notes/05-09.md"),
        ("at", "Memory/Mine.md"),
    ]


def test_a_moment_anchor_has_nothing_at_it_and_zero_asks_for_nothing() -> None:
    happenings = [at(5, 9), at(5, 15)]
    placed = place(happenings, Anchor(dt.datetime(2026, 10, 5, 12), False), before=0, after=5)
    assert [(p.position, p.happening.path) for p in placed] == [("after", "Notes/05-15.md")]


def test_a_note_is_placed_by_its_date_else_when_it_was_created() -> None:
    # A note dated by its day stands at the end of it: it sums the day up.
    end = dt.time.max
    assert note_moment({"date": "2026-10-05"}) == (dt.datetime.combine(dt.date(2026, 10, 5), end), False)
    assert note_moment({"date": dt.date(2026, 10, 5)}) == (dt.datetime.combine(dt.date(2026, 10, 5), end), False)
    assert note_moment({"date": "2026-10-05 14:30"}) == (dt.datetime(2026, 10, 5, 14, 30), True)
    assert note_moment({"created": "2026-09-01T08:15:00"}) == (dt.datetime(2026, 9, 1, 8, 15), True)
    assert note_moment({"date": "soon", "created": "2026-09-01"}) == (
        dt.datetime.combine(dt.date(2026, 9, 1), end),
        False,
    )
    assert note_moment({"title": "x"}) is None


def _session_vault(tmp_path: Path) -> Workspace:
    """The agent vault with a session on 2026-10-07 at 14:00 and the memory it left, dated that day only."""
    vault = write_agent_vault(tmp_path / "vault")
    write(
        vault,
        "ops/sessions/2026-10-07/140000-heat.md",
        "---\ndate: 2026-10-07\nuser_id: bob\nchat_id: web\ntime: '14:00:00'\n"
        "user_msg: The heat pump quote came in.\nsentinel_msg: Noted, 9,800 euros.\n---\n\nNoted.\n",
    )
    write(
        vault,
        "Memory/Heat pump quote.md",
        "---\ntype: fact\ndate: 2026-10-07\n---\n# Heat pump quote\n\n9,800 euros.\n",
    )
    ws = workspace(vault, data_dir=tmp_path / "data")
    ws.catch_up()
    return ws


def test_the_session_that_led_to_a_note_of_the_same_day_comes_before_it(tmp_path: Path) -> None:
    ws = _session_vault(tmp_path)
    try:
        line = AgentApi(ws).timeline(note="Heat pump quote", before=2, after=1)
    finally:
        ws.close()
    assert (line.when, line.source) == ("2026-10-07", "date")
    assert [(e.position, e.kind, e.path) for e in line.entries] == [
        ("before", "session", "Conversations/2026-10-05 Ski trip.md"),
        ("before", "session", "ops/sessions/2026-10-07/140000-heat.md"),
        ("at", "note", "Memory/Heat pump quote.md"),
    ]
    assert line.entries[1].when == "2026-10-07T14:00" and "heat pump quote came in" in line.entries[1].summary
    assert line.entries[2].summary == "9,800 euros."  # the heading repeating the title is not the note's line


def test_a_session_is_its_own_anchor_and_an_undated_note_is_placed_by_its_last_change(tmp_path: Path) -> None:
    ws = _session_vault(tmp_path)
    api = AgentApi(ws)
    try:
        session = api.timeline(note="ops/sessions/2026-10-07/140000-heat.md", before=0, after=1)
        undated = api.timeline(note="Ingrid", before=0, after=0)
        last = api.resolve("@last")
    finally:
        ws.close()
    assert (session.when, session.source) == ("2026-10-07T14:00", "session")
    assert [(e.position, e.path) for e in session.entries] == [
        ("at", "ops/sessions/2026-10-07/140000-heat.md"),
        ("after", "Memory/Heat pump quote.md"),
    ]
    assert undated.source == "modified" and [e.path for e in undated.entries] == ["People/Ingrid Olsen.md"]
    assert last == "People/Ingrid Olsen.md"
