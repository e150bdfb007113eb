"""The terminal app, headless: real files, a real index (hashing embedder), Pilot key presses, a frozen clock."""

from __future__ import annotations

from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Header

from companion.config import load_config
from companion.tui.app import CompanionApp
from companion.workspace import Workspace
from tests.helpers.conversations import NOW, conversation_path
from tests.helpers.files import file_tree
from tests.helpers.pilot import CHALET, confirmation, run, settle, show, until
from widgets.explain import ExplainDialog
from widgets.hot_pane import HotPane
from widgets.link_graph import LinkGraph
from widgets.policy_knobs import PolicyKnobs
from widgets.status_line import StatusLine
from widgets.warm_pane import WarmPane


def test_first_screen_shows_the_hot_tier_and_the_index_state(ws: Workspace) -> None:
    app = CompanionApp(ws, as_of=NOW)

    async def steps(pilot: Pilot[Any]) -> None:
        hot = app.query_one(HotPane)
        assert hot.row_count == 5  # alice/tg keeps 3, alice/web 1, bob/mail 1
        assert app.query_one(StatusLine).state == "watching, 20 notes, 20 chunks"  # 11 notes and 9 summaries
        # The default policy pushes nothing out: warm offers the notes changed last instead of an empty list.
        warm = app.query_one(WarmPane)
        assert "nothing pushed out of hot" in str(warm.border_title)
        assert {str(key.value) for key in warm.rows} == {"Memory/Chalet Les Praz.md", "Projects/Kitchen.md"}

    run(app, steps)


def test_with_no_pane_in_focus_the_note_shows_the_highlighted_session_not_a_placeholder(ws: Workspace) -> None:
    # A browser tab opened in the background starts the app with no focus: the note beside the highlighted hot row
    # is that session, as in a terminal.
    app = CompanionApp(ws, as_of=NOW)
    app.AUTO_FOCUS = None

    async def steps(pilot: Pilot[Any]) -> None:
        hot = app.query_one(HotPane)
        await until(pilot, lambda: app.query_one("#note").border_title == hot.current_key(), "the session shown")
        assert app.focused is None
        assert str(app.query_one(Header).icon) == "●"  # a glyph the browser's fonts have

    run(app, steps)


def test_the_app_embeds_what_a_words_first_build_left_and_recalls_again_when_done(ws: Workspace) -> None:
    ws.indexer().sync(embed_for_s=0.0)  # a build stopped between its words and its meaning
    assert ws.manifest.queue.unembedded_totals()[0] == 20  # 11 notes and 9 session summaries
    app = CompanionApp(ws, as_of=NOW)

    async def steps(pilot: Pilot[Any]) -> None:
        await pilot.press("slash", *"sourdough starter", "enter")
        await until(pilot, lambda: ws.manifest.queue.unembedded_totals()[0] == 0, "the queued chunks' vectors")
        await settle(pilot)
        assert app.query_one(StatusLine).state == "watching, 20 notes, 20 chunks"  # 11 notes and 9 summaries
        assert app.context is not None and app.context.notice is None and app.context.dense_built == 1.0
        assert not app.query_one(WarmPane).border_subtitle

    run(app, steps)


def test_results_from_words_only_say_so_under_the_warm_pane(ws: Workspace) -> None:
    ws.indexer().sync(embed_for_s=0.0)
    app = CompanionApp(ws, as_of=NOW, read_only=True)  # a reader: the queue stays as it is

    async def steps(pilot: Pilot[Any]) -> None:
        await pilot.press("slash", *"sourdough starter", "enter")
        await settle(pilot)
        warm = app.query_one(WarmPane)
        assert warm.path_at(0) == conversation_path(-60, "sourdough")
        assert warm.border_subtitle == "from words only: meaning 0% built"
        assert "meaning 0% built" in app.query_one(StatusLine).state

    run(app, steps)


def test_lowering_hot_limit_moves_sessions_to_warm(ws: Workspace) -> None:
    app = CompanionApp(ws, as_of=NOW)

    async def steps(pilot: Pilot[Any]) -> None:
        await pilot.press("p", "minus", "minus")
        await settle(pilot)
        assert app.policy.hot_limit == 1
        assert app.query_one(HotPane).row_count == 3
        warm = app.query_one(WarmPane)
        assert warm.row_count == 2
        tiers = [warm.cell(i, "tier") for i in range(warm.row_count)]
        assert "moved" in tiers and set(tiers) <= {"moved", "pushed"}  # marked against the last change
        await pilot.press("plus", "plus")
        await settle(pilot)
        assert app.query_one(HotPane).row_count == 5
        assert "nothing pushed out of hot" in str(warm.border_title)
        assert not {warm.cell(i, "tier") for i in range(warm.row_count)} & {"moved", "pushed"}

    run(app, steps)


