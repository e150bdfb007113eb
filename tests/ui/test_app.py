"""The terminal app, headless: real files, a real index (hashing embedder), Pilot key presses, a frozen clock."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from companion.app import CompanionApp
from companion.cli.workspace import Workspace
from companion.config import load_config
from tests.conftest import file_tree, workspace
from tests.indexer.test_recall import NOW, conversation_path, write_vault
from widgets.hot_pane import HotPane
from widgets.link_graph import LinkGraph
from widgets.policy_knobs import PolicyKnobs
from widgets.status_line import StatusLine
from widgets.warm_pane import WarmPane


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    root = tmp_path / "vault"
    write_vault(root)
    space = workspace(root, data_dir=tmp_path / "data")
    yield space
    space.close()


async def settle(pilot: Pilot[Any]) -> None:
    """Wait until every worker (indexing, recall, note reads) is done and no new one starts from the messages
    their results post (a highlighted row opens a note)."""
    quiet = 0
    for _ in range(1000):
        await pilot.pause(0.02)
        quiet = 0 if pilot.app.busy else quiet + 1
        if quiet >= 3:
            return
    raise AssertionError("the app never settled")


def run(app: CompanionApp, steps: Any) -> None:
    async def go() -> None:
        async with app.run_test(size=(140, 42)) as pilot:
            await settle(pilot)
            await steps(pilot)

    asyncio.run(go())


def test_first_screen_shows_the_hot_tier_and_the_index_state(ws: Workspace) -> None:
    app = CompanionApp(ws, as_of=NOW)

    async def steps(pilot: Pilot[Any]) -> None:
        hot = app.query_one(HotPane)
        assert hot.row_count == 5  # alice/tg keeps 3, alice/web 1, bob/mail 1
        assert app.query_one(StatusLine).state == "watching, 11 notes, 11 chunks"
        assert app.query_one(WarmPane).row_count == 0  # the default policy pushes nothing out

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
        tiers = [warm.get_row_at(i)[7] for i in range(warm.row_count)]
        assert "moved" in tiers and set(tiers) <= {"moved", "pushed out"}  # marked against the last change
        await pilot.press("plus", "plus")
        await settle(pilot)
        assert app.query_one(HotPane).row_count == 5 and warm.row_count == 0

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
        assert warm.get_row_at(0)[8] == conversation_path(-60, "sourdough")
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


def test_main_screen_snapshot(ws: Workspace, snap_compare: Any) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await settle(pilot)

    assert snap_compare(CompanionApp(ws, as_of=NOW), terminal_size=(140, 42), run_before=before)


def test_knobs_snapshot_after_lowering_hot_limit(ws: Workspace, snap_compare: Any) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("p", "minus", "minus")
        await settle(pilot)

    assert snap_compare(CompanionApp(ws, as_of=NOW), terminal_size=(140, 42), run_before=before)


def test_the_graph_pane_shows_links_both_ways_and_follows_them(ws: Workspace) -> None:
    app = CompanionApp(ws, as_of=NOW)

    async def steps(pilot: Pilot[Any]) -> None:
        await pilot.press("slash", *"chalet host Favre", "enter")
        await settle(pilot)
        assert app.query_one(WarmPane).get_row_at(0)[8] == "Memory/Chalet Les Praz.md"
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


async def until(pilot: Pilot[Any], condition: Any, what: str, seconds: float = 30) -> None:
    """Wait (real time: file events and threads) until `condition()` holds."""
    for _ in range(int(seconds / 0.05)):
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"timed out waiting for {what}")


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
        assert app.query_one(WarmPane).get_row_at(0)[8] == "Memory/Marmalade.md"
        assert "watching, 12 notes" in app.query_one(StatusLine).state

    run(app, steps)


def test_beside_a_running_indexer_the_app_attaches_then_takes_over(ws: Workspace) -> None:
    from indexer.lock import WriterLock

    app = CompanionApp(ws, as_of=NOW)
    other = WriterLock(ws.data_dir, purpose="companion index --watch")
    other.acquire()  # another process's lock: flock is per open file, so one process can play both parts

    async def steps(pilot: Pilot[Any]) -> None:
        status = app.query_one(StatusLine)
        await until(pilot, lambda: status.mode.startswith("attached to pid"), "attached mode")
        assert "`companion index --watch`" in status.mode
        assert status.state.startswith("following")
        other.release()
        await until(pilot, lambda: status.mode == "indexer in the app", "taking over")
        await until(pilot, lambda: status.state.startswith("watching"), "the catch-up")

    try:
        run(app, steps)
    finally:
        other.release()
