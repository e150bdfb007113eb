"""The agent API over one workspace: the read side of the vault tools and the memory queries.

Every argument an agent sends is checked here, and a bad one is an `AgentInputError` naming it; nothing here writes
the vault. Notes are named by vault path, by path without `.md`, by title or by alias, as a wikilink would name
them, or, for a while after a search, as `@1`, `@2`... (its results) and `@last` (the note last surfaced or read):
the recent-context cache, so a follow-up can say "that note". A search only lists and counts nothing; reading a
note, or a context including it, counts as using it (for the decay), except in a replay (`as_of`).

Whatever is returned passes through the secret redaction first (`companion.secrets.redact_output`): snippets,
titles, paths, a note's properties and Markdown, timelines, recent sessions and contexts. The notes are read at
question time, as the user wrote them, and an agent never sees the passwords and keys in them. Names given back
(`@1`, a path in an argument) are resolved against the vault as it is.
"""

from __future__ import annotations

import datetime as dt
import posixpath
import re
import time
from collections.abc import Hashable, Mapping
from dataclasses import replace
from typing import Any

from companion.agent import arguments
from companion.agent.happenings import LINE_CHARS as LINE_CHARS  # the MCP tools and prompts read it from here
from companion.agent.happenings import anchor_at, draw
from companion.agent.periods import RecentSessions, recent
from companion.agent.timeline import MOST_AROUND, note_moment
from companion.agent.views import Found, Graph, Links, LinkView, Listed, NoteView, Surfaced, Timeline
from companion.embedding.tokens import TokenCounter
from companion.errors import AgentInputError, NoteError
from companion.recall.assembly import build, used_notes
from companion.recall.context import AssembledContext
from companion.recall.language import language_of
from companion.recall.scope import Scope
from companion.recall.shown import located
from companion.secrets import redact_output, redact_text
from companion.vault.graph import VaultGraph
from companion.vault.reader import valid_name
from companion.words import counted
from companion.workspace import Workspace
from indexer.graphs import manifest_graph
from indexer.terms import fts_query

MEMORY_MODES = ("exact", "type", "lexical", "hybrid", "graph")
"""The retrieval paths, as `memory_query` names them."""
MAX_RESULTS = 100
"""Most notes one call returns."""
MAX_HOPS = 4
"""Deepest graph one call walks (past this a graph is most of a vault)."""
SNIPPET_CHARS = 400
"""Longest passage returned with a search result."""
MOST_DAYS = 3650
"""Widest a timeline looks either side of its anchor."""

_SURFACED = re.compile(r"@(\d+|last)")


