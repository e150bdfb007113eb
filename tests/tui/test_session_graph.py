"""The graph pane counts links written in session summaries: a hot session shows what it links to, and a note linked
only from a session lists it among its backlinks."""

from __future__ import annotations

import asyncio
from typing import Any

from textual.pilot import Pilot

from companion.tui.app import CompanionApp
from companion.workspace import Workspace
from tests.helpers.conversations import NOW
from tests.helpers.files import write
from widgets.hot_pane import HotPane
from widgets.link_graph import LinkGraph

SNAGS = f"ops/sessions/{NOW.date()}/103000-snags.md"  # the newest hot session of the conversation vault
BIRDS = "Ideas/Bird Table.md"


async def settle(pilot: Pilot[Any], app: CompanionApp) -> None:
    """Wait until no worker runs for a few pauses in a row."""
    quiet = 0
    for _ in range(1000):
        await pilot.pause(0.02)
        quiet = 0 if app.busy else quiet + 1
        if quiet >= 3:
            return
    raise AssertionError("the app never settled")


def test_a_highlighted_hot_session_shows_its_links_and_the_note_it_links_shows_the_session(ws: Workspace) -> None:
    write(ws.root, BIRDS, "A bird table by the kitchen window.\n")
    write(
        ws.root,
        SNAGS,
        f"---\ndate: {NOW.date()}\nuser_id: bob\nchat_id: mail\ntime: '10:30:00'\nuser_msg: Tell me about snags\n"
        "sentinel_msg: Snag list.\n---\n\nSnag list for the [[Kitchen]]; the [[Bird Table]] waits.\n",
    )
    app = CompanionApp(ws, as_of=NOW)

    async def steps(pilot: Pilot[Any]) -> None:
        await settle(pilot, app)
        hot = app.query_one(HotPane)
        await pilot.press("h")
        hot.move_cursor(row=hot.get_row_index(SNAGS))
        await settle(pilot, app)
        graph = app.query_one(LinkGraph)
        assert "103000-snags.md" in str(graph.border_title)
        links_to, linked_from, _two_hops = graph.root.children
        assert str(links_to.label) == "links to (2)"
        assert [n.data for n in links_to.children] == ["Projects/Kitchen.md", BIRDS]
        # Follow the link: the bird table, linked from nothing else, names the session among its backlinks.
        graph.focus()
        graph.select_node(links_to.children[1])
        await settle(pilot, app)
        assert "Bird Table.md" in str(graph.border_title)
        links_to, linked_from, _two_hops = graph.root.children
        assert [n.data for n in linked_from.children] == [SNAGS]

    async def go() -> None:
        async with app.run_test(size=(140, 42)) as pilot:
            await steps(pilot)

    asyncio.run(go())
