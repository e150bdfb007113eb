"""`companion mcp`: the agent API as MCP tools over stdio, with the official SDK's `MCPServer`.

The server answers `initialize` at once: the workspace opens on the first tool call, the embedding model on the
first search, and the index catches up with the vault in a background thread meanwhile. Every tool call runs in a
worker thread, one at a time (they share the workspace's SQLite connection). A background thread watches the vault
(`watchfiles`) and marks the index stale when a note changes; the next call catches up first, so an edit made in
Obsidian is seen by the next call, and calls cost no vault walk while nothing changed. Where the OS watch cannot be
set up, a call catches up when the last catch-up is older than `FRESH_S`. When another process keeps the index
(`companion index --watch`, the app), a catch-up is a no-op and the calls read what it writes. Nothing but protocol
messages goes to stdout, and every line read gets an answer, a bad one an error (see `stdio`); logs go to stderr.
Over HTTP, every request must carry the vault's bearer token (see `bearer`).

Query mode is read-only: the write tools (`remember`, `vault_write`, `vault_delete`) are offered only when
the server is started with `--allow-writes` (or `agent_writes.allow` in the config); a read-only server answers a
call to one with an error saying so, and records the refusal in the audit log like every other write decision.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, TypeVar

import anyio
import watchfiles
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import ToolAnnotations
from pydantic import ValidationError

from companion.agent.api import MEMORY_MODES, AgentApi
from companion.agent.views import Found
from companion.agent.writes import MEMORY_TYPES, AgentWriter, WriteRefused, WriteSource
from companion.errors import AgentInputError, CompanionError
from companion.mcp_server.bearer import BearerGuard
from companion.mcp_server.stdio import stdio_transport
from companion.recall.temporal import temporal_json
from companion.workspace import Workspace

FRESH_S = 2.0
"""Without an OS watch, a tool call this long after the last catch-up catches up first (a walk of the vault)."""

INSTRUCTIONS = (
    "The user's Obsidian vault and the agent's memory in it. Search it before answering from memory "
    "(vault_search or recall_relevant: hybrid recall with a spaced-repetition decay), read a note whole with "
    "vault_read (by path, title or alias), follow wikilinks with vault_links and vault_graph, list notes with "
    "vault_list, get the last sessions with recall_recent, or a ready context for a message under a token budget "
    "with context. When started for writes: remember a typed memory, write or update a note by title (the same "
    "title updates it; overlapping content is refused naming the similar note unless ignore_dedupe), or move a "
    "note to Obsidian's trash; every write is checked, budgeted, logged and undoable by the user."
)
WRITE_TOOLS = ("remember", "vault_write", "vault_delete")
"""Tools that write the vault (offered only to a server started for writes)."""

_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
_WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
_DELETES = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False)
T = TypeVar("T")
log = logging.getLogger(__name__)


class _Server(MCPServer):
    """`MCPServer` that answers a write tool on a read-only server, and records refusals the schema makes."""

    companion: CompanionServer

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None) -> Any:
        if name in WRITE_TOOLS and not self.companion.allow_writes:
            refusal = WriteRefused(
                "mode", "this server is read-only; start it with `companion mcp --allow-writes` to let agents write"
            )
            await self.companion.log_refusal(name, refusal, context)
            raise ToolError(json.dumps({"error": refusal.reason, "field": refusal.field}))
        try:
            result = await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if name in WRITE_TOOLS and isinstance(exc.__cause__, ValidationError):
                fields = sorted({".".join(str(p) for p in e["loc"]) for e in exc.__cause__.errors()})
                refusal = WriteRefused(fields[0] if fields else "arguments", f"does not match the schema: {exc}")
                await self.companion.log_refusal(name, refusal, context)
            raise
        return result

    async def run_stdio_async(self) -> None:
        """Serve over stdin/stdout with the companion's transport, which answers every line, a bad one too."""
        lowlevel = self._lowlevel_server  # the SDK's own stdio runner does the same; it offers no public way in
        async with stdio_transport() as (read_stream, write_stream):
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())

    async def run_http_async(self, port: int, token: str) -> None:
        """Serve streamable HTTP on 127.0.0.1:`port` to clients sending `token`, with the SDK's Host and Origin
        checks for loopback behind the token check."""
        import uvicorn

        app = BearerGuard(self.streamable_http_app(host="127.0.0.1"), token)
        config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level=self.settings.log_level.lower())
        await uvicorn.Server(config).serve()