class AgentApi:
    """Reads for an agent; one instance serves one workspace, from one thread at a time."""

    def __init__(self, workspace: Workspace, *, record: bool = True) -> None:
        self.workspace = workspace
        """The vault and its index."""
        self.record = record
        """Count what an agent uses as accessed (a note it reads, the notes a context includes); off for tools that
        only look. A search only lists, and counts nothing."""
        self._graph: tuple[tuple[Hashable, dict[str, tuple[str, ...]]], VaultGraph] | None = None
        self.surfaced = Surfaced()
        """What `@1`, `@2`... and `@last` name now; a server with several clients keeps one per client and sets it
        before each call."""
        self.notice: str | None = None
        """What the reader of the last search's results must know (the meaning side unavailable or still being
        built), or None."""

    def _remember_surfaced(self, paths: list[str], last: str | None = None) -> None:
        """Remember what a listing showed, in order, and the note "that note" names from now on."""
        now = time.monotonic()
        last = last or (paths[0] if paths else None)
        if last is None:
            self.surfaced = replace(self.surfaced, listed=tuple(paths), listed_at=now)
        else:
            self.surfaced = Surfaced(tuple(paths), now, last, now)

    # -- finding notes ---------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        k: int = 10,
        where: Mapping[str, Any] | None = None,
        since: str | None = None,
        until: str | None = None,
        path: str | None = None,
        as_of: str | None = None,
        snippet_chars: int = SNIPPET_CHARS,
    ) -> list[Found]:
        """`vault_search` / `recall_relevant`: hybrid recall with the decay, best first, within the filters; each
        result with at most `snippet_chars` of the passage it matched."""
        query = arguments.text("query", query)
        k = arguments.count("k", k, MAX_RESULTS)
        scope = arguments.scope(where, since, until, path)
        return redact_output(self._search(query, k, scope, arguments.moment(as_of), snippet_chars))

    def _search(
        self, query: str, k: int, scope: Scope, moment: dt.datetime | None = None, snippet_chars: int = SNIPPET_CHARS
    ) -> list[Found]:
        engine = self.workspace.recall()
        recalled = engine.recall(query, k=k, as_of=moment, scope=scope)
        self.notice = recalled.full_notice
        # The matches, or when none reaches the relevance floor the closest notes, marked as such.
        items = list(recalled.shown(k))
        self._remember_surfaced([item.path for item in items])
        found = []
        for item in items:
            place = located(engine, item, snippet_chars)
            found.append(
                Found(
                    path=item.path,
                    title=item.title,
                    score=item.score,
                    tier=item.tier,
                    note_type=item.note_type,
                    date=item.date,
                    snippet=place.snippet,
                    link=place.link,
                    match=item.matches(recalled.floor),
                    relevance=item.relevance,
                )
            )
        return found

    def memory_query(self, mode: str, query: str, *, k: int = 10) -> list[Found]:
        """See `_memory_query`; what it finds can be named `@1`, `@2`... afterwards."""
        found = self._memory_query(mode, query, k=k)
        self._remember_surfaced([f.path for f in found])
        return redact_output(found)

    def _memory_query(self, mode: str, query: str, *, k: int = 10) -> list[Found]:
        """The retrieval paths: `exact` (a title or alias), `type` (notes of a frontmatter type, newest
        first), `lexical` (BM25 alone), `hybrid` (as `search`) or `graph` (the notes linked with the one named)."""
        if mode not in MEMORY_MODES:
            raise AgentInputError("mode", f"{mode!r} is not a mode; use one of {', '.join(MEMORY_MODES)}")
        query = arguments.text("query", query)
        k = arguments.count("k", k, MAX_RESULTS)
        if mode == "hybrid":
            return self._search(query, k, Scope())
        if mode == "exact":
            return [self._found(path, 1.0, mode) for path in self._exact(query)[:k]]
        if mode == "type":
            wanted = query.strip().casefold()
            records = [r for r in self.workspace.manifest.notes() if (r.note_type or "").casefold() == wanted]
            records.sort(key=lambda r: (r.date or "", r.path), reverse=True)
            return [self._found(r.path, 0.0, mode) for r in records[:k]]
        if mode == "lexical":
            match = fts_query(query)
            rows = self.workspace.manifest.lexical(match, k) if match else []
            return [self._found(p, score, mode) for p, score in rows]
        named = self._exact(query)
        centre = named[0] if named else self.resolve(query, "query")  # no note: the error names what to do
        near = self.link_graph().neighbours(centre, 2)
        # A session summary is in the graph for its links, never a result: recall leaves sessions out too.
        sessions = self._graph[0][1] if self._graph is not None else {}
        ranked = sorted((d, p) for p, d in near.items() if p != centre and p.endswith(".md") and p not in sessions)
        return [self._found(p, 1.0 / d, mode) for d, p in ranked[:k]]

    def _exact(self, query: str) -> list[str]:
        """Every note a title or alias names (translations of one note often share its title), those in the name's
        own language first, then the one a wikilink of that name opens; a path names its note alone."""
        try:
            target = self.resolve(query)
        except AgentInputError:
            return []
        name = query.strip()
        if "/" in name or name.casefold().endswith(".md"):
            return [target]
        manifest = self.workspace.manifest
        paths = list(dict.fromkeys([target, *manifest.named(name)]))
        languages = manifest.derived.languages(paths)
        asked = language_of(name)
        return sorted(paths, key=lambda p: (languages.get(p, asked) != asked, p != target, len(p), p))

    def _found(self, path: str, score: float, tier: str) -> Found:
        info = self.workspace.searcher().infos([path]).get(path)
        return Found(
            path=path,
            title=info.title if info else posixpath.basename(path).removesuffix(".md"),
            score=score,
            tier=tier,
            note_type=info.note_type if info else None,
            date=info.date if info else None,
            snippet="",
        )

    # -- one note --------------------------------------------------------------------------------

    def resolve(self, note: str, field: str = "note") -> str:
        """The vault path of the note an agent names (path, path without `.md`, title or alias)."""
        name = arguments.text(field, note).strip()
        if _SURFACED.fullmatch(name):
            return self._surfaced_note(name, field)
        if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
            raise AgentInputError(field, f"{name!r} is an absolute path; name a note inside the vault")
        parts = name.replace("\\", "/").split("/")
        if ".." in parts:
            raise AgentInputError(field, f"{name!r} leaves the vault ('..'); name a note inside it")
        if not valid_name(name):
            raise AgentInputError(field, "the name is not valid text")
        graph = self.link_graph()
        for candidate in (name, f"{name}.md"):
            if candidate in graph.resolver and candidate.endswith(".md"):
                return candidate
        target = graph.resolver.resolve(name.removesuffix(".md"), "")
        if target is None or not target.endswith(".md"):
            raise AgentInputError(
                field, f"no note called {name!r} (search for it first: vault_search, or `companion vault search`)"
            )
        return target

    def named(self, note: str, field: str = "note") -> str:
        """The path `@1`, `@2`... or `@last` names, or `note` itself as given (for a tool that resolves it)."""
        if isinstance(note, str) and _SURFACED.fullmatch(note.strip()):
            return self._surfaced_note(note.strip(), field)
        return note

    def _surfaced_note(self, name: str, field: str) -> str:
        """The note `@N` or `@last` names, while the recent-context cache holds it."""
        window = 60 * self.workspace.config.recall.surfaced_minutes
        now = time.monotonic()
        if name == "@last":
            if self.surfaced.last is None or now - self.surfaced.last_at > window:
                raise AgentInputError(field, "@last names nothing: no note was surfaced or read recently")
            return self.surfaced.last
        when, paths = self.surfaced.listed_at, self.surfaced.listed
        number = int(name[1:])
        if not paths or now - when > window:
            raise AgentInputError(
                field, f"{name} names nothing: no search or timeline in the last {window // 60} minutes"
            )
        if not 1 <= number <= len(paths):
            raise AgentInputError(
                field, f"{name} names nothing: the last search or timeline listed {counted(len(paths), 'note')}"
            )
        return paths[number - 1]

    def read(self, note: str) -> NoteView:
        """`vault_read`: a note whole, with its links resolved and its backlinks."""
        path = self.resolve(note)
        self.surfaced = replace(self.surfaced, last=path, last_at=time.monotonic())
        try:
            parsed = self.workspace.vault.read_note(path)
        except NoteError as exc:
            raise AgentInputError("note", f"{path} cannot be read: {exc.reason}") from exc
        if self.record:
            self.workspace.recall().record([path])  # reading a note whole is using it
        graph = self.link_graph()
        seen: dict[str, LinkView] = {}
        for link in parsed.links:
            if link.target and link.target not in seen:
                seen[link.target] = LinkView(link.target, graph.resolver.resolve(link.target, path))
        view = NoteView(
            path=path,
            title=parsed.title,
            frontmatter=parsed.frontmatter,
            body=parsed.body,
            tags=parsed.tags,
            aliases=parsed.aliases,
            links=tuple(seen.values()),
            backlinks=tuple(graph.backlinks(path)),
        )
        return redact_output(view)

    def markdown(self, note: str) -> str:
        """A note's Markdown as its file holds it, redacted (what the MCP server serves as a resource)."""
        path = self.resolve(note)
        try:
            return redact_text((self.workspace.vault.root / path).read_bytes().decode("utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise AgentInputError("note", f"{path} cannot be read as UTF-8 text") from exc

    def links(self, note: str) -> Links:
        """`vault_links`: what a note links to (each target once, unresolved ones included) and what links to it."""
        path = self.resolve(note)
        graph = self.link_graph()
        seen: dict[str, LinkView] = {}
        for link, resolved in graph.outlinks(path):
            seen.setdefault(link.target, LinkView(link.target, resolved))
        return redact_output(Links(path, tuple(seen.values()), tuple(graph.backlinks(path))))

    def graph(self, note: str, hops: int = 2) -> Graph:
        """`vault_graph`: every note within `hops` links of one, either way, and the links among them."""
        path = self.resolve(note)
        hops = arguments.count("hops", hops, MAX_HOPS)
        graph = self.link_graph()
        near = graph.neighbours(path, hops)
        near[path] = 0
        nodes = tuple(sorted(near.items(), key=lambda item: (item[1], item[0])))
        edges = {
            (source, target)
            for source in near
            for _link, target in graph.outlinks(source)
            if target is not None and target in near and target != source
        }
        return redact_output(Graph(path, hops, nodes, tuple(sorted(edges))))

    # -- many notes ------------------------------------------------------------------------------

    def list_notes(
        self,
        *,
        folder: str | None = None,
        note_type: str | None = None,
        tag: str | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int = MAX_RESULTS,
    ) -> list[Listed]:
        """`vault_list`: indexed notes in a folder, of a type, with a tag property, within dates; newest first."""
        limit = arguments.count("limit", limit, 1000)
        prefix = ""
        if folder is not None and folder.strip().strip("/"):
            prefix = arguments.text("folder", folder).strip().strip("/") + "/"
            if ".." in prefix.split("/") or prefix.startswith(("/", "\\")):
                raise AgentInputError("folder", f"{folder!r} is not a folder inside the vault")
        first = arguments.day("since", since)
        last = arguments.day("until", until)
        wanted_type = note_type.strip().casefold() if note_type else None
        wanted_tag = tag.strip().lstrip("#").casefold() if tag else None
        out: list[Listed] = []
        moments: dict[str, dt.datetime | None] = {}
        for record in self.workspace.manifest.notes():
            if prefix and not record.path.startswith(prefix):
                continue
            if wanted_type is not None and (record.note_type or "").casefold() != wanted_type:
                continue
            tags = arguments.tags(record.frontmatter.get("tags"))
            if wanted_tag is not None and wanted_tag not in {t.casefold() for t in tags}:
                continue
            # Dated as the timeline dates a note: its `date`, else `created`, else a date its title starts with.
            moment = note_moment(record.frontmatter, record.title)
            day = None if moment is None else moment[0].date()
            if (first is not None and (day is None or day < first)) or (last is not None and day and day > last):
                continue
            shown = None if moment is None else moment[0].isoformat(timespec="minutes") if moment[1] else str(day)
            out.append(Listed(record.path, record.title, record.note_type, shown, tags))
            moments[record.path] = moment[0] if moment is not None else None
        # Newest first, notes of one moment by path; undated notes last, by path.
        out.sort(key=lambda n: n.path)
        out.sort(key=lambda n: (moments[n.path] is not None, moments[n.path] or dt.datetime.min), reverse=True)
        return redact_output(out[:limit])

    def recall_recent(
        self,
        hours: float | None = None,
        limit: int | None = None,
        *,
        period: str | None = None,
        since: str | None = None,
        until: str | None = None,
        as_of: str | None = None,
    ) -> RecentSessions:
        """`recall_recent`: the completed sessions of the last hours, or every session of a period (in words, or
        `since` and `until` days), newest first, each with its one-line exchange (see `companion.agent.periods`)."""
        return redact_output(recent(self.workspace.recall(), hours, limit, period, since, until, as_of))

    def timeline(
        self,
        *,
        date: str | None = None,
        note: str | None = None,
        before: int = 5,
        after: int = 5,
        days: int = 30,
    ) -> Timeline:
        """`timeline`: the sessions and dated notes before and after a day, a moment or a note (now by default),
        within `days` either side; its entries can be named `@1`, `@2`... afterwards."""
        if date is not None and note is not None:
            raise AgentInputError("date", "give a date or a note, not both")
        before = arguments.count("before", before, MOST_AROUND, least=0)
        after = arguments.count("after", after, MOST_AROUND, least=0)
        days = arguments.count("days", days, MOST_DAYS)
        anchor = anchor_at(self.workspace, date, None if note is None else self.resolve(note))
        drawn = draw(self.workspace, anchor, before, after, days)
        # "That note" is the one the timeline was drawn around.
        self._remember_surfaced([entry.path for entry in drawn.entries], drawn.note)
        return redact_output(drawn)

    def context(self, message: str, budget: int | None = None) -> tuple[AssembledContext, TokenCounter]:
        """The context for a message under a hard token budget (the policy's `token_budget` by default); its text is
        built from redacted pieces (see `assemble`), and its sources are redacted too."""
        message = arguments.text("message", message)
        policy = self.workspace.config.retention
        budget = policy.token_budget if budget is None else arguments.count("budget", budget, 200_000)
        engine = self.workspace.recall()
        recalled = engine.recall(message, bodies=True)
        counter = TokenCounter()
        assembled = build(engine, recalled, budget, counter)
        if self.record:
            engine.record(used_notes(assembled))
        pieces = tuple(replace(p, source=redact_text(p.source)) for p in assembled.pieces)
        dropped = tuple(replace(p, source=redact_text(p.source)) for p in assembled.dropped)
        return replace(assembled, pieces=pieces, dropped=dropped), counter

    def link_graph(self) -> VaultGraph:
        """The vault's link graph from the index and the session summaries' links, rebuilt when either changed (also
        how writes check links)."""
        ws = self.workspace
        key = (ws.manifest.generation(), ws.vault.session_links())
        if self._graph is None or self._graph[0] != key:
            self._graph = (key, manifest_graph(ws.manifest.notes(), ws.vault.scan_all(), key[1]))
        return self._graph[1]
