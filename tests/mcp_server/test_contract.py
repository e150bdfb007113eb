"""What every tool promises a client, checked through a real client session: an output schema every result
validates against, described and bounded arguments, all four annotations, plain descriptions, one error shape for
every kind of bad call, and the server's own name and version."""

from __future__ import annotations

import importlib.metadata
import json
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import Client
from mcp.types import Implementation, Tool

from companion.mcp_server.server import CompanionServer
from companion.vault.audit import AuditLog
from tests.helpers.agentvault import write_agent_vault
from tests.helpers.files import file_tree
from tests.helpers.workspaces import workspace

# Words that would mean nothing to an agent meeting the server for the first time (the project's own documents,
# its tracker, unfinished work), spelled so that this file does not itself hold them.
INTERNAL = re.compile(r"\bs[e]ed\b|\bs[p]ec\b|§|\bi[s]sue \d|\bt[o]do\b|\bs[t]ub\b", re.IGNORECASE)

CALLS: dict[str, dict[str, Any]] = {
    "vault_search": {"query": "chalet deposit", "k": 3, "where": {"type": "conversation"}, "since": "2026-01-01"},
    "recall_relevant": {"query": "what did we decide about the kitchen?"},
    "timeline": {"note": "Kitchen budget", "before": 3, "after": 3},
    "vault_read": {"note": "Ingrid"},
    "vault_list": {"folder": "Memory", "limit": 5},
    "vault_links": {"note": "Kitchen Renovation"},
    "vault_graph": {"note": "Ingrid", "hops": 2},
    "memory_query": {"mode": "type", "query": "fact"},
    "recall_recent": {"hours": 48, "limit": 5},
    "context": {"message": "what is the kitchen budget?", "budget": 300},
    "remember": {"type": "fact", "text": "Tom's train pass renews on 3 March.", "confidence": 0.7, "tags": ["tom"]},
    "vault_write": {"title": "Ski packing", "content": "- boots\n- [[Nowhere yet]]", "folder": "Notes"},
    "vault_delete": {"note": "Ski packing"},
}
"""One good call of every tool, in an order that works (the delete takes back the note the write made)."""


def session_on(tmp_path: Path, session: Callable[[Client], Awaitable[None]], *, writes: bool = True) -> Path:
    """Run `session` on the agent vault (a server for writes unless `writes` is off); the data folder is returned."""
    ws = workspace(write_agent_vault(tmp_path / "vault"), data_dir=tmp_path / "data")
    companion = CompanionServer(lambda: ws, allow_writes=writes, environ={})

    async def main() -> None:
        with anyio.fail_after(120):
            async with Client(companion.server, client_info=Implementation(name="contract", version="1")) as client:
                await session(client)

    try:
        anyio.run(main)
    finally:
        companion.close()
    return ws.data_dir


def error_of(result: Any) -> dict[str, Any]:
    """The one error shape: `isError`, and as text exactly `{"error": ..., "field": ...}`."""
    assert result.is_error
    assert len(result.content) == 1 and result.structured_content is None
    error: dict[str, Any] = json.loads(result.content[0].text)
    assert set(error) == {"error", "field"}, error
    assert isinstance(error["error"], str) and error["error"].strip()
    assert "Error executing tool" not in error["error"] and "errors.pydantic.dev" not in error["error"]
    return error


def test_every_tool_publishes_its_shapes_and_every_result_validates(tmp_path: Path) -> None:
    async def session(client: Client) -> None:
        assert client.server_info is not None
        assert client.server_info.name == "vault-companion"
        assert client.server_info.version == importlib.metadata.version("vault-companion")
        tools: dict[str, Tool] = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == set(CALLS)
        for name, tool in tools.items():
            _check_listing(tool)
            assert tool.output_schema is not None, name
            jsonschema.Draft202012Validator.check_schema(tool.output_schema)
        for name, arguments in CALLS.items():
            result = await client.call_tool(name, arguments)
            assert not result.is_error, (name, result.content)
            assert tools[name].output_schema is not None
            jsonschema.validate(result.structured_content, tools[name].output_schema)
            # Clients that read only text get the same JSON.
            assert json.loads(result.content[0].text) == result.structured_content, name

    session_on(tmp_path, session)


def _check_listing(tool: Tool) -> None:
    """Described arguments with bounds where there are any, all four annotations, plain words."""
    assert tool.description and len(tool.description) > 60 and not tool.description.startswith(" ")
    assert not INTERNAL.search(tool.description), tool.description
    properties = tool.input_schema["properties"]
    for arg, schema in properties.items():
        described = schema.get("description") or ""
        assert len(described) > 8, (tool.name, arg)
        assert not INTERNAL.search(described), (tool.name, arg, described)
    numbers = {a: s for a, s in properties.items() if _types(s) & {"integer", "number"}}
    for arg, schema in numbers.items():
        bounds = _bounds(schema)
        assert {"minimum", "exclusiveMinimum"} & bounds and {"maximum", "exclusiveMaximum"} & bounds, (tool.name, arg)
    annotations = tool.annotations
    assert annotations is not None
    hints = (annotations.read_only_hint, annotations.destructive_hint, annotations.idempotent_hint)
    assert None not in (*hints, annotations.open_world_hint), tool.name
    assert annotations.open_world_hint is False  # the vault is a closed world


