"""The values the agent API returns, each with its JSON form (what the CLI prints and the MCP server sends)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


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

    def as_json(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "path": self.path,
            "match": self.match,
            "title": self.title,
            "score": round(self.score, 6),
            "tier": self.tier,
            "type": self.note_type,
            "date": self.date,
            "link": self.link or f"[[{self.title}]]",
            "snippet": self.snippet,
        }


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
    """Frontmatter `date`."""
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
