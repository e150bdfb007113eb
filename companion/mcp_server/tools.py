"""The tools: each argument described and bounded in its input schema, each result shaped (see `shapes`).

An agent looks cheaply before it reads: `vault_search` gives a few tokens a note (title, score, one line, `@n`),
`timeline` puts notes in their time, and `vault_read` gives one note whole.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field

from companion.agent.api import LINE_CHARS, MAX_HOPS, MAX_RESULTS, MOST_DAYS
from companion.agent.fields import TITLE_CHARS
from companion.agent.timeline import MOST_AROUND
from companion.agent.views import Found, no_good_match
from companion.agent.writes import MEMORY_TYPES
from companion.mcp_server import shapes
from companion.words import one_line, significant

if TYPE_CHECKING:
    from companion.mcp_server.server import CompanionServer

F = TypeVar("F", bound=Callable[..., Any])
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
"""Reads: nothing in the vault changes."""
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
"""Writes that add a note (undoable)."""
UPDATES = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False)
"""Writes that may replace a note's text (undoable)."""
DELETES = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False)
"""Writes that take a note away (to Obsidian's trash, undoable)."""

Note = Annotated[
    str,
    Field(
        min_length=1,
        max_length=10_000,
        description="A note: its vault path (with or without .md), its title or an alias; or @1, @2... for the "
        "results of the last search or timeline, @last for the note last found or read",
    ),
]
Day = Annotated[str, Field(max_length=40, description="An ISO date such as 2026-03-01 (a full ISO moment works too)")]
K = Annotated[int, Field(ge=1, le=MAX_RESULTS, description=f"How many notes to return (1-{MAX_RESULTS})")]
Model = Annotated[
    str | None, Field(max_length=200, description="The model writing, recorded in the audit log (e.g. its name)")
]
PromptVersion = Annotated[
    str | None, Field(max_length=200, description="The version of the prompt that asked for the write, for the log")
]
Tags = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=100)]] | None,
    Field(max_length=50, description="Tags, without #"),
]
IgnoreDedupe = Annotated[
    bool, Field(description="Write even when another note already holds the same content (a new edition)")
]


def _tool(server: MCPServer, annotations: ToolAnnotations) -> Callable[[F], F]:
    """Register a tool with its docstring, dedented, as its description."""

    def register(fn: F) -> F:
        server.tool(annotations=annotations, description=inspect.cleandoc(fn.__doc__ or ""))(fn)
        return fn

    return register


