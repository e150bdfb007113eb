"""The wikilink graph of a vault: outlinks, backlinks, neighbourhoods and unresolved links.

Built from parsed notes and a `LinkResolver`; `update` and `remove` keep it current one note at a
time, so a watcher never has to rebuild it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping

from companion.vault.notes import Link, Note
from companion.vault.resolve import LinkResolver


class VaultGraph:
    """Resolved links between notes (and from notes to attachments), in both directions."""

    def __init__(self, notes: Mapping[str, Note], resolver: LinkResolver) -> None:
        self.resolver = resolver
        """The resolver the graph's links were resolved with."""
        self._out: dict[str, list[tuple[Link, str | None]]] = {}
        self._back: dict[str, dict[str, int]] = {}
        for note in notes.values():
            self.update(note)

    @classmethod
    def from_links(cls, links: Mapping[str, Iterable[Link]], resolver: LinkResolver) -> VaultGraph:
        """A graph from each note's links alone (an index keeps those, so no note is read)."""
        graph = cls({}, resolver)
        for path, note_links in links.items():
            graph._store(path, note_links)
        return graph

    def update(self, note: Note) -> None:
        """Add a note or replace its links."""
        self.remove(note.path)
        self._store(note.path, note.links)

    def _store(self, path: str, links: Iterable[Link]) -> None:
        resolved = [(link, self.resolver.resolve(link.target, path)) for link in links]
        self._out[path] = resolved
        for _, target in resolved:
            if target is not None and target != path:
                counts = self._back.setdefault(target, {})
                counts[path] = counts.get(path, 0) + 1

    def remove(self, path: str) -> None:
        """Forget a note's own links (links to it from other notes stay, as in Obsidian)."""
        for _, target in self._out.pop(path, []):
            counts = self._back.get(target or "")
            if counts is not None and path in counts:
                counts[path] -= 1
                if counts[path] <= 0:
                    del counts[path]
                if not counts:
                    del self._back[target or ""]

    def relink(self) -> None:
        """Resolve every link again, after files were added, removed or renamed in the resolver."""
        links = {path: [link for link, _ in pairs] for path, pairs in self._out.items()}
        self._out.clear()
        self._back.clear()
        for path, note_links in links.items():
            self._store(path, note_links)

    def __contains__(self, path: object) -> bool:
        return path in self._out

    def outlinks(self, path: str) -> list[tuple[Link, str | None]]:
        """Every link of a note with its resolved target (None when unresolved), in file order."""
        return list(self._out.get(path, []))

    def backlinks(self, path: str) -> list[str]:
        """The notes linking to `path` (a note or an attachment), sorted, without itself."""
        return sorted(self._back.get(path, {}))

    def unresolved(self, path: str | None = None) -> list[tuple[str, Link]]:
        """Links that point at no file, as `(source, link)`, for one note or the whole vault."""
        sources = [path] if path is not None else sorted(self._out)
        return [(source, link) for source in sources for link, target in self._out.get(source, []) if target is None]

    def neighbours(self, path: str, hops: int = 2) -> dict[str, int]:
        """Files within `hops` links of `path`, either direction, with distances, nearest first."""
        distance: dict[str, int] = {path: 0}
        queue: deque[str] = deque([path])
        while queue:
            current = queue.popleft()
            if distance[current] >= hops:
                continue
            adjacent = {t for _, t in self._out.get(current, []) if t is not None}
            adjacent.update(self._back.get(current, {}))
            for nxt in sorted(adjacent):
                if nxt not in distance:
                    distance[nxt] = distance[current] + 1
                    queue.append(nxt)
        del distance[path]
        return dict(sorted(distance.items(), key=lambda item: (item[1], item[0])))
