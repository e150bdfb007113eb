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

What a client can rely on: every tool's result has a published shape (`shapes`) and goes out as structured content
with the same JSON as compact text; every failed call, whatever failed, answers one shape (`failures`); the notes
are resources listed a page at a time; and two prompts (`prompts`) bring the vault's own answer to a recap or a
"what do you remember about" ask.

Nothing an agent is sent holds a secret of the notes: every tool's result passes through the secret redaction
(`companion.secrets.redact_output`) on its way out, whatever the tool, and so do failures, the notes served as
resources and the prompts (which the agent API redacts); a note whose path holds a secret is left out of the
resource listing (its address would give the secret away) and is reached through a search's `@1`.

Query mode is read-only: the write tools (`remember`, `vault_write`, `vault_delete`) are offered only when
the server is started with `--allow-writes` (or `agent_writes.allow` in the config); a read-only server answers a
call to one with an error saying so, and records the refusal in the audit log like every other write decision.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import json
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import anyio
import watchfiles
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INVALID_PARAMS,
    Annotations,
    CallToolResult,
    GetPromptResult,
    InputRequiredResult,
    ListResourcesResult,
    PaginatedRequestParams,
    Resource,
    TextContent,
)
from pydantic import ValidationError

from companion import __version__
from companion.agent.api import AgentApi
from companion.agent.views import Surfaced, about
from companion.agent.writes import AgentWriter, WriteRefused, WriteSource
from companion.errors import CompanionError
from companion.mcp_server.bearer import BearerGuard
from companion.mcp_server.failures import Refusal, crash, failed, refusal_of
from companion.mcp_server.prompts import add_prompts
from companion.mcp_server.stdio import stdio_transport
from companion.mcp_server.tools import add_read_tools, add_write_tools
from companion.secrets import redact_output, redact_text
from companion.workspace import Workspace

NAME = "vault-companion"
"""The server's name in the handshake."""
FRESH_S = 2.0
"""Without an OS watch, a tool call this long after the last catch-up catches up first (a walk of the vault)."""
PAGE = 200
"""Notes per page of `resources/list`."""
MOST_CONVERSATIONS = 256
"""Clients whose recent context (`@1`, `@last`) is kept at once."""

INSTRUCTIONS = (
    "The user's Obsidian vault, which holds their notes and your memory of past sessions. Before answering from "
    "memory, look it up, cheapest first: vault_search (or recall_relevant with the user's message) gives a few "
    "tokens a note, each numbered @1, @2...; timeline shows what happened around a note or a day; vault_read gives "
    "one note whole. vault_links and vault_graph follow wikilinks, vault_list lists notes, recall_recent gives the "
    "last sessions, and context a ready memory context under a token budget. When the server allows writes: "
    "remember stores a typed memory, vault_write writes or updates a note by title, vault_delete moves a note to "
    "Obsidian's trash; every write is checked, logged and can be undone by the user. A failed call answers "
    '{"error": ..., "field": ...} naming the argument to change.'
)
WRITE_TOOLS = {"remember": "remember", "vault_write": "write", "vault_delete": "delete"}
"""Tools that write the vault (offered only to a server started for writes), with the action the audit log names."""

T = TypeVar("T")
log = logging.getLogger(__name__)


