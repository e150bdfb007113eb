"""The real `companion mcp`, over stdio and over HTTP, as an agent looks before it reads: notes listed as resources
a page at a time, a timeline around a day or a note, and the prompts; on the newest protocol and on older ones."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from companion.mcp_server.server import PAGE
from tests.helpers.agentvault import write_agent_vault
from tests.helpers.files import write
from tests.helpers.mcphttp import http_server, show_token
from tests.helpers.rawmcp import WAIT_S

LOG_NOTES = PAGE + 60
"""Enough dated notes for more than one page of resources."""
TODAY = dt.date.today()


def log_vault(root: Path) -> Path:
    """The agent vault with a dated log note for each of the last days (newest today), and a memory noted
    yesterday."""
    write_agent_vault(root)
    for n in range(LOG_NOTES):
        day = TODAY - dt.timedelta(days=n)
        write(root, f"Log/Day {n:03d}.md", f"---\ndate: {day}\ntype: log\n---\nLogged on day {n}: item {n * 7}.\n")
    write(
        root,
        "Memory/Heat pump quote.md",
        f"---\ntype: fact\ndate: {TODAY - dt.timedelta(days=1)}\n---\n"
        "The heat pump quote from Varme AB is 9,800 euros.\n",
    )
    return root


Connect = Callable[..., AbstractAsyncContextManager[Client]]


@asynccontextmanager
async def over_stdio(vault: Path, data: Path, mode: str = "auto") -> AsyncIterator[Client]:
    """A client session with `companion mcp` started as a subprocess, over its stdin and stdout."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "companion", "mcp", "--vault", str(vault), "--data-dir", str(data)],
        env={"PYTHONPATH": os.pathsep.join(sys.path)},
        cwd=str(Path(__file__).resolve().parents[2]),
    )
    async with Client(params, mode=mode) as client:
        yield client


@asynccontextmanager
async def over_http(vault: Path, data: Path, mode: str = "auto") -> AsyncIterator[Client]:
    """A client session with `companion mcp --transport http` started as a subprocess, sending its token."""
    with http_server(vault, data) as url:
        headers = {"Authorization": f"Bearer {show_token(vault, data)}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=WAIT_S) as http,
            Client(streamable_http_client(url, http_client=http), mode=mode) as client,
        ):
            yield client


TRANSPORTS: dict[str, Connect] = {"stdio": over_stdio, "http": over_http}


def run(connect: Connect, tmp_path: Path, session: Callable[[Client], Any]) -> None:
    vault = log_vault(tmp_path / "vault")

    async def main() -> None:
        with anyio.fail_after(WAIT_S * 2):
            async with connect(vault, tmp_path / "data") as client:
                await session(client)

    anyio.run(main)


@pytest.mark.parametrize("transport", sorted(TRANSPORTS))
def test_resources_list_pages_through_every_note(tmp_path: Path, transport: str) -> None:
    async def session(client: Client) -> None:
        await client.call_tool("vault_list", {"limit": 1})  # the first call waits for the index
        names: list[str] = []
        cursor = None
        pages = 0
        while True:
            page = await client.list_resources(cursor=cursor)
            pages += 1
            assert len(page.resources) <= PAGE
            names += [r.name for r in page.resources]
            cursor = page.next_cursor
            if cursor is None:
                break
        assert pages == 2
        assert len(names) == len(set(names)) == LOG_NOTES + 7  # the log, the memory, and the agent vault's six
        assert names == sorted(names) and "Log/Day 000.md" in names
        first = next(r for r in page.resources if r.name == "Memory/Kitchen budget.md")
        assert first.uri.startswith("vault://note/Memory/Kitchen%20budget.md") and first.mime_type == "text/markdown"
        assert first.title == "Kitchen budget" and first.description == "fact, 2026-09-03" and first.size
        read = await client.read_resource(str(first.uri))
        assert "18,500 euros" in read.contents[0].text
        with pytest.raises(MCPError) as stale:
            await client.list_resources(cursor="not-a-cursor")
        assert stale.value.code == INVALID_PARAMS
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["vault://note/{+path}"]

    run(TRANSPORTS[transport], tmp_path, session)


@pytest.mark.parametrize("transport", sorted(TRANSPORTS))
def test_the_timeline_puts_a_day_and_a_note_in_their_time(tmp_path: Path, transport: str) -> None:
    async def session(client: Client) -> None:
        day = TODAY - dt.timedelta(days=10)
        result = await client.call_tool("timeline", {"date": day.isoformat(), "before": 2, "after": 2})
        line = result.structured_content
        assert not result.is_error and line is not None
        assert line["anchor"] == {"when": day.isoformat(), "source": "date", "note": None}
        entries = line["entries"]
        assert [(e["position"], e["path"]) for e in entries] == [
            ("before", "Log/Day 012.md"),
            ("before", "Log/Day 011.md"),
            ("at", "Log/Day 010.md"),
            ("after", "Log/Day 009.md"),
            ("after", "Log/Day 008.md"),
        ]
        assert entries[2]["summary"] == "Logged on day 10: item 70." and entries[2]["ref"] == "@3"
        around = (
            await client.call_tool("timeline", {"note": "Heat pump quote", "before": 1, "after": 0})
        ).structured_content
        assert around is not None
        assert [e["path"] for e in around["entries"]] == ["Log/Day 001.md", "Memory/Heat pump quote.md"]
        assert (await client.call_tool("vault_read", {"note": "@1"})).structured_content["path"] == "Log/Day 001.md"
        bad = await client.call_tool("timeline", {"date": "last tuesday"})
        assert bad.is_error and json.loads(bad.content[0].text)["field"] == "date"

    run(TRANSPORTS[transport], tmp_path, session)


