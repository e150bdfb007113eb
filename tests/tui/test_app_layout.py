"""The terminal app at each width and its keys: one side or both, zoom, the key help, the footer, the note view,
the knob help line, sorts across resizes and long note paths (headless, Pilot key presses, a frozen clock)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from textual.pilot import Pilot

from companion.tui.app import CompanionApp
from companion.workspace import Workspace
from tests.helpers.conversations import NOW
from tests.helpers.pilot import CHALET, run, settle, show
from widgets.warm_pane import WarmPane


def test_zoom_and_sides_keys(ws: Workspace) -> None:
    app = CompanionApp(ws, as_of=NOW)

    async def go() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            await show(pilot, "chalet host Favre", CHALET)
            warm = app.query_one(WarmPane)
            assert app.has_class("-narrow")
            assert warm.region.width > 70 and app.query_one("#note").region.width == 0  # the lists, whole width
            await pilot.press("v")
            await settle(pilot)
            assert app.query_one("#note").region.width > 70 and warm.region.width == 0
            await pilot.press("v")
            await settle(pilot)
            assert warm.region.width > 70
            warm.focus()
            await pilot.press("z")
            await settle(pilot)
            assert app.screen.maximized is warm
            await pilot.press("z")
            assert app.screen.maximized is None

    asyncio.run(go())


def test_end_and_home_go_to_the_last_and_first_row_and_escape_closes_the_key_help(ws: Workspace) -> None:
    app = CompanionApp(ws, as_of=NOW)

    async def steps(pilot: Pilot[Any]) -> None:
        await pilot.press("slash", *"chalet kitchen boiler", "enter")
        await settle(pilot)
        warm = app.query_one(WarmPane)
        warm.focus()
        assert warm.row_count >= 2
        await pilot.press("end")
        await settle(pilot)
        assert warm.cursor_row == warm.row_count - 1
        assert app.query_one("#note").border_title == warm.path_at(warm.row_count - 1)
        await pilot.press("home")
        assert warm.cursor_row == 0
        await pilot.press("question_mark")
        await settle(pilot)
        assert app.screen.__class__.__name__ == "KeysScreen"
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen.__class__.__name__ != "KeysScreen"

    run(app, steps)


@pytest.mark.parametrize(
    ("size", "columns"),
    [
        ((80, 24), ("relevance", "decay", "tier", "note")),
        ((120, 40), ("relevance", "final", "decay", "tier", "note")),
        ((200, 50), ("relevance", "final", "sim", "bm25", "decay", "accessed", "n", "type", "tier", "note")),
    ],
)
def test_the_warm_pane_keeps_the_decay_and_the_tier_in_view_at_every_width(
    ws: Workspace, size: tuple[int, int], columns: tuple[str, ...]
) -> None:
    app = CompanionApp(ws, as_of=NOW)

    async def go() -> None:
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            await show(pilot, "chalet host Favre", CHALET)
            warm = app.query_one(WarmPane)
            assert tuple(str(c.value) for c in warm.columns) == columns
            # The scores and the tier fit in the pane with room for the start of the note's name (cut at the edge).
            scores = sum(c.get_render_width(warm) for key, c in warm.columns.items() if key != "note")
            assert scores + 20 <= warm.size.width
            assert float(warm.cell(0, "decay")) == pytest.approx(
                app.context.results[0].explanation.decay.value, abs=0.01
            )
            assert warm.cell(0, "tier") == "warm"
            # Every score column is as wide as its widest value can be from the first render on: a value that comes
            # later (a date under `accessed` once a note is opened) is never cut.
            widest = {
                "relevance": "0.000",
                "final": "<0.001",
                "decay": "0.00",
                "accessed": "2026-11-20",
                "tier": "recent",
            }
            for key, value in widest.items():
                if key in warm.columns:
                    assert warm.columns[key].get_render_width(warm) >= len(value) + 2, key
            # The final score reads on the relevance's scale: no longer `<0.001` beside a relevance of 0.99.
            finals = [warm.cell(i, "final") for i in range(warm.row_count)]
            assert "<0.001" not in finals and all(0.0 < float(f) <= 1.0 for f in finals), finals

    asyncio.run(go())


def test_question_mark_and_f1_open_the_key_help_with_the_apps_own_keys_first(ws: Workspace) -> None:
    from companion.tui.keys import KeysScreen

    app = CompanionApp(ws, as_of=NOW)

    async def steps(pilot: Pilot[Any]) -> None:
        assert not isinstance(app.screen, KeysScreen)
        # `?` opens and closes it; F1 opens it and Escape closes it, like every other panel.
        for key, shown in (("question_mark", True), ("question_mark", False), ("f1", True), ("escape", False)):
            await pilot.press(key)
            await settle(pilot)
            assert isinstance(app.screen, KeysScreen) is shown, key
        app.query_one(WarmPane).focus()
        await pilot.press("question_mark")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, KeysScreen)
        headings = [heading for heading, _ in screen.sections]
        assert headings == ["The app", "In the warm pane", "Moving around"]
        app_keys = dict(screen.sections[0][1])
        assert app_keys["/"] == "search what the agent remembers" and "m" in app_keys and "? f1" in app_keys
        assert "v" not in app_keys  # only where one side shows at a time
        pane_keys = dict(screen.sections[1][1])
        assert pane_keys["s"] == "sort"
        every = [key for _, lines in screen.sections for key, _ in lines]
        assert len(every) == len(set(every)), every  # a key is listed once, where it first applies
        assert "Cursor up" in screen.text() and "Scroll Up" not in screen.text()
        assert app_keys["^q"] == "quit the app" and app_keys["^p"] == "every command, by name"
        await pilot.press("escape", "slash")
        await settle(pilot)
        await pilot.press("f1")  # in the search box, letters are text: the app's letter keys are not listed
        await settle(pilot)
        typing = dict(app.screen.sections[0][1])  # type: ignore[attr-defined]
        assert "m" not in typing and "^q" in typing and "f1" in typing

    run(app, steps)


def test_the_footer_offers_v_only_where_one_side_shows_at_a_time(ws: Workspace) -> None:
    from textual.widgets import Footer

    app = CompanionApp(ws, as_of=NOW)

    def footer_keys() -> list[str]:
        return [str(key.description) for key in app.query_one(Footer).query("FooterKey")]

    async def go() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            keys = footer_keys()
            assert "note/lists" not in keys
            assert {"keys", "search", "explain", "zoom", "undo", "save policy"} <= set(keys)
            await pilot.resize_terminal(80, 24)
            await settle(pilot)
            assert "note/lists" in footer_keys()

    asyncio.run(go())


def test_the_note_view_shows_the_body_first_with_the_properties_folded(ws: Workspace) -> None:
    from textual.widgets import Markdown, Static

    app = CompanionApp(ws, as_of=NOW)

    async def steps(pilot: Pilot[Any]) -> None:
        await show(pilot, "chalet host Favre", CHALET)
        view = app.query_one("#note")
        properties = view.query_one("#properties", Static)
        assert str(properties.render()).startswith("type entity · confidence 0.9")
        assert "\n" not in str(properties.render())  # one line here; no table of two rows a property
        body = view.query_one(Markdown).source
        assert body.startswith("The chalet host is Mme Favre") and "| property |" not in body
        assert properties.region.height <= 2
        view.focus()
        await pilot.press("f")
        assert str(properties.render()).splitlines()[:2] == ["type  entity", "confidence  0.9"]
        await pilot.press("f")
        assert "\n" not in str(properties.render())
        await pilot.press("z")
        await settle(pilot)
        assert app.screen.maximized is view
        assert view.region.height > 30
        await pilot.press("z")
        assert app.screen.maximized is None

    run(app, steps)


def test_the_highlighted_knob_says_what_it_does_and_its_range(ws: Workspace) -> None:
    from textual.widgets import Static

    from companion.retention import RetentionPolicy

    # Every knob has its line, whole on an 80-column terminal (where the line gets one row).
    assert all(0 < len(f"{knob} {RetentionPolicy.explain(knob)}") <= 78 for knob in RetentionPolicy.knobs())
    app = CompanionApp(ws, as_of=NOW)

    async def steps(pilot: Pilot[Any]) -> None:
        line = app.query_one("#knob-help", Static)
        assert "the policy knobs" in str(line.render())
        await pilot.press("p")
        await settle(pilot)
        assert str(line.render()) == "hot_limit (1 or more): sessions kept hot per conversation (user and chat)."
        await pilot.press("down")
        await settle(pilot)
        assert str(line.render()).startswith("hot_window_days (0 or more): ")
        await pilot.press("w")  # leaving the knobs says again how to reach them
        await settle(pilot)
        assert "the policy knobs" in str(line.render())

    run(app, steps)


def test_a_sort_holds_when_the_terminal_changes_width(ws: Workspace) -> None:
    app = CompanionApp(ws, as_of=NOW)

    async def go() -> None:
        async with app.run_test(size=(200, 50)) as pilot:
            await settle(pilot)
            await pilot.press("slash", *"chalet kitchen boiler", "enter")
            await settle(pilot)
            warm = app.query_one(WarmPane)
            warm.sort_by("note", descending=False)
            wanted = sorted(warm.cell(i, "note").casefold() for i in range(warm.row_count))
            assert len(wanted) >= 2
            for size in ((120, 40), (80, 24)):
                await pilot.resize_terminal(*size)
                await settle(pilot)
                assert [warm.cell(i, "note").casefold() for i in range(warm.row_count)] == wanted
                assert warm.border_subtitle == "sorted by note ↑"
            warm.sort_by("sim")  # shown at 200 columns only
            await pilot.resize_terminal(200, 50)
            await settle(pilot)
            await pilot.resize_terminal(80, 24)
            await settle(pilot)
            assert warm.sort_column is None and warm.border_subtitle == ""

    asyncio.run(go())


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 50)])
def test_a_note_deep_in_folders_shows_its_name_before_its_folder(ws: Workspace, size: tuple[int, int]) -> None:
    folder = "Projects/Clients/Acme Corporation/Quarterly planning"
    path = f"{folder}/Greenhouse irrigation timer.md"
    note = ws.vault.root / path
    note.parent.mkdir(parents=True)
    note.write_text("The greenhouse irrigation timer runs at six and at nine, twelve minutes each.\n", "utf-8")
    app = CompanionApp(ws, as_of=NOW)

    async def go() -> None:
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            await show(pilot, "greenhouse irrigation timer", path)
            warm = app.query_one(WarmPane)
            assert warm.cell(0, "note") == f"Greenhouse irrigation timer  {folder}/"
            # What the pane shows of the first row: the name, whatever the width cuts of the folder after it.
            shown = "".join(warm.render_line(y).text for y in range(warm.size.height))
            assert "Greenhouse irrigation" in shown, shown

    asyncio.run(go())