class _Server(MCPServer):
    """`MCPServer` with one shape for every failed call, compact JSON text beside the structured result, and notes
    listed as resources a page at a time."""

    companion: CompanionServer
    _takes: dict[str, frozenset[str]] | None = None

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await self._call_tool(name, arguments, context)
        except Exception as exc:  # whatever failed, the client gets the one shape, and the log the details
            log.error("%s failed", name, exc_info=exc)
            return failed(crash(name))

    async def _call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None
    ) -> CallToolResult | InputRequiredResult:
        takes = await self._arguments()
        if name in WRITE_TOOLS and not self.companion.allow_writes:
            mode = Refusal(
                "this server is read-only; start it with `companion mcp --allow-writes` to let agents write", "mode"
            )
            await self.companion.log_refusal(name, mode, context)
            return failed(mode)
        if name not in takes:
            return failed(Refusal(f"no tool called {name!r}; the tools are {', '.join(sorted(takes))}", "name"))
        unknown = sorted(set(arguments) - takes[name])
        if unknown:
            wrong = Refusal(
                f"{unknown[0]}: {name} takes no such argument; it takes {', '.join(sorted(takes[name]))}", unknown[0]
            )
            if name in WRITE_TOOLS:
                await self.companion.log_refusal(name, wrong, context)
            return failed(wrong)
        try:
            result = await super().call_tool(name, arguments, context)
        except ToolError as exc:
            refusal = refusal_of(exc)
            if refusal is None:
                log.error("%s failed", name, exc_info=exc.__cause__ or exc)
                return failed(crash(name))
            if name in WRITE_TOOLS and isinstance(exc.__cause__, ValidationError):
                await self.companion.log_refusal(name, refusal, context)  # the writer logs what it refuses itself
            return failed(refusal)
        if isinstance(result, CallToolResult) and result.structured_content is not None:
            structured = redact_output(result.structured_content)
            # The same JSON as text for clients that read only text, without the SDK's indentation (tokens).
            text = json.dumps(structured, ensure_ascii=False, separators=(",", ":"))
            result = result.model_copy(
                update={"structured_content": structured, "content": [TextContent(type="text", text=text)]}
            )
        elif isinstance(result, CallToolResult):
            content = [
                c.model_copy(update={"text": redact_text(c.text)}) if isinstance(c, TextContent) else c
                for c in result.content
            ]
            result = result.model_copy(update={"content": content})
        return result

    async def get_prompt(
        self, name: str, arguments: dict[str, Any] | None = None, context: Context[Any, Any] | None = None
    ) -> GetPromptResult | InputRequiredResult:
        # An unknown prompt or a missing argument is the caller's mistake (invalid params), not the server's.
        prompts = {p.name: p for p in await self.list_prompts()}
        if name not in prompts:
            known = ", ".join(sorted(prompts))
            raise MCPError(INVALID_PARAMS, f"no prompt called {name!r}; the prompts are {known}", {"field": "name"})
        takes = {a.name: a.required for a in prompts[name].arguments or []}
        given = arguments or {}
        unknown = sorted(set(given) - set(takes))
        if unknown:
            raise MCPError(INVALID_PARAMS, f"{unknown[0]}: {name} takes no such argument", {"field": unknown[0]})
        for arg, required in takes.items():
            if required and arg not in given:
                raise MCPError(INVALID_PARAMS, f"{arg}: required", {"field": arg})
        return await super().get_prompt(name, arguments, context)

    async def _arguments(self) -> dict[str, frozenset[str]]:
        """Each tool's argument names (the tools are fixed once the server is built)."""
        if self._takes is None:
            self._takes = {t.name: frozenset(t.input_schema.get("properties", {})) for t in await self.list_tools()}
        return self._takes

    async def _handle_list_resources(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        # The SDK lists only fixed resources; the vault's notes are many and change, so they are paged here.
        return await self.companion.note_resources(params.cursor if params is not None else None)

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
        self._one_at_a_time = anyio.CapacityLimiter(1)
        self._surfaced: dict[str, Surfaced] = {}  # each client's recent context, the least recently used first
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

    async def call(self, work: Callable[[AgentApi], T], context: Context[Any, Any] | None = None) -> T:
        """Run `work` in a worker thread, one call at a time, with the recent context (`@1`, `@last`) of the
        client that made the call; a bad argument or a failure the agent can act on is raised as a `Refusal`
        naming the argument."""
        key = _conversation(context)

        def run() -> T:
            with self._lock:  # against the background catch-up
                api = self._fresh()
                api.surfaced = self._surfaced.pop(key, Surfaced())
                try:
                    return work(api)
                finally:
                    self._surfaced[key] = api.surfaced  # the most recent last
                    while len(self._surfaced) > MOST_CONVERSATIONS:
                        self._surfaced.pop(next(iter(self._surfaced)))

        try:
            # Calls wait their turn in the event loop, where a cancelled one just leaves, not in a worker thread
            # holding a slot the stdio transport's reader and writer need.
            return await anyio.to_thread.run_sync(run, limiter=self._one_at_a_time)
        except CompanionError as exc:
            refusal = refusal_of(exc)
            assert refusal is not None  # every companion error is one the agent can read
            raise refusal from exc

    async def write(
        self,
        context: Context[Any, Any] | None,
        model: str | None,
        prompt: str | None,
        work: Callable[[AgentWriter, AgentApi], T],
    ) -> T:
        """Run a write as `call` runs a read, with the client's name, version and stated versions as its source
        (and the API, through which `@1` or `@last` name a note)."""
        source = WriteSource(_client(context), model or "", prompt or "")

        def run(api: AgentApi) -> T:
            assert self._writer is not None
            self._writer.source = source
            return work(self._writer, api)

        return await self.call(run, context)

    async def log_refusal(self, tool: str, refusal: Refusal, context: Context[Any, Any] | None) -> None:
        """Record a write refused before it reached the writer (read-only server, arguments against the schema)."""
        source = WriteSource(_client(context))

        def run(api: AgentApi) -> None:
            assert self._writer is not None
            self._writer.source = source
            self._writer.refused(WRITE_TOOLS.get(tool, tool), WriteRefused(refusal.field or "arguments", refusal.error))

        try:
            await self.call(run)
        except Exception as exc:  # a vault that cannot be opened, a full disk: the refusal is answered all the same
            log.warning("the refusal of %s could not be logged: %s", tool, exc, exc_info=exc)

    async def note_resources(self, cursor: str | None) -> ListResourcesResult:
        """One page of the vault's notes as resources, in path order; `cursor` is where the last page ended."""
        after = _after(cursor)
        records = await self.call(lambda api: api.workspace.manifest.notes_after(after, PAGE + 1))
        page = records[:PAGE]
        resources = [
            Resource(
                uri=f"vault://note/{quote(r.path, safe='/')}",
                name=r.path,
                title=r.title,
                description=redact_text(about(r.note_type, r.date)) or None,
                mime_type="text/markdown",
                size=r.size,
                annotations=Annotations(last_modified=_iso(r.mtime_ns)),
            )
            for r in page
            if redact_text(r.path) == r.path
        ]
        more = len(records) > PAGE
        return ListResourcesResult(resources=resources, next_cursor=_cursor(page[-1].path) if more else None)

    # -- tools -------------------------------------------------------------------------------------

    def _build(self) -> _Server:
        server = _Server(NAME, version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
        server.companion = self
        add_read_tools(server, self)
        if self.allow_writes:
            add_write_tools(server, self)
        add_prompts(server, self)

        @server.resource("vault://note/{+path}", mime_type="text/markdown", title="A note of the vault")
        async def note(path: str) -> str:
            """A note of the vault as its Markdown file holds it, by vault path (a title or an alias works too)."""
            try:
                return await self.call(lambda api: api.markdown(path))
            except Refusal as exc:
                if exc.field is None:  # the server's own failure (the vault cannot be opened), not a missing note
                    raise ResourceError(exc.error) from exc
                raise ResourceNotFoundError(exc.error) from exc

        return server


def _conversation(context: Context[Any, Any] | None) -> str:
    """Whose recent context a call uses: its HTTP session where it has one, else its client (over stdio there is
    only one; over HTTP without sessions, clients of one name and version share theirs)."""
    try:
        request = context.request_context.request if context is not None else None
    except (AttributeError, LookupError, ValueError):
        request = None
    headers = getattr(request, "headers", None)
    session = headers.get("mcp-session-id") if headers is not None else None
    return f"session:{session}" if session else f"client:{_client(context)}"


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


def _cursor(path: str) -> str:
    """The cursor of the page after `path` (opaque to the client)."""
    return base64.urlsafe_b64encode(json.dumps({"after": path}).encode("utf-8")).decode("ascii")


def _after(cursor: str | None) -> str:
    """The path a cursor continues after ("" for the first page); a cursor this server did not give is the
    protocol's invalid-params error."""
    if not cursor:
        return ""
    try:
        after = json.loads(base64.urlsafe_b64decode(cursor.encode("ascii")))["after"]
    except (ValueError, KeyError, TypeError, UnicodeError, binascii.Error):
        after = None
    if not isinstance(after, str):
        raise MCPError(
            INVALID_PARAMS, "the cursor is not one this server gave; list from the start", {"field": "cursor"}
        )
    return after


def _iso(mtime_ns: int) -> str:
    """A modification time as ISO 8601 in UTC."""
    return dt.datetime.fromtimestamp(mtime_ns / 1e9, dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
