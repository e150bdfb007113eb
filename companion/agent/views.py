"""The values the agent API returns, each with its JSON form (what the CLI prints and the MCP server sends)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from companion.words import significant


@dataclass(frozen=True)
class Surfaced:
    """What "@1", "@2"... and "@last" name for one agent: the recent-context cache of its conversation."""

    listed: tuple[str, ...] = ()
    """The paths its last search or timeline listed, in order."""
    listed_at: float = 0.0
    """When (monotonic seconds)."""
    last: str | None = None
    """The note it last surfaced or read."""
    last_at: float = 0.0
    """When (monotonic seconds)."""


def about(note_type: str | None, date: str | None) -> str:
    """A note's type and day, as a listing shows them beside its name (`fact, 2026-09-03`), empty when neither."""
    return ", ".join(part for part in (note_type, (date or "")[:10]) if part)


@dataclass(frozen=True)
class Found:
    """One note a search or a memory query found."""

    path: str
    """Vault-relative path."""
    title: str
    """File name without `.md`."""
    score: float
    """Its score in that ranking (recall's final score; 0 where the mode does not rank)."""
    tier: str
    """`hot`, `warm`, `temporal`, or the memory query's mode."""
    note_type: str | None
    """Frontmatter `type`."""
    date: str | None
    """Frontmatter `date`."""
    snippet: str
    """The passage that matched (the best chunk), or the note's start."""
    link: str = ""
    """A wikilink Obsidian opens at the passage (`[[Title#Heading]]`, `[[Title#^block]]`), empty when unknown."""
    match: bool = True
    """False for a note shown only as the closest one when nothing reached the relevance floor."""
    relevance: float | None = None
    """How likely the note answers the question, with its boosts: what the relevance floor in force is held to (with
    the learned fusion a probability; with the weighted sum a sum of scaled parts). None where nothing was scored: a
    memory query's modes other than hybrid, a recent session listed by time."""

    @property
    def wikilink(self) -> str:
        """`link`, or a link to the note itself when the passage has no anchor."""
        return self.link or f"[[{self.title}]]"

    def as_json(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "path": self.path,
            "title": self.title,
            "relevance": None if self.relevance is None else round(self.relevance, 6),
            "match": self.match,
            "score": significant(self.score),
            "tier": self.tier,
            "type": self.note_type,
            "date": self.date,
            "link": self.wikilink,
            "snippet": self.snippet,
        }


def no_good_match(found: Sequence[Found]) -> bool:
    """True when recall listed notes but none reaches the relevance floor: they are the closest ones, not answers.
    False for the retrieval paths that rank by a score of their own (exact, type, lexical, graph)."""
    return bool(found) and not any(f.match for f in found)  # the other paths' results are all matches


@dataclass(frozen=True)
class LinkView:
    """One link of a note, resolved as Obsidian resolves it."""

    target: str
    """The link target as written."""
    path: str | None
    """The note or file it resolves to, None when unresolved."""

    def as_json(self) -> dict[str, Any]:
        """JSON form."""
        return {"target": self.target, "path": self.path, "resolved": self.path is not None}


@dataclass(frozen=True)
class NoteView:
    """One note, whole: what `vault_read` returns."""

    path: str
    """Vault-relative path."""
    title: str
    """File name without `.md`."""
    frontmatter: dict[str, Any]
    """Its properties, JSON-safe."""
    body: str
    """The Markdown after the frontmatter."""
    tags: tuple[str, ...]
    """Tags from the body and the `tags` property."""
    aliases: tuple[str, ...]
    """The `aliases` property."""
    links: tuple[LinkView, ...]
    """Its links, in file order, each once."""
    backlinks: tuple[str, ...]
    """Notes linking to it."""

    def as_json(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "path": self.path,
            "title": self.title,
            "frontmatter": self.frontmatter,
            "body": self.body,
            "tags": list(self.tags),
            "aliases": list(self.aliases),
            "links": [link.as_json() for link in self.links],
            "backlinks": list(self.backlinks),
        }


@dataclass(frozen=True)
class Listed:
    """One note of a listing (`vault_list`)."""

    path: str
    """Vault-relative path."""
    title: str
    """File name without `.md`."""
    note_type: str | None
    """Frontmatter `type`."""
    date: str | None
    """The note's day (its `date`, else `created`, else a date its title starts with), with the time when it has one
    (`2026-10-01T09:30`, in local time: a time with an offset is converted)."""
    tags: tuple[str, ...]
    """The `tags` property."""

    def as_json(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "path": self.path,
            "title": self.title,
            "type": self.note_type,
            "date": self.date,
            "tags": list(self.tags),
        }


@dataclass(frozen=True)
class Links:
    """A note's links both ways (`vault_links`)."""

    path: str
    """The note."""
    outgoing: tuple[LinkView, ...]
    """What it links to, unresolved links included."""
    backlinks: tuple[str, ...]
    """What links to it."""

    def as_json(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "path": self.path,
            "outgoing": [link.as_json() for link in self.outgoing],
            "backlinks": list(self.backlinks),
            "unresolved": [link.target for link in self.outgoing if link.path is None],
        }


@dataclass(frozen=True)
class Graph:
    """The neighbourhood of a note (`vault_graph`): every note within `hops` links, either way, and the links
    among them."""

    path: str
    """The note at the centre."""
    hops: int
    """How far out it reaches."""
    nodes: tuple[tuple[str, int], ...]
    """(path, distance) of every note reached, the centre at 0, nearest first."""
    edges: tuple[tuple[str, str], ...]
    """(from, to) for every resolved link between two of the nodes."""

    def as_json(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "path": self.path,
            "hops": self.hops,
            "nodes": [{"path": p, "hops": d} for p, d in self.nodes],
            "edges": [{"from": a, "to": b} for a, b in self.edges],
        }


@dataclass(frozen=True)
class TimelineEntry:
    """One entry of a timeline (`timeline`): a session or a dated note, where it stands against the anchor."""

    position: str
    """`before`, `at` or `after`."""
    kind: str
    """`session` or `note`."""
    path: str
    """Vault-relative path."""
    title: str
    """The note's title, or what the session was about."""
    when: str
    """ISO time to the minute, or the day for a note dated by its day."""
    note_type: str | None
    """Frontmatter `type`."""
    summary: str
    """One line of what it was."""

    def as_json(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "position": self.position,
            "kind": self.kind,
            "path": self.path,
            "title": self.title,
            "when": self.when,
            "type": self.note_type,
            "summary": self.summary,
        }


@dataclass(frozen=True)
class Timeline:
    """What happened around a day or a note (`timeline`)."""

    when: str
    """The anchor's moment as ISO text (the day for a day)."""
    source: str
    """Where the moment came from: `date`, `session`, `modified` or `now`."""
    note: str | None
    """The note the timeline is drawn around, when one was named."""
    days: int
    """How many days either side were looked at."""
    entries: tuple[TimelineEntry, ...]
    """Oldest first."""

    def as_json(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "anchor": {"when": self.when, "source": self.source, "note": self.note},
            "days": self.days,
            "entries": [e.as_json() for e in self.entries],
        }
