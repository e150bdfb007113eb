"""The app's curation: pin, tags, type, merge, archive, delete, undo and open in Obsidian, on the note shown.

A base class of the app, so the curation flow reads on its own: every change is planned in a thread worker (it reads
files), confirmed when it is destructive, then applied in a worker; the app answers by showing the note as it now is
(`reshow`) and recalling again (`refresh_recall`).
"""

from __future__ import annotations

from collections.abc import Callable

from textual import work

from companion.curation.curator import Curator, Plan, obsidian_uri
from companion.curation.opener import open_uri
from companion.errors import CompanionError
from companion.tui.indexing import IndexingApp
from companion.vault.audit import AuditLog
from companion.vault.links import frontmatter_tags
from companion.vault.notes import Note
from companion.workspace import Workspace
from widgets.ask import AskDialog
from widgets.confirm import ConfirmDialog
from widgets.note_view import NoteView


class CuratingApp(IndexingApp):
    """An app that curates the note it shows, through a `Curator` that records every change in the audit log."""

    def __init__(self, workspace: Workspace, *, read_only: bool = False) -> None:
        super().__init__(workspace, read_only=read_only)
        self._curator: Curator | None = None
        self._shown_path: str | None = None  # the note shown: what curations act on
        self._shown_note: Note | None = None
        self._made_here: set[str] = set()  # audit ids of curations this session applied (undone without asking)
        self.opener: Callable[[str], bool] = open_uri
        """Opens an `obsidian://` link; tests replace it."""
        self.curations = 0
        """How many curations and undos the app has applied (for tests)."""

    def reshow(self, path: str) -> None:
        """Show the note at `path` again after a curation changed it (the app reads and renders it)."""

    def refresh_recall(self) -> None:
        """Recall again (the app fills its panes)."""

    def _curation_target(self, action: str) -> str | None:
        """The note a curation acts on (the one shown), or None after saying why nothing happens."""
        if self.read_only:
            self.notify(f"read-only mode: nothing was changed ({action} refused)", severity="warning")
            return None
        if self._shown_path is None:
            self.notify("highlight a note first", severity="warning")
        return self._shown_path

    def curator(self) -> Curator:
        """The curator of this vault, recording to the audit log as the app (or as the config names it)."""
        if self._curator is None:
            settings = self.workspace.config.curation
            self._curator = Curator(
                self.workspace.root,
                AuditLog(self.workspace.data_dir),
                source=settings.source or "app",
                read_only=self.read_only,
                archive_folder=settings.archive_folder,
            )
        return self._curator

    def action_pin(self) -> None:
        """Pin the note, or unpin it if it is pinned."""
        if (path := self._curation_target("pin")) is not None:
            self._plan(
                lambda c: c.plan_pin(path, self.workspace.vault.read_note(path).frontmatter.get("pinned") is not True)
            )

    def action_retag(self) -> None:
        """Ask for the note's tags, then set them."""
        if (path := self._curation_target("tags")) is None:
            return
        current = " ".join(frontmatter_tags(self._shown_note.frontmatter)) if self._shown_note is not None else ""

        def answered(text: str | None) -> None:
            if text is not None:
                tags = [t for t in text.replace(",", " ").split() if t]
                self._plan(lambda c: c.plan_tags(path, tags))

        self.push_screen(
            AskDialog(f"Tags of {path}", current, "space- or comma-separated, without #; empty removes them"),
            answered,
        )

    def action_retype(self) -> None:
        """Ask for the note's type, then set it."""
        if (path := self._curation_target("type")) is None:
            return
        value = self._shown_note.frontmatter.get("type") if self._shown_note is not None else None
        current = value if isinstance(value, str) else ""

        def answered(text: str | None) -> None:
            if text is not None:
                self._plan(lambda c: c.plan_type(path, text))

        known = ("fact", "preference", "decision", "task", "entity", "experience", "belief", "reflection", "summary")
        self.push_screen(AskDialog(f"Type of {path}", current, "one word, e.g. " + ", ".join(known), known), answered)

    def action_merge(self) -> None:
        """Ask which note this one duplicates, then merge it into that one (after a confirmation)."""
        if (path := self._curation_target("merge")) is None:
            return

        def answered(text: str | None) -> None:
            if text:
                keep = text.strip() if text.strip().endswith(".md") else f"{text.strip()}.md"
                self._plan(lambda c: c.plan_merge(keep, path))

        self._ask_merge(path, answered)

    @work(thread=True, group="curate", exit_on_error=False)
    def _ask_merge(self, path: str, answered: Callable[[str | None], None]) -> None:
        with self._index_lock:
            paths = [r.path for r in self.workspace.manifest.notes() if r.path != path]
        dialog = AskDialog(f"Merge {path} into which note?", "", "a vault path; its text is appended there", paths)
        self.call_from_thread(self.push_screen, dialog, answered)

    def action_archive(self) -> None:
        """Move the note to the archive folder (after a confirmation)."""
        if (path := self._curation_target("archive")) is not None:
            self._plan(lambda c: c.plan_archive(path))

    def action_delete(self) -> None:
        """Delete the note to the vault's trash (after a confirmation)."""
        if (path := self._curation_target("delete")) is not None:
            self._plan(lambda c: c.plan_delete(path))

    def action_undo(self) -> None:
        """Undo the last curation, restoring every file it touched exactly (asking first when this session did not
        make it: the audit log reaches back to other sessions and the command line)."""
        if self.read_only:
            self.notify("read-only mode: nothing was changed (undo refused)", severity="warning")
            return
        self._ask_undo()

    @work(thread=True, group="curate", exit_on_error=False)
    def _ask_undo(self) -> None:
        try:
            entry = self.curator().audit.last_undoable()
        except CompanionError as exc:
            self.call_from_thread(self._failed, exc)
            return
        if entry is None:
            self.call_from_thread(self.notify, "nothing to undo", severity="warning")
        elif entry.id in self._made_here:
            self._undo_now(entry.id)
        else:
            details = [f"{c.path}" for c in entry.changes]
            details.append(f"made by {entry.source} at {entry.at}; undo restores these files exactly")

            def answered(yes: bool | None) -> None:
                if yes:
                    self._undo(entry.id)

            question = f"Undo '{entry.summary}'?"
            self.call_from_thread(self.push_screen, ConfirmDialog(question, details), answered)

    def action_open_in_obsidian(self) -> None:
        """Open the note in Obsidian (an `obsidian://open` link); without a launcher, copy the link."""
        if self._shown_path is None:
            self.notify("highlight a note first", severity="warning")
            return
        self._open(obsidian_uri(self.workspace.root, self._shown_path))

    @work(thread=True, group="open", exit_on_error=False)
    def _open(self, uri: str) -> None:
        if self.opener(uri):
            self.call_from_thread(self.notify, uri, title="opened in Obsidian")
        else:
            self.call_from_thread(self.copy_to_clipboard, uri)
            self.call_from_thread(self.notify, uri, title="no launcher found: the link was copied")

    @work(thread=True, group="curate", exit_on_error=False)
    def _plan(self, make: Callable[[Curator], Plan]) -> None:
        """Plan in a thread (it reads files), then confirm if destructive, then apply."""
        try:
            plan = make(self.curator())
        except CompanionError as exc:
            self.call_from_thread(self._failed, exc)
            return
        if not plan.writes:
            self.call_from_thread(self.notify, plan.summary, title="nothing to change")
        elif plan.destructive:
            details = [f"{'write ' if w.content is not None else 'remove'} {w.path}" for w in plan.writes]
            details.append("Undo (u) restores every file exactly.")

            def answered(yes: bool | None) -> None:
                if yes:
                    self._apply(plan)

            self.call_from_thread(self.push_screen, ConfirmDialog(plan.summary + "?", details), answered)
        else:
            self._apply_now(plan)

    @work(thread=True, group="curate", exit_on_error=False)
    def _apply(self, plan: Plan) -> None:
        self._apply_now(plan)

    def _apply_now(self, plan: Plan) -> None:
        try:
            self._made_here.add(self.curator().apply(plan).id)
        except CompanionError as exc:
            self.call_from_thread(self._failed, exc)
            return
        written = [w.path for w in plan.writes if w.content is not None]
        self.call_from_thread(self._curated, plan.summary, written, [w.path for w in plan.writes if w.content is None])

    @work(thread=True, group="curate", exit_on_error=False)
    def _undo(self, entry_id: str) -> None:
        self._undo_now(entry_id)

    def _undo_now(self, entry_id: str) -> None:
        try:
            entry = self.curator().undo(entry_id)
        except CompanionError as exc:
            self.call_from_thread(self._failed, exc)
            return
        restored = [c.path for c in entry.changes if c.after is not None]
        self.call_from_thread(
            self._curated, entry.summary, restored, [c.path for c in entry.changes if c.after is None]
        )

    def _curated(self, summary: str, written: list[str], removed: list[str]) -> None:
        self.curations += 1
        self.notify(summary, title="done (u undoes)")
        # The watcher re-indexes the files within a second; until then show the note as it is on disk now.
        shown = self._shown_path
        if shown in written:
            self.reshow(shown)
        elif shown in removed:
            self._shown_path = self._shown_note = None
            self.query_one(NoteView).show_message(str(shown), summary)
        self.refresh_recall()

    def _failed(self, exc: CompanionError) -> None:
        # The message says whether anything was written (a failed write is put back, and says so if it could not be).
        self.notify(str(exc), title="curation failed", severity="error", timeout=10)
