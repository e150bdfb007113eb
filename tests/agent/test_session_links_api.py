"""The agent API's links, graph and reads count links written in session summaries, and follow new ones."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from companion.agent.api import AgentApi
from tests.helpers.files import write
from tests.helpers.sessionlinks import EARLIER, FORGOTTEN, GARDEN, LONELY, SESSION, write_session_links_vault
from tests.helpers.workspaces import workspace


@pytest.fixture
def api(tmp_path: Path) -> Iterator[AgentApi]:
    ws = workspace(write_session_links_vault(tmp_path / "vault"), data_dir=tmp_path / "data")
    ws.indexer().sync()
    try:
        yield AgentApi(ws, record=False)
    finally:
        ws.close()


def test_links_and_reads_list_the_session_among_the_backlinks(api: AgentApi) -> None:
    assert api.links("Lonely Idea").backlinks == (SESSION,)
    assert api.read("Garden").backlinks == (EARLIER, SESSION)
    session = api.links(SESSION)
    assert [(link.target, link.path) for link in session.outgoing] == [("Lonely Idea", LONELY), ("Garden", GARDEN)]


def test_the_graph_walks_through_sessions(api: AgentApi) -> None:
    graph = api.graph("Lonely Idea", hops=2)
    assert dict(graph.nodes)[GARDEN] == 2
    assert (SESSION, LONELY) in graph.edges


def test_a_session_written_after_the_first_call_is_counted_at_the_next(api: AgentApi) -> None:
    assert api.links("Forgotten").backlinks == ()
    later = "ops/sessions/2026-11-23/080000-birds.md"
    write(api.workspace.root, later, "---\ndate: 2026-11-23\n---\nThe [[Forgotten]] bird table.\n")
    assert api.links("Forgotten").backlinks == (later,)
    assert api.links(FORGOTTEN).backlinks == (later,)


def test_memory_query_by_graph_never_returns_a_session(api: AgentApi) -> None:
    found = api.memory_query("graph", "Lonely Idea")
    assert [f.path for f in found] == [GARDEN]
