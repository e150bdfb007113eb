"""The terminal app, headless: real files, a real index (hashing embedder), Pilot key presses, a frozen clock."""

from __future__ import annotations

import asyncio
import re
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


def test_the_app_watches_the_vault_and_shows_a_new_note_without_a_restart(ws: Workspace) -> None:
    app = CompanionApp(ws, as_of=NOW)

    async def steps(pilot: Pilot[Any]) -> None:
        await pilot.press("slash", *"marmalade seville oranges", "enter")
        await settle(pilot)
        assert app.context is not None and "Memory/Marmalade.md" not in [r.path for r in app.context.results]
        batches = app.indexed_batches
        note = ws.root / "Memory" / "Marmalade.md"
        note.write_text("---\ntype: preference\n---\nSeville oranges make the best marmalade, boiled whole.\n")
        await until(pilot, lambda: app.indexed_batches > batches, "the watcher's batch")
        await settle(pilot)
        assert app.context is not None and app.context.results[0].path == "Memory/Marmalade.md"
        assert app.query_one(WarmPane).path_at(0) == "Memory/Marmalade.md"
        assert "watching, 21 notes" in app.query_one(StatusLine).state

    run(app, steps)


def test_a_session_written_while_the_app_runs_shows_in_hot_within_two_seconds(ws: Workspace) -> None:
    # The session summaries' folder is left out of the index, so no index batch announces them: the hot pane must
    # follow the folder itself.
    app = CompanionApp(ws, as_of=NOW)

    async def steps(pilot: Pilot[Any]) -> None:
        hot = app.query_one(HotPane)
        before = hot.row_count
        path = f"ops/sessions/{NOW.date()}/173000-parcel.md"
        (ws.root / path).write_text(
            f"---\ndate: {NOW.date()}\nuser_id: carol\nchat_id: web\ntime: '17:30:00'\n"
            "user_msg: Where is the parcel?\nsentinel_msg: It left the depot.\n---\n\nIt left the depot.\n"
        )
        await until(pilot, lambda: path in hot.rows, "the new session in hot", seconds=2)
        assert hot.row_count == before + 1
        assert str(hot.get_row(path)[0]) == "new"  # first, where a narrow pane never cuts it
        assert "Where is the parcel?" in str(hot.get_row(path)[3])

    run(app, steps)


def test_an_agents_write_shows_in_the_app_as_it_lands(ws: Workspace) -> None:
    from companion.agent.writes import AgentWriter, WriteSource
    from tests.helpers.workspaces import workspace

    app = CompanionApp(ws, as_of=NOW)

    async def steps(pilot: Pilot[Any]) -> None:
        await pilot.press("slash", *"kowalski heating boiler service", "enter")
        await settle(pilot)
        batches = app.indexed_batches
        # An agent, through its own MCP server process and data folder, remembers a fact in the same vault.
        agent = workspace(ws.root, data_dir=ws.root.parent / "agent-data")
        try:
            done = AgentWriter(agent, WriteSource("test-agent 1.0"), allowed=True, environ={}).remember(
                "fact", "Kowalski Heating services the boiler on 14 November."
            )
        finally:
            agent.close()
        await until(pilot, lambda: app.indexed_batches > batches, "the watcher's batch")
        await settle(pilot)
        assert app.context is not None and app.context.results[0].path == done.path
        assert app.query_one(WarmPane).path_at(0) == done.path

    run(app, steps)


def test_beside_a_running_indexer_the_app_attaches_then_takes_over(ws: Workspace) -> None:
    from indexer.lock import WriterLock

    app = CompanionApp(ws, as_of=NOW)
    other = WriterLock(ws.data_dir, purpose="companion index --watch")
    other.acquire()  # another process's lock: flock is per open file, so one process can play both parts

    async def steps(pilot: Pilot[Any]) -> None:
        status = app.query_one(StatusLine)
        await until(pilot, lambda: status.mode.startswith("attached to pid"), "attached mode")
        # Who, and since when, short enough for the status line at 120 columns (`doctor` gives the command).
        assert re.fullmatch(r"attached to pid \d+ since \d\d:\d\d: it writes the index, the app follows", status.mode)
        assert status.state.startswith("following")
        other.release()
        await until(pilot, lambda: status.mode == "indexer in the app", "taking over")
        await until(pilot, lambda: status.state.startswith("watching"), "the catch-up")

    try:
        run(app, steps)
    finally:
        other.release()


class _VectorsInMemory:
    """Where another indexer's vectors go in this test: only its manifest writes matter to the app."""

    def __init__(self) -> None:
        self.vectors: dict[str, Any] = {}

    def upsert(self, ids: Any, embeddings: Any, metadatas: Any) -> None:
        self.vectors.update(zip(ids, embeddings, strict=True))

    def delete(self, ids: Any) -> None:
        for i in ids:
            self.vectors.pop(i, None)

    def embeddings(self, ids: Any) -> dict[str, Any]:
        return {i: self.vectors[i] for i in ids if i in self.vectors}


def test_the_status_line_counts_what_the_followed_indexer_writes(ws: Workspace) -> None:
    from companion.embedding.hashing import HashEmbedder
    from companion.vault.reader import ObsidianVault
    from indexer.chunking import Chunker
    from indexer.lock import WriterLock
    from indexer.manifest import Manifest
    from indexer.sync import Indexer

    app = CompanionApp(ws, as_of=NOW)
    other = WriterLock(ws.data_dir, purpose="companion index --watch")
    other.acquire()  # another process's lock: flock is per open file, so one process can play both parts
    embedder = HashEmbedder()
    manifest = Manifest(ws.paths.manifest)
    writer = Indexer(
        ObsidianVault(ws.root, ws.config),
        manifest,
        lambda: Chunker(embedder.count_tokens),
        lambda: embedder,
        lambda: _VectorsInMemory(),  # type: ignore[arg-type,return-value]
    )

    async def steps(pilot: Pilot[Any]) -> None:
        status = app.query_one(StatusLine)
        await until(pilot, lambda: status.state.startswith("following, 0 notes"), "following an empty index")
        writer.sync()  # the other process writes the index
        notes, _chunks = manifest.counts()
        assert notes > 0
        await until(pilot, lambda: status.state.startswith(f"following, {notes} notes"), "the new count")

    try:
        run(app, steps)
    finally:
        other.release()
        manifest.close()


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


def test_an_index_change_refreshes_the_open_note_without_counting_an_access(ws: Workspace) -> None:
    app = CompanionApp(ws)  # the present: opening a note counts as an access

    async def steps(pilot: Pilot[Any]) -> None:
        await show(pilot, "chalet host Favre", CHALET)
        counted = ws.access_log().stats([CHALET])[CHALET].access_count
        batches = app.indexed_batches
        (ws.root / "Memory" / "Unrelated.md").write_text("A new note from the agent.\n", encoding="utf-8")
        await until(pilot, lambda: app.indexed_batches > batches, "the watcher's batch")
        await settle(pilot)
        assert app.query_one("#note").border_title == CHALET
        assert ws.access_log().stats([CHALET])[CHALET].access_count == counted

    run(app, steps)


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