def add_read_tools(server: MCPServer, companion: CompanionServer) -> None:
    """Register the tools that only read."""

    @_tool(server, READ_ONLY)
    async def vault_search(
        ctx: Context[Any, Any],
        query: Annotated[str, Field(min_length=1, max_length=10_000, description="What to look for, in any words")],
        k: K = 10,
        where: Annotated[
            dict[str, str | int | float | bool] | None,
            Field(max_length=20, description='Properties a note must have, e.g. {"type": "fact"}'),
        ] = None,
        since: Annotated[
            Day | None, Field(description="Only notes whose date property is on or after this day")
        ] = None,
        until: Annotated[
            Day | None, Field(description="Only notes whose date property is on or before this day")
        ] = None,
        path: Annotated[
            str | None,
            Field(max_length=1000, description="A glob on the path ('Projects/*'), or a folder's name for its notes"),
        ] = None,
        as_of: Annotated[
            str | None,
            Field(max_length=40, description="Answer as if at this ISO moment (nothing is counted as used)"),
        ] = None,
    ) -> shapes.Search:
        """Search the user's Obsidian vault (notes and the agent's memory) by meaning and by words, best first.

        Start here: each result costs a few tokens (title, score, one line, a wikilink, and `@1`, `@2`... to name
        it next). Then put a result in its time with timeline, and read the notes you need whole with vault_read.
        Notes used often rank higher and unused ones fade. When nothing is relevant enough, no_good_match is true
        and the closest few are listed with match false. A search counts nothing as used; reading a note does."""
        return await _search(companion, ctx, query, k, where=where, since=since, until=until, path=path, as_of=as_of)

    @_tool(server, READ_ONLY)
    async def recall_relevant(
        ctx: Context[Any, Any],
        query: Annotated[
            str, Field(min_length=1, max_length=10_000, description="The user's message, or what it is about")
        ],
        k: K = 10,
    ) -> shapes.Search:
        """The memories most relevant to a message, as vault_search ranks them, with no filters: call it with the
        user's message before answering, to bring back what was said or decided in earlier sessions."""
        return await _search(companion, ctx, query, k)

    @_tool(server, READ_ONLY)
    async def timeline(
        ctx: Context[Any, Any],
        date: Annotated[
            Day | None,
            Field(description="Draw the timeline around this day (or ISO moment); default now. Not with note"),
        ] = None,
        note: Annotated[Note | None, Field(description="Draw it around this note (e.g. @1 from a search)")] = None,
        before: Annotated[int, Field(ge=0, le=MOST_AROUND, description=f"Entries before it (0-{MOST_AROUND})")] = 5,
        after: Annotated[int, Field(ge=0, le=MOST_AROUND, description=f"Entries after it (0-{MOST_AROUND})")] = 5,
        days: Annotated[
            int, Field(ge=1, le=MOST_DAYS, description=f"How many days either side to look (1-{MOST_DAYS})")
        ] = 30,
    ) -> shapes.Timeline:
        """What happened around a day or a note: the conversation sessions and dated notes just before and after
        it, oldest first, each with one line of what it was. Use it after a search to see what led to a note and
        what followed; each entry can be named @1, @2... in vault_read."""
        line = await companion.call(
            lambda api: api.timeline(date=date, note=note, before=before, after=after, days=days), ctx
        )
        data = line.as_json()
        data["entries"] = [{"ref": f"@{n}", **e} for n, e in enumerate(data["entries"], 1)]
        return shapes.Timeline.model_validate(data)

    @_tool(server, READ_ONLY)
    async def vault_read(note: Note, ctx: Context[Any, Any]) -> shapes.Note:
        """Read one note whole: its properties, its Markdown, its tags and aliases, its links (each resolved to a
        note or marked unresolved) and the notes linking to it. Reading a note counts as using it, which keeps
        it from fading in later searches."""
        view = await companion.call(lambda api: api.read(note), ctx)
        return shapes.Note.model_validate(view.as_json())

    @_tool(server, READ_ONLY)
    async def vault_list(
        ctx: Context[Any, Any],
        folder: Annotated[
            str | None, Field(max_length=1000, description='A folder of the vault, e.g. "People"')
        ] = None,
        type: Annotated[str | None, Field(max_length=200, description='The type property, e.g. "fact"')] = None,
        tag: Annotated[str | None, Field(max_length=200, description="A tag of the tags property, without #")] = None,
        since: Annotated[Day | None, Field(description="Only notes dated on or after this day")] = None,
        until: Annotated[Day | None, Field(description="Only notes dated on or before this day")] = None,
        limit: Annotated[int, Field(ge=1, le=1000, description="Most notes to return (1-1000)")] = 100,
    ) -> shapes.Listing:
        """List notes, newest first: in a folder, of a type, with a tag, dated within since and until."""
        notes = await companion.call(
            lambda api: api.list_notes(folder=folder, note_type=type, tag=tag, since=since, until=until, limit=limit),
            ctx,
        )
        return shapes.Listing.model_validate({"notes": [n.as_json() for n in notes]})

    @_tool(server, READ_ONLY)
    async def vault_links(note: Note, ctx: Context[Any, Any]) -> shapes.Links:
        """A note's wikilinks (each target once, with the note it resolves to; unresolved ones listed apart) and
        the notes linking to it."""
        links = await companion.call(lambda api: api.links(note), ctx)
        return shapes.Links.model_validate(links.as_json())

    @_tool(server, READ_ONLY)
    async def vault_graph(
        ctx: Context[Any, Any],
        note: Note,
        hops: Annotated[int, Field(ge=1, le=MAX_HOPS, description=f"How many links out to go (1-{MAX_HOPS})")] = 2,
    ) -> shapes.Graph:
        """The link neighbourhood of a note: every note within some links of it, either way, with its distance,
        and the links among them."""
        graph = await companion.call(lambda api: api.graph(note, hops), ctx)
        return shapes.Graph.model_validate(graph.as_json())

    @_tool(server, READ_ONLY)
    async def memory_query(
        ctx: Context[Any, Any],
        mode: Annotated[
            Literal["exact", "type", "lexical", "hybrid", "graph"],
            Field(
                description="exact: every note with this title or alias (translations often share one), those "
                "in its language first; type: notes of this type property, newest first; lexical: by words alone; "
                "hybrid: as vault_search; graph: notes linked with the one named"
            ),
        ],
        query: Annotated[
            str,
            Field(
                min_length=1,
                max_length=10_000,
                description="A title or alias (exact, graph), a type such as fact or belief (type), words (others)",
            ),
        ],
        k: K = 10,
    ) -> shapes.Query:
        """Query memory by one retrieval path, when you know which one you need (a title, a type of memory, exact
        words, the notes around one)."""
        found = await companion.call(lambda api: api.memory_query(mode, query, k=k), ctx)
        return shapes.Query(mode=mode, results=_items(found), no_good_match=no_good_match(found))

    @_tool(server, READ_ONLY)
    async def recall_recent(
        ctx: Context[Any, Any],
        hours: Annotated[
            float | None,
            Field(gt=0, le=24 * 3650, description="How far back, in hours (default 48); not with a period"),
        ] = None,
        limit: Annotated[int, Field(ge=1, le=MAX_RESULTS, description="Most sessions to return")] = 10,
        period: Annotated[
            str | None,
            Field(
                max_length=200,
                description="A period in words: 'last week', 'yesterday', 'this week', 'in March', 'on 3 November', "
                "or a day such as 2026-11-03; every session of it is listed, not only the completed ones",
            ),
        ] = None,
        since: Annotated[Day | None, Field(description="The first day of a period (not with period)")] = None,
        until: Annotated[Day | None, Field(description="Its last day (default today); needs since")] = None,
        as_of: Annotated[
            str | None,
            Field(max_length=40, description="Answer as if at this ISO moment ('last week' is then its last week)"),
        ] = None,
    ) -> shapes.Recent:
        """The conversation sessions of the last hours, or of a period ("last week", "in March", since and until),
        newest first, each with one line of what was said: the user's message → the answer. Session summaries,
        conversation notes and imported agents' sessions are listed once each; more says how many sessions of the
        period the limit left out. Use it for "what did we talk about last week?"."""
        found = await companion.call(
            lambda api: api.recall_recent(hours, limit, period=period, since=since, until=until, as_of=as_of), ctx
        )
        return shapes.Recent.model_validate(found.as_json())

    @_tool(server, READ_ONLY)
    async def context(
        ctx: Context[Any, Any],
        message: Annotated[str, Field(min_length=1, max_length=10_000, description="The user's message")],
        budget: Annotated[
            int | None, Field(ge=1, le=200_000, description="Most tokens (default: the vault's own setting)")
        ] = None,
    ) -> shapes.Context:
        """A ready memory context for a message, held to a token budget: the vault's memory rules, the latest
        summary, recent sessions, the related notes and the last turns. Put its text before the message. A message
        asking what was talked about in a period ("last week", "on 3 November") gets that period's sessions, each
        with its exchange, instead of the recent ones."""
        assembled, counter = await companion.call(lambda api: api.context(message, budget), ctx)
        return shapes.Context(
            text=assembled.text,
            tokens=assembled.tokens,
            budget=assembled.budget,
            tokenizer=counter.name,
            sources=[p.source for p in assembled.pieces if p.source],
        )