def _types(schema: dict[str, Any]) -> set[str]:
    found = {schema["type"]} if isinstance(schema.get("type"), str) else set()
    for option in schema.get("anyOf", []):
        found |= _types(option)
    return found


def _bounds(schema: dict[str, Any]) -> set[str]:
    found = set(schema) & {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}
    for option in schema.get("anyOf", []):
        found |= _bounds(option)
    return found


def test_the_read_tools_are_read_only_and_what_can_replace_or_remove_a_note_is_destructive(tmp_path: Path) -> None:
    async def session(client: Client) -> None:
        tools = {t.name: t.annotations for t in (await client.list_tools()).tools}
        writes = {"remember", "vault_write", "vault_delete"}
        for name, hints in tools.items():
            assert hints is not None
            assert hints.read_only_hint is (name not in writes), name
            assert hints.destructive_hint is (name in ("vault_write", "vault_delete")), name
        mode = (await client.list_tools()).tools[0].input_schema  # vault_search first
        assert mode["required"] == ["query"]

    session_on(tmp_path, session)


BAD_CALLS = [
    # (tool, arguments, the field named): every kind of bad call a client can make
    ("vault_search", {"query": "x", "k": "many"}, "k"),  # a wrong type
    ("vault_search", {"query": "x", "k": 0}, "k"),  # below the bound
    ("vault_search", {"query": "x", "k": 101}, "k"),  # above it
    ("vault_search", {}, "query"),  # a required argument missing
    ("vault_search", {"query": ""}, "query"),  # empty text
    ("vault_search", {"query": "x", "kk": 3}, "kk"),  # an argument the tool does not take
    ("vault_search", {"query": "x", "since": "soon"}, "since"),  # a bad date
    ("vault_search", {"query": "x", "where": ["type"]}, "where"),  # a wrong structure
    ("memory_query", {"mode": "psychic", "query": "x"}, "mode"),  # not one of the enum
    ("vault_graph", {"note": "Ingrid", "hops": 9}, "hops"),
    ("vault_read", {"note": "../../etc/passwd"}, "note"),  # outside the vault
    ("vault_read", {"note": "Nobody at all"}, "note"),  # no such note
    ("vault_read", {"note": "@7"}, "note"),  # nothing surfaced under that number
    ("timeline", {"date": "2026-10-01", "note": "Ingrid"}, "date"),  # both anchors
    ("timeline", {"before": 51}, "before"),
    ("recall_recent", {"hours": 0}, "hours"),
    ("no_such_tool", {}, "name"),  # an unknown tool
]


@pytest.mark.parametrize("writes", [False, True], ids=["read-only", "writes"])
def test_every_kind_of_bad_call_gets_the_one_error_shape(tmp_path: Path, writes: bool) -> None:
    async def session(client: Client) -> None:
        for tool, arguments, field in BAD_CALLS:
            assert error_of(await client.call_tool(tool, arguments))["field"] == field, (tool, arguments)
        assert not (await client.call_tool("vault_read", {"note": "Ingrid"})).is_error  # and the server goes on

    session_on(tmp_path, session, writes=writes)


BAD_WRITES = [
    ("remember", {"type": "opinion", "text": "x"}, "type"),  # the schema's enum
    ("remember", {"type": "fact", "text": "x", "confidence": 3}, "confidence"),  # the schema's bound
    ("remember", {"type": "fact"}, "text"),  # missing
    ("vault_write", {"title": "Fine", "content": "x", "colour": "red"}, "colour"),  # not an argument
    ("vault_write", {"title": "Projects/Evil", "content": "x"}, "title"),  # the writer's own check
    ("vault_delete", {"note": "/etc/passwd"}, "note"),
]


def test_bad_writes_get_the_one_shape_and_every_refusal_is_in_the_audit_log(tmp_path: Path) -> None:
    before: dict[str, bytes] = {}

    async def session(client: Client) -> None:
        before.update(file_tree(tmp_path / "vault"))
        for tool, arguments, field in BAD_WRITES:
            assert error_of(await client.call_tool(tool, arguments))["field"] == field, (tool, arguments)

    data = session_on(tmp_path, session)
    assert file_tree(tmp_path / "vault") == before
    refused = [e for e in AuditLog(data).entries() if e.action == "refused"]
    assert [dict(e.details)["field"] for e in refused] == [field for _tool, _args, field in BAD_WRITES]
    # Named by the action, as the writer names the refusals it makes itself.
    assert [dict(e.details)["tool"] for e in refused] == ["remember"] * 3 + ["write"] * 2 + ["delete"]
    assert all(e.source == "agent:contract 1" for e in refused)


def test_a_read_only_server_answers_a_write_in_the_one_shape_and_logs_it(tmp_path: Path) -> None:
    async def session(client: Client) -> None:
        error = error_of(await client.call_tool("vault_delete", {"note": "Ingrid"}))
        assert error["field"] == "mode" and "--allow-writes" in error["error"]

    data = session_on(tmp_path, session, writes=False)
    assert (tmp_path / "vault" / "People" / "Ingrid Olsen.md").is_file()
    entry = AuditLog(data).entries()[-1]
    assert entry.action == "refused" and dict(entry.details)["tool"] == "delete"


