"""The MCP server through a real MCP client session: in memory, and the real `companion mcp` over stdio."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, Implementation

from companion.mcp_server.server import CompanionServer
from companion.vault.audit import AuditLog
from tests.helpers.agentvault import write_agent_vault
from tests.helpers.files import file_tree, write
from tests.helpers.workspaces import workspace

TOOLS = {
    "vault_search",
    "recall_relevant",
    "vault_read",
    "vault_list",
    "vault_links",
    "vault_graph",
    "memory_query",
    "recall_recent",
    "context",
    "timeline",
}


def in_memory(tmp_path: Path, session: Callable[[Client], Awaitable[None]]) -> Path:
    """Run `session` against a read-only server on the agent vault; the vault's data folder is returned."""
    ws = workspace(write_agent_vault(tmp_path / "vault"), data_dir=tmp_path / "data")
    companion = CompanionServer(lambda: ws)

    async def main() -> None:
        async with Client(companion.server) as client:
            await session(client)

    try:
        anyio.run(main)
    finally:
        companion.close()
    return ws.data_dir


def error_of(result: Any) -> dict[str, Any]:
    """The one error shape every failed call answers: exactly `error` and `field`, as JSON text."""
    assert result.is_error
    error: dict[str, Any] = json.loads(result.content[0].text)
    assert set(error) == {"error", "field"}, error
    return error


def test_search_read_and_graph_answer_with_structured_content(tmp_path: Path) -> None:
    async def session(client: Client) -> None:
        found = await client.call_tool("vault_search", {"query": "chalet deposit", "k": 3})
        assert not found.is_error
        first = found.structured_content["results"][0]
        assert first["path"] == "Conversations/2026-10-05 Ski trip.md" and "Favre" in first["snippet"]
        note = await client.call_tool("vault_read", {"note": "Ingrid"})
        assert note.structured_content["path"] == "People/Ingrid Olsen.md"
        assert note.structured_content["backlinks"] == ["Projects/Kitchen Renovation.md"]
        links = await client.call_tool("vault_links", {"note": "Kitchen Renovation"})
        assert links.structured_content["unresolved"] == ["Missing Note"]
        graph = await client.call_tool("vault_graph", {"note": "Ingrid", "hops": 1})
        assert {n["path"] for n in graph.structured_content["nodes"]} == {
            "People/Ingrid Olsen.md",
            "Projects/Kitchen Renovation.md",
        }
        listed = await client.call_tool("vault_list", {"type": "fact"})
        assert [n["path"] for n in listed.structured_content["notes"]] == ["Memory/Kitchen budget.md"]
        typed = await client.call_tool("memory_query", {"mode": "exact", "query": "Ingrid"})
        assert typed.structured_content["results"][0]["path"] == "People/Ingrid Olsen.md"
        assert not typed.structured_content["no_good_match"]
        far = await client.call_tool("memory_query", {"mode": "hybrid", "query": "quantum chromodynamics lecture"})
        assert far.structured_content["no_good_match"] and far.structured_content["results"]
        context = await client.call_tool("context", {"message": "what is the kitchen budget?", "budget": 300})
        assert context.structured_content["tokens"] <= 300 and "18,500" in context.structured_content["text"]

    in_memory(tmp_path, session)


def test_bad_arguments_get_an_error_naming_the_field_and_the_server_goes_on(tmp_path: Path) -> None:
    async def session(client: Client) -> None:
        assert error_of(await client.call_tool("vault_read", {"note": "../../etc/passwd"}))["field"] == "note"
        assert error_of(await client.call_tool("vault_read", {"note": "/etc/passwd"}))["field"] == "note"
        assert error_of(await client.call_tool("vault_graph", {"note": "Ingrid", "hops": 40}))["field"] == "hops"
        assert error_of(await client.call_tool("vault_search", {"query": "x" * 10_485_760}))["field"] == "query"
        assert error_of(await client.call_tool("vault_search", {"query": "x", "since": "soon"}))["field"] == "since"
        # Types the schema refuses are refused before the tool runs, in the same shape, naming the argument.
        assert error_of(await client.call_tool("vault_search", {"query": "x", "k": "many"}))["field"] == "k"
        assert error_of(await client.call_tool("memory_query", {"mode": "psychic", "query": "x"}))["field"] == "mode"
        still = await client.call_tool("vault_read", {"note": "Ingrid"})
        assert not still.is_error

    in_memory(tmp_path, session)


