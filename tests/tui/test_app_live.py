"""The terminal app while the vault changes under it: the watcher's new notes and sessions, an agent's writes, a
running indexer it attaches to and follows, an open note refreshed (headless, real files, a frozen clock)."""

from __future__ import annotations

import re
from typing import Any

from textual.pilot import Pilot

from companion.tui.app import CompanionApp
from companion.workspace import Workspace
from tests.helpers.conversations import NOW
from tests.helpers.pilot import CHALET, run, settle, show, until
from widgets.hot_pane import HotPane
from widgets.status_line import StatusLine
from widgets.warm_pane import WarmPane


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