def test_an_invalid_knob_value_is_refused(ws: Workspace) -> None:
    app = CompanionApp(ws, as_of=NOW)

    async def steps(pilot: Pilot[Any]) -> None:
        await pilot.press("p", "minus", "minus", "minus", "minus")
        await settle(pilot)
        assert app.policy.hot_limit == 1  # 0 is not a valid limit
        assert app.query_one(PolicyKnobs).policy.hot_limit == 1

    run(app, steps)


def test_search_fills_the_warm_pane_and_opens_the_note(ws: Workspace) -> None:
    app = CompanionApp(ws, as_of=NOW)

    async def steps(pilot: Pilot[Any]) -> None:
        await pilot.press("slash", *"sourdough hydration", "enter")
        await settle(pilot)
        warm = app.query_one(WarmPane)
        assert warm.row_count >= 1
        assert warm.path_at(0) == conversation_path(-60, "sourdough")
        assert app.focused is warm
        await settle(pilot)
        assert app.query_one("#note").border_title == conversation_path(-60, "sourdough")

    run(app, steps)


def test_saving_the_policy_writes_the_config_and_read_only_writes_nothing(ws: Workspace) -> None:
    app = CompanionApp(ws, as_of=NOW, read_only=True)
    before = file_tree(ws.root)

    async def read_only(pilot: Pilot[Any]) -> None:
        await pilot.press("p", "minus", "ctrl+s")
        await settle(pilot)

    run(app, read_only)
    assert file_tree(ws.root) == before

    app = CompanionApp(ws, as_of=NOW)

    async def save(pilot: Pilot[Any]) -> None:
        await pilot.press("p", "minus", "ctrl+s")
        await settle(pilot)

    run(app, save)
    assert load_config(ws.root).retention.hot_limit == 2


def test_saving_the_policy_keeps_the_users_config_as_written(ws: Workspace) -> None:
    config = ws.root / ".companion" / "companion.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    mine = "# tuned by hand; keep this\nrecall:\n  graph_weight: 0.2   # links matter here\n"
    config.write_text(mine, encoding="utf-8")
    app = CompanionApp(ws, as_of=NOW)

    async def save(pilot: Pilot[Any]) -> None:
        await pilot.press("p", "minus", "ctrl+s")
        await settle(pilot)

    run(app, save)
    assert config.read_text(encoding="utf-8") == mine + "retention:\n  hot_limit: 2\n"


def test_main_screen_snapshot(ws: Workspace, snap_compare: Any) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await settle(pilot)

    assert snap_compare(CompanionApp(ws, as_of=NOW), terminal_size=(140, 42), run_before=before)


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 50)])
def test_the_layout_fits_the_terminal_snapshot(ws: Workspace, snap_compare: Any, size: tuple[int, int]) -> None:
    # 80x24 shows one side at a time (the lists: note names readable); 120 and 200 columns show both sides.
    async def before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await show(pilot, "chalet host Favre", CHALET)

    assert snap_compare(CompanionApp(ws, as_of=NOW), terminal_size=size, run_before=before)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_the_key_help_snapshot(ws: Workspace, snap_compare: Any, size: tuple[int, int]) -> None:
    # Over the app, the app's own keys first: at 80x24 they fill the first screen; the panes keep their width.
    async def before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await show(pilot, "chalet host Favre", CHALET)
        await pilot.press("w", "question_mark")
        await settle(pilot)

    assert snap_compare(CompanionApp(ws, as_of=NOW), terminal_size=size, run_before=before)


def test_the_other_side_at_80x24_snapshot(ws: Workspace, snap_compare: Any) -> None:
    # `v` shows the note, graph and knobs of the highlighted result in the whole width.
    async def before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await show(pilot, "chalet host Favre", CHALET)
        await pilot.press("v")
        await settle(pilot)

    assert snap_compare(CompanionApp(ws, as_of=NOW), terminal_size=(80, 24), run_before=before)


def test_knobs_snapshot_after_lowering_hot_limit(ws: Workspace, snap_compare: Any) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("p", "minus", "minus")
        await settle(pilot)
        pilot.app.clear_notifications()  # each press names its knob for 3 seconds: the picture is of the panes

    assert snap_compare(CompanionApp(ws, as_of=NOW), terminal_size=(140, 42), run_before=before)


def test_the_graph_pane_shows_links_both_ways_and_follows_them(ws: Workspace) -> None:
    app = CompanionApp(ws, as_of=NOW)

    async def steps(pilot: Pilot[Any]) -> None:
        await pilot.press("slash", *"chalet host Favre", "enter")
        await settle(pilot)
        assert app.query_one(WarmPane).path_at(0) == "Memory/Chalet Les Praz.md"
        graph = app.query_one(LinkGraph)
        links_to, linked_from, _two_hops = graph.root.children
        assert [n.data for n in links_to.children] == [conversation_path(-40, "chalet")]
        assert [n.data for n in linked_from.children] == ["Projects/Kitchen.md"]
        # Follow the backlink: the note view and the graph move to the Kitchen note.
        graph.focus()
        graph.select_node(linked_from.children[0])
        await settle(pilot)
        assert app.query_one("#note").border_title == "Projects/Kitchen.md"
        assert "Kitchen.md" in str(graph.border_title)

    run(app, steps)


