"""The app acts on the note the user highlighted, by its path: through sorts, re-indexes and refills, and never on a
neighbour when that note leaves; the highlighted knob is always in view, and the one `+` changes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from companion.tui.app import CompanionApp
from companion.workspace import Workspace
from tests.helpers.conversations import NOW
from tests.helpers.pilot import curate, settle, until
from widgets.ask import AskDialog
from widgets.hot_pane import HotPane
from widgets.note_view import NoteView
from widgets.policy_knobs import PolicyKnobs
from widgets.warm_pane import WarmPane

QUERY = "chalet kitchen sourdough euros"
"""A question with several results in the conversation vault."""


def drive(app: CompanionApp, steps: Any, size: tuple[int, int] = (140, 42)) -> list[str]:
    """Run `steps` in the app at `size`; returns every notification's title and text, in order."""
    said: list[str] = []
    notify = app.notify

    def recording(message: str, *, title: str = "", **how: Any) -> None:
        said.append(f"{title}: {message}")
        notify(message, title=title, **how)

    app.notify = recording  # type: ignore[method-assign]

    async def go() -> None:
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            await steps(pilot)

    asyncio.run(go())
    return said


def shown(app: CompanionApp) -> str:
    """The note the note view shows (its title is the note's path)."""
    return str(app.query_one(NoteView).border_title)


def audit(ws: Workspace) -> list[dict[str, Any]]:
    """The audit log's entries."""
    log = ws.data_dir / "audit" / "log.jsonl"
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []


async def search(pilot: Pilot[Any], query: str) -> WarmPane:
    """Ask `query` and return the warm pane, focused on the results."""
    await pilot.press("slash", *query, "enter")
    await settle(pilot)
    warm = pilot.app.query_one(WarmPane)
    assert warm.row_count >= 3 and pilot.app.focused is warm
    return warm


async def reindex(pilot: Pilot[Any], app: CompanionApp, path: Path, text: str) -> None:
    """Save a file in the vault as another program would and wait until the app re-indexed it and recalled again."""
    batches = app.indexed_batches
    path.write_text(text, encoding="utf-8")
    await until(pilot, lambda: app.indexed_batches > batches, "the watcher's batch")
    await settle(pilot)


def test_a_sort_keeps_the_highlight_the_note_view_and_the_pin_on_the_same_note(ws: Workspace) -> None:
    app = CompanionApp(ws, as_of=NOW)
    picked: list[str] = []

    async def steps(pilot: Pilot[Any]) -> None:
        warm = await search(pilot, QUERY)
        await pilot.press("down")
        await settle(pilot)
        before = warm.current_key()
        assert before is not None and shown(app) == before
        await pilot.press(*"sssss")  # by the note's name, largest first: the rows move under the cursor
        await settle(pilot)
        assert warm.sort_column == "note"
        assert warm.current_key() == before and shown(app) == before
        picked.append(before)
        await curate(pilot, "asterisk")

    said = drive(app, steps)
    assert [entry["changes"][0]["path"] for entry in audit(ws)] == picked
    assert "pinned: true" in (ws.root / picked[0]).read_text(encoding="utf-8")
    assert f"done: u undoes it: Pinned {picked[0]}" in said


def test_a_save_elsewhere_re_indexes_without_moving_the_note_acted_on(ws: Workspace) -> None:
    app = CompanionApp(ws, as_of=NOW)
    picked: list[str] = []

    async def steps(pilot: Pilot[Any]) -> None:
        warm = await search(pilot, QUERY)
        recalled = [str(row.key.value) for row in warm.ordered_rows]
        await pilot.press(*"ssssss", "S", "end", "home")  # by the note's name, A first; the first highlighted
        await settle(pilot)
        before = warm.current_key()
        assert before is not None and before != recalled[0] and shown(app) == before
        # Obsidian saves another note: the index changes, recall runs again and the rows are filled anew.
        await reindex(pilot, app, ws.root / "Memory" / "Unrelated.md", "A note saved in Obsidian meanwhile.\n")
        assert warm.current_key() == before and shown(app) == before
        for _ in range(2):  # a second refill (a knob press) keeps it too
            await pilot.press("p", "minus", "plus", "w")
            await settle(pilot)
            assert warm.current_key() == before and shown(app) == before
        picked.append(before)
        await curate(pilot, "asterisk")
        await curate(pilot, "y", "ctrl+u", *"fact", "enter")

    said = drive(app, steps)
    assert [entry["changes"][0]["path"] for entry in audit(ws)] == picked * 2
    assert "pinned: true" in (text := (ws.root / picked[0]).read_text(encoding="utf-8")) and "type: fact" in text
    assert f"done: u undoes it: Set the type of {picked[0]} to fact" in said