def add_write_tools(server: MCPServer, companion: CompanionServer) -> None:
    """Register the tools that write (offered only to a server started for writes)."""

    @_tool(server, WRITES)
    async def remember(
        type: Annotated[
            Literal[MEMORY_TYPES],  # type: ignore[valid-type]
            Field(description="The kind of memory"),
        ],
        text: Annotated[str, Field(min_length=1, description="The memory, in Markdown")],
        ctx: Context[Any, Any],
        title: Annotated[
            str | None,
            Field(max_length=TITLE_CHARS, description="Its title, a name not a path (default: its first words)"),
        ] = None,
        confidence: Annotated[float | None, Field(ge=0, le=1, description="How sure, from 0 to 1")] = None,
        tags: Tags = None,
        session: Annotated[
            Note | None, Field(description="The session note it came from; the memory links back to it")
        ] = None,
        ignore_dedupe: IgnoreDedupe = False,
        model: Model = None,
        prompt_version: PromptVersion = None,
    ) -> shapes.Written:
        """Remember something as a typed memory note in the vault's memory folder, with its confidence, source and
        date. Content that overlaps an existing note is refused naming it: update that note instead (vault_write
        with its title) unless this is a new edition (ignore_dedupe). Every write is logged and the user can undo
        it."""
        done = await companion.write(
            ctx,
            model,
            prompt_version,
            lambda w, api: w.remember(
                type,
                text,
                title=title,
                confidence=confidence,
                tags=tags or [],
                session=api.named(session, "session") if session is not None else None,
                ignore_dedupe=ignore_dedupe,
            ),
        )
        return shapes.Written.model_validate(done.as_json())

    @_tool(server, UPDATES)
    async def vault_write(
        title: Annotated[
            str, Field(min_length=1, max_length=TITLE_CHARS, description="The note's title: a name, not a path")
        ],
        content: Annotated[str, Field(description="Its Markdown, without properties (give type and tags apart)")],
        ctx: Context[Any, Any],
        folder: Annotated[
            str | None, Field(max_length=1000, description="Where a new note goes (default: the notes folder)")
        ] = None,
        type: Annotated[str | None, Field(max_length=200, description="Its type property")] = None,
        tags: Tags = None,
        ignore_dedupe: IgnoreDedupe = False,
        model: Model = None,
        prompt_version: PromptVersion = None,
    ) -> shapes.Written:
        """Write a note by its title. The same title again updates that note in place, keeping its other
        properties. New content that overlaps another note is refused naming it: update that note instead, or pass
        ignore_dedupe for a new edition. Wikilinks that name no note are reported back. Every write is logged and
        the user can undo it."""
        done = await companion.write(
            ctx,
            model,
            prompt_version,
            lambda w, api: w.write(
                title, content, folder=folder, note_type=type, tags=tags or [], ignore_dedupe=ignore_dedupe
            ),
        )
        return shapes.Written.model_validate(done.as_json())

    @_tool(server, DELETES)
    async def vault_delete(
        note: Note, ctx: Context[Any, Any], model: Model = None, prompt_version: PromptVersion = None
    ) -> shapes.Written:
        """Move a note to Obsidian's trash (the .trash folder of the vault); the user can undo it."""
        done = await companion.write(ctx, model, prompt_version, lambda w, api: w.delete(api.named(note)))
        return shapes.Written.model_validate(done.as_json())


async def _search(
    companion: CompanionServer, ctx: Context[Any, Any], query: str, k: int, **scope: Any
) -> shapes.Search:
    """A search's results, compact, with whether any is a good match and what else the agent must know of them."""
    found, notice = await companion.call(
        lambda api: (api.search(query, k=k, snippet_chars=LINE_CHARS, **scope), api.notice), ctx
    )
    return shapes.Search(results=_items(found), no_good_match=no_good_match(found), notice=notice)


def _items(found: list[Found]) -> list[shapes.Item]:
    """Found notes as compact, numbered items (`@1` first, as the agent names them next)."""
    return [
        shapes.Item(
            ref=f"@{n}",
            path=f.path,
            title=f.title,
            link=f.wikilink,
            score=significant(f.score, 4),
            match=f.match,
            relevance=None if f.relevance is None else round(f.relevance, 3),
            type=f.note_type,
            date=f.date,
            snippet=one_line(f.snippet, LINE_CHARS),
        )
        for n, f in enumerate(found, 1)
    ]