@pytest.mark.parametrize("transport", sorted(TRANSPORTS))
def test_the_prompts_bring_the_vaults_own_answer(tmp_path: Path, transport: str) -> None:
    async def session(client: Client) -> None:
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        assert set(prompts) == {"recap", "recall"}
        assert [a.name for a in prompts["recall"].arguments or []] == ["topic"]
        assert all(p.title and p.description for p in prompts.values())
        recap = (await client.get_prompt("recap", {"days": "2"})).messages[0].content
        assert recap.type == "text"
        assert "Memory/Heat pump quote" in recap.text and "Log/Day 001" in recap.text
        assert "Log/Day 005" not in recap.text  # older than two days
        recall = (await client.get_prompt("recall", {"topic": "heat pump quote"})).messages[0].content
        assert recall.type == "text" and "@1 [[Heat pump quote]]" in recall.text and "9,800" in recall.text
        for name, arguments, field in [
            ("recap", {"days": "x"}, "days"),
            ("recap", {"days": "400"}, "days"),
            ("recall", {}, "topic"),
            ("recall", {"topic": "x", "extra": "y"}, "extra"),
            ("nope", {}, "name"),
        ]:
            with pytest.raises(MCPError) as refused:
                await client.get_prompt(name, arguments)
            assert refused.value.code == INVALID_PARAMS and refused.value.error.data == {"field": field}

    run(TRANSPORTS[transport], tmp_path, session)


@pytest.mark.parametrize("transport", sorted(TRANSPORTS))
@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_newest_protocol_and_the_handshake_era_both_work(tmp_path: Path, mode: str, transport: str) -> None:
    async def session(client: Client) -> None:
        assert client.protocol_version == ("2026-07-28" if mode == "auto" else "2025-11-25")
        found = await client.call_tool("vault_search", {"query": "heat pump quote", "k": 2})
        assert found.structured_content["results"][0]["path"] == "Memory/Heat pump quote.md"
        assert len((await client.list_resources()).resources) == PAGE

    vault = log_vault(tmp_path / "vault")

    async def main() -> None:
        with anyio.fail_after(WAIT_S):
            async with TRANSPORTS[transport](vault, tmp_path / "data", mode) as client:
                await session(client)

    anyio.run(main)


def test_a_client_of_the_oldest_protocol_is_answered_in_it(tmp_path: Path) -> None:
    vault = write_agent_vault(tmp_path / "vault")
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2024-11-05",
                "capabilities": {},
                "clientInfo": {"name": "old", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "vault_read", "arguments": {"note": "Ingrid"}},
        },
    ]
    done = subprocess.run(
        [sys.executable, "-m", "companion", "mcp", "--vault", str(vault), "--data-dir", str(tmp_path / "data")],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    answers = {a["id"]: a for a in map(json.loads, done.stdout.splitlines())}
    assert answers[1]["result"]["protocolVersion"] == "2024-11-05"
    assert answers[1]["result"]["serverInfo"]["name"] == "vault-companion"
    read = answers[2]["result"]
    assert not read.get("isError") and read["structuredContent"]["path"] == "People/Ingrid Olsen.md"


def test_two_http_sessions_each_keep_their_own_recent_notes(tmp_path: Path) -> None:
    vault = log_vault(tmp_path / "vault")
    data = tmp_path / "data"

    async def main() -> None:
        with anyio.fail_after(WAIT_S), http_server(vault, data) as url:
            headers = {"Authorization": f"Bearer {show_token(vault, data)}"}
            async with (
                httpx2.AsyncClient(headers=headers, timeout=WAIT_S) as http,
                Client(streamable_http_client(url, http_client=http), mode="legacy") as first,
                Client(streamable_http_client(url, http_client=http), mode="legacy") as second,
            ):
                await first.call_tool("vault_search", {"query": "heat pump quote", "k": 1})
                await second.call_tool("vault_search", {"query": "Ingrid household tax return", "k": 1})
                mine = (await first.call_tool("vault_read", {"note": "@1"})).structured_content
                theirs = (await second.call_tool("vault_read", {"note": "@1"})).structured_content
                assert mine["path"] == "Memory/Heat pump quote.md"
                assert theirs["path"] == "People/Ingrid Olsen.md"

    anyio.run(main)
