"""The note the app shows beside its lists: which one, read with its link neighbourhood in a thread worker.

A `ShownNote` belongs to the app, which tells it what the user highlights and opens and hands it what the reads post
back (`NoteRead`, `GraphRead`) with the widget that shows each. Curations act on this note, by its path; a read that
finishes after the user has moved on is dropped. Only opening a note on purpose counts as an access.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from textual.app import App

from companion.errors import NoteError
from companion.tui.messages import Curated, GraphRead, NoteRead
from companion.vault.graph import VaultGraph
from companion.vault.notes import Note
from companion.workspace import Workspace
from indexer.graphs import manifest_graph
from widgets.link_graph import LinkGraph, Neighbourhood
from widgets.note_view import NoteView


class ShownNote:
    """The note shown: its path at once, the note itself once read."""

    def __init__(self, app: App[Any], workspace: Workspace, lock: Any, record: Callable[[str], object]) -> None:
        """Read notes for `app`; `lock` guards the workspace's shared manifest connection, and `record` counts an
        access of a note opened on purpose."""
        self.app = app
        """The app: workers and messages go through it."""
        self.workspace = workspace
        """The vault and its index."""
        self.path: str | None = None
        """The note shown (what curations act on), by its path."""
        self.note: Note | None = None
        """The note once read (None while its read is under way, or when it could not be read)."""
        self._lock = lock
        self._record = record
        self._counted: str | None = None  # the shown note's access is counted already
        self._graph_cache: tuple[object, VaultGraph] | None = None

    def current(self) -> tuple[str | None, Note | None]:
        """The path and the note shown (what the curation flow acts on)."""
        return self.path, self.note

    def select(self, path: str) -> None:
        """Show the note at `path` (highlighted: no access is counted)."""
        # Refilled panes highlight their first row again; re-rendering the same note on every knob press would
        # cost more than the whole re-partition.
        if path != self.path:
            self.path, self.note = path, None
            self._counted = None
            self.read(path)
            # Passing over a row, or resting on it, is not using the note: only opening it on purpose counts,
            # so browsing the warm pane never changes the scores under the user's eyes.

    def opened(self, path: str) -> None:
        """Count the access once per showing of a note (a second Enter adds nothing)."""
        if path == self.path and path != self._counted:
            self._counted = path
            self._record(path)

    def reread(self) -> None:
        """Show the note as it is on disk now (keeping the scroll; no access)."""
        if self.path is not None:
            self.read(self.path, refresh=True)

    def read(self, path: str, *, refresh: bool = False) -> None:
        """Read and show one note in a worker (a `refresh` after a change on disk keeps the scroll)."""
        work = partial(self._read, path, refresh)
        self.app.run_worker(work, name="open_note", group="note", exclusive=True, thread=True, exit_on_error=False)

    def curated(self, message: Curated, view: NoteView) -> None:
        """A curation landed: read the note again if it was written, or say what happened to it if it left."""
        shown = self.path
        if shown in message.written:
            self.reread()
        elif shown in message.removed:
            self.path = self.note = None
            view.show_message(str(shown), message.summary)

    def arrived(self, message: NoteRead, view: NoteView) -> None:
        """Show a note just read, unless the user has moved on (reads of older highlights can finish late)."""
        path, note = message.path, message.note
        if path != self.path:
            return
        if note is None:
            self.note = None
            view.show_problem(path, message.problem)
        elif not (message.refresh and self.note is not None and self.note.content_hash == note.content_hash):
            self.note = note
            view.show(note, keep_scroll=message.refresh)

    def graph_arrived(self, message: GraphRead, graph: LinkGraph) -> None:
        """Show a note's link neighbourhood, unless the user has moved on."""
        if message.hood.path == self.path:
            graph.show(message.hood)

    def _read(self, path: str, refresh: bool) -> None:
        try:
            note: Note | None = self.workspace.vault.read_note(path)
            problem = ""
        except NoteError as exc:
            note, problem = None, exc.reason
        self.app.post_message(NoteRead(path, note, problem, refresh))
        # The session summaries' links (a stat per session, a read per changed one) are read outside the lock: the
        # reader keeps them apart from the hot tier's sessions, so recalls and knob presses never wait for them.
        sessions = self.workspace.vault.session_links()
        with self._lock:
            key = (self.workspace.manifest.generation(), sessions)
            stale = self._graph_cache is None or self._graph_cache[0] != key
            records = self.workspace.manifest.notes() if stale else []
        if stale:
            # The vault walk (for attachments) runs outside the lock: recalls and knob presses never wait for it.
            self._graph_cache = (key, manifest_graph(records, self.workspace.vault.scan_all(), key[1]))
        assert self._graph_cache is not None
        graph = self._graph_cache[1]
        hood = Neighbourhood(
            path=path,
            outlinks=tuple((link.target, resolved) for link, resolved in graph.outlinks(path)),
            backlinks=tuple(graph.backlinks(path)),
            two_hops=tuple(sorted(p for p, hops in graph.neighbours(path, 2).items() if hops == 2)),
        )
        self.app.post_message(GraphRead(hood))
