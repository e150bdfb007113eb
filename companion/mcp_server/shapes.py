"""The shape of every tool's result: each tool publishes its model's JSON schema as its `outputSchema`, and what it
returns is checked against it before it leaves (the same JSON goes out as text for clients that read only text).

No model takes a key it does not declare, so a result and its schema cannot drift apart unnoticed.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Shape(BaseModel):
    """A tool result's shape: every key declared, no other key allowed."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Item(Shape):
    """One note a search or a memory query found, in a few tokens."""

    ref: str = Field(description="`@1`, `@2`...: names this note in the next calls (vault_read, timeline...)")
    path: str = Field(description="The note's path in the vault")
    title: str = Field(description="The note's title (its file name)")
    link: str = Field(description="A wikilink to the passage, as Obsidian opens it")
    relevance: float | None = Field(
        default=None,
        description="How likely the note answers the question: with the learned fusion (the default) a probability "
        "on one scale for every question, below the relevance floor (0.4 by default) no match unless the question "
        "names the note; null where the mode does not rank by relevance",
    )
    match: bool = Field(description="False for a note listed only as the closest when nothing matched well")
    score: float = Field(
        description="Its score in this ranking, which orders the list (higher is better; 0 where the mode does not "
        "rank): relative to the first result, so compare relevance across questions, not this"
    )
    type: str | None = Field(description="The note's `type` property (fact, entity, conversation...)")
    date: str | None = Field(description="The note's `date` property")
    snippet: str = Field(description="One line of the passage that matched")


class Search(Shape):
    """What `vault_search` and `recall_relevant` return."""

    results: list[Item] = Field(description="Best first")
    no_good_match: bool = Field(description="True when no note is relevant enough: the results are the closest ones")
    notice: str | None = Field(description="What else to know of these results (the index still being built)")


class Query(Shape):
    """What `memory_query` returns."""

    mode: Literal["exact", "type", "lexical", "hybrid", "graph"] = Field(description="The retrieval path used")
    results: list[Item] = Field(description="Best first (newest first for `type`)")
    no_good_match: bool = Field(
        default=False, description="hybrid only: true when no note is relevant enough, the results the closest ones"
    )


class Link(Shape):
    """One wikilink of a note."""

    target: str = Field(description="The link target as written")
    path: str | None = Field(description="The note it resolves to, null when it names no note")
    resolved: bool = Field(description="It resolves to a note")


class Note(Shape):
    """What `vault_read` returns: one note whole."""

    path: str = Field(description="The note's path in the vault")
    title: str = Field(description="The note's title")
    frontmatter: dict[str, Any] = Field(description="Its properties")
    body: str = Field(description="Its Markdown after the properties")
    tags: list[str] = Field(description="Tags from the text and the `tags` property")
    aliases: list[str] = Field(description="Other names of the note (the `aliases` property)")
    links: list[Link] = Field(description="Its wikilinks in file order, each once")
    backlinks: list[str] = Field(description="Paths of the notes linking to it")


class Listed(Shape):
    """One note of a listing."""

    path: str = Field(description="The note's path in the vault")
    title: str = Field(description="The note's title")
    type: str | None = Field(description="Its `type` property")
    date: str | None = Field(
        description="Its day: the `date` property, else `created`, else a date its title starts with (with the time "
        "when it has one, in local time)"
    )
    tags: list[str] = Field(description="Its `tags` property")


class Listing(Shape):
    """What `vault_list` returns."""

    notes: list[Listed] = Field(description="Newest first; undated notes last, by path")


class Links(Shape):
    """What `vault_links` returns."""

    path: str = Field(description="The note")
    outgoing: list[Link] = Field(description="What it links to")
    backlinks: list[str] = Field(description="Paths of the notes linking to it")
    unresolved: list[str] = Field(description="Link targets that name no note")


class Node(Shape):
    """One note of a neighbourhood."""

    path: str = Field(description="The note's path in the vault")
    hops: int = Field(description="Links away from the centre (0 for the centre)")


class Edge(Shape):
    """One link between two notes of a neighbourhood."""

    source: str = Field(alias="from", description="The linking note")
    to: str = Field(description="The linked note")


class Graph(Shape):
    """What `vault_graph` returns."""

    path: str = Field(description="The note at the centre")
    hops: int = Field(description="How far out it reaches")
    nodes: list[Node] = Field(description="Every note reached, nearest first")
    edges: list[Edge] = Field(description="Every link among them")


class Session(Shape):
    """One completed session."""

    path: str = Field(description="The note that holds it")
    title: str = Field(description="What it was about")
    when: str = Field(description="When it took place (ISO, local time)")
    user_id: str = Field(description="Who it was with")
    chat_id: str = Field(description="Which chat")
    summary: str = Field(description="One line: the user's message → the agent's answer, shortened")


class Period(Shape):
    """The days a period covers."""

    start: str = Field(description="Its first day (ISO)")
    end: str = Field(description="Its last day (ISO), never after the moment asked about")
    phrase: str = Field(description="The words it was read from")


class Recent(Shape):
    """What `recall_recent` returns."""

    sessions: list[Session] = Field(description="Newest first")
    period: Period | None = Field(default=None, description="The period listed, null for the last hours")
    more: int = Field(default=0, description="Sessions of the period past the limit, not listed")


class Context(Shape):
    """What `context` returns."""

    text: str = Field(description="The assembled context, ready to put before the message")
    tokens: int = Field(description="Its length in tokens")
    budget: int = Field(description="The budget it was held to")
    tokenizer: str = Field(description="The tokenizer the tokens were counted with")
    sources: list[str] = Field(description="Paths of the notes it draws on")


class Anchor(Shape):
    """What a timeline is drawn around."""

    when: str = Field(description="The moment (ISO; a day for a whole day)")
    source: Literal["date", "session", "modified", "now"] = Field(
        description="Where the moment came from: the date given or the note's date, its session, its last change, now"
    )
    note: str | None = Field(description="The note named, if one was")


class Entry(Shape):
    """One session or dated note of a timeline."""

    ref: str = Field(description="`@1`, `@2`...: names this note in the next calls (vault_read...)")
    position: Literal["before", "at", "after"] = Field(description="Where it stands against the anchor")
    kind: Literal["session", "note"] = Field(description="A conversation session, or a note placed by its date")
    path: str = Field(description="The note's path in the vault")
    title: str = Field(description="The note's title")
    when: str = Field(description="When (ISO to the minute, or the day)")
    type: str | None = Field(description="Its `type` property")
    summary: str = Field(description="One line of what it was")


class Timeline(Shape):
    """What `timeline` returns."""

    anchor: Anchor = Field(description="What the timeline is drawn around")
    days: int = Field(description="How many days either side were looked at")
    entries: list[Entry] = Field(description="Oldest first")


class Written(Shape):
    """What a write returns."""

    path: str = Field(description="The note written, updated or deleted")
    action: Literal["created", "updated", "deleted"] = Field(description="What was done")
    audit_entry: str = Field(description="The audit log entry: the user undoes the write with `companion undo ID`")
    unresolved_links: list[str] = Field(description="Wikilinks in the text that name no note")
    moved_to: str | None = Field(description="Where a deleted note went (Obsidian's trash)")


class Failure(Shape):
    """The one shape of every failed call (sent with `isError`)."""

    error: str = Field(description="What went wrong and what to do instead")
    field: str | None = Field(description="The argument at fault, null when none is")