class CompanionServer:
    """One vault served to one MCP client."""

    def __init__(
        self,
        open_workspace: Callable[[], Workspace],
        *,
        allow_writes: bool = False,
        environ: dict[str, str] | None = None,
    ) -> None:
        self._open = open_workspace
        self.allow_writes = allow_writes
        """The write tools are offered (`--allow-writes`)."""
        self._environ = environ
        self._workspace: Workspace | None = None
        self._api: AgentApi | None = None
        self._writer: AgentWriter | None = None
        self._lock = threading.Lock()
        self._caught_up = 0.0
        self._stale = threading.Event()  # a note changed since the last catch-up (set by the watch)
        self._watching = False  # the OS watch is live, so `_stale` can be trusted
        self._stop = threading.Event()
        self.server = self._build()
        """The SDK server with every tool registered."""

    # -- life --------------------------------------------------------------------------------------

    def start_catch_up(self) -> threading.Thread:
        """Open the workspace and bring the index up to date in the background (the handshake never waits)."""
        thread = threading.Thread(target=self._warm, name="companion-catch-up", daemon=True)
        thread.start()
        return thread

    def _warm(self) -> None:
        """Open the workspace, start the OS watch, then catch up once: no change between the two is missed."""
        try:
            with self._lock:
                self._fresh(force=True)
            root = self._root()
        except CompanionError as exc:
            log.warning("catching up failed: %s", exc)
            return
        try:
            from indexer.watcher import VaultFilter

            for changes in watchfiles.watch(
                root,
                watch_filter=VaultFilter(root),
                stop_event=self._stop,
                yield_on_timeout=True,
                rust_timeout=500,
                raise_interrupt=False,
            ):
                if not self._watching:
                    self._watching = True
                    self._stale.set()  # whatever changed while the watch was being set up
                if changes:
                    self._stale.set()
        except (OSError, RuntimeError) as exc:  # no inotify left, a vanished vault: fall back to catching up by time
            log.warning("cannot watch the vault (%s); catching up every %.0f s of calls instead", exc, FRESH_S)
        self._watching = False

    def _root(self) -> Path:
        assert self._workspace is not None
        return self._workspace.vault.root

    def close(self) -> None:
        """Stop the watch and close the workspace (its index connections and store)."""
        self._stop.set()
        with self._lock:
            if self._workspace is not None:
                self._workspace.close()
                self._workspace = None
                self._api = None
                self._writer = None

    def _fresh(self, *, force: bool = False) -> AgentApi:
        """The API, after a catch-up when the last one is stale (call with the lock held)."""
        if self._workspace is None:
            self._workspace = self._open()
            self._api = AgentApi(self._workspace)
            # One writer for the connection: its session budget counts every write of this session.
            self._writer = AgentWriter(
                self._workspace, WriteSource("unknown client"), allowed=self.allow_writes, environ=self._environ
            )
        assert self._api is not None
        stale = self._stale.is_set() if self._watching else time.monotonic() - self._caught_up > FRESH_S
        if force or stale:
            self._stale.clear()  # an event during the catch-up sets it again
            # Another process (`companion index --watch`, the app) may hold the writer lock: then it keeps the index
            # fresh, and this reads what it wrote.
            self._workspace.catch_up()
            self._caught_up = time.monotonic()
        return self._api

    async def _call(self, work: Callable[[AgentApi], T], error: type[Exception] = ToolError) -> T:
        """Run `work` in a worker thread, one call at a time; a bad argument becomes an `error` (a tool error, or a
        resource error for a resource) naming it."""

        def run() -> T:
            with self._lock:
                return work(self._fresh())

        try:
            return await anyio.to_thread.run_sync(run)
        except AgentInputError as exc:
            raise error(json.dumps({"error": exc.reason, "field": exc.field})) from exc
        except CompanionError as exc:
            raise error(json.dumps({"error": str(exc)})) from exc

    async def _write(
        self, context: Context[Any, Any] | None, model: str | None, prompt: str | None, work: Callable[[AgentWriter], T]
    ) -> T:
        """Run a write as `_call` runs a read, with the client's name, version and stated versions as its source."""
        source = WriteSource(_client(context), model or "", prompt or "")

        def run(api: AgentApi) -> T:
            assert self._writer is not None
            self._writer.source = source
            return work(self._writer)

        return await self._call(run)

    async def log_refusal(self, tool: str, refusal: WriteRefused, context: Context[Any, Any] | None) -> None:
        """Record a write refused before it reached the writer (read-only server, arguments against the schema)."""
        source = WriteSource(_client(context))

        def run(api: AgentApi) -> None:
            assert self._writer is not None
            self._writer.source = source
            self._writer.refused(tool, refusal)

        # When the vault cannot even be opened, the refusal is answered all the same.
        with contextlib.suppress(ToolError):
            await self._call(run)

    # -- tools -------------------------------------------------------------------------------------

    def _build(self) -> _Server:
        server = _Server("vault-companion", instructions=INSTRUCTIONS, log_level="WARNING")
        server.companion = self

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
            Only matches are listed; when no note is relevant enough, no_good_match is true and the closest few
            come with match false. A search counts nothing as used; reading a note does.
            """
            found, notice = await self._call(
                lambda api: (
                    api.search(query, k=k, where=where, since=since, until=until, path=path, as_of=as_of),
                    api.notice,
                )
            )
            return _found_json(found, notice)

        @server.tool(annotations=_READ_ONLY)
        async def recall_relevant(query: str, k: int = 10) -> dict[str, Any]:
            """Recall the notes most relevant to a message: hybrid relevance times the spaced-repetition decay, so
            notes that proved useful stay and stale ones fade. k: 1-100. When no note is relevant enough,
            no_good_match is true and the closest few come with match false."""
            found, notice = await self._call(lambda api: (api.search(query, k=k), api.notice))
            return _found_json(found, notice)

        @server.tool(annotations=_READ_ONLY)
        async def vault_read(note: str) -> dict[str, Any]:
            """Read one note whole: frontmatter, body, tags, aliases, its links (resolved to paths, or marked
            unresolved) and its backlinks. note: a vault path, a path without .md, a title or an alias; or @1, @2...
            for the results of the last search, @last for the note last surfaced or read. Reading a note counts as
            using it: recall keeps notes in use from fading."""
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
            """The completed sessions of the last hours, newest first, with their summaries."""
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

        @server.resource("vault://note/{+path}", mime_type="text/markdown")
        async def note(path: str) -> str:
            """A note of the vault as its Markdown file holds it, by vault path (a title or an alias works too)."""
            return await self._call(lambda api: api.markdown(path), ResourceError)

        assert set(MEMORY_MODES) == {"exact", "type", "lexical", "hybrid", "graph"}  # the Literal above
        if self.allow_writes:
            self._add_write_tools(server)
        return server

    def _add_write_tools(self, server: MCPServer) -> None:
        types = ", ".join(MEMORY_TYPES)

        @server.tool(annotations=_WRITES, description=_REMEMBER.format(types=types))
        async def remember(
            type: str,
            text: str,
            ctx: Context[Any, Any],
            title: str | None = None,
            confidence: float | None = None,
            tags: list[str] | None = None,
            session: str | None = None,
            ignore_dedupe: bool = False,
            model: str | None = None,
            prompt_version: str | None = None,
        ) -> dict[str, Any]:
            done = await self._write(
                ctx,
                model,
                prompt_version,
                lambda w: w.remember(
                    type,
                    text,
                    title=title,
                    confidence=confidence,
                    tags=tags or [],
                    session=session,
                    ignore_dedupe=ignore_dedupe,
                ),
            )
            return done.as_json()

        @server.tool(annotations=_WRITES)
        async def vault_write(
            title: str,
            content: str,
            ctx: Context[Any, Any],
            folder: str | None = None,
            type: str | None = None,
            tags: list[str] | None = None,
            ignore_dedupe: bool = False,
            model: str | None = None,
            prompt_version: str | None = None,
        ) -> dict[str, Any]:
            """Write a note by its canonical title (a name, not a path; folder apart, default Notes). The same
            title again updates that note in place, keeping its other properties. New content that overlaps an
            existing note is refused naming it: update that note instead, or pass ignore_dedupe for a new edition.
            content is Markdown without frontmatter (give type and tags as arguments); wikilinks that resolve to no
            note are reported back. model and prompt_version are recorded in the audit log."""
            done = await self._write(
                ctx,
                model,
                prompt_version,
                lambda w: w.write(
                    title, content, folder=folder, note_type=type, tags=tags or [], ignore_dedupe=ignore_dedupe
                ),
            )
            return done.as_json()

        @server.tool(annotations=_DELETES)
        async def vault_delete(
            note: str, ctx: Context[Any, Any], model: str | None = None, prompt_version: str | None = None
        ) -> dict[str, Any]:
            """Move a note to Obsidian's trash (.trash/ in the vault). The user can undo it with `companion undo`.
            note: a vault path, a title or an alias."""
            done = await self._write(ctx, model, prompt_version, lambda w: w.delete(note))
            return done.as_json()


_REMEMBER = (
    "Remember a typed memory as a note in the vault's memory folder. type: one of {types}. text: the memory, "
    "in Markdown. title: its canonical title (default: its first words). confidence: 0 to 1. tags: tags without #. "
    "session: the session note it came from (path, title or alias), linked back from the memory. Content that "
    "overlaps an existing note is refused naming it unless ignore_dedupe. model and prompt_version are recorded "
    "in the audit log."
)


def _client(context: Context[Any, Any] | None) -> str:
    """The client's name and version from its handshake, as the audit log records it."""
    try:
        params = context.session.client_params if context is not None else None
        info = params.client_info if params is not None else None
    except (AttributeError, LookupError, ValueError):
        info = None
    if info is None:
        return "unknown client"
    return f"{info.name} {info.version}".strip()