def test_explain_sort_open_and_the_command_palette(ws: Workspace) -> None:
    app = CompanionApp(ws, as_of=NOW)
    opened: list[str] = []
    app.opener = lambda uri: opened.append(uri) is None

    async def steps(pilot: Pilot[Any]) -> None:
        await show(pilot, "chalet host Favre", CHALET)
        await pilot.press("e")
        await settle(pilot)
        assert isinstance(app.screen, ExplainDialog)
        text = "\n".join(app.screen.lines)
        assert "relevance" in text and "decay" in text and "final" in text
        # Its rank is among the rows the pane lists, not among every note recall weighed.
        rows = app.query_one(WarmPane).row_count
        assert f"rank 1 of {rows} for 'chalet host Favre'" in app.screen.lines[0]
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("o")
        await settle(pilot)
        assert opened == ["obsidian://open?vault=vault&file=Memory%2FChalet%20Les%20Praz"]
        await pilot.press("slash", *"chalet kitchen boiler", "enter")
        await settle(pilot)
        warm = app.query_one(WarmPane)
        warm.focus()
        recalled = [warm.cell(i, "note") for i in range(warm.row_count)]
        await pilot.press(*"sssss")  # relevance, final, decay, tier, then the note
        assert warm.sort_column == "note"
        notes = [warm.cell(i, "note").casefold() for i in range(warm.row_count)]
        assert len(notes) >= 2 and notes == sorted(notes, reverse=True)
        await pilot.press("S")
        notes = [warm.cell(i, "note").casefold() for i in range(warm.row_count)]
        assert notes == sorted(notes)
        await pilot.press("s")  # past the last column: recall's own order again
        assert warm.sort_column is None and [warm.cell(i, "note") for i in range(warm.row_count)] == recalled
        await pilot.press("S")  # from recall's order: by the relevance, shown at every width, least relevant first
        assert warm.sort_column == "relevance" and not warm.sort_descending
        await pilot.press("s")
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert {"Pin or unpin the note", "Merge the note into another", "Undo the last curation"} <= set(titles)

    run(app, steps)


def test_graph_snapshot(ws: Workspace, snap_compare: Any) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await show(pilot, "chalet host Favre", CHALET)
        await pilot.press("g")
        await settle(pilot)

    assert snap_compare(CompanionApp(ws, as_of=NOW), terminal_size=(140, 42), run_before=before)


def test_curation_confirmation_snapshot(ws: Workspace, snap_compare: Any) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await show(pilot, "chalet host Favre", CHALET)
        await pilot.press("d")
        await confirmation(pilot)
        await pilot.pause(0.1)

    assert snap_compare(CompanionApp(ws, as_of=NOW), terminal_size=(140, 42), run_before=before)


def test_error_notification_snapshot(ws: Workspace, snap_compare: Any) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await show(pilot, "chalet host Favre", CHALET)
        await pilot.press("m", *"Memory/Nowhere", "enter")
        await until(pilot, lambda: len(pilot.app._notifications) > 0, "the error")
        await settle(pilot)

    assert snap_compare(CompanionApp(ws, as_of=NOW), terminal_size=(140, 42), run_before=before)


def test_passing_over_rows_or_resting_on_one_counts_no_access_but_enter_does(ws: Workspace) -> None:
    app = CompanionApp(ws)  # the present: accesses are recorded

    def counts(paths: list[str]) -> list[int]:
        stats = ws.access_log().stats(paths)
        return [stats[p].access_count for p in paths]

    async def steps(pilot: Pilot[Any]) -> None:
        await pilot.press("slash", *"chalet kitchen boiler", "enter")
        await settle(pilot)
        warm = app.query_one(WarmPane)
        paths = [warm.path_at(i) for i in range(min(warm.row_count, 5))]
        assert len(paths) >= 2
        warm.focus()
        before = counts(paths)
        await pilot.press("down")  # passing over: the row is shown, not read
        await settle(pilot)
        assert app.query_one("#note").border_title == paths[1]
        await pilot.pause(2.5)  # resting on it is not using it either
        assert counts(paths) == before
        await pilot.press("up", "enter")  # Enter opens on purpose: counted at once, once
        await settle(pilot)
        assert counts(paths)[0] == before[0] + 1
        # Its row shows the new use where it stands (the order stays): opened today, counted.
        assert [warm.path_at(i) for i in range(len(paths))] == paths
        assert warm.cell(0, "n") == str(before[0] + 1) and warm.cell(0, "accessed") != "never"
        await pilot.press("enter")
        await settle(pilot)
        assert counts(paths)[0] == before[0] + 1
        assert counts(paths)[1:] == before[1:]

    run(app, steps)
