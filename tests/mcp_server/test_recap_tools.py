"""Recaps of a period through a real MCP client session: `recall_recent` with a period, and `context` for "what did
we talk about last week?", on a real vault and index (hashing embedder)."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
from mcp import Client
from mcp.types import TextContent

from companion.mcp_server.server import CompanionServer
from tests.helpers.recapvault import NOW, TOKEN, expected, last_monday, write_recap_vault
from tests.helpers.workspaces import workspace


def serve(vault: Path, data: Path, session: Callable[[Client], Awaitable[None]]) -> None:
    ws = workspace(vault, data_dir=data)
    companion = CompanionServer(lambda: ws)

    async def main() -> None:
        with anyio.fail_after(120):
            async with Client(companion.server) as client:
                await session(client)

    try:
        anyio.run(main)
    finally:
        companion.close()


def test_recall_recent_lists_the_sessions_of_a_period(tmp_path: Path) -> None:
    sessions = write_recap_vault(tmp_path / "vault")
    monday = last_monday(NOW.date())

    async def session(client: Client) -> None:
        result = await client.call_tool("recall_recent", {"period": "last week", "as_of": NOW.isoformat(), "limit": 3})
        assert not result.is_error, result.content
        data = result.structured_content
        assert data is not None
        week = expected(sessions, monday, monday + dt.timedelta(days=6), NOW)
        assert [s["path"] for s in data["sessions"]] == week[:3]
        assert data["more"] == 1 and data["period"]["phrase"] == "last week"
        assert data["sessions"][0]["summary"].startswith("The restic backup fails with exit 3")
        bad = await client.call_tool("recall_recent", {"period": "someday", "as_of": NOW.isoformat()})
        text = bad.content[0]
        assert bad.is_error and isinstance(text, TextContent) and json.loads(text.text)["field"] == "period"

    serve(tmp_path / "vault", tmp_path / "data", session)


def test_context_for_a_recap_of_last_week_lists_last_week_s_sessions(tmp_path: Path) -> None:
    now = dt.datetime.now().replace(microsecond=0)
    sessions = write_recap_vault(tmp_path / "vault", now)
    monday = last_monday(now.date())
    week = [sessions[p] for p in ("restic", "apple", "bike", "boiler")]
    assert [s.path for s in week] == expected(sessions, monday, monday + dt.timedelta(days=6), now)

    async def session(client: Client) -> None:
        result = await client.call_tool("context", {"message": "What did we talk about last week?", "budget": 4000})
        assert not result.is_error, result.content
        data = result.structured_content
        assert data is not None
        text: str = data["text"]
        recent = text.split("# Recent sessions", 1)[1].split("\n# ", 1)[0]
        lines = [line for line in recent.splitlines() if line.startswith("- ")]
        assert [line.split("→")[-1].strip() for line in lines] == [s.reply for s in week]
        assert lines[0].startswith(f"- {week[0].when:%Y-%m-%d %H:%M}")
        assert TOKEN not in text
        assert all(s.path in data["sources"] for s in week)

    serve(tmp_path / "vault", tmp_path / "data", session)