def test_a_crash_inside_a_tool_is_the_one_shape_without_its_internals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from companion.agent.api import AgentApi

    def broken(self: AgentApi, note: str) -> Any:
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr(AgentApi, "links", broken)

    async def session(client: Client) -> None:
        error = error_of(await client.call_tool("vault_links", {"note": "Ingrid"}))
        assert error["field"] is None and "secret" not in error["error"] and "unexpectedly" in error["error"]
        assert not (await client.call_tool("vault_read", {"note": "Ingrid"})).is_error

    session_on(tmp_path, session, writes=False)


def test_search_results_are_compact_and_numbered_for_the_next_call(tmp_path: Path) -> None:
    async def session(client: Client) -> None:
        found = (await client.call_tool("vault_search", {"query": "kitchen budget euros", "k": 3})).structured_content
        assert found is not None
        results = found["results"]
        assert [r["ref"] for r in results] == ["@1", "@2", "@3"][: len(results)]
        assert all("\n" not in r["snippet"] and len(r["snippet"]) <= 160 for r in results)
        read = (await client.call_tool("vault_read", {"note": "@1"})).structured_content
        assert read is not None and read["path"] == results[0]["path"]
        placed = (await client.call_tool("timeline", {"note": "@1", "before": 2, "after": 2})).structured_content
        assert placed is not None and placed["anchor"]["note"] == results[0]["path"]
        at = [e for e in placed["entries"] if e["position"] == "at"]
        assert [e["path"] for e in at] == [results[0]["path"]]
        # The timeline's entries are what @n names now, and @last the note it was drawn around.
        second = placed["entries"][1]
        assert (await client.call_tool("vault_read", {"note": "@2"})).structured_content["path"] == second["path"]
        assert (await client.call_tool("vault_links", {"note": "@last"})).structured_content["path"] == second["path"]

    session_on(tmp_path, session, writes=False)


def test_a_result_failing_its_own_shape_is_a_crash_not_a_bad_argument(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from companion.agent.views import Links

    real = Links.as_json
    monkeypatch.setattr(Links, "as_json", lambda self: {**real(self), "extra": 1})

    async def session(client: Client) -> None:
        error = error_of(await client.call_tool("vault_links", {"note": "Ingrid"}))
        assert error["field"] is None and "unexpectedly" in error["error"]

    session_on(tmp_path, session, writes=False)


def test_a_refusal_that_cannot_be_logged_is_answered_all_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from companion.agent.writes import AgentWriter

    def full_disk(self: AgentWriter, action: str, exc: Exception) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(AgentWriter, "refused", full_disk)

    async def session(client: Client) -> None:
        assert error_of(await client.call_tool("remember", {"type": "fact", "text": "x"}))["field"] == "mode"
        assert error_of(await client.call_tool("vault_read", {"note": "../x"}))["field"] == "note"

    session_on(tmp_path, session, writes=False)


def test_notes_are_listed_a_page_at_a_time_and_an_empty_cursor_is_the_first_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcp.shared.exceptions import MCPError
    from mcp.types import INVALID_PARAMS

    from companion.mcp_server import server

    monkeypatch.setattr(server, "PAGE", 4)

    async def session(client: Client) -> None:
        await client.call_tool("vault_list", {"limit": 1})
        first = await client.list_resources(cursor="")
        assert len(first.resources) == 4 and first.next_cursor
        second = await client.list_resources(cursor=first.next_cursor)
        assert second.next_cursor is None
        names = [r.name for r in (*first.resources, *second.resources)]
        assert names == sorted(names) and len(names) == len(set(names)) == 6
        with pytest.raises(MCPError) as foreign:
            await client.list_resources(cursor="bm90IG91cnM=")
        assert foreign.value.code == INVALID_PARAMS and foreign.value.error.data == {"field": "cursor"}

    session_on(tmp_path, session, writes=False)


def test_the_write_tools_take_the_notes_a_search_named(tmp_path: Path) -> None:
    async def session(client: Client) -> None:
        found = (await client.call_tool("vault_search", {"query": "boiler pressure gauge", "k": 2})).structured_content
        assert found is not None
        boiler = found["results"][0]["path"]
        memory = {"type": "fact", "text": "The boiler wants 1.5 bar.", "session": "@1"}
        remembered = await client.call_tool("remember", memory)
        assert not remembered.is_error, remembered.content
        written = remembered.structured_content["path"]
        await client.call_tool("vault_search", {"query": "boiler wants 1.5 bar", "k": 1})
        deleted = (await client.call_tool("vault_delete", {"note": "@1"})).structured_content
        assert deleted is not None and deleted["path"] == written and deleted["action"] == "deleted"
        assert error_of(await client.call_tool("vault_delete", {"note": "@9"}))["field"] == "note"
        assert boiler.startswith("Conversations/")

    session_on(tmp_path, session)
