"""`companion mcp`: the agent API as MCP tools over stdio, with the official SDK's `MCPServer`.

The server answers `initialize` at once: the workspace opens on the first tool call, the embedding model on the
first search, and the index catches up with the vault in a background thread meanwhile. Every tool call runs in a
worker thread, one at a time (they share the workspace's SQLite connection), after a catch-up when the last one is
older than `FRESH_S`, so an edit made in Obsidian is seen by the next call. Nothing but protocol messages goes to
stdout; logs go to stderr. This first server is read-only: it has no tool that writes the vault.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Literal, TypeVar

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from companion.agent.api import MEMORY_MODES, AgentApi
from companion.errors import AgentInputError, CompanionError
from companion.recall.temporal import temporal_json
from companion.workspace import Workspace

FRESH_S = 2.0
"""A tool call older than this since the last catch-up catches up first (a directory walk; milliseconds)."""

INSTRUCTIONS = (
    "The user's Obsidian vault and the agent's memory in it. Search it before answering from memory "
    "(vault_search or recall_relevant: hybrid recall with a spaced-repetition decay), read a note whole with "
    "vault_read (by path, title or alias), follow wikilinks with vault_links and vault_graph, list notes with "
    "vault_list, get the last sessions with recall_recent, or a ready context for a message under a token budget "
    "with context. Read-only: this server writes nothing."
)

_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
T = TypeVar("T")
log = logging.getLogger(__name__)


class CompanionServer:
    """One vault served to one MCP client."""

    def __init__(self, open_workspace: Callable[[], Workspace]) -> None:
        self._open = open_workspace
        self._workspace: Workspace | None = None
        self._api: AgentApi | None = None
        self._lock = threading.Lock()
        self._caught_up = 0.0
        self.server = self._build()
        """The SDK server with every tool registered."""

    # -- life --------------------------------------------------------------------------------------

    def start_catch_up(self) -> threading.Thread:
        """Open the workspace and bring the index up to date in the background (the handshake never waits)."""
        thread = threading.Thread(target=self._warm, name="companion-catch-up", daemon=True)
        thread.start()
        return thread

    def _warm(self) -> None:
        try:
            with self._lock:
                self._fresh(force=True)
        except CompanionError as exc:
            log.warning("catching up failed: %s", exc)

    def close(self) -> None:
        """Close the workspace (its index connections and store)."""
        with self._lock:
            if self._workspace is not None:
                self._workspace.close()
                self._workspace = None
                self._api = None

    def _fresh(self, *, force: bool = False) -> AgentApi:
        """The API, after a catch-up when the last one is stale (call with the lock held)."""
        if self._workspace is None:
            self._workspace = self._open()
            self._api = AgentApi(self._workspace)
        assert self._api is not None
        now = time.monotonic()
        if force or now - self._caught_up > FRESH_S:
            # Another process (`companion index --watch`, the app) may hold the writer lock: then it keeps the index
            # fresh, and this reads what it wrote.
            self._workspace.catch_up()
            self._caught_up = time.monotonic()
        return self._api

    async def _call(self, work: Callable[[AgentApi], T]) -> T:
        """Run `work` in a worker thread, one call at a time; a bad argument becomes a tool error naming it."""

        def run() -> T:
            with self._lock:
                return work(self._fresh())

        try:
            return await anyio.to_thread.run_sync(run)
        except AgentInputError as exc:
            raise ToolError(json.dumps({"error": exc.reason, "field": exc.field})) from exc
        except CompanionError as exc:
            raise ToolError(json.dumps({"error": str(exc)})) from exc

    # -- tools -------------------------------------------------------------------------------------

    def _build(self) -> MCPServer:
        server: MCPServer = MCPServer("vault-companion", instructions=INSTRUCTIONS, log_level="WARNING")

        @server.tool(annotations=_READ_ONLY)
        async def vault_search(
            query: str,
            k: int = 10,
            where: dict[str, str | int | float | bool] | None = None,
            since: str | None = None,
            until: str | None = None,
            path: str | None = None,
            as_of: str | None = None,
        ) -> dict[str, Any]:
            """Search the vault: hybrid recall (embeddings + BM25) with a spaced-repetition decay, best first.

            query: what to look for, in the user's words. k: how many notes (1-100). where: frontmatter fields that
            must match ({"type": "fact"}). since/until: ISO dates bounding the note's `date`. path: a glob on the
            vault path ("Projects/*"). as_of: answer as if at this ISO moment (nothing is counted as accessed).
            Each result has its path, title, score, tier (hot, warm, temporal), type, date and the passage matched.
            """
            found = await self._call(
                lambda api: api.search(query, k=k, where=where, since=since, until=until, path=path, as_of=as_of)
            )
            return {"results": [f.as_json() for f in found]}

        @server.tool(annotations=_READ_ONLY)
        async def recall_relevant(query: str, k: int = 10) -> dict[str, Any]:
            """Recall the notes most relevant to a message (seed 004's recall_relevant): hybrid relevance times the
            spaced-repetition decay, so notes that proved useful stay and stale ones fade. k: 1-100."""
            found = await self._call(lambda api: api.search(query, k=k))
            return {"results": [f.as_json() for f in found]}

        @server.tool(annotations=_READ_ONLY)
        async def vault_read(note: str) -> dict[str, Any]:
            """Read one note whole: frontmatter, body, tags, aliases, its links (resolved to paths, or marked
            unresolved) and its backlinks. note: a vault path, a path without .md, a title or an alias."""
            view = await self._call(lambda api: api.read(note))
            return view.as_json()

        @server.tool(annotations=_READ_ONLY)
        async def vault_list(
            folder: str | None = None,
            type: str | None = None,
            tag: str | None = None,
            since: str | None = None,
            until: str | None = None,
            limit: int = 100,
        ) -> dict[str, Any]:
            """List notes, newest first: in a folder ("People"), of a frontmatter type ("fact"), with a tag in the
            tags property, dated within since/until (ISO dates). limit: 1-1000."""
            notes = await self._call(
                lambda api: api.list_notes(
                    folder=folder, note_type=type, tag=tag, since=since, until=until, limit=limit
                )
            )
            return {"notes": [n.as_json() for n in notes]}

        @server.tool(annotations=_READ_ONLY)
        async def vault_links(note: str) -> dict[str, Any]:
            """A note's wikilinks (each target once, with the path it resolves to, unresolved ones listed apart)
            and the notes linking to it."""
            links = await self._call(lambda api: api.links(note))
            return links.as_json()

        @server.tool(annotations=_READ_ONLY)
        async def vault_graph(note: str, hops: int = 2) -> dict[str, Any]:
            """The link neighbourhood of a note: every note within `hops` links either way (1-4), with its
            distance, and the links among them."""
            graph = await self._call(lambda api: api.graph(note, hops))
            return graph.as_json()

        @server.tool(annotations=_READ_ONLY)
        async def memory_query(
            mode: Literal["exact", "type", "lexical", "hybrid", "graph"], query: str, k: int = 10
        ) -> dict[str, Any]:
            """Query memory by one retrieval path: exact (the note with this title or alias), type (notes of this
            frontmatter type, newest first: fact, entity, experience, belief, reflection, recipe...), lexical
            (BM25 alone), hybrid (as vault_search) or graph (notes linked with the one named)."""
            found = await self._call(lambda api: api.memory_query(mode, query, k=k))
            return {"mode": mode, "results": [f.as_json() for f in found]}

        @server.tool(annotations=_READ_ONLY)
        async def recall_recent(hours: float = 48, limit: int = 10) -> dict[str, Any]:
            """The completed sessions of the last hours, newest first, with their summaries (seed 002)."""
            items = await self._call(lambda api: api.recall_recent(hours, limit))
            return {"sessions": [temporal_json(t) for t in items]}

        @server.tool(annotations=_READ_ONLY)
        async def context(message: str, budget: int | None = None) -> dict[str, Any]:
            """The memory context for a message, assembled under a hard token budget (default: the policy's):
            the memory policy, the latest summary, recent sessions, related notes and the last turns."""
            assembled, counter = await self._call(lambda api: api.context(message, budget))
            return {
                "text": assembled.text,
                "tokens": assembled.tokens,
                "budget": assembled.budget,
                "tokenizer": counter.name,
                "sources": [p.source for p in assembled.pieces if p.source],
            }

        assert set(MEMORY_MODES) == {"exact", "type", "lexical", "hybrid", "graph"}  # the Literal above
        return server


def serve_stdio(open_workspace: Callable[[], Workspace]) -> None:
    """Serve over stdin/stdout until the client closes them."""
    logging.basicConfig(level=logging.WARNING, format="companion mcp: %(message)s")  # stderr: stdout is protocol
    companion = CompanionServer(open_workspace)
    companion.start_catch_up()
    try:
        anyio.run(companion.server.run_stdio_async)
    finally:
        companion.close()