def _params(tmp_path: Path, vault: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "companion", "mcp", "--vault", str(vault), "--data-dir", str(tmp_path / "data")],
        env={"PYTHONPATH": os.pathsep.join(sys.path)},
        cwd=str(Path(__file__).resolve().parents[2]),
    )


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="the process checks read /proc")
def test_the_real_server_over_stdio_serves_sees_edits_and_exits_with_its_client(tmp_path: Path) -> None:
    vault = write_agent_vault(tmp_path / "vault")
    pids: list[int] = []

    async def main() -> None:
        async with Client(_params(tmp_path, vault)) as client:
            assert {t.name for t in (await client.list_tools()).tools} == TOOLS
            found = await client.call_tool("vault_search", {"query": "boiler pressure gauge", "k": 2})
            assert found.structured_content["results"][0]["path"] == "Conversations/2026-10-01 Boiler pressure.md"
            # A refused call is logged to stderr, never onto the protocol's stdout, and the session goes on.
            assert error_of(await client.call_tool("vault_read", {"note": "../x"}))["field"] == "note"
            # Started without --allow-writes: a write is refused, saying how to allow it.
            refused = error_of(await client.call_tool("remember", {"type": "fact", "text": "Tom likes trains."}))
            assert refused["field"] == "mode" and "--allow-writes" in refused["error"]
            # An edit made outside the server (Obsidian, an editor) is seen by a call a little later.
            write(vault, "People/Tom.md", "---\naliases: [Tommy]\n---\nTom is Alice's partner.\n")
            await anyio.sleep(1.0)
            tom = await client.call_tool("vault_read", {"note": "Tommy"})
            assert not tom.is_error and tom.structured_content["path"] == "People/Tom.md"
            pids.extend(_server_pids(tmp_path))

    anyio.run(main)
    assert pids, "the server process was not found while it ran"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.1)
    assert not any(_alive(p) for p in pids), "the server outlived its client"


def test_a_missing_vault_is_refused_before_serving(tmp_path: Path) -> None:
    from tests.helpers.cli import run_companion

    done = run_companion("mcp", "--vault", str(tmp_path / "nowhere"), "--data-dir", str(tmp_path / "data"), timeout=60)
    assert done.returncode == 2
    assert done.stdout == ""  # stdout is the protocol's: an error goes to stderr
    assert "nowhere" in done.stderr