def test_the_tag_box_holds_the_highlighted_notes_tags_while_the_view_is_still_reading_it(ws: Workspace) -> None:
    app = CompanionApp(ws, as_of=NOW)

    async def steps(pilot: Pilot[Any]) -> None:
        warm = await search(pilot, QUERY)
        path = next(str(row.key.value) for row in warm.ordered_rows if str(row.key.value).startswith("Conversations/"))
        warm.move_cursor(row=warm.get_row_index(path))
        await settle(pilot)
        assert shown(app) == path
        app._shown_note = None  # as between a highlight and the end of its read
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, AskDialog), "the tag box")
        assert isinstance(app.screen, AskDialog)
        slug = path.removesuffix(".md").split(" ")[-1]
        assert app.screen.question == f"Tags of {path}" and app.screen.value == f"{slug} "
        await pilot.press("escape")
        await settle(pilot)

    drive(app, steps)


def test_when_the_highlighted_note_leaves_nothing_acts_on_a_neighbour(ws: Workspace) -> None:
    app = CompanionApp(ws, as_of=NOW)
    picked: list[str] = []

    async def steps(pilot: Pilot[Any]) -> None:
        warm = await search(pilot, QUERY)
        await pilot.press("down")
        await settle(pilot)
        gone = warm.current_key()
        assert gone is not None
        picked.append(gone)
        batches = app.indexed_batches
        (ws.root / gone).unlink()  # deleted in Obsidian
        await until(pilot, lambda: app.indexed_batches > batches, "the watcher's batch")
        await settle(pilot)
        assert gone not in warm.rows
        assert warm.current_key() is None and not warm.show_cursor  # no neighbour highlighted in its place
        assert shown(app) == gone  # the view says the note is gone instead of showing another
        for key in ("asterisk", "t", "y"):
            await pilot.press(key)
            await settle(pilot)
            assert app.screen is app.screen_stack[0]  # no dialog opened
        assert app.curations == 0
        await pilot.press("down")  # the first move shows the cursor where it is, and the view follows it
        await settle(pilot)
        assert warm.show_cursor and warm.current_key() is not None and shown(app) == warm.current_key()

    said = drive(app, steps)
    assert audit(ws) == []
    refused = [line for line in said if "refused" in line]
    assert len(refused) == 3 and all(f"{picked[0]} is no longer in the vault" in line for line in refused)


def test_a_hot_session_that_leaves_hides_the_cursor_instead_of_showing_its_neighbour(ws: Workspace) -> None:
    app = CompanionApp(ws, as_of=NOW)
    picked: list[str] = []

    async def steps(pilot: Pilot[Any]) -> None:
        hot = app.query_one(HotPane)
        await pilot.press("h", "down", "down")
        await settle(pilot)
        gone = hot.current_key()
        assert gone is not None and shown(app) == gone and hot.row_count == 5
        picked.append(gone)
        (ws.root / gone).unlink()  # the agent's pipeline dropped the session summary
        await until(pilot, lambda: gone not in hot.rows, "the session leaving hot")
        await settle(pilot)
        assert hot.current_key() is None and not hot.show_cursor and shown(app) == gone
        await pilot.press("asterisk")
        await settle(pilot)
        assert app.curations == 0
        await pilot.press("up")  # the first move shows the cursor where it is
        await settle(pilot)
        assert hot.show_cursor and hot.current_key() is not None and shown(app) == hot.current_key()

    said = drive(app, steps)
    assert audit(ws) == []
    assert any(f"pin refused: {picked[0]} is no longer in the vault" in line for line in said)


def visible_rows(knobs: PolicyKnobs) -> range:
    """The rows of the knobs' table that the pane shows now (below its header)."""
    top = round(knobs.scroll_y)
    return range(top, top + knobs.scrollable_content_region.height - 1)  # one line for the header


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 50)])
def test_the_highlighted_knob_is_always_in_view_and_is_the_one_plus_changes(
    ws: Workspace, size: tuple[int, int]
) -> None:
    app = CompanionApp(ws, as_of=NOW)

    async def steps(pilot: Pilot[Any]) -> None:
        knobs = app.query_one(PolicyKnobs)
        await pilot.press("p", "down", "down")  # half_life_days
        await settle(pilot)
        # The knobs' pane changes size under the cursor: given the whole screen and back, then left and entered.
        await pilot.press("z", "z", "w", "p")
        await settle(pilot)
        assert knobs.highlighted == "half_life_days"
        assert knobs.cursor_row in visible_rows(knobs), (knobs.cursor_row, visible_rows(knobs))
        before = app.policy.half_life_days
        await pilot.press("plus")
        await settle(pilot)
        assert app.policy.half_life_days == before + 5 and app.policy.hot_limit == ws.config.retention.hot_limit
        assert knobs.cursor_row in visible_rows(knobs)

    said = drive(app, steps, size)
    days = ws.config.retention.half_life_days
    assert f"policy: half_life_days {days:g} → {days + 5:g} (ctrl+s saves)" in said