def serve(
    open_workspace: Callable[[], Workspace],
    *,
    allow_writes: bool = False,
    port: int | None = None,
    token: str | None = None,
) -> None:
    """Serve over stdin/stdout until the client closes them, or with `port` over streamable HTTP on loopback
    (127.0.0.1 only: the vault is never offered to the network) to clients sending `token`, until interrupted."""
    if port is not None and not token:
        raise ValueError("an HTTP server needs a bearer token")
    logging.basicConfig(level=logging.WARNING, format="companion mcp: %(message)s")  # stderr: stdout is protocol
    companion = CompanionServer(open_workspace, allow_writes=allow_writes)
    companion.start_catch_up()
    try:
        if port is None:
            anyio.run(companion.server.run_stdio_async)
        else:
            assert token is not None
            anyio.run(companion.server.run_http_async, port, token)
    finally:
        companion.close()


def _found_json(found: list[Found], notice: str | None = None) -> dict[str, Any]:
    """A search's results as a tool returns them, saying when none of them is a good match (and, with `notice`,
    what else the agent must know of them: the index still being built)."""
    out: dict[str, Any] = {
        "results": [f.as_json() for f in found],
        "no_good_match": bool(found) and not any(f.match for f in found),
    }
    if notice:
        out["notice"] = notice
    return out