def _server_pids(tmp_path: Path) -> list[int]:
    """Processes whose command line serves this test's data folder."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmd = (entry / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if "mcp" in cmd and str(tmp_path / "data") in cmd:
                out.append(int(entry.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def writing(tmp_path: Path, session: Callable[[Client], Awaitable[None]], config: str = "") -> tuple[Path, Path]:
    """Run `session` against a server started for writes; (the vault, its data folder) are returned."""
    vault = write_agent_vault(tmp_path / "vault")
    if config:
        write(vault, ".companion/companion.yaml", "embedding:\n  provider: hash\n" + config)
    ws = workspace(vault, data_dir=tmp_path / "data")
    companion = CompanionServer(lambda: ws, allow_writes=True, environ={})

    async def main() -> None:
        async with Client(companion.server, client_info=Implementation(name="test-agent", version="9.1")) as client:
            await session(client)

    try:
        anyio.run(main)
    finally:
        companion.close()
    return vault, ws.data_dir


def test_a_read_only_server_refuses_writes_clearly_and_logs_the_refusal(tmp_path: Path) -> None:
    before = None

    async def session(client: Client) -> None:
        nonlocal before
        before = file_tree(tmp_path / "vault")
        assert not ({t.name for t in (await client.list_tools()).tools} & {"remember", "vault_write"})
        refused = await client.call_tool("remember", {"type": "fact", "text": "Tom likes trains."})
        error = error_of(refused)
        assert error["field"] == "mode" and "--allow-writes" in error["error"]

    data = in_memory(tmp_path, session)
    assert file_tree(tmp_path / "vault") == before
    entry = AuditLog(data).entries()[-1]
    assert entry.action == "refused" and dict(entry.details)["tool"] == "remember"


def test_agent_writes_through_the_server_are_checked_budgeted_audited_and_undoable(tmp_path: Path) -> None:
    written: dict[str, Any] = {}

    async def session(client: Client) -> None:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"remember", "vault_write", "vault_delete"} <= names
        done = await client.call_tool(
            "remember",
            {"type": "fact", "text": "Tom's train pass renews on 3 March.", "confidence": 0.7, "model": "m-2"},
        )
        assert not done.is_error, done.content
        written.update(done.structured_content)
        found = await client.call_tool("vault_search", {"query": "Tom train pass renews", "k": 2})
        assert found.structured_content["results"][0]["path"] == written["path"]
        duplicate = await client.call_tool(
            "vault_write",
            {"title": "Ski notes", "content": "user: book the chalet in Chamonix for the February ski trip"},
        )
        assert "Conversations/2026-10-05 Ski trip.md" in error_of(duplicate)["error"]
        bad = await client.call_tool("remember", {"type": "opinion", "text": "x"})
        assert error_of(bad)["field"] == "type"
        schema = await client.call_tool("remember", {"type": "fact", "text": "x", "confidence": "very"})
        assert error_of(schema)["field"] == "confidence"
        second = await client.call_tool("vault_write", {"title": "Trains", "content": "Tom prefers the night train."})
        assert not second.is_error
        spent = await client.call_tool("vault_write", {"title": "Planes", "content": "Tom dislikes early flights."})
        assert error_of(spent)["field"] == "budget"

    vault, data = writing(tmp_path, session, "agent_writes:\n  session_budget: 2\n")
    entries = AuditLog(data).entries()
    accepted = [e for e in entries if e.action in ("remember", "write")]
    assert [e.source for e in accepted] == ["agent:test-agent 9.1"] * 2
    assert dict(accepted[0].details) == {"client": "test-agent 9.1", "model": "m-2"}
    refused = [dict(e.details)["field"] for e in entries if e.action == "refused"]
    assert refused == ["content", "type", "confidence", "budget"]
    # The user takes the agent's first write back from the command line.
    from tests.helpers.cli import run_companion

    undo = run_companion("undo", accepted[0].id, "--vault", str(vault), "--data-dir", str(tmp_path / "data"))
    assert undo.returncode == 0, undo.stderr
    assert not (vault / written["path"]).exists()


def test_the_real_server_started_for_writes_remembers(tmp_path: Path) -> None:
    vault = write_agent_vault(tmp_path / "vault")
    params = _params(tmp_path, vault)
    params.args.append("--allow-writes")

    async def main() -> None:
        async with Client(params, client_info=Implementation(name="stdio-agent", version="1.0")) as client:
            memory = {"type": "experience", "text": "Tom's first ski lesson went well."}
            done = await client.call_tool("remember", memory)
            assert not done.is_error, done.content
            path = done.structured_content["path"]
            assert (vault / path).is_file()
            found = await client.call_tool("vault_search", {"query": "Tom first ski lesson", "k": 2})
            assert found.structured_content["results"][0]["path"] == path
            written.append(path)

    written: list[str] = []
    anyio.run(main)
    # The user takes it back.
    from tests.helpers.cli import run_companion

    undo = run_companion("undo", "--vault", str(vault), "--data-dir", str(tmp_path / "data"))
    assert undo.returncode == 0, undo.stderr
    assert not (vault / written[0]).exists()


def test_notes_are_resources_by_path(tmp_path: Path) -> None:
    async def session(client: Client) -> None:
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["vault://note/{+path}"]
        read = await client.read_resource("vault://note/People/Ingrid%20Olsen.md")
        assert "files the household tax return" in read.contents[0].text
        # The SDK's own resource security refuses a path leaving the vault before the companion sees it.
        with pytest.raises(MCPError, match="Unknown resource"):
            await client.read_resource("vault://note/../../etc/passwd")
        # A missing note is the protocol's invalid-params error, naming the note.
        with pytest.raises(MCPError, match=r"no note called 'Nobody\.md'") as missing:
            await client.read_resource("vault://note/Nobody.md")
        assert missing.value.code == INVALID_PARAMS

    in_memory(tmp_path, session)


def test_the_bench_measures_the_real_server(tmp_path: Path) -> None:
    from companion.cli.bench.mcp import mcp

    figures = mcp(tmp_path / "bench", notes=40, queries=5)
    assert figures["notes"] == 40 and figures["queries"] == 5
    assert figures["handshake_s"] > 0 and 0 < figures["search_p50_ms"] <= figures["search_p95_ms"]


def test_bad_write_proposals_through_the_server_name_the_field_and_write_nothing(tmp_path: Path) -> None:
    before: dict[str, bytes] = {}
    proposals = [
        ("remember", {"type": "fact", "text": "x", "confidence": 3}, "confidence"),
        ("vault_write", {"title": "Projects/Evil", "content": "x"}, "title"),
        ("vault_write", {"title": "Fine\n---\nevil: 1", "content": "x"}, "title"),
        ("vault_write", {"title": "Fine", "content": "---\nadmin: true\n---\nx"}, "content"),
        ("vault_write", {"title": "Fine", "content": "bad \ud800 text"}, "content"),
        ("vault_write", {"title": "Fine", "content": "x" * (10 * 1024 * 1024)}, "content"),
        ("vault_write", {"title": "Fine", "content": "x", "folder": "../outside"}, "folder"),
        ("vault_delete", {"note": "/etc/passwd"}, "note"),
    ]

    async def session(client: Client) -> None:
        before.update(file_tree(tmp_path / "vault"))
        for tool, arguments, field in proposals:
            assert error_of(await client.call_tool(tool, arguments))["field"] == field, (tool, arguments)
        wrong_type = await client.call_tool("vault_write", {"title": ["a"], "content": "x"})
        assert error_of(wrong_type)["field"] == "title"

    _vault, data = writing(tmp_path, session)
    assert file_tree(tmp_path / "vault") == before
    refused = [dict(e.details)["field"] for e in AuditLog(data).entries() if e.action == "refused"]
    assert refused == [field for _tool, _args, field in proposals] + ["title"]


def test_a_write_racing_an_edit_in_obsidian_loses_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from companion.curation.curator import Curator

    target = tmp_path / "vault" / "Memory" / "Kitchen budget.md"
    real_apply = Curator.apply

    def racing(self: Curator, plan: Any, **kwargs: Any) -> Any:
        # Obsidian saves the user's edit between the server reading the note and writing it.
        target.write_text("---\ntype: fact\n---\nThe user's edit: 21,000 euros.\n", encoding="utf-8")
        return real_apply(self, plan, **kwargs)

    monkeypatch.setattr(Curator, "apply", racing)

    async def session(client: Client) -> None:
        result = await client.call_tool("vault_write", {"title": "Kitchen budget", "content": "The agent's text."})
        assert error_of(result)["field"] == "note"
        assert "changed since the plan was made" in error_of(result)["error"]

    writing(tmp_path, session)
    assert target.read_text(encoding="utf-8") == "---\ntype: fact\n---\nThe user's edit: 21,000 euros.\n"


def test_calls_catch_up_only_after_the_vault_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = write_agent_vault(tmp_path / "vault")
    ws = workspace(vault, data_dir=tmp_path / "data")
    walks: list[float] = []
    real = type(ws).catch_up

    def counting(self: Any, *args: Any, **kwargs: Any) -> Any:
        walks.append(time.monotonic())
        return real(self, *args, **kwargs)

    monkeypatch.setattr(type(ws), "catch_up", counting)
    companion = CompanionServer(lambda: ws)
    companion.start_catch_up()

    async def main() -> None:
        deadline = time.monotonic() + 10
        while not companion._watching and time.monotonic() < deadline:
            await anyio.sleep(0.05)
        assert companion._watching
        async with Client(companion.server) as client:
            for _ in range(5):
                await client.call_tool("vault_search", {"query": "chalet", "k": 2})
            settled = len(walks)
            for _ in range(5):
                await client.call_tool("vault_search", {"query": "boiler", "k": 2})
            assert len(walks) == settled  # nothing changed: no walk of the vault
            write(vault, "People/Tom.md", "---\naliases: [Tommy]\n---\nTom is Alice's partner.\n")
            await anyio.sleep(1.0)
            tom = await client.call_tool("vault_read", {"note": "Tommy"})
            assert not tom.is_error and len(walks) == settled + 1

    try:
        anyio.run(main)
    finally:
        companion.close()


def test_recall_recent_lists_a_session_summary_written_while_the_server_runs(tmp_path: Path) -> None:
    # The summaries' folder is left out of the index: recall_recent reads it from the vault on each call.
    import datetime as dt

    started = (dt.datetime.now() - dt.timedelta(hours=2)).replace(microsecond=0)
    rel = f"ops/sessions/{started.date()}/{started:%H%M%S}-parcel.md"

    async def session(client: Client) -> None:
        before = await client.call_tool("recall_recent", {"hours": 48})
        assert rel not in [s["path"] for s in before.structured_content["sessions"]]
        vault = tmp_path / "vault"
        write(
            vault,
            rel,
            f"---\ndate: {started.date()}\nuser_id: carol\nchat_id: web\ntime: '{started:%H:%M:%S}'\n"
            "user_msg: Where is the parcel?\nsentinel_msg: It left the depot.\n---\n\nIt left the depot.\n",
        )
        after = await client.call_tool("recall_recent", {"hours": 48})
        listed = {s["path"]: s for s in after.structured_content["sessions"]}
        assert rel in listed, listed

    in_memory(tmp_path, session)


@pytest.mark.model
def test_the_bench_counts_what_each_step_of_a_lookup_costs(tmp_path: Path) -> None:
    from companion.cli.bench.mcp import LOOKUPS, disclosure

    figures = disclosure(tmp_path / "bench")
    assert figures["questions"] == len(LOOKUPS) and figures["tokenizer"].startswith("wordpiece:")
    assert figures["search"] > 0 and figures["timeline"] > 0 and 0 < figures["read_first"] < figures["read_all_five"]
    assert figures["look_then_read"] == figures["search"] + figures["timeline"] + figures["read_first"]
    assert figures["look_then_read"] < figures["read_every_result"] and 0 < figures["saved_share"] < 1
