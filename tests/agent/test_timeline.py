"""Placing sessions and dated notes around a day, a moment or a note."""

from __future__ import annotations

import datetime as dt

from companion.agent.timeline import Anchor, Happening, note_moment, place


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
    assert note_moment({"date": "2026-10-05"}) == (dt.datetime(2026, 10, 5), False)
    assert note_moment({"date": dt.date(2026, 10, 5)}) == (dt.datetime(2026, 10, 5), False)
    assert note_moment({"date": "2026-10-05 14:30"}) == (dt.datetime(2026, 10, 5, 14, 30), True)
    assert note_moment({"created": "2026-09-01T08:15:00"}) == (dt.datetime(2026, 9, 1, 8, 15), True)
    assert note_moment({"date": "soon", "created": "2026-09-01"}) == (dt.datetime(2026, 9, 1), False)
    assert note_moment({"title": "x"}) is None
